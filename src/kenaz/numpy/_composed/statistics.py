"""Order statistics and correlations: quantiles, percentiles and medians (also
NaN-aware), ``cov`` and ``corrcoef``, composed from primitives.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...ops import elementwise as _ew
from ...ops import reduction as _reduction
from ...ops import shape as _shape
from ...ops.indexing import getitem as _getitem
from ...ops.linalg import matmul as _matmul
from ...tensor import Tensor
from .. import linalg as _linalg
from ._arguments import _float, _knp

__all__ = [
    "median", "quantile", "nanquantile", "nanpercentile", "nanmedian", "percentile", "cov",
    "corrcoef",
]  # fmt: skip


def quantile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False,
) -> Tensor:  # fmt: skip
    """``q``-th quantiles (``q`` in [0, 1]) by linear interpolation between sorted values."""
    if out is not None:
        raise TypeError("kenaz.quantile: out= is not supported; use the returned value")
    if method != "linear":
        raise NotImplementedError(f"kenaz.quantile: method {method!r}; only 'linear' is supported")
    knp = _knp()
    a = _float(a)
    data, axes = _grouped(a, axis)
    ordered = knp.sort(data, axis=-1)
    n = ordered.shape[-1]
    # The interpolation weights are differentiable in q; the indices are not.
    q_tensor = _float(q)
    q_values = _read_value(q_tensor, dtype=float)  # the indices only: piecewise constant
    below = _np.floor(q_values * (n - 1)).astype(int)
    above = _np.minimum(below + 1, n - 1)
    weight = _shape.reshape(q_tensor * (n - 1) - below, (-1,))
    low = _shape.moveaxis(_getitem(ordered, (Ellipsis, below.reshape(-1))), -1, 0)
    high = _shape.moveaxis(_getitem(ordered, (Ellipsis, above.reshape(-1))), -1, 0)
    weight = _shape.reshape(weight, (-1,) + (1,) * (low.ndim - 1))
    result = low + (high - low) * _ew.astype(weight, low.dtype)
    result = _shape.reshape(result, q_values.shape + result.shape[1:])
    if keepdims:
        result = _shape.expand_dims(result, tuple(q_values.ndim + i for i in axes))
    return result


def _grouped(a: Tensor, axis: Any) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the reduced ``axis`` merged into one last axis, and the reduced axes."""
    if axis is None:
        return _shape.ravel(a), tuple(range(a.ndim))
    axes = _reduction.normalize_axes(axis, a.ndim, "quantile")
    kept = [i for i in range(a.ndim) if i not in axes]
    data = _shape.transpose(a, kept + list(axes))
    return _shape.reshape(data, data.shape[: len(kept)] + (-1,)), axes


def nanquantile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False,
) -> Tensor:  # fmt: skip
    """Quantiles ignoring NaNs (each slice interpolates among its own valid values)."""
    if out is not None:
        raise TypeError("kenaz.nanquantile: out= is not supported; use the returned value")
    if method != "linear":
        raise NotImplementedError("kenaz.nanquantile: only method='linear' is supported")
    knp = _knp()
    a = _float(a)
    data, axes = _grouped(a, axis)
    ordered = knp.sort(data, axis=-1)  # NaNs sort last
    present = _ew.astype(_ew.logical_not(_ew.isnan(data)), data.dtype)
    valid = _reduction.sum(present, axis=-1, keepdims=True)  # (kept..., 1)
    q_tensor = _float(q)
    q_shape = q_tensor.shape
    q_column = _shape.reshape(q_tensor, (-1,) + (1,) * data.ndim)  # (nq, 1, ..., 1)
    position = q_column * (valid - 1)  # differentiable in q, like the weights of quantile
    below = _ew.maximum(_ew.astype(_ew.floor(position), _np.int64), 0)
    above = _ew.minimum(below + 1, _ew.maximum(_ew.astype(valid, _np.int64) - 1, 0))
    weight = position - _ew.astype(below, position.dtype)
    expanded = _shape.broadcast_to(ordered, (q_column.shape[0],) + ordered.shape)
    low = knp.take_along_axis(expanded, below, -1)
    high = knp.take_along_axis(expanded, above, -1)
    result = _shape.squeeze(low + (high - low) * weight, -1)
    result = _shape.reshape(result, q_shape + result.shape[1:])
    if keepdims:
        result = _shape.expand_dims(result, tuple(len(q_shape) + i for i in axes))
    return result


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input=False,
                  method: str = "linear", keepdims: bool = False) -> Tensor:  # fmt: skip
    """Percentiles ignoring NaNs."""
    return nanquantile(a, _float(q) / 100, axis, out, overwrite_input, method, keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median ignoring NaNs."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input=False,
               method: str = "linear", keepdims: bool = False) -> Tensor:  # fmt: skip
    """``q``-th percentiles (``q`` in [0, 100])."""
    return quantile(a, _float(q) / 100, axis, out, overwrite_input, method, keepdims)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median along ``axis`` (mean of the two middle values for even counts)."""
    return quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Tensor:  # fmt: skip
    """Covariance matrix of the variables in the rows of ``m`` (columns with ``rowvar=False``)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("kenaz.cov: fweights/aweights are not supported")
    knp = _knp()
    x = knp.atleast_2d(_float(m))
    if not rowvar and x.shape[0] != 1:
        x = _shape.transpose(x)
    if y is not None:
        other = knp.atleast_2d(_float(y))
        if not rowvar and other.shape[0] != 1:
            other = _shape.transpose(other)
        x = _shape.concatenate([x, other], axis=0)
    if dtype is not None:
        x = _ew.astype(x, dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = x - _reduction.mean(x, axis=1, keepdims=True)
    other = _ew.conjugate(centered) if centered.dtype.kind == "c" else centered
    result = _matmul(centered, _shape.transpose(other)) / (x.shape[1] - ddof)
    return _shape.squeeze(result)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tensor:
    """Pearson correlation coefficients."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _ew.sqrt(_ew.real(_linalg.diagonal(c)) if c.dtype.kind == "c" else _linalg.diagonal(c))
    return c / _shape.expand_dims(d, 1) / _shape.expand_dims(d, 0)
