"""``roots``, ``polydiv`` and ``sort_complex``, differentiable.

``roots`` takes the eigenvalues of the companion matrix (as NumPy does), through
kenaz's ``eigvals`` primitive; ``polydiv`` is NumPy's long division written with
functional updates; ``sort_complex`` gathers in the order of the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import as_tensor, read_value
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import shape
from ...tensor import Tensor
from .._arrays import take_along_axis
from .._namespace import composite as _composite

__all__ = ["roots", "polydiv", "sort_complex"]


def _inexact(x: Any) -> Tensor:
    x = as_tensor(x)
    return x if x.dtype.kind in "fc" else ew.astype(x, np.float64)


@_composite
def roots(p: Any) -> Tensor:
    """The roots of the polynomial with coefficients ``p`` (highest power first), as
    :func:`numpy.roots`: real when every root is, else complex. Differentiable in ``p``
    where the roots are simple.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.roots([1.0, -3.0, 2.0])
    Tensor([2., 1.])
    """
    p = _inexact(p)
    if p.ndim != 1:
        raise ValueError("kenaz.numpy.roots: input must be a rank-1 array")
    nonzero = np.flatnonzero(read_value(p))
    if len(nonzero) == 0:
        return Tensor(np.zeros(0, dtype=p.dtype))
    trailing_zeros = p.shape[0] - int(nonzero[-1]) - 1
    p = p[int(nonzero[0]) : int(nonzero[-1]) + 1]  # strip the zeros at both ends
    degree = p.shape[0] - 1
    if degree >= 1:
        companion_rows = -p[1:] / p[0]
        below = np.eye(degree, k=-1, dtype=p.dtype)[1:]  # the ones below the diagonal
        companion = shape.concatenate([shape.reshape(companion_rows, (1, degree)),
                                       Tensor(below)], axis=0)  # fmt: skip
        found = dec.eigvals_op(companion)
    else:
        found = Tensor(np.zeros(0, dtype=np.result_type(p.dtype, np.complex64)))
    if trailing_zeros:
        found = shape.concatenate([found, Tensor(np.zeros(trailing_zeros, found.dtype))], 0)
    if not np.any(np.imag(read_value(found))):  # NumPy's eigvals gives real roots as real
        found = ew.real(found)
    return found


@_composite
def polydiv(u: Any, v: Any) -> tuple[Tensor, Tensor]:
    """Quotient and remainder of polynomial division (highest power first), as
    :func:`numpy.polydiv`; differentiable in ``u`` and ``v``."""
    u, v = _inexact(u), _inexact(v)
    u = shape.reshape(u, (-1,)) if u.ndim == 0 else u
    v = shape.reshape(v, (-1,)) if v.ndim == 0 else v
    dtype = np.result_type(u.dtype, v.dtype)
    u, v = ew.astype(u, dtype), ew.astype(v, dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    quotient = []
    remainder = u
    for k in range(max(m - n + 1, 0)):
        d = scale * remainder[k]
        quotient.append(d)
        remainder = remainder.at[k : k + n + 1].add(-d * v)
    q = shape.stack(quotient) if quotient else Tensor(np.zeros(1, dtype))
    while remainder.shape[0] > 1 and np.allclose(read_value(remainder[0]), 0, rtol=1e-14):
        remainder = remainder[1:]
    return q, remainder


@_composite
def sort_complex(a: Any) -> Tensor:
    """Sort by real part, then imaginary part; always complex, as :func:`numpy.sort_complex`."""
    a = as_tensor(a)
    values = read_value(a)
    order = np.lexsort((np.imag(values), np.real(values)), axis=-1)
    result = take_along_axis(a, order, axis=-1) if a.ndim > 1 else a[order]
    if result.dtype.kind != "c":
        # NumPy's choice: complex64 for small integers, clongdouble for longdouble, else
        # complex128 (float32 too).
        complex_dtype = np.complex128
        if result.dtype.char in "bhBH":
            complex_dtype = np.complex64
        elif result.dtype == np.longdouble and np.longdouble != np.float64:
            complex_dtype = np.clongdouble
        result = ew.astype(result, complex_dtype)
    return result
