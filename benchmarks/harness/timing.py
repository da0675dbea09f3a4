"""Timing and memory measurement, shared by every workload.

Contenders are timed *interleaved*: each round takes one sample of every
contender still sampling, so a burst of load from another process on this
shared machine hits all of them alike and the ratios stay meaningful. A
sample runs the callable ``calls_per_sample`` times (enough to last
``min_sample_seconds``) and records the time per call; the result is the
median sample.

The clock is the process's CPU time (``time.process_time``) by default: on
a two-core machine shared with other jobs, wall time mostly measures the
other jobs. Every library is pinned to one thread, so CPU time is the work
done; ``--clock wall`` switches to ``time.perf_counter``.

Objects alive before timing are moved out of the garbage collector's view
(``gc.freeze``): otherwise the hundreds of thousands of objects that
importing PyTorch and JAX creates are re-scanned by every full collection,
which charges 100 ms pauses to whichever library allocates Python objects
(kenaz, autograd) but not to one whose graph lives in C++ (PyTorch).
"""

from __future__ import annotations

import gc
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


@dataclass
class Timing:
    """The measured time of one contender."""

    median_seconds: float
    samples: list[float]
    calls_per_sample: int
    from_warmup: bool = False  # too slow to repeat: the warm-up call is the only sample


@dataclass
class Budget:
    """How long to sample one workload, and with which clock.

    The workload's ``seconds`` are shared equally among its contenders. Each
    gets at least ``min_samples`` samples (just one if a single call takes
    longer than ``slow_call_seconds``) and keeps sampling, up to
    ``max_samples``, while it has used less than its share. A contender whose
    warm-up call took longer than ``warmup_only_seconds`` is not called again:
    its warm-up is its one sample (eager JAX through W6's 100,000 ops).
    """

    seconds: float = 4.0
    min_samples: int = 3
    max_samples: int = 30
    min_sample_seconds: float = 0.02
    slow_call_seconds: float = 2.0
    warmup_only_seconds: float = 10.0
    include_slow: bool = False  # run contenders marked slow
    clock: str = "cpu"


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Hide the objects alive now from the garbage collector for the duration of the block."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()


def interleaved_medians(
    runs: dict[str, Callable[[], Any]], budget: Budget, warmup_seconds: dict[str, float]
) -> dict[str, Timing]:
    """Median seconds per call of each callable in ``runs``, sampled in interleaved rounds.

    Every callable has already been called once, the warm-up (which also
    compiles JIT-ed code), taking ``warmup_seconds[name]`` on the budget's
    clock. The first timed call sizes the samples and, if it is a sample on
    its own (one call per sample), counts as the first.
    """
    clock = CLOCKS[budget.clock]
    share = budget.seconds / max(1, len(runs))
    calls: dict[str, int] = {}
    samples: dict[str, list[float]] = {}
    spent: dict[str, float] = {}
    warmup_only = {name for name in runs if warmup_seconds[name] > budget.warmup_only_seconds}
    for name, run in runs.items():
        if name in warmup_only:
            calls[name], samples[name], spent[name] = 1, [warmup_seconds[name]], 0.0
            continue
        start = clock()
        run()
        seconds = clock() - start
        calls[name] = max(1, math.ceil(budget.min_sample_seconds / max(seconds, 1e-9)))
        samples[name] = [seconds] if calls[name] == 1 else []
        spent[name] = seconds

    slow = {name for name in runs if calls[name] == 1 and spent[name] > budget.slow_call_seconds}
    slow |= warmup_only

    def wants_more(name: str) -> bool:
        taken = len(samples[name])
        if name in slow:  # the first timed call is all the budget allows
            return taken < 1
        if taken < budget.min_samples:
            return True
        return taken < budget.max_samples and spent[name] < share

    while hungry := [name for name in runs if wants_more(name)]:
        for name in hungry:
            run, count = runs[name], calls[name]
            start = clock()
            for _ in range(count):
                run()
            seconds = clock() - start
            samples[name].append(seconds / count)
            spent[name] += seconds
    return {
        name: Timing(statistics.median(taken), taken, calls[name], name in warmup_only)
        for name, taken in samples.items()
    }


def peak_memory_bytes(run: Callable[[], Any]) -> int:
    """Peak memory allocated during one call of ``run``, as ``tracemalloc`` sees it.

    NumPy reports its array buffers to ``tracemalloc``; PyTorch's and XLA's
    allocators do not, so this is meaningful only for NumPy-based libraries.
    """
    gc.collect()
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = run()
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return max(0, peak - baseline)
