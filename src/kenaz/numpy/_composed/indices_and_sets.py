"""Indices and sets, whose values no derivative can follow: ``nonzero``, ``searchsorted``,
``argwhere``, ``flatnonzero``, ``unravel_index``, ``ravel_multi_index`` return constant
tensors; ``unique`` and its Array API variants are differentiable in the values they return.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...ops import shape as _shape
from ...ops.indexing import getitem as _getitem
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _t

__all__ = [
    "searchsorted", "unique", "unique_values", "unique_counts", "unique_inverse",
    "unique_all", "nonzero", "flatnonzero", "argwhere", "unravel_index", "ravel_multi_index",
]  # fmt: skip


@_composite
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tensor:
    """Insertion indices (integers: no derivative)."""
    return Tensor(_np.searchsorted(_read_value(a), _read_value(v), side, sorter))


@_composite
def nonzero(a) -> tuple[Tensor, ...]:
    return tuple(Tensor(i) for i in _np.nonzero(_read_value(a)))


@_composite
def flatnonzero(a: Any) -> Tensor:
    return Tensor(_np.flatnonzero(_read_value(a)))


@_composite
def argwhere(a: Any) -> Tensor:
    return Tensor(_np.argwhere(_read_value(a)))


@_composite
def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Tensor, ...]:
    return tuple(Tensor(i) for i in _np.unravel_index(_read_value(indices), shape, order=order))


@_composite
def ravel_multi_index(
    multi_index: Any, dims: Any, mode: str = "raise", order: str = "C"
) -> Tensor:
    index = tuple(_read_value(i) for i in multi_index)
    return Tensor(_np.ravel_multi_index(index, dims, mode=mode, order=order))


@_composite
def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,  # noqa: A002  (NumPy's name)
) -> Any:
    """Sorted unique elements (or, with ``axis``, unique slices along it); the values are
    differentiable (gathered from ``ar``). ``sorted=False`` is accepted: the result is sorted
    (NumPy allows either)."""
    values = _read_value(ar)  # the order and grouping only: piecewise constant
    source = _t(ar)
    if axis is None:
        _, first, inverse, counts = _np.unique(values, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=equal_nan)  # fmt: skip
        unique_values = _getitem(_shape.ravel(source), first)
        inverse = inverse.reshape(values.shape)
    else:
        axis = int(axis) % values.ndim
        _, first, inverse, counts = _np.unique(values, return_index=True, return_inverse=True,
                                               return_counts=True, axis=axis,
                                               equal_nan=equal_nan)  # fmt: skip
        unique_values = _getitem(source, (slice(None),) * axis + (first,))
        inverse = inverse.reshape(-1)
    result: list[Any] = [unique_values]
    if return_index:
        result.append(Tensor(first))
    if return_inverse:
        result.append(Tensor(inverse))
    if return_counts:
        result.append(Tensor(counts))
    return result[0] if len(result) == 1 else tuple(result)


@_composite
def unique_values(x: Any) -> Tensor:
    return unique(x)


@_composite
def unique_counts(x: Any) -> tuple[Tensor, Tensor]:
    return unique(x, return_counts=True)


@_composite
def unique_inverse(x: Any) -> tuple[Tensor, Tensor]:
    return unique(x, return_inverse=True)


@_composite
def unique_all(x: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    return unique(x, return_index=True, return_inverse=True, return_counts=True)
