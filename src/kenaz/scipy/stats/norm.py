"""The normal distribution ``N(loc, scale**2)``."""

from __future__ import annotations

import math
from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import special
from ...tensor import Tensor
from ._common import standardize

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.norm")

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


@_composite
def logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density."""
    z, scale = standardize(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - ew.log(scale)


@_composite
def pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, loc, scale))


@_composite
def cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function ``P(X <= x)``."""
    z, _ = standardize(x, loc, scale)
    return 0.5 * special.erfc(-z / math.sqrt(2.0))


@_composite
def logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function, accurate far in the lower tail."""
    z, _ = standardize(x, loc, scale)
    return special.log_ndtr(z)


@_composite
def sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The survival function ``P(X > x)``."""
    z, _ = standardize(x, loc, scale)
    return 0.5 * special.erfc(z / math.sqrt(2.0))


@_composite
def logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the survival function."""
    z, _ = standardize(x, loc, scale)
    return special.log_ndtr(-z)


@_composite
def ppf(q: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The quantile function (inverse of ``cdf``)."""
    return loc + scale * special.ndtri(q)
