"""Batching-rule helpers shared by op families (used by ``vmap``).

A batching rule is ``rule(op, args, batch_axes, **params) -> (out, out_axis)``:
``args`` are the batched values one level out, ``batch_axes[i]`` the batch
axis of ``args[i]`` (``None`` when that argument is not batched). The rule
performs ops, so it runs once over the whole batch. For an op with
``multiple_results`` it returns ``(outs, out_axes)``, tuples of the same length.

The third parameter of a rule is passed positionally, so a rule may call it
anything that does not clash with the op's own parameters (``transpose`` has
an ``axes`` parameter, hence ``batch_axes`` here).

Most primitives get their rule from one of the family helpers below:
``elementwise``, ``reduction``, ``scan``, ``axis_permuting`` ... A new
primitive usually needs one line: ``Op(..., batch=batching.elementwise)``.

Examples
--------
>>> import numpy as np
>>> import kenaz
>>> from kenaz.ops import batching
>>> cube = kenaz.Op("cube", lambda x: x**3, batch=batching.elementwise)
>>> kenaz.vmap(cube, in_axes=1)(np.array([[1.0, 2.0], [3.0, 4.0]]))
Tensor([[ 1., 27.],
        [ 8., 64.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..tensor import Tensor


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


def move_axis(x: Tensor, source: int, destination: int) -> Tensor:
    """``moveaxis`` for non-negative axes, straight to the primitive (rules run per op)."""
    if source == destination:
        return x
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return shape._transpose(x, axes=tuple(order))


def move_batch_to_front(x: Any, axis: int | None, rank: int | None = None) -> Any:
    """Move the batch axis of ``x`` to 0; with ``rank``, insert unit axes after it so
    that the per-example part has ``rank`` dimensions (right-aligned broadcasting)."""
    if axis is None:
        return x
    x_shape = x.shape
    if axis != 0:
        x = move_axis(x, axis, 0)
        x_shape = (x_shape[axis],) + x_shape[:axis] + x_shape[axis + 1 :]
    if rank is not None and len(x_shape) - 1 < rank:
        padded = (x_shape[0],) + (1,) * (rank - len(x_shape) + 1) + x_shape[1:]
        x = shape._reshape(x, shape=padded, order="C")
    return x


def with_batch_in_front(x: Any, axis: int | None, size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast (a view) to ``size``."""
    if axis is not None:
        return move_batch_to_front(x, axis)
    x_shape = shape_of(x)
    return shape._broadcast_to(shape._expand_dims(x, axis=(0,)), shape=(size,) + x_shape)


def shift_axis(axis: int, batch_axis: int) -> int:
    """Where per-example axis ``axis`` is in the batched value (batch axis at ``batch_axis``)."""
    return axis + (axis >= batch_axis)


def shift_axes(axes: Sequence[int], batch_axis: int) -> tuple[int, ...]:
    return tuple(a + (a >= batch_axis) for a in axes)


# -- families -----------------------------------------------------------------------------
def elementwise(op, args, batch_axes, **params):
    """Batching rule for broadcasting elementwise ops.

    When the batch axes already line up (the common case: every batched
    argument has the same rank and batch axis, and unbatched ones broadcast
    from the right past it) the op runs as is; otherwise batch axes go to the
    front and unit axes make the ranks agree.
    """
    if len(args) == 1:  # unary: the op keeps the layout, wherever the batch axis is
        return op(args[0], **params), batch_axes[0]
    if len(args) == 2:  # binary, the common case: try the layouts that need no moves
        x, y = args
        bx, by = batch_axes
        if bx == by and x.ndim == y.ndim:
            return op(x, y, **params), bx
        if by is None and ndim_of(y) < x.ndim - bx:  # y broadcasts past the batch axis
            return op(x, y, **params), bx
        if bx is None and ndim_of(x) < y.ndim - by:
            return op(x, y, **params), by
    ndims = [ndim_of(a) for a in args]
    rank = max(n - (ax is not None) for n, ax in zip(ndims, batch_axes, strict=True))
    common = _common_batch_axis(ndims, batch_axes, rank)
    if common is not None:
        return op(*args, **params), common
    moved = [move_batch_to_front(a, ax, rank) for a, ax in zip(args, batch_axes, strict=True)]
    return op(*moved, **params), 0


def _common_batch_axis(ndims: list[int], batch_axes: Sequence[int | None], rank: int) -> int | None:
    """The batch axis shared by all arguments if broadcasting keeps it in place, else None."""
    common = None
    for ax, n in zip(batch_axes, ndims, strict=True):
        if ax is not None:
            if n != rank + 1 or (common is not None and ax != common):
                return None
            common = ax
    for ax, n in zip(batch_axes, ndims, strict=True):
        if ax is None and n > rank - common:
            return None
    return common


def reduction(op, args, batch_axes, *, axis: tuple[int, ...], keepdims: bool, **params):
    """Batching rule for reductions over a normalized tuple ``axis`` (sum, prod, max, min)."""
    (x,), (b,) = args, batch_axes
    out_axis = b if keepdims else b - sum(a < b for a in axis)
    return op(x, axis=shift_axes(axis, b), keepdims=keepdims, **params), out_axis


def index_reduction(op, args, batch_axes, *, axis: int | None, keepdims: bool):
    """Batching rule for ``argmax``/``argmin``: one axis, or the flattened array (``None``)."""
    (x,), (b,) = args, batch_axes
    if axis is not None:
        out_axis = b if keepdims else b - (axis < b)
        return op(x, axis=shift_axis(axis, b), keepdims=keepdims), out_axis
    example_ndim = x.ndim - 1
    x = move_batch_to_front(x, b)
    flat = shape.reshape(x, (x.shape[0], -1))
    out = op(flat, axis=1, keepdims=False)
    if keepdims:
        out = shape.reshape(out, (out.shape[0],) + (1,) * example_ndim)
    return out, 0


def scan(op, args, batch_axes, *, axis: int, **params):
    """Batching rule for scans along one axis (cumsum, cumprod): the layout is kept."""
    (x,), (b,) = args, batch_axes
    return op(x, axis=shift_axis(axis, b), **params), b


def along_axes(op, args, batch_axes, *, axis, **params):
    """Batching rule for unary ops that act along a tuple of axes and keep the rank (flip)."""
    (x,), (b,) = args, batch_axes
    return op(x, axis=shift_axes(axis, b), **params), b


# Imported last: the shape primitives use the helpers above for their own rules.
from . import shape  # noqa: E402
