"""The multivariate normal distribution ``N(mean, cov)`` (points on the last axis)."""

from __future__ import annotations

import math
from typing import Any

from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import reduction, shape
from ...tensor import Tensor
from ._common import as_float

_LOG_2PI = math.log(2 * math.pi)

__all__ = ["logpdf", "pdf", "entropy"]


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """Log of the density, through the Cholesky factor of ``cov``.

    ``cov`` may be a matrix, or a scalar or vector for an isotropic or
    diagonal covariance. ``allow_singular=True`` is not supported.
    """
    if allow_singular:
        raise NotImplementedError(
            "kenaz.scipy.stats.multivariate_normal: allow_singular=True is not supported"
        )
    x = as_float(x)
    dimension = x.shape[-1] if x.ndim else 1
    centered = x if mean is None else x - mean
    cov = as_float(cov)
    if cov.ndim < 2:  # isotropic or diagonal
        variances = cov * Tensor([1.0] * dimension) if cov.ndim == 0 else cov
        mahalanobis = reduction.sum(centered * centered / variances, axis=-1)
        log_det = reduction.sum(ew.log(variances), axis=-1)
    else:
        lower = dec.cholesky_op(cov)
        whitened = dec.solve(lower, shape.expand_dims(centered, -1), "lower")
        mahalanobis = reduction.sum(shape.squeeze(whitened, -1) ** 2, axis=-1)
        log_det = 2 * reduction.sum(ew.log(dec._diagonal(lower)), axis=-1)
    return -0.5 * (dimension * _LOG_2PI + log_det + mahalanobis)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1) -> Tensor:
    """Differential entropy."""
    cov = as_float(cov)
    lower = dec.cholesky_op(cov)
    dimension = cov.shape[-1]
    log_det = 2 * reduction.sum(ew.log(dec._diagonal(lower)), axis=-1)
    return 0.5 * (dimension * (1 + _LOG_2PI) + log_det)
