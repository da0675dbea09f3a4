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
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases small --instructions
    .venv/bin/python -m benchmarks.ab /tmp/kenaz_base/src src --cases w3-w5 --instructions

``--instructions`` counts machine instructions per call under Valgrind's
callgrind instead of timing: slow (one run per tree, about 50 times slower
than native), but the same on a busy machine as on a quiet one, so a 1 %
change in per-op overhead shows. It counts work, not time: cache misses and
the cost of different instructions are not in it.

The workload definitions (``benchmarks/workloads``) come from this checkout
for both trees; only ``kenaz`` is imported from the given source directory.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
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


def array_workload_cases() -> dict[str, Callable[[], object]]:
    """W3-W5's kenaz rows (an MLP's loss gradient, per-example gradients, Hessian-vector
    products): the workloads whose arrays are large enough that per-op costs are a
    fraction of the time."""
    return {k: run for k, run in workload_cases().items() if k.split()[0] in ("W3", "W4", "W5")}


def small_cases() -> dict[str, Callable[[], object]]:
    """W8's eager small ops (16 float64, 4x4) and W1's grad chain: the rows per-op costs show in."""
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    x, y = knp.asarray(np.linspace(0.1, 1, 16)), knp.asarray(np.linspace(0.2, 1, 16))
    m, n = knp.reshape(knp.arange(16.0), (4, 4)), knp.reshape(knp.arange(16.0) + 1, (4, 4))

    def chain(x):
        for _ in range(1000):
            x = knp.sin(x) * 1.01 + 0.1
        return knp.sum(x)

    def scalar_chain(x):  # W2-like: arithmetic on 0-d values
        for _ in range(200):
            x = knp.tanh(x) * 0.9 + x * x * 0.01
        return x

    grad_chain = kenaz.grad(chain)
    scalar_grad = kenaz.grad(scalar_chain)
    return {
        "W1-like grad, 3,000 ops": lambda: grad_chain(x),
        "W2-like scalar grad, 1,000 ops": lambda: scalar_grad(0.3),
        "knp.sin(x)": lambda: knp.sin(x),
        "x + y": lambda: x + y,
        "x * y": lambda: x * y,
        "knp.sum(x)": lambda: knp.sum(x),
        "m @ n (4x4)": lambda: m @ n,
        "x[3]": lambda: x[3],
        "knp.mean(x)": lambda: knp.mean(x),
        "knp.dot(x, y)": lambda: knp.dot(x, y),
        "knp.reshape(x, (4, 4))": lambda: knp.reshape(x, (4, 4)),
        "knp.concatenate([x, y])": lambda: knp.concatenate([x, y]),
        "knp.where(x > 0.5, x, y)": lambda: knp.where(x > 0.5, x, y),
        "knp.transpose(m)": lambda: knp.transpose(m),
        "x[2:10]": lambda: x[2:10],
        "x.dtype": lambda: x.dtype,
    }


# Seconds (outside callgrind) per stretch of calls counted: the array workloads' calls take
# milliseconds, and a few of them per stretch count them as exactly as many would.
INSTRUCTION_BUDGET = {"w3-w5": 0.05}

# --cases: where the cases come from (a function returning {name: callable}).
CASES = {
    "workloads": "benchmarks.ab:workload_cases",
    "small": "benchmarks.ab:small_cases",
    "w3-w5": "benchmarks.ab:array_workload_cases",
    "decompositions": "benchmarks.decompositions_ab:cases",
    "transforms": "benchmarks.transforms_ab:cases",
}


def measure(calls: int, cases: str = "workloads", best: bool = False) -> dict[str, float]:
    """In the subprocess: median (or, with ``best``, least) CPU seconds per call of each case."""
    module, function = CASES.get(cases, cases).split(":")
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


# The C function whose calls mark the bounds of a measured stretch under callgrind
# (`--dump-before`: each call starts a new dump of the counts). Called nowhere else.
_MARKER = "os_getppid"


