"""Interleaved median timing for the stand-alone vmap/Jacobian/HVP benchmarks.

Each round times every contender once (a sample is as many calls as fill
``sample_seconds``), so a burst of load from another process hits all of
them alike; the reported time is the median over rounds, per call. BLAS is
pinned to one thread before NumPy loads, so ratios compare code, not pools,
and time is the process's CPU time (``time.process_time``): on a shared
machine, waiting for a core is not counted against either side.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


def _calls_per_sample(run: Callable[[], Any], sample_seconds: float) -> int:
    start = time.process_time()
    run()
    once = max(time.process_time() - start, 1e-7)
    return max(1, int(sample_seconds / once))


def interleaved_medians(
    runs: dict[str, Callable[[], Any]], rounds: int = 15, sample_seconds: float = 0.05
) -> dict[str, float]:
    """Median seconds per call of each callable, sampled in interleaved rounds."""
    for run in runs.values():  # warm up
        run()
    counts = {name: _calls_per_sample(run, sample_seconds) for name, run in runs.items()}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.process_time()
            for _ in range(counts[name]):
                run()
            samples[name].append((time.process_time() - start) / counts[name])
    return {name: statistics.median(values) for name, values in samples.items()}


def report(title: str, medians: dict[str, float], reference: str) -> None:
    """Print each median and its ratio to ``reference``."""
    print(title)
    base = medians[reference]
    for name, seconds in medians.items():
        print(f"  {name:<40} {seconds * 1e3:9.3f} ms   {seconds / base:7.2f}x {reference}")
