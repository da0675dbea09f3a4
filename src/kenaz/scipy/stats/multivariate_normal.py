"""The multivariate normal distribution ``N(mean, cov)`` (points on the last axis)."""

from __future__ import annotations

import math
from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...numpy._namespace import composite_of as _composite_of
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import reduction, shape
from ...ops.linalg import matmul as _matmul
from ...tensor import Tensor
from ..linalg._common import from_triangle as _from_triangle
from ._common import as_float

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats.multivariate_normal")

_LOG_2PI = math.log(2 * math.pi)

__all__ = ["logpdf", "pdf", "entropy"]


@_composite
def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """Log of the density, through the Cholesky factor of ``cov``.

    ``cov`` may be a matrix, or a scalar or vector for an isotropic or
    diagonal covariance. With ``allow_singular=True`` a singular ``cov`` gives SciPy's
    density on its support (pseudo-inverse and pseudo-determinant, eigenvalues below
    SciPy's cutoff counted as zero) and ``-inf`` off it; differentiable where the rank
    does not change (e.g. in the factor ``L`` of ``cov = L L^T``).
    """
    x = as_float(x)
    dimension = x.shape[-1] if x.ndim else 1
    centered = x if mean is None else x - mean
    cov = as_float(cov)
    if cov.ndim < 2:  # isotropic or diagonal
        variances = cov * Tensor([1.0] * dimension) if cov.ndim == 0 else cov
        mahalanobis = reduction.sum(centered * centered / variances, axis=-1)
        log_det = reduction.sum(ew.log(variances), axis=-1)
    elif allow_singular:
        return _singular_logpdf(centered, cov, dimension)
    else:
        lower = dec.cholesky_op(cov)
        whitened = dec.solve(lower, shape.expand_dims(centered, -1), "lower")
        mahalanobis = reduction.sum(shape.squeeze(whitened, -1) ** 2, axis=-1)
        log_det = 2 * reduction.sum(ew.log(dec._diagonal(lower)), axis=-1)
    return -0.5 * (dimension * _LOG_2PI + log_det + mahalanobis)


@_composite
def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Tensor:
    """The density."""
    return ew.exp(logpdf(x, mean, cov, allow_singular))


@_composite
def entropy(mean: Any = None, cov: Any = 1) -> Tensor:
    """Differential entropy."""
    cov = as_float(cov)
    lower = dec.cholesky_op(cov)
    dimension = cov.shape[-1]
    log_det = 2 * reduction.sum(ew.log(dec._diagonal(lower)), axis=-1)
    return 0.5 * (dimension * (1 + _LOG_2PI) + log_det)


def _singular_logpdf(centered: Tensor, cov: Tensor, dimension: int) -> Tensor:
    """SciPy's density for a positive semidefinite ``cov`` (one matrix): on the range of
    ``cov``, with its pseudo-inverse and pseudo-determinant; ``-inf`` off it."""
    if cov.ndim != 2:
        raise ValueError(
            "kenaz.scipy.stats.multivariate_normal: allow_singular=True takes one covariance "
            f"matrix, got shape {cov.shape}"
        )
    cov = _from_triangle(cov, lower=True, hermitian=True)  # SciPy reads the lower triangle
    # Which eigenvalues count as zero: SciPy's cutoff, read from the values (no derivative).
    spectrum, vectors = _np.linalg.eigh(_read_value(cov))
    largest = float(_np.max(_np.abs(spectrum)))
    factor = 1e3 if spectrum.dtype == _np.float32 else 1e6
    cutoff = factor * _np.finfo(spectrum.dtype).eps * largest
    if spectrum.min() < -cutoff:
        raise ValueError(
            "kenaz.scipy.stats.multivariate_normal: the covariance must be symmetric positive "
            "semidefinite"
        )
    kept = spectrum > cutoff
    eigenvalues = dec.eigvalsh_op(cov)
    log_pdet = reduction.sum(ew.where(kept, ew.log(ew.where(kept, eigenvalues, 1.0)), 0.0))
    inverse = dec.pinv_op(cov, rcond=cutoff / largest if largest > 0 else None)
    whitened = shape.squeeze(_matmul(inverse, shape.expand_dims(centered, -1)), -1)
    mahalanobis = reduction.sum(centered * whitened, axis=-1)
    rank = int(kept.sum())
    value = -0.5 * (rank * _LOG_2PI + log_pdet + mahalanobis)
    residual = _np.linalg.norm(_read_value(centered) @ vectors[:, ~kept], axis=-1)
    off_support = residual >= 1e3 * cutoff  # SciPy's test of the support
    return ew.where(off_support, -_np.inf, value) if off_support.any() else value
