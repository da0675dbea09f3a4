"""What a workload is: contenders computing the same thing, a reference, a tolerance and targets.

A workload module builds a :class:`Case` for one size ("full" for ``make
bench``, "smoke" for the test that keeps the benchmarks from rotting). The
first contender of a case is the hand-written NumPy reference; every other
contender's outputs are checked against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .peers import Peers

REFERENCE = "numpy"


@dataclass
class Contender:
    """One library's way of computing a workload.

    ``run`` is the timed callable (inputs already converted to the library's
    own arrays); ``outputs`` turns its result into a list of NumPy arrays, in
    the reference's order, outside the timing. A contender that cannot run
    (peer not installed, feature not written yet) has ``run=None`` and a
    ``note`` saying why. One too slow for every ``make bench`` names why in
    ``slow``; it runs only with ``run_all.py --slow``.
    """

    library: str
    run: Callable[[], Any] | None
    outputs: Callable[[Any], Sequence[Any]] = lambda result: [result]
    note: str = ""
    slow: str = ""
    # For a `kenaz jit` row: trace and compile a fresh copy; returns (CPU seconds, primitive ops).
    compile_cost: Callable[[], tuple[float, int]] | None = None

    @property
    def is_kenaz(self) -> bool:
        return self.library.startswith("kenaz")


def unavailable(library: str, note: str) -> Contender:
    """A row that says why ``library`` was not measured."""
    return Contender(library, None, note=note)


@dataclass
class Case:
    """A workload at one size: its contenders (the NumPy reference first) and how to compare."""

    contenders: list[Contender]
    ops: int | None = None  # ops per call, for the "per op" column; None if not meaningful
    rtol: float = 1e-7
    atol: float = 1e-9


@dataclass
class TargetCheck:
    """One target of issue 7, evaluated on a kenaz row."""

    description: str  # e.g. "<= 0.8x torch"
    ratio: float | None  # measured ratio, None if it could not be measured
    limit: float
    reason: str = ""  # why there is no ratio

    @property
    def met(self) -> bool | None:
        return None if self.ratio is None else self.ratio <= self.limit

    def __str__(self) -> str:
        if self.ratio is None:
            return f"{self.description}: n/a ({self.reason})"
        return f"{self.description}: {self.ratio:.2f}x {'met' if self.met else 'NOT MET'}"


@dataclass
class RowResult:
    """Everything measured for one contender of one workload."""

    library: str
    seconds: float | None = None
    per_op_seconds: float | None = None
    peak_bytes: int | None = None
    check: str = ""  # "ok", "MISMATCH ...", "" when not run
    note: str = ""
    targets: list[TargetCheck] = field(default_factory=list)
    ratio_to_numpy: float | None = None
    samples: int = 0
    sample_is_warmup: bool = False  # too slow to repeat: timed from its warm-up call alone
    compile_seconds_per_op: float | None = None  # kenaz jit rows: trace + compile, per op
    compile_ops: int | None = None


Targets = Callable[[RowResult, dict[str, RowResult]], list[TargetCheck]]


@dataclass
class Workload:
    """A named benchmark: how to build it, and the targets its kenaz rows are held to."""

    key: str
    title: str
    build: Callable[[Peers, str], Case]  # (peers, "full" | "smoke") -> Case
    targets: Targets = lambda kenaz_row, rows: []
    jit_targets: Targets = lambda kenaz_row, rows: []  # for the `kenaz jit` rows (issue 13)
    measure_memory: bool = False
    budget_share: float = 1.0  # fraction of the per-workload sampling time it gets


def compare_outputs(
    expected: Sequence[Any], actual: Sequence[Any], rtol: float, atol: float
) -> str:
    """``"ok"`` if ``actual`` matches ``expected`` within tolerance, else a loud description."""
    expected = [np.asarray(e) for e in expected]
    actual = [np.asarray(a) for a in actual]
    if len(expected) != len(actual):
        return f"MISMATCH: {len(actual)} outputs, expected {len(expected)}"
    for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
        if e.shape != a.shape:
            return f"MISMATCH: output {index} has shape {a.shape}, expected {e.shape}"
        if not np.allclose(a, e, rtol=rtol, atol=atol):
            error = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64))))
            return f"MISMATCH: output {index} off by up to {error:.3g}"
    return "ok"


# -- target helpers ---------------------------------------------------------------------
def ratio_to(library: str, limit: float, measure: str = "seconds") -> Targets:
    """Target: kenaz's ``measure`` is at most ``limit`` times ``library``'s in the same run."""

    def check(kenaz_row: RowResult, rows: dict[str, RowResult]) -> list[TargetCheck]:
        description = f"<= {limit:g}x {library}" + (" memory" if measure == "peak_bytes" else "")
        other = rows.get(library)
        ours = getattr(kenaz_row, measure)
        theirs = getattr(other, measure) if other is not None else None
        if other is None or theirs is None:
            reason = other.note if other is not None and other.note else f"{library} not measured"
            return [TargetCheck(description, None, limit, reason)]
        if ours is None:
            return [TargetCheck(description, None, limit, kenaz_row.note or "kenaz not measured")]
        return [TargetCheck(description, ours / theirs, limit)]

    return check


def all_of(*targets: Targets) -> Targets:
    """Several targets on the same row."""

    def check(kenaz_row: RowResult, rows: dict[str, RowResult]) -> list[TargetCheck]:
        return [result for target in targets for result in target(kenaz_row, rows)]

    return check


# W1, W2 and W6: per op, kenaz at most 0.8x PyTorch eager and 0.5x HIPS autograd.
PER_OP_TARGETS = all_of(ratio_to("torch", 0.8), ratio_to("autograd", 0.5))


# -- kenaz.jit rows (issue 13) --------------------------------------------------------------
JIT_LIBRARY = "kenaz jit"
COMPILE_LIMIT_SECONDS_PER_OP = 30e-6


def jit_targets(numpy_limit: float | None) -> Targets:
    """Issue 13's targets for a ``kenaz jit`` row: at most ``numpy_limit`` x the hand-written
    NumPy (when the issue sets one) and within 2x of JAX's jit."""
    targets = [ratio_to("jax (jit)", 2.0)]
    if numpy_limit is not None:
        targets.insert(0, ratio_to("numpy", numpy_limit))
    return all_of(*targets)


