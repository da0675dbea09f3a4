"""Shape manipulation composed from primitives: splitting and joining
(``array_split``, ``hsplit``, ``unstack``, ``append``, ``block``, ``insert``, ``delete``...),
``rollaxis``, ``rot90``, ``broadcast_arrays``, ``resize``, ``trim_zeros`` and ``diagflat``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.indexing import getitem as _getitem
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _axis, _knp, _t

__all__ = [
    "diagflat", "rollaxis", "broadcast_arrays", "array_split", "hsplit", "vsplit", "dsplit",
    "rot90", "append", "block", "unstack", "trim_zeros", "resize", "insert", "delete",
]  # fmt: skip


@_composite
def diagflat(v: Any, k: int = 0) -> Tensor:
    """A 2-d array with the flattened ``v`` on diagonal ``k``."""
    return _knp().diag(_shape.ravel(_t(v)), k)


@_composite
def rollaxis(a: Any, axis: int, start: int = 0) -> Tensor:
    """Roll ``axis`` backwards until it lies before ``start`` (prefer ``moveaxis``)."""
    a = _t(a)
    axis = _axis(axis, a.ndim)
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return _shape.moveaxis(a, axis, start) if axis != start else a


@_composite
def broadcast_arrays(*args: Any) -> tuple[Tensor, ...]:
    """Broadcast the arguments against each other."""
    tensors = [_t(a) for a in args]
    target = _np.broadcast_shapes(*[t.shape for t in tensors])
    return tuple(_shape.broadcast_to(t, target) for t in tensors)


@_composite
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    """Split into sections that may differ in size by one."""
    x = _t(x)
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        sections = int(indices_or_sections)
        each, extra = n // sections, n % sections
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = _np.concatenate([[0], _np.cumsum(sizes)]).astype(int)
    else:
        bounds = _np.array([0, *indices_or_sections, n])
    bounds = _np.clip(bounds, 0, n)
    return [
        _shape.slice_axis(x, axis, int(a), max(int(a), int(b)))
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]


@_composite
def hsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    x = _t(x)
    return _shape.split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


@_composite
def vsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    return _shape.split(x, indices_or_sections, axis=0)


@_composite
def dsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    return _shape.split(x, indices_or_sections, axis=2)


@_composite
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Array API ``unstack``: the slices along ``axis``."""
    x = _t(x)
    axis = _axis(axis, x.ndim)
    return tuple(_getitem(x, (slice(None),) * axis + (i,)) for i in range(x.shape[axis]))


@_composite
def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    m = _t(m)
    k %= 4
    first, second = axes
    if k == 0:
        return m
    if k == 2:
        return _shape.flip(_shape.flip(m, first), second)
    if k == 1:
        return _shape.swapaxes(_shape.flip(m, second), first, second)
    return _shape.flip(_shape.swapaxes(m, first, second), second)


@_composite
def append(arr: Any, values: Any, axis: Any = None) -> Tensor:
    """``arr`` with ``values`` appended (flattened when ``axis`` is None)."""
    if axis is None:
        return _shape.concatenate([_shape.ravel(_t(arr)), _shape.ravel(_t(values))], axis=0)
    return _shape.concatenate([_t(arr), _t(values)], axis=axis)


@_composite
def block(arrays: Any) -> Tensor:
    """Assemble an array from nested lists of blocks (``numpy.block``)."""

    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) else 0

    def max_ndim(x: Any) -> int:
        return max(max_ndim(item) for item in x) if isinstance(x, list) else _t(x).ndim

    list_depth = depth(arrays)
    result_ndim = max(list_depth, max_ndim(arrays))

    def assemble(x: Any, level: int) -> Tensor:
        if not isinstance(x, list):
            x = _t(x)
            return _shape.reshape(x, (1,) * (result_ndim - x.ndim) + x.shape)
        parts = [assemble(item, level + 1) for item in x]
        return _shape.concatenate(parts, axis=-(list_depth - level))

    return assemble(arrays, 0)


@_composite
def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Tensor:
    """Drop leading (``"f"``) and trailing (``"b"``) zeros along ``axis`` (every axis by
    default: the slices that are zero throughout), as NumPy 2's ``trim_zeros``."""
    values = _read_value(filt)
    result = _t(filt)
    axes = range(values.ndim) if axis is None else [
        int(a) % values.ndim for a in _np.atleast_1d(axis)
    ]
    for ax in axes:
        others = tuple(i for i in range(values.ndim) if i != ax)
        nonzero = _np.flatnonzero(_np.any(values != 0, axis=others) if others else values != 0)
        if nonzero.size == 0:
            start = stop = 0
        else:
            start = int(nonzero[0]) if "f" in trim.lower() else 0
            stop = int(nonzero[-1]) + 1 if "b" in trim.lower() else values.shape[ax]
        result = _getitem(result, (slice(None),) * ax + (slice(start, stop),))
        values = values[(slice(None),) * ax + (slice(start, stop),)]
    return result


@_composite
def resize(a: Any, new_shape: Any) -> Tensor:
    """Repeat the flattened ``a`` cyclically to fill ``new_shape``."""
    flat = _shape.ravel(_t(a))
    shape = (int(new_shape),) if _np.ndim(new_shape) == 0 else tuple(int(n) for n in new_shape)
    size = math.prod(shape)
    return _shape.reshape(_getitem(flat, _np.arange(size) % flat.shape[0]), shape)


@_composite
def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tensor:
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``."""
    arr = _t(arr)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    n = arr.shape[axis]
    marker = _np.insert(_np.arange(n), obj, -1)
    k = int(_np.sum(marker == -1))
    values = _t(values)
    slot_shape = arr.shape[:axis] + (k,) + arr.shape[axis + 1 :]
    if _np.ndim(obj) == 0 and values.ndim == arr.ndim - 1:
        values = _shape.expand_dims(values, axis)
    values = _ew.astype(_shape.broadcast_to(values, slot_shape), arr.dtype)
    source = _np.where(marker == -1, n + _np.cumsum(marker == -1) - 1, marker)
    joined = _shape.concatenate([arr, values], axis=axis)
    return _getitem(joined, (slice(None),) * axis + (source,))


@_composite
def delete(arr: Any, obj: Any, axis: Any = None) -> Tensor:
    """``arr`` without the entries ``obj`` along ``axis``."""
    arr = _t(arr)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    kept = _np.delete(_np.arange(arr.shape[axis]), obj)
    return _getitem(arr, (slice(None),) * axis + (kept,))
