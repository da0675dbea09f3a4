"""The beta distribution with shapes ``a`` and ``b``."""

from __future__ import annotations

from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import special
from ...tensor import Tensor
from ._common import as_float, outside, standardize

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.beta")

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]


@_composite
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density (``-inf`` outside ``[0, 1]`` after standardizing)."""
    z, scale = standardize(x, loc, scale)
    a, b = as_float(a, like=z), as_float(b, like=z)
    out = ew.logical_or(ew.less(z, 0), ew.greater(z, 1))
    inside = ew.where(out, 0.5, z)
    log_beta = special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b)
    value = special.xlogy(a - 1, inside) + special.xlog1py(b - 1, -inside) - log_beta
    return outside(out, value - ew.log(scale), -float("inf"))


@_composite
def pdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, a, b, loc, scale))


@_composite
def cdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function (differentiable in ``x``, ``loc`` and ``scale``)."""
    z, _ = standardize(x, loc, scale)
    return special.betainc(as_float(a, like=z), as_float(b, like=z), ew.clip(z, 0.0, 1.0))


@_composite
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function."""
    return ew.log(cdf(x, a, b, loc, scale))
