"""What every transformation shares: converting inputs and outputs, checking
tangents and ``argnums``, forgetting a finished level's records, and pausing
the garbage collector while a tape is alive."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .backend import full_like
from .ops.elementwise import copy
from .tensor import Tensor

__all__ = [
    "distinct",
    "zeros_like",
    "check_tangent",
    "split_aux",
    "normalize_argnums",
    "with_selected",
    "forget_level",
    "gc_paused",
]


def check_tangent(
    primal: Tensor, tangent: Tensor, where: str, what: str = "tangent", of: str = "a primal"
) -> Tensor:
    """``tangent`` checked against ``primal`` (same shape; a complex one only for a
    complex primal) and cast to the primal's dtype."""
    if tangent.shape != primal.shape:
        raise ValueError(
            f"kenaz.{where}: a {what} of shape {tangent.shape} was given for {of} of shape "
            f"{primal.shape}; they must match"
        )
    if tangent.dtype != primal.dtype:
        if tangent.dtype.kind not in "fciub":
            raise TypeError(f"kenaz.{where}: {what} dtype {tangent.dtype} is not numeric")
        if tangent.dtype.kind == "c" and primal.dtype.kind != "c":
            raise TypeError(
                f"kenaz.{where}: a complex {what} ({tangent.dtype}) was given for {of} of real "
                f"dtype {primal.dtype}; pass a real {what}, or make the primal complex"
            )
        if primal.dtype.kind in "fc":
            tangent = tangent.astype(primal.dtype)
    return tangent


def zeros_like(x: Tensor) -> Tensor:
    """Zeros shaped and typed like ``x``, on ``x``'s backend."""
    return Tensor(full_like(x, x.shape, 0, x.dtype))


def distinct(leaves: list[Any]) -> list[Any]:
    """``leaves`` with each tensor that stands there more than once copied after its first place.

    A pass-through rule (``add``'s pullback, ``x + 1``'s tangent) hands the very
    same tensor to several inputs or outputs. Tensors can be changed in place
    outside transformations, so results handed to the user must not share one
    object: ``gx *= 0.5`` would silently change ``gy`` too.
    """
    seen: set[int] = set()
    for i, leaf in enumerate(leaves):
        if id(leaf) in seen:
            leaves[i] = copy(leaf)  # an op: an outer transformation differentiates it
        seen.add(id(leaf))
    return leaves


def split_aux(result: Any, where: str) -> tuple[Any, Any]:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"kenaz.{where}: with has_aux=True the function must return a pair (output, aux), "
            f"got {type(result).__name__}"
        )
    return result[0], result[1]


def normalize_argnums(argnums: int | Sequence[int], nargs: int, where: str) -> tuple[int, ...]:
    if isinstance(argnums, (int, np.integer)):
        nums: tuple[Any, ...] = (argnums,)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise TypeError(
            f"kenaz.{where}: argnums must be an int or a tuple of ints, got {argnums!r}"
        )
    if not nums:
        raise ValueError(f"kenaz.{where}: argnums is empty; name at least one argument")
    for n in nums:
        if not isinstance(n, (int, np.integer)) or not -nargs <= n < nargs:
            raise ValueError(
                f"kenaz.{where}: argnums={argnums!r} is out of range for a call with "
                f"{nargs} positional argument{'s' if nargs != 1 else ''}"
            )
    normalized = tuple(int(n) % nargs for n in nums)
    if len(set(normalized)) != len(normalized):
        raise ValueError(
            f"kenaz.{where}: argnums={argnums!r} names the same argument twice; name each once"
        )
    return normalized


def forget_level(outputs: Sequence[Tensor], level: int) -> None:
    """Drop ``level``'s records from the outputs leaving a transformation.

    Called after all of them were read: the same tensor may be returned twice.
    """
    for o in outputs:
        if o._trace:
            o._trace.pop(level, None)


_gc_lock = threading.Lock()
_gc_pauses = 0  # how many reverse passes are running, in all threads
_gc_was_enabled = False


class gc_paused:  # noqa: N801 - a context manager, named and used like a function
    """Pause Python's cyclic garbage collector while a reverse pass runs.

    A tape keeps many small objects alive (tensors, closures, entries), so the
    collector's passes traverse an ever larger heap and find nothing: kenaz's
    tapes hold no reference cycles, reference counting frees them. Measured
    (benchmarks/breakdown.py): 12% of grad's time at 3,000 ops, about 45% at
    100,000. The pause is process-wide, hence counted across threads; the
    collector's previous state comes back when the last pass ends.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _gc_pauses, _gc_was_enabled
        with _gc_lock:
            if _gc_pauses == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_pauses += 1

    def __exit__(self, *exc_info: Any) -> None:
        global _gc_pauses
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def with_selected(f: Callable, args: tuple, kwargs: dict, nums: tuple[int, ...]) -> Callable:
    """``f`` as a function of the arguments at positions ``nums`` only."""

    def f_of_selected(*selected: Any) -> Any:
        full = list(args)
        for n, value in zip(nums, selected):
            full[n] = value
        return f(*full, **kwargs)

    return f_of_selected
