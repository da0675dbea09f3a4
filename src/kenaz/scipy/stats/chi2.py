"""The chi-squared distribution with ``df`` degrees of freedom: gamma with shape ``df / 2``,
scale ``2 * scale``."""

from __future__ import annotations

from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...tensor import Tensor
from . import gamma
from ._common import scaled

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.chi2")

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]


@_composite
def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density."""
    return gamma.logpdf(x, scaled(df, 0.5), loc, scaled(scale, 2.0))


@_composite
def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return gamma.pdf(x, scaled(df, 0.5), loc, scaled(scale, 2.0))


@_composite
def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function (differentiable in ``x`` and ``df``)."""
    return gamma.cdf(x, scaled(df, 0.5), loc, scaled(scale, 2.0))


@_composite
def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function."""
    return gamma.logcdf(x, scaled(df, 0.5), loc, scaled(scale, 2.0))
