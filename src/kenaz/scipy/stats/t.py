"""Student's t distribution with ``df`` degrees of freedom."""

from __future__ import annotations

import math
from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import special
from ...tensor import Tensor
from ._common import as_float, standardize

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.t")

__all__ = ["logpdf", "pdf", "cdf", "logcdf"]


@_composite
def logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the density."""
    z, scale = standardize(x, loc, scale)
    df = as_float(df, like=z)
    return (
        special.gammaln((df + 1) / 2)
        - special.gammaln(df / 2)
        - 0.5 * ew.log(df * math.pi)
        - ew.log(scale)
        - (df + 1) / 2 * ew.log1p(z * z / df)
    )


@_composite
def pdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, df, loc, scale))


@_composite
def cdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """The distribution function (differentiable in ``x``, ``loc`` and ``scale``)."""
    z, _ = standardize(x, loc, scale)
    return special.stdtr(as_float(df, like=z), z)


@_composite
def logcdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Tensor:
    """Log of the distribution function."""
    return ew.log(cdf(x, df, loc, scale))
