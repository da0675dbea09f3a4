"""Tiering: a program starts on its NumPy code and moves to fused code once it is hot.

numba compiles a fused kernel in tens of milliseconds, where the NumPy code of a
program is ready in microseconds per op. So a staged program first runs its
NumPy code, counting calls; at the :data:`HOT`-th call it fuses
(:mod:`kenaz.compiler.fusion`), compiles, and times both versions on that
call's arguments, keeping the faster: fusion is kept only where it pays (it
does not on large arrays whose ufuncs NumPy vectorizes with SIMD better than a
scalar loop). ``jit(f, fuse=True)`` fuses at once, ``fuse=False`` never.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from . import fusion
from .codegen import compile_program
from .program import Program

__all__ = ["HOT", "tiered", "fused_code"]

HOT = 20  # calls on NumPy code before a signature is fused


def fused_code(program: Program, in_place: bool) -> Callable[..., tuple] | None:
    """The compiled code of ``program`` with its elementwise runs fused (``None``: none)."""
    fused, count = fusion.fuse(program)
    if not count:
        return None
    code = compile_program(fused, in_place)
    code.fused_runs = count  # type: ignore[attr-defined]
    code.program = fused  # type: ignore[attr-defined]
    return code


def tiered(staged: Any, program: Program, numpy_code: Callable[..., tuple]) -> Callable:
    """``numpy_code``, counting calls: the :data:`HOT`-th sets ``staged.compiled`` to the
    faster of it and the fused code, measured on that call's values."""
    calls = 0

    def counting(*values: Any) -> tuple:
        nonlocal calls
        calls += 1
        if calls == HOT:
            with staged._lock:
                staged.compiled = _faster(program, numpy_code, values, staged.optimize)
            return staged.compiled(*values)
        return numpy_code(*values)

    counting.source = numpy_code.source  # type: ignore[attr-defined]
    return counting


def _faster(
    program: Program, numpy_code: Callable[..., tuple], values: tuple, in_place: bool
) -> Callable[..., tuple]:
    fused = fused_code(program, in_place)
    if fused is None:
        return numpy_code
    fused(*values)  # numba compiles each kernel at its first call: not timed
    best = {numpy_code: float("inf"), fused: float("inf")}
    for _ in range(3):  # alternated, the best of three: robust to a busy machine
        for code in best:
            best[code] = min(best[code], _elapsed(code, values))
    return fused if best[fused] < best[numpy_code] else numpy_code


def _elapsed(code: Callable[..., tuple], values: tuple) -> float:
    """Seconds one run of ``code`` on ``values`` takes."""
    started = time.perf_counter()
    code(*values)
    return time.perf_counter() - started
