"""A/B: the kenaz rows of W1-W8 on two source trees, in one run, interleaved.

Each round runs every workload once in a fresh subprocess per tree (the order
of the two trees alternates between rounds), and each subprocess reports the
median CPU time (``time.process_time``) of a few calls after a warm-up. The
ratio printed is median over rounds of B / median over rounds of A: below 1
means B is faster.

    git archive main src | tar -x -C /tmp/kenaz_base
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --rounds 7
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases decompositions
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases small --best --calls 15

The workload definitions (``benchmarks/workloads``) come from this checkout
for both trees; only ``kenaz`` is imported from the given source directory.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def workload_cases() -> dict[str, Callable[[], object]]:
    """The kenaz rows of W1-W8 (not the slow ones), by ``"<workload> <library>"``."""
    from benchmarks.harness.peers import Peers
    from benchmarks.workloads import ALL_WORKLOADS

    cases = {}
    for workload in ALL_WORKLOADS:
        case = workload.build(Peers(), "full")
        for contender in case.contenders:
            if contender.is_kenaz and contender.run is not None and not contender.slow:
                cases[f"{workload.key} {contender.library}"] = contender.run
    return cases


def small_cases() -> dict[str, Callable[[], object]]:
    """Eager small ops on 16 float64 and W1's grad chain: the rows per-op costs show in."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    x, y = knp.asarray(np.linspace(0.1, 1, 16)), knp.asarray(np.linspace(0.2, 1, 16))
    m = knp.asarray(np.linspace(0.1, 1, 16).reshape(4, 4))

    def chain(x):
        for _ in range(1000):
            x = knp.sin(x) * 1.01 + 0.1
        return knp.sum(x)

    grad_chain = kenaz.grad(chain)
    return {
        "W1-like grad, 3,000 ops": lambda: grad_chain(x),
        "knp.sin(x)": lambda: knp.sin(x),
        "x + y": lambda: x + y,
        "knp.sum(x)": lambda: knp.sum(x),
        "knp.mean(x)": lambda: knp.mean(x),
        "knp.dot(x, y)": lambda: knp.dot(x, y),
        "m @ m (4x4)": lambda: m @ m,
        "knp.reshape(x, (4, 4))": lambda: knp.reshape(x, (4, 4)),
        "knp.concatenate([x, y])": lambda: knp.concatenate([x, y]),
        "knp.where(x > 0.5, x, y)": lambda: knp.where(x > 0.5, x, y),
        "knp.transpose(m)": lambda: knp.transpose(m),
        "x[2:10]": lambda: x[2:10],
        "x.dtype": lambda: x.dtype,
    }


# --cases: where the cases come from (a function returning {name: callable}).
CASES = {
    "workloads": "benchmarks.ab:workload_cases",
    "small": "benchmarks.ab:small_cases",
    "decompositions": "benchmarks.decompositions_ab:cases",
}


def measure(calls: int, cases: str = "workloads", best: bool = False) -> dict[str, float]:
    """In the subprocess: median (or, with ``best``, least) CPU seconds per call of each case."""
    module, function = CASES[cases].split(":")
    times: dict[str, float] = {}
    for name, run in getattr(importlib.import_module(module), function)().items():
        start = time.process_time()
        run()  # warm-up, and how many calls make a sample of about 20 ms
        repeat = max(1, int(0.02 / max(time.process_time() - start, 1e-6)))
        samples = []
        for _ in range(calls):
            start = time.process_time()
            for _ in range(repeat):
                run()
            samples.append((time.process_time() - start) / repeat)
        times[name] = min(samples) if best else statistics.median(samples)
    return times


def run_tree(
    source: Path, calls: int, cases: str = "workloads", best: bool = False
) -> dict[str, float]:
    """One subprocess importing kenaz from ``source``; its timings."""
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{ROOT}", OMP_NUM_THREADS="1")
    code = (
        "import json, kenaz, sys; from benchmarks.ab import measure; "
        f"assert kenaz.__file__.startswith({str(source)!r}), kenaz.__file__; "
        f"print(json.dumps(measure({calls}, {cases!r}, {best})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode:
        raise RuntimeError(f"benchmark on {source} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="source directory holding package A (the base)")
    parser.add_argument("b", type=Path, help="source directory holding package B (the change)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=7, help="timed calls per row per round")
    parser.add_argument("--cases", choices=sorted(CASES), default="workloads")
    parser.add_argument(
        "--best",
        action="store_true",
        help="least time instead of the median, within and across rounds (steadier on a "
        "loaded machine: load only ever adds time)",
    )
    options = parser.parse_args()
    trees = {"A": options.a.resolve(), "B": options.b.resolve()}
    samples: dict[str, dict[str, list[float]]] = {"A": {}, "B": {}}
    for round_number in range(options.rounds):
        order = ("A", "B") if round_number % 2 == 0 else ("B", "A")
        for name in order:
            timings = run_tree(trees[name], options.calls, options.cases, options.best)
            for row, seconds in timings.items():
                samples[name].setdefault(row, []).append(seconds)
        print(f"round {round_number + 1}/{options.rounds} done", file=sys.stderr)
    print(f"A = {trees['A']}\nB = {trees['B']}\n{options.rounds} rounds x {options.calls} calls")
    print(f"{'row':<40} {'A µs':>11} {'B µs':>11} {'B/A':>7}")
    for row in samples["A"]:
        combine = min if options.best else statistics.median
        a = combine(samples["A"][row]) * 1e6
        b = combine(samples["B"].get(row, [float("nan")])) * 1e6
        print(f"{row:<40} {a:11.3f} {b:11.3f} {b / a:7.3f}")


if __name__ == "__main__":
    main()
