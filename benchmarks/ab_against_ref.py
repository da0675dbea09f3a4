"""In-process A/B of this checkout's kenaz against another git revision's (default: main).

The other revision's ``src/kenaz`` is extracted with ``git archive`` into a
temporary directory and imported as ``kenaz_base`` (kenaz's imports are
relative), so both run in one process, sampled in interleaved rounds of CPU
time (``benchmarks/_timing.py``). Workloads: W1-like (grad through 3,000 small
ops), W2-like (grad of a 100-op scalar expression), and eager ``x + y`` and
``knp.sin(x)`` on 16 float64.

Run: ``.venv/bin/python benchmarks/ab_against_ref.py [ref] [--rounds N] [--aa]``
(``--aa`` times the base against itself, to show the noise).
"""

from __future__ import annotations

import argparse
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import _timing  # noqa: I001  (first: pins BLAS to one thread before NumPy loads)
import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def import_revision(ref: str, into: Path):
    """Import ``ref``'s ``src/kenaz`` as the package ``kenaz_base``."""
    archive = subprocess.run(
        ["git", "archive", ref, "src/kenaz"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "src" / "kenaz").rename(into / "kenaz_base")
    sys.path.insert(0, str(into))
    return importlib.import_module("kenaz_base"), importlib.import_module("kenaz_base.numpy")


def ab_medians(base, this, rounds: int, sample_seconds: float = 0.05) -> tuple[float, float]:
    """Median CPU seconds per call of ``base`` and ``this``, interleaved, alternating which
    goes first in each round (so neither always runs on a warmer cache)."""
    base(), this()
    counts = [_timing._calls_per_sample(run, sample_seconds) for run in (base, this)]
    samples: list[list[float]] = [[], []]
    for round_number in range(rounds):
        order = (0, 1) if round_number % 2 == 0 else (1, 0)
        for which in order:
            run, count = (base, this)[which], counts[which]
            start = time.process_time()
            for _ in range(count):
                run()
            samples[which].append((time.process_time() - start) / count)
    return statistics.median(samples[0]), statistics.median(samples[1])


def workloads(kenaz, knp) -> dict[str, object]:
    def chain(x):
        for _ in range(1000):
            x = knp.sin(x) * 1.01 + 0.1
        return knp.sum(x)

    def expression(a, b):
        for _ in range(25):
            a = knp.sin(a) * b + knp.cos(a)
        return a

    x16 = knp.asarray(np.linspace(-1.0, 1.0, 16))
    y16 = knp.asarray(np.linspace(0.0, 2.0, 16))
    w1 = kenaz.grad(chain)
    w2 = kenaz.grad(expression, argnums=(0, 1))
    a0, b0 = knp.asarray(0.3), knp.asarray(0.9)
    return {
        "W1 grad, 3000 ops": lambda: w1(x16),
        "W2 grad, 100 scalar ops": lambda: w2(a0, b0),
        "eager x + y": lambda: x16 + y16,
        "eager knp.sin(x)": lambda: knp.sin(x16),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("ref", nargs="?", default="main")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--aa", action="store_true", help="base against itself: the noise")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    import kenaz
    import kenaz.numpy as knp

    with tempfile.TemporaryDirectory() as tmp:
        base, base_np = import_revision(args.ref, Path(tmp))
        ours, theirs = workloads(kenaz, knp), workloads(base, base_np)
        print(f"this checkout vs {args.ref}: median CPU time per call, {args.rounds} rounds")
        for name in ours:
            this = theirs[name] if args.aa else ours[name]
            base_time, this_time = ab_medians(theirs[name], this, args.rounds)
            print(
                f"  {name:26s} base {base_time * 1e6:9.2f} us   "
                f"this {this_time * 1e6:9.2f} us   this/base {this_time / base_time:6.3f}"
            )


if __name__ == "__main__":
    main()
