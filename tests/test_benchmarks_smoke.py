"""The benchmark workloads still run, and kenaz agrees with each NumPy reference (tiny sizes).

``make bench`` runs them at full size against the peers; this keeps them from
rotting between runs. Only kenaz and NumPy run here, once each, untimed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.peers import PEER_NAMES, Peers  # noqa: E402
from benchmarks.harness.runner import run_workload  # noqa: E402
from benchmarks.harness.timing import Budget, interleaved_medians  # noqa: E402
from benchmarks.harness.workload import compare_outputs  # noqa: E402
from benchmarks.workloads import ALL_WORKLOADS  # noqa: E402

NO_PEERS = Peers(missing={name: "not loaded in the smoke test" for name in PEER_NAMES})


@pytest.mark.parametrize("workload", ALL_WORKLOADS, ids=lambda workload: workload.key)
def test_kenaz_agrees_with_the_numpy_reference(workload):
    result = run_workload(workload, NO_PEERS, "smoke", budget=None)
    assert not result.error, result.error
    reference, *others = result.rows
    assert reference.library == "numpy" and reference.check == "ok", reference.note
    kenaz_rows = [row for row in others if row.library.startswith("kenaz")]
    assert kenaz_rows, "every workload has a kenaz row"
    for row in kenaz_rows:
        if row.note.endswith("not available yet"):
            continue  # a transformation another issue is still writing
        assert row.check == "ok", f"{workload.key} {row.library}: {row.check or row.note}"
    for row in others:
        if not row.library.startswith("kenaz"):
            assert row.check == "" and row.note, "peers are not run in the smoke test"


def test_a_disagreement_is_reported_loudly():
    assert compare_outputs([[1.0, 2.0]], [[1.0, 2.0]], rtol=1e-7, atol=0) == "ok"
    assert compare_outputs([[1.0, 2.0]], [[1.0, 2.1]], rtol=1e-7, atol=0).startswith("MISMATCH")
    assert "shape" in compare_outputs([[1.0, 2.0]], [[1.0]], rtol=1e-7, atol=0)


def test_every_contender_is_sampled_at_least_min_samples_times():
    calls = {"fast": 0, "slow": 0}

    def call(name):
        calls[name] += 1
        return sum(range(100 if name == "fast" else 2000))

    budget = Budget(seconds=0.05, min_samples=3, min_sample_seconds=0.001)
    timings = interleaved_medians(
        {name: (lambda name=name: call(name)) for name in calls}, budget, {"fast": 0, "slow": 0}
    )
    assert set(timings) == {"fast", "slow"}
    assert all(len(t.samples) >= 3 and t.median_seconds > 0 for t in timings.values())
    assert timings["fast"].median_seconds < timings["slow"].median_seconds


def test_the_ab_small_cases_run():
    # benchmarks/ab.py --cases small (also what --instructions counts): every row runs.
    from benchmarks.ab import small_cases

    for run in small_cases().values():
        run()
