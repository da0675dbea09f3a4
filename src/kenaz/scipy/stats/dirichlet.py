"""The Dirichlet distribution with concentration ``alpha`` (last axis of ``x``)."""

from __future__ import annotations

from typing import Any

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import reduction, special
from ...tensor import Tensor
from ._common import as_float

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.dirichlet")

__all__ = ["logpdf", "pdf"]


@_composite
def logpdf(x: Any, alpha: Any) -> Tensor:
    """Log of the density at points ``x`` of the simplex (components on the last axis)."""
    x, alpha = as_float(x), as_float(alpha)
    normalizer = special.gammaln(reduction.sum(alpha, axis=-1)) - reduction.sum(
        special.gammaln(alpha), axis=-1
    )
    return normalizer + reduction.sum(special.xlogy(alpha - 1, x), axis=-1)


@_composite
def pdf(x: Any, alpha: Any) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, alpha))
