"""The gamma distribution with shape ``a`` (SciPy's parametrization, with ``loc`` and ``scale``)."""

from __future__ import annotations

from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import special
from ...tensor import Tensor
from ._common import as_float, outside, standardize

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.gamma")

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]


@_composite
def logpdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density (``-inf`` for ``x < loc``)."""
    z, scale = standardize(x, loc, scale)
    a = as_float(a, like=z)
    positive = ew.where(ew.less(z, 0), 1.0, z)
    value = special.xlogy(a - 1, positive) - positive - special.gammaln(a) - ew.log(scale)
    return outside(ew.less(z, 0), value, -float("inf"))


@_composite
def pdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, a, loc, scale))


@_composite
def cdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function (differentiable in ``x``, ``a``, ``loc`` and ``scale``)."""
    z, _ = standardize(x, loc, scale)
    return special.gammainc(as_float(a, like=z), ew.maximum(z, 0.0))


@_composite
def logcdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function."""
    return ew.log(cdf(x, a, loc, scale))
