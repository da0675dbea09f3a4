"""The chi-squared distribution with ``df`` degrees of freedom."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from . import gamma
from ._common import as_float


def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density: a gamma distribution with shape ``df / 2`` and scale 2."""
    return gamma.logpdf(x, as_float(df) / 2, loc, 2 * as_float(scale))


def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return gamma.pdf(x, as_float(df) / 2, loc, 2 * as_float(scale))


def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function (differentiable in ``x``)."""
    return gamma.cdf(x, as_float(df) / 2, loc, 2 * as_float(scale))


def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function."""
    return gamma.logcdf(x, as_float(df) / 2, loc, 2 * as_float(scale))