def count_instructions(cases: str = "small", budget: float = 0.5) -> None:
    """In the subprocess under callgrind: for each case, a warm-up, then ``n`` and ``5 * n``
    calls, each stretch between markers (``os.getppid()``), with ``n`` such that a
    stretch of ``n`` takes about ``budget`` seconds here. Prints ``{case: n}``."""
    module, function = CASES.get(cases, cases).split(":")
    counts = {}
    for name, run in getattr(importlib.import_module(module), function)().items():
        start = time.process_time()
        run()
        n = counts[name] = max(2, int(budget / max(time.process_time() - start, 1e-9)))
        for count in (n, 5 * n):
            os.getppid()
            # Not `range`: its ints are allocated, and what freeing one costs depends on
            # the allocator's state, which differs between the trees (+4 on `x.dtype`).
            for _ in itertools.repeat(None, count):
                run()
        os.getppid()
    print(json.dumps(counts))


def instructions_per_call(source: Path, cases: str, workdir: Path) -> dict[str, float]:
    """Instructions per call of each case, from one run of ``source`` under callgrind: the
    difference of the two stretches over the difference of their call counts, so that
    the cost of the loop and the markers cancels."""
    env = dict(
        os.environ,
        PYTHONPATH=f"{source}{os.pathsep}{ROOT}",
        OMP_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    out = workdir / "callgrind.out"
    code = (
        f"import kenaz; assert kenaz.__file__.startswith({str(source)!r}); "
        f"from benchmarks.ab import count_instructions; "
        f"count_instructions({cases!r}, {INSTRUCTION_BUDGET.get(cases, 0.5)!r})"
    )
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    command += [f"--dump-before={_MARKER}", sys.executable, "-c", code]
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"callgrind run on {source} failed:\n{result.stderr[-3000:]}")
    calls = json.loads(result.stdout.strip().splitlines()[-1])
    # The dumps in order: .1 is the start-up and the first warm-up, then per case the
    # stretch of n calls, that of 5 n calls, and the next case's warm-up (the last, the
    # end of the run, is the file without a number).
    totals = []
    for part in range(2, 1 + 3 * len(calls)):
        for line in (workdir / f"callgrind.out.{part}").read_text().splitlines():
            if line.startswith("summary:"):
                totals.append(int(line.split()[1]))
    return {
        name: (totals[3 * i + 1] - totals[3 * i]) / (4 * n)
        for i, (name, n) in enumerate(calls.items())
    }


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
    parser.add_argument(
        "--cases",
        default="workloads",
        help=f"one of {', '.join(sorted(CASES))}, or 'module:function' returning "
        "{name: callable}",
    )
    parser.add_argument(
        "--best",
        action="store_true",
        help="least time instead of the median, within and across rounds (steadier on a "
        "loaded machine: load only ever adds time)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per call under Valgrind's callgrind instead of timing",
    )
    options = parser.parse_args()
    trees = {"A": options.a.resolve(), "B": options.b.resolve()}
    if options.instructions:
        print_instructions(trees, options.cases)
        return
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


def print_instructions(trees: dict[str, Path], cases: str) -> None:
    """The ``--instructions`` table: one callgrind run per tree (the two run at once)."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        with ThreadPoolExecutor(2) as pool:
            futures = {
                name: pool.submit(instructions_per_call, trees[name], cases, Path(d))
                for name, d in (("A", a), ("B", b))
            }
            counts = {name: future.result() for name, future in futures.items()}
    print(f"A = {trees['A']}\nB = {trees['B']}\ninstructions per call (callgrind)")
    print(f"{'row':<40} {'A':>13} {'B':>13} {'B/A':>7}")
    for row, a_count in counts["A"].items():
        b_count = counts["B"].get(row, float("nan"))
        print(f"{row:<40} {a_count:13,.0f} {b_count:13,.0f} {b_count / a_count:7.3f}")


if __name__ == "__main__":
    main()
