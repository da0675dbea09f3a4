"""Axis bookkeeping for rules: the helpers below perform no primitive.

Normalizing ``axis`` arguments, shapes of tensors and plain values, where a
per-example axis lands once a batch axis is inserted, and the batching rules
that only re-perform their own op with shifted axes (reductions, scans).
The lowest module of ``kenaz.ops``: the shape primitives and every family
above use it; ``kenaz.ops.batching`` re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor

__all__ = [
    "normalize_axes", "ndim_of", "shape_of", "batch_size", "shift_axis", "shift_axes",
    "reduction", "scan", "along_axes",
]  # fmt: skip


def normalize_axes(axis: int | Sequence[int] | None, ndim: int, op: str) -> tuple[int, ...]:
    """``axis`` as a sorted tuple of non-negative ints, with NumPy's error for a bad axis."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:  # one axis, the commonest: nothing to check
        return (axis % ndim,)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    axes = tuple(axes) if isinstance(axes, (tuple, list, range, np.ndarray)) else None
    if axes is None or not all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes
    ):
        raise TypeError(f"kenaz.{op}: axis must be None, an int or a tuple of ints, got {axis!r}")
    normalized = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(
                f"kenaz.{op}: axis {a} is out of bounds for an array of dimension {ndim}"
            )
        normalized.append(int(a) % ndim)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"kenaz.{op}: repeated axis in {axis}")
    return tuple(sorted(normalized))


def ndim_of(x: Any) -> int:
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tensor) else np.shape(x)


def batch_size(args: Sequence[Any], batch_axes: Sequence[int | None]) -> int:
    """The batch size: the length of the batch axis of any batched argument."""
    for x, axis in zip(args, batch_axes, strict=True):
        if axis is not None:
            return shape_of(x)[axis]
    raise ValueError("kenaz batching rule called without a batched argument")


def shift_axis(axis: int, batch_axis: int) -> int:
    """Where per-example axis ``axis`` is in the batched value (batch axis at ``batch_axis``)."""
    return axis + (axis >= batch_axis)


def shift_axes(axes: Sequence[int], batch_axis: int) -> tuple[int, ...]:
    return tuple(a + (a >= batch_axis) for a in axes)


# -- batching rules that only re-perform their op ------------------------------------------
def reduction(op, args, batch_axes, *, axis: tuple[int, ...], keepdims: bool, **params):
    """Batching rule for reductions over a normalized tuple ``axis`` (sum, prod, max, min)."""
    (x,), (b,) = args, batch_axes
    out_axis = b if keepdims else b - sum(a < b for a in axis)
    return op(x, axis=shift_axes(axis, b), keepdims=keepdims, **params), out_axis


def scan(op, args, batch_axes, *, axis: int, **params):
    """Batching rule for scans along one axis (cumsum, cumprod): the layout is kept."""
    (x,), (b,) = args, batch_axes
    return op(x, axis=shift_axis(axis, b), **params), b


def along_axes(op, args, batch_axes, *, axis, **params):
    """Batching rule for unary ops that act along a tuple of axes and keep the rank (flip)."""
    (x,), (b,) = args, batch_axes
    return op(x, axis=shift_axes(axis, b), **params), b
