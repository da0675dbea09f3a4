"""Run one workload: warm up and check every contender, time them interleaved, judge targets."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from .peers import Peers
from .timing import CLOCKS, Budget, frozen_heap, interleaved_medians, peak_memory_bytes
from .workload import (
    JIT_LIBRARY,
    Contender,
    RowResult,
    Workload,
    compare_outputs,
    compile_target,
)

# Libraries whose allocations tracemalloc sees (NumPy reports its buffers; PyTorch and XLA do not).
TRACEMALLOC_VISIBLE = ("numpy", "kenaz", "autograd")


@dataclass
class WorkloadResult:
    """The rows of one workload, in contender order (the NumPy reference first)."""

    key: str
    title: str
    ops: int | None
    rows: list[RowResult] = field(default_factory=list)
    error: str = ""
    wall_seconds: float = 0.0  # how long the workload took to check and measure


def run_workload(
    workload: Workload, peers: Peers, size: str, budget: Budget | None
) -> WorkloadResult:
    """Check every contender against the reference; with a ``budget``, also time them.

    Without a budget (the smoke test) each contender runs once, for the check only.
    """
    try:
        case = workload.build(peers, size)
    except Exception as error:  # noqa: BLE001 - a broken workload must not stop the others
        return WorkloadResult(workload.key, workload.title, None, error=_describe(error))
    started = time.perf_counter()
    result = WorkloadResult(workload.key, workload.title, case.ops)
    reference, expected = case.contenders[0], None
    runnable: dict[str, Contender] = {}
    warmup_seconds: dict[str, float] = {}
    clock = CLOCKS[budget.clock if budget else "wall"]
    for contender in case.contenders:
        row = RowResult(contender.library, note=contender.note)
        result.rows.append(row)
        if contender.run is None:
            continue
        if contender.slow and budget is not None and not budget.include_slow:
            row.note = f"skipped: {contender.slow} (run_all.py --slow runs it)"
            continue
        try:
            start = clock()
            outputs = contender.outputs(contender.run())  # the warm-up call (and JIT compile)
            warmup_seconds[contender.library] = clock() - start
        except Exception as error:  # noqa: BLE001 - reported in the row, loudly
            row.note = f"ERROR {_describe(error)}"
            continue
        if contender is reference:
            expected, row.check = outputs, "ok"
        elif expected is None:
            row.check = "no reference"
        else:
            row.check = compare_outputs(expected, outputs, case.rtol, case.atol)
        runnable[contender.library] = contender
    if budget is not None and runnable:
        _measure(workload, result, runnable, budget, warmup_seconds)
    result.wall_seconds = time.perf_counter() - started
    return result


def _measure(
    workload: Workload,
    result: WorkloadResult,
    runnable: dict[str, Contender],
    budget: Budget,
    warmup_seconds: dict[str, float],
) -> None:
    runs = {name: contender.run for name, contender in runnable.items()}
    budget = replace(budget, seconds=budget.seconds * workload.budget_share)
    with frozen_heap():
        timings = interleaved_medians(runs, budget, warmup_seconds)
    rows = {row.library: row for row in result.rows}
    for name, timing in timings.items():
        row = rows[name]
        row.seconds = timing.median_seconds
        row.samples = len(timing.samples)
        row.sample_is_warmup = timing.from_warmup
        if result.ops:
            row.per_op_seconds = timing.median_seconds / result.ops
        if workload.measure_memory and name.startswith(TRACEMALLOC_VISIBLE):
            row.peak_bytes = peak_memory_bytes(runnable[name].run)
    numpy_seconds = rows["numpy"].seconds
    for row in result.rows:
        if row.seconds is not None and numpy_seconds:
            row.ratio_to_numpy = row.seconds / numpy_seconds
    for name, contender in runnable.items():
        if contender.compile_cost is not None:
            seconds, ops = contender.compile_cost()
            rows[name].compile_seconds_per_op = seconds / max(ops, 1)
            rows[name].compile_ops = ops
    for row in result.rows:
        if row.library.startswith(JIT_LIBRARY):
            row.targets = workload.jit_targets(row, rows) + compile_target(row, rows)
        elif row.library.startswith("kenaz"):
            row.targets = workload.targets(row, rows)


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:160]
