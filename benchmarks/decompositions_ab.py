"""A/B: kenaz's decompositions on NumPy arrays, on two source trees, in one run, interleaved.

What routing the decompositions through the array namespace costs on NumPy's path (one
type-identity test per implementation, constants of the rules made on their tensors'
backend): eager calls and gradients on small matrices (3 x 3, where kenaz's overhead
dominates) and on 64 x 64 ones. Each round runs every case once in a fresh subprocess
per tree (the order alternating between rounds); a subprocess reports the median CPU
time (``time.process_time``) per call. The ratio printed is the median over rounds of
B / A: below 1 means B is faster.

    git archive main src | tar -x -C /tmp/kenaz_base
    .venv/bin/python -m benchmarks.decompositions_ab /tmp/kenaz_base/src src --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _cases() -> dict[str, object]:
    import numpy as np

    import kenaz
    import kenaz.numpy as knp

    la = knp.linalg
    rng = np.random.default_rng(0)
    cases = {}
    for n in (3, 64):
        a = rng.normal(size=(n, n))
        spd = a @ a.T + n * np.eye(n)
        b = rng.normal(size=(n, 2))
        t_spd, t_a, t_b = knp.array(spd), knp.array(a), knp.array(b)
        cases[f"cholesky {n}"] = lambda t=t_spd: la.cholesky(t)
        cases[f"eigh {n}"] = lambda t=t_spd: la.eigh(t)
        cases[f"svd {n}"] = lambda a=t_a: la.svd(a, full_matrices=False)
        cases[f"solve {n}"] = lambda a=t_spd, b=t_b: la.solve(a, b)
        cases[f"grad slogdet(cholesky) {n}"] = lambda s=spd: kenaz.grad(
            lambda s: knp.sum(knp.log(knp.diagonal(la.cholesky(s))))
        )(s)
        cases[f"grad eigh {n}"] = lambda s=spd: kenaz.grad(
            lambda s: knp.sum(la.eigh(s)[1] ** 2 * la.eigh(s)[0])
        )(s)
        cases[f"grad svd {n}"] = lambda a=a: kenaz.grad(
            lambda a: knp.sum(la.svd(a, full_matrices=False)[0] ** 2)
        )(a)
        cases[f"grad pinv {n}"] = lambda a=a: kenaz.grad(lambda a: knp.sum(la.pinv(a)))(a)
    return cases


def measure(calls: int) -> dict[str, float]:
    """In the subprocess: median CPU seconds per call of each case."""
    import time

    times = {}
    for name, run in _cases().items():
        start = time.process_time()
        run()  # warm-up, and how many calls make a sample of about 20 ms
        repeat = max(1, int(0.02 / max(time.process_time() - start, 1e-6)))
        samples = []
        for _ in range(calls):
            start = time.process_time()
            for _ in range(repeat):
                run()
            samples.append((time.process_time() - start) / repeat)
        times[name] = statistics.median(samples)
    return times


def run_tree(source: Path, calls: int) -> dict[str, float]:
    """One subprocess importing kenaz from ``source``; its timings."""
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{ROOT}", OMP_NUM_THREADS="1")
    code = (
        "import json, kenaz; from benchmarks.decompositions_ab import measure; "
        f"assert kenaz.__file__.startswith({str(source)!r}), kenaz.__file__; "
        f"print(json.dumps(measure({calls})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="source directory of tree A (the base)")
    parser.add_argument("b", type=Path, help="source directory of tree B")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    a_runs, b_runs = [], []
    for round_ in range(args.rounds):
        order = [(args.a, a_runs), (args.b, b_runs)]
        for source, runs in order if round_ % 2 == 0 else order[::-1]:
            runs.append(run_tree(source.resolve(), args.calls))
    print(f"{'case':32} {'A (us)':>10} {'B (us)':>10} {'B/A':>6}")
    for name in a_runs[0]:
        a = statistics.median(run[name] for run in a_runs)
        b = statistics.median(run[name] for run in b_runs)
        print(f"{name:32} {a * 1e6:10.1f} {b * 1e6:10.1f} {b / a:6.3f}")


if __name__ == "__main__":
    main()
