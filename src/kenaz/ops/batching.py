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

from . import shape
from .axes import (  # noqa: F401  (re-exported: the helpers every batching rule uses)
    along_axes,
    batch_size,
    ndim_of,
    reduction,
    scan,
    shape_of,
    shift_axes,
    shift_axis,
)
from .shape import move_axis, move_batch_to_front, with_batch_in_front  # noqa: F401


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
        if bx == 0 and by == 0:  # both batched in front, ranks differ: pad the lower one
            x_shape, y_shape = x.shape, y.shape
            if len(x_shape) < len(y_shape):
                x = _pad_after_batch(x, x_shape, len(y_shape))
            else:
                y = _pad_after_batch(y, y_shape, len(x_shape))
            return op(x, y, **params), 0
    ndims = [ndim_of(a) for a in args]
    rank = max(n - (ax is not None) for n, ax in zip(ndims, batch_axes, strict=True))
    common = _common_batch_axis(ndims, batch_axes, rank)
    if common is not None:
        return op(*args, **params), common
    moved = [move_batch_to_front(a, ax, rank) for a, ax in zip(args, batch_axes, strict=True)]
    return op(*moved, **params), 0


def _pad_after_batch(x, x_shape: tuple[int, ...], ndim: int):
    """``x`` (batch axis first) with unit axes after the batch axis up to ``ndim`` axes:
    what ``move_batch_to_front(x, 0, ndim - 1)`` gives, for a rank it is known to lack."""
    padded = (x_shape[0],) + (1,) * (ndim - len(x_shape)) + x_shape[1:]
    return shape._reshape(x, shape=padded, order="C")


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