def compile_target(kenaz_row: RowResult, rows: dict[str, RowResult]) -> list[TargetCheck]:
    """Trace + compile cost at most 30 µs per primitive op (tracing runs the function once,
    so the cost is also shown in eager kenaz calls)."""
    if kenaz_row.compile_seconds_per_op is None or not kenaz_row.compile_ops:
        return []
    total = kenaz_row.compile_seconds_per_op * kenaz_row.compile_ops
    eager = next(
        (
            row.seconds
            for name, row in rows.items()
            if name.startswith("kenaz") and not name.startswith(JIT_LIBRARY) and row.seconds
        ),
        None,
    )
    in_eager_calls = f" = {total / eager:.1f} eager calls" if eager else ""
    description = (
        f"trace+compile {kenaz_row.compile_seconds_per_op * 1e6:.1f} µs/op "
        f"of {kenaz_row.compile_ops:,} ops{in_eager_calls}, <= 30"
    )
    ratio = kenaz_row.compile_seconds_per_op / COMPILE_LIMIT_SECONDS_PER_OP
    check = TargetCheck(description, ratio, 1.0)
    return [check]


COMPILE_SAMPLES = 5  # fresh traces per trace+compile figure (their median)


def kenaz_jit(
    make: Callable[[], Callable[..., Any]],
    args: Sequence[Any],
    outputs: Callable[[Any], Sequence[Any]],
) -> Contender:
    """A ``kenaz jit`` row: ``make()`` returns a fresh jitted function of ``args``.

    The timed function is traced and compiled before timing; ``compile_cost``
    traces and compiles fresh ones on CPU time (the optimized program and the interpreter's
    plan for it): the median of ``COMPILE_SAMPLES``. (One
    sample varied by 1.5x between runs: a collection deferred from earlier work, which
    the trace's pause of the collector moves into the next trace, or a busy neighbour.)
    """
    import statistics
    import time

    import kenaz

    if not hasattr(kenaz, "jit"):  # an older kenaz, in an A/B (benchmarks/ab.py)
        return unavailable(JIT_LIBRARY, "this kenaz has no jit")
    jitted = make()
    # Warm up to the steady tier: interpreted, generated code, then fused code if numba is
    # installed and it pays (kenaz.compiler.tiers); the time to first result is its own row.
    tiers = getattr(getattr(kenaz, "compiler", None), "tiers", None)
    for _ in range(1 + (tiers.HOT + 1 if tiers is not None else 0)):
        jitted(*args)

    # The interpreter's plan (tier 0), which the first call that runs the program makes, counts
    # as compilation too: trace+compile is the cost of a program ready to run.
    interpret = getattr(getattr(getattr(kenaz, "compiler", None), "interpreter", None),
                        "interpret", None)  # fmt: skip

    def compile_cost() -> tuple[float, int]:
        samples = []
        for _ in range(COMPILE_SAMPLES):
            fresh = make()
            started = time.process_time()
            program = fresh.program(*args)  # trace and optimize
            if interpret is not None:
                interpret(program)
            samples.append(time.process_time() - started)
        ops = fresh._entry(tuple(args), {}).staged.program.primitive_count()
        return statistics.median(samples), ops

    return Contender(JIT_LIBRARY, lambda: jitted(*args), outputs, compile_cost=compile_cost)
