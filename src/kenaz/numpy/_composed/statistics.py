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
from ...ops.linalg import matmul as _matmul
from ...tensor import Tensor
from .. import linalg as _linalg
from .._namespace import composite as _composite
from ._arguments import _float, _knp, _t
from ._quantiles import nanpercentile, nanquantile, percentile, quantile  # every method

__all__ = [
    "median", "quantile", "nanquantile", "nanpercentile", "nanmedian", "percentile", "cov",
    "corrcoef",
]  # fmt: skip


@_composite
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median ignoring NaNs."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


@_composite
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median along ``axis`` (mean of the two middle values for even counts)."""
    return quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


@_composite
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Tensor:  # fmt: skip
    """Covariance matrix of the variables in the rows of ``m`` (columns with ``rowvar=False``),
    with NumPy's integer frequency weights ``fweights`` and observation weights ``aweights``
    (differentiable in ``aweights``)."""
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
    weights = None
    if fweights is not None:
        frequencies = _read_value(fweights)
        if frequencies.ndim != 1 or frequencies.shape[0] != x.shape[1]:
            raise RuntimeError("kenaz.numpy.cov: fweights must be 1-d, one per observation")
        if not _np.all(frequencies == _np.around(frequencies)) or _np.any(frequencies < 0):
            raise ValueError("kenaz.numpy.cov: fweights must be non-negative integers")
        weights = _ew.astype(_t(frequencies), x.real.dtype if x.dtype.kind == "c" else x.dtype)
    if aweights is not None:
        observation = _float(aweights)
        if observation.ndim != 1 or observation.shape[0] != x.shape[1]:
            raise RuntimeError("kenaz.numpy.cov: aweights must be 1-d, one per observation")
        if _np.any(_read_value(observation) < 0):
            raise ValueError("kenaz.numpy.cov: aweights must be non-negative")
        weights = observation if weights is None else weights * observation
    if weights is None:
        centered = x - _reduction.mean(x, axis=1, keepdims=True)
        other = _ew.conjugate(centered) if centered.dtype.kind == "c" else centered
        result = _matmul(centered, _shape.transpose(other)) / (x.shape[1] - ddof)
        return _shape.squeeze(result)
    total = _reduction.sum(weights)
    average = _reduction.sum(x * weights, axis=1, keepdims=True) / total
    if ddof == 0:
        norm = total
    elif aweights is None:
        norm = total - ddof
    else:
        norm = total - ddof * _reduction.sum(weights * observation) / total
    centered = x - average
    other = _ew.conjugate(centered) if centered.dtype.kind == "c" else centered
    result = _matmul(centered * weights, _shape.transpose(other)) / norm
    return _shape.squeeze(result)


@_composite
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tensor:
    """Pearson correlation coefficients."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _ew.sqrt(_ew.real(_linalg.diagonal(c)) if c.dtype.kind == "c" else _linalg.diagonal(c))
    return c / _shape.expand_dims(d, 1) / _shape.expand_dims(d, 0)

