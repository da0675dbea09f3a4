"""Tiering: a program starts interpreted, then runs generated NumPy code, then fused code.

The interpreter (:mod:`kenaz.compiler.interpreter`) is ready in about a
microsecond per op; generated Python code (:mod:`kenaz.compiler.codegen`) costs
CPython's ``compile`` about 10 µs per op and runs each op faster; numba compiles a
fused kernel in tens of milliseconds. So a staged program first runs on the
interpreter, counting calls; at the :data:`WARM`-th it generates its NumPy
code, and (with numba) at the :data:`HOT`-th call it fuses
(:mod:`kenaz.compiler.fusion`), compiles, and times both versions on that
call's arguments, keeping the faster: fusion is kept only where it pays (it
does not on large arrays whose ufuncs NumPy vectorizes with SIMD better than a
scalar loop). ``jit(f, fuse=True)`` fuses at once, ``fuse=False`` never.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

from . import fusion
from .codegen import compile_program
from .interpreter import interpret
from .program import Program

__all__ = ["WARM", "HOT", "tiered", "fused_code"]

# Calls on the interpreter before a signature's Python code is generated: a jitted
# function's first call (the trace), its second (the purity check), then two more.
WARM = 4
HOT = 20  # calls before a signature is fused (if that pays)


def fused_code(program: Program, in_place: bool) -> Callable[..., tuple] | None:
    """The compiled code of ``program`` with its elementwise runs fused (``None``: none)."""
    fused, count = fusion.fuse(program)
    if not count:
        return None
    code = compile_program(fused, in_place)
    code.fused_runs = count  # type: ignore[attr-defined]
    code.program = fused  # type: ignore[attr-defined]
    return code


def tiered(staged: Any, program: Program, fuse: bool) -> Callable:
    """The interpreter of ``program`` (made at its first call), counting calls: the
    :data:`WARM`-th sets ``staged.compiled`` to its generated NumPy code, and with ``fuse``
    the :data:`HOT`-th to the faster of that and the fused code, measured on that call's
    values."""
    calls = 0
    neutral = staged.neutral
    first = None  # the interpreter, made at the first call (inspecting the program needs none)
    # `staged.compiled` is this function: a strong reference back would make a cycle, which
    # only the cyclic collector frees (a jitted function dropped, `jit(f)(x)` in a loop, left
    # a program's equations, variables and plan behind for it at every trace).
    owner = weakref.ref(staged)

    def counting(*values: Any) -> tuple:
        nonlocal calls, first
        calls += 1
        staged = owner()
        if staged is None:  # its program was dropped; a caller kept this function
            first = first or interpret(program, neutral)
            return first(*values)
        if calls >= WARM and staged.generated is None:
            with staged._lock:
                if staged.generated is None:  # (another thread may have generated it)
                    code = compile_program(program, staged.optimize, staged.neutral)
                    if not fuse:  # (with fuse, `staged.compiled` stays this function)
                        staged.compiled = code
                    staged.generated = code
        generated = staged.generated
        if generated is None:  # not warm yet
            if first is None:  # (two threads may both make it: the same function)
                first = interpret(program, neutral)
            return first(*values)
        if fuse and calls == HOT:
            with staged._lock:
                if fusion.available():  # (numba is imported now, not at the first call)
                    staged.compiled = _faster(program, generated, values, staged.optimize)
                else:
                    staged.compiled = generated
            return staged.compiled(*values)
        return generated(*values)

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
