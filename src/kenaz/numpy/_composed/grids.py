"""Spaced ranges and grids: ``logspace``, ``geomspace``, ``meshgrid`` and ``indices``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as _np

from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _float, _knp, _t

__all__ = ["logspace", "geomspace", "meshgrid", "indices"]


@_composite
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Tensor:  # fmt: skip
    """``base ** linspace(start, stop)``."""
    exponents = _knp().linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = _ew.power(base, exponents)
    return out if dtype is None else _ew.astype(out, dtype)


@_composite
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Tensor:  # fmt: skip
    """Numbers spaced evenly on a log scale between positive (or negative) ends."""
    start, stop = _float(start), _float(stop)
    sign = _ew.sign(start)
    exponents = _knp().linspace(
        _ew.log(start * sign), _ew.log(stop * sign), num, endpoint=endpoint, axis=axis
    )
    out = _ew.exp(exponents) * sign
    return out if dtype is None else _ew.astype(out, dtype)


@_composite
def meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[Tensor]:
    """Coordinate matrices from coordinate vectors."""
    xs = [_shape.ravel(_t(x)) for x in xi]
    ndim = len(xs)
    shapes = [[1] * ndim for _ in xs]
    for i, x in enumerate(xs):
        shapes[i][i] = x.shape[0]
    if indexing == "xy" and ndim > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    grids = [_shape.reshape(x, tuple(s)) for x, s in zip(xs, shapes, strict=True)]
    if not sparse:
        full = _np.broadcast_shapes(*[g.shape for g in grids])
        grids = [_shape.broadcast_to(g, full) for g in grids]
    # copy=True (NumPy's default): each grid in fresh, writable memory, as NumPy's;
    # copy=False: views (the broadcast ones read-only, as NumPy intends them).
    return tuple(_ew.copy(g) for g in grids) if copy else tuple(grids)


@_composite
def indices(dimensions: Sequence[int], dtype: Any = int, sparse: bool = False) -> Any:
    """The index grids of an array of shape ``dimensions`` (constants)."""
    result = _np.indices(dimensions, dtype=dtype, sparse=sparse)
    return tuple(Tensor(r) for r in result) if sparse else Tensor(result)
