"""Polynomials, coefficients highest power first (as ``numpy.polyval``): evaluation,
fitting, ``vander``, and arithmetic (``polyadd``, ``polymul``, ``polyder``, ``poly``...).
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...tensor import Tensor
from .. import linalg as _linalg
from .._namespace import composite as _composite
from ._arguments import _float, _knp, _t
from .signals import convolve

__all__ = [
    "polyval", "polyfit", "vander", "polyadd", "polysub", "polymul", "polyder", "polyint",
    "poly",
]  # fmt: skip


@_composite
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """Vandermonde matrix: columns are powers of ``x``."""
    x = _t(x)
    columns = x.shape[0] if N is None else N
    powers = _np.arange(columns) if increasing else _np.arange(columns)[::-1]
    return _ew.power(_shape.expand_dims(x, 1), powers.astype(float))


@_composite
def polyval(p: Any, x: Any) -> Tensor:
    """Evaluate the polynomial with coefficients ``p`` (highest power first) at ``x``."""
    p = _t(p)
    result = _ew.multiply(_t(x), 0.0)
    for i in range(p.shape[0]):
        result = result * x + p[i]
    return result


@_composite
def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Tensor:  # fmt: skip
    """Least-squares polynomial fit (coefficients, highest power first)."""
    if full or cov or w is not None:
        raise NotImplementedError("kenaz.polyfit: full, w and cov are not supported")
    design = vander(_float(x), deg + 1)
    return _linalg.lstsq(design, _float(y), rcond=rcond)[0]


def _poly1d_coefficients(p: Any) -> Tensor:
    p = _knp().atleast_1d(_t(p))
    if p.ndim != 1:
        raise ValueError(f"kenaz: polynomial coefficients must be 1-d, got shape {p.shape}")
    return p


@_composite
def polyadd(a1: Any, a2: Any) -> Tensor:
    """Sum of two polynomials."""
    a1, a2 = _poly1d_coefficients(a1), _poly1d_coefficients(a2)
    n = max(a1.shape[0], a2.shape[0])
    pad = _knp().pad
    return pad(a1, (n - a1.shape[0], 0)) + pad(a2, (n - a2.shape[0], 0))


@_composite
def polysub(a1: Any, a2: Any) -> Tensor:
    """Difference of two polynomials."""
    return polyadd(a1, -_poly1d_coefficients(a2))


@_composite
def polymul(a1: Any, a2: Any) -> Tensor:
    """Product of two polynomials (the convolution of their coefficients)."""
    return convolve(_poly1d_coefficients(a1), _poly1d_coefficients(a2))


@_composite
def polyder(p: Any, m: int = 1) -> Tensor:
    """The ``m``-th derivative of a polynomial."""
    p = _poly1d_coefficients(p)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return _ew.multiply(p[:1], 0.0)
        p = p[:-1] * _np.arange(n, 0, -1, dtype=float)
    return p


@_composite
def polyint(p: Any, m: int = 1, k: Any = None) -> Tensor:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (0)."""
    p = _poly1d_coefficients(p)
    constants = _np.zeros(m) if k is None else _np.atleast_1d(_np.asarray(k, dtype=float))
    if constants.shape[0] == 1 and m > 1:
        constants = _np.repeat(constants, m)
    for i in range(m):
        n = p.shape[0]
        scaled = p / _np.arange(n, 0, -1, dtype=float)
        p = _knp().concatenate([scaled, _knp().asarray(constants[i : i + 1], dtype=scaled.dtype)])
    return p


@_composite
def poly(seq_of_zeros: Any) -> Tensor:
    """Coefficients of the monic polynomial with the given (1-d) roots."""
    roots = _poly1d_coefficients(seq_of_zeros)
    coefficients = _knp().ones(1, dtype=roots.dtype)
    for i in range(roots.shape[0]):
        factor = _knp().stack([_knp().ones((), roots.dtype), -roots[i]])  # x - root
        coefficients = convolve(coefficients, factor)
    return coefficients
