"""The Poisson distribution with mean ``mu`` (differentiable in ``mu``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import special
from ...tensor import Tensor
from ._common import as_float

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.poisson")

__all__ = ["logpmf", "pmf", "cdf", "logcdf"]


@_composite
def logpmf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """Log of the probability mass ``P(X = k)`` (``-inf`` off the non-negative integers)."""
    mu = as_float(mu)
    k = ew.astype(as_float(k), mu.dtype) - loc  # counts take the dtype of the mean
    valid = ew.logical_and(ew.greater_equal(k, 0), ew.equal(ew.floor(k), k))
    safe_k = ew.where(valid, k, 0.0)
    value = special.xlogy(safe_k, mu) - mu - special.gammaln(safe_k + 1)
    return ew.where(valid, value, -np.inf)


@_composite
def pmf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """The probability mass ``P(X = k)``."""
    return ew.exp(logpmf(k, mu, loc))


@_composite
def cdf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """``P(X <= k)``, as the regularized upper incomplete gamma ``Q(floor(k) + 1, mu)``."""
    mu = as_float(mu)
    k = ew.floor(ew.astype(as_float(k), mu.dtype) - loc)
    value = special.gammaincc(ew.maximum(k, 0.0) + 1, mu)
    return ew.where(ew.less(k, 0), 0.0, value)


@_composite
def logcdf(k: Any, mu: Any, loc: Any = 0) -> Tensor:
    """Log of the distribution function."""
    return ew.log(cdf(k, mu, loc))
