"""Reductions composed from primitives: NaN-aware reductions (``nansum``, ``nanmean``,
``nanvar``, ``nanargmax``, ``nancumsum``...), ``ptp``, and the Array API's
``cumulative_sum`` and ``cumulative_prod``.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...ops import elementwise as _ew
from ...ops import reduction as _reduction
from ...ops import shape as _shape
from ...tensor import Tensor
from .._namespace import composite as _composite
from .._out import into_out
from ._arguments import _axis, _float, _knp, _t

__all__ = [
    "ptp", "nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanprod",
    "nancumsum", "nancumprod", "nanargmax", "nanargmin", "cumulative_sum", "cumulative_prod",
]  # fmt: skip


@_composite
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """Range ``max - min`` along ``axis``."""
    result = _reduction.amax(a, axis, keepdims) - _reduction.amin(a, axis, keepdims)
    return into_out(out, result, "ptp")


def _without_nan(a: Any, fill: float) -> Tensor:
    a = _t(a)
    return _ew.where(_ew.isnan(a), fill, a) if a.dtype.kind in "fc" else a


@_composite
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Tensor:  # fmt: skip
    """Sum treating NaN as 0 (NumPy's signature: ``initial`` is added, ``where`` masks)."""
    return _knp().sum(_without_nan(a, 0.0), axis, dtype, out, keepdims, initial, where)


@_composite
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Tensor:  # fmt: skip
    """Product treating NaN as 1 (NumPy's signature)."""
    return _knp().prod(_without_nan(a, 1.0), axis, dtype, out, keepdims, initial, where)


def _count(a: Tensor, axis: Any, keepdims: bool) -> Tensor:
    present = _ew.astype(_ew.logical_not(_ew.isnan(a)), _np.zeros((), a.dtype).real.dtype)
    return _reduction.sum(present, axis=axis, keepdims=keepdims)


@_composite
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            *, where: Any = None) -> Tensor:  # fmt: skip
    """Mean ignoring NaNs (and the elements ``where`` excludes)."""
    a = _float(a)
    if where is not None and where is not True:
        a = _ew.where(where, a, _np.nan)
    total = _reduction.sum(_without_nan(a, 0.0), axis=axis, keepdims=keepdims, dtype=dtype)
    return into_out(out, total / _count(a, axis, keepdims), "nanmean")


@_composite
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Tensor:  # fmt: skip
    """Variance ignoring NaNs (and the elements ``where`` excludes); ``mean`` is a mean
    already computed (with ``keepdims=True``), ``correction`` the Array API's ``ddof``."""
    a = _float(a) if dtype is None else _ew.astype(_float(a), dtype)
    if where is not None and where is not True:
        a = _ew.where(where, a, _np.nan)
    ddof = ddof if correction is None else correction
    center = nanmean(a, axis, keepdims=True) if mean is None else mean
    centered = _without_nan(a - center, 0.0)
    squared = _ew.real(centered * _ew.conjugate(centered)) if a.dtype.kind == "c" else (
        centered * centered
    )
    total = _reduction.sum(squared, axis=axis, keepdims=keepdims)
    return into_out(out, total / (_count(a, axis, keepdims) - ddof), "nanvar")


@_composite
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Tensor:  # fmt: skip
    """Standard deviation ignoring NaNs (NumPy's signature, as :func:`nanvar`)."""
    deviation = _ew.sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                                correction=correction))  # fmt: skip
    return into_out(out, deviation, "nanstd")


@_composite
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tensor:  # fmt: skip
    """Maximum ignoring NaNs (NumPy's signature)."""
    return _knp().max(_without_nan(a, -_np.inf), axis, out, keepdims, initial, where)


@_composite
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tensor:  # fmt: skip
    """Minimum ignoring NaNs (NumPy's signature)."""
    return _knp().min(_without_nan(a, _np.inf), axis, out, keepdims, initial, where)


@_composite
def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor:
    """Index of the maximum ignoring NaNs (integer: no derivative)."""
    result = _reduction.argmax(_without_nan(a, -_np.inf), axis, keepdims=keepdims)
    return into_out(out, result, "nanargmax", casting="safe")


@_composite
def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor:
    """Index of the minimum ignoring NaNs (integer: no derivative)."""
    result = _reduction.argmin(_without_nan(a, _np.inf), axis, keepdims=keepdims)
    return into_out(out, result, "nanargmin", casting="safe")


@_composite
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor:
    """Cumulative sum treating NaN as 0 (flattened when ``axis`` is None)."""
    return _knp().cumsum(_without_nan(a, 0.0), axis, dtype, out)


@_composite
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tensor:
    """Cumulative product treating NaN as 1 (flattened when ``axis`` is None)."""
    return _knp().cumprod(_without_nan(a, 1.0), axis, dtype, out)


@_composite
def cumulative_sum(
    x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
    include_initial: bool = False,
) -> Tensor:  # fmt: skip
    """Array API ``cumulative_sum`` (``include_initial`` prepends a zero)."""
    result = _cumulative(_reduction.cumsum, 0.0, x, axis, dtype, include_initial)
    return into_out(out, result, "cumulative_sum")


@_composite
def cumulative_prod(
    x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
    include_initial: bool = False,
) -> Tensor:  # fmt: skip
    """Array API ``cumulative_prod`` (``include_initial`` prepends a one)."""
    result = _cumulative(_reduction.cumprod, 1.0, x, axis, dtype, include_initial)
    return into_out(out, result, "cumulative_prod")


def _cumulative(scan, initial, x, axis, dtype, include_initial):
    x = _t(x)
    if dtype is not None:
        x = _ew.astype(x, dtype)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("kenaz: cumulative_sum/prod need an axis for arrays of ndim > 1")
        axis = 0
    axis = _axis(axis, x.ndim)
    out = scan(x, axis)
    if include_initial:
        first = Tensor(_np.full(x.shape[:axis] + (1,) + x.shape[axis + 1 :], initial, out.dtype))
        out = _shape.concatenate([first, out], axis=axis)
    return out
