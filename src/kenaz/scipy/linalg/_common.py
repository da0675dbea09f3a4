"""Helpers shared by ``kenaz.scipy.linalg``'s modules: argument conversion, SciPy's
``check_finite``, and the matrices SciPy reads from one triangle."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import read_value
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import shape
from ...tensor import Tensor


def as_inexact(x: Any) -> Tensor:
    """``x`` as a float or complex tensor (integers and booleans become float64, as in SciPy)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else ew.astype(x, np.float64)


def checked(x: Any, check_finite: bool, name: str) -> Tensor:
    """``x`` as an inexact tensor; with ``check_finite``, SciPy's refusal of infs and NaNs.

    Only a value that is one NumPy array is checked: a batched view inside ``vmap``
    holds the values of every example, which its own call checks.
    """
    x = as_inexact(x)
    if check_finite and type(x) is Tensor and isinstance(x._value, np.ndarray):
        if not np.isfinite(read_value(x)).all():
            raise ValueError(f"kenaz.scipy.linalg.{name}: array must not contain infs or NaNs")
    return x


def square(x: Tensor, name: str) -> Tensor:
    """``x`` unchanged if it is a (stack of) square matrices, else SciPy's ``ValueError``."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"kenaz.scipy.linalg.{name}: expected a square matrix (or a stack of them), got "
            f"shape {x.shape}"
        )
    return x


def from_triangle(a: Tensor, lower: bool, hermitian: bool) -> Tensor:
    """The symmetric (or Hermitian) matrix that LAPACK reads from one triangle of ``a``.

    A Hermitian matrix's diagonal is real: its imaginary part is dropped, as LAPACK does.
    """
    n = a.shape[-1]
    transpose = dec.conj_transpose if hermitian else dec.matrix_transpose
    if not lower:
        a = transpose(a)  # the upper triangle, as the lower one it stands for
    strictly_lower = ew.where(np.tri(n, k=-1, dtype=bool), a, 0)
    other = transpose(strictly_lower)
    diagonal = dec._real(a) if hermitian else a
    return strictly_lower + other + ew.where(np.eye(n, dtype=bool), diagonal, 0)


def vector_solve(solve: Any, a: Tensor, b: Tensor) -> Tensor:
    """``solve(a, b)`` for a matrix right-hand side; a 1-d ``b`` is one column (NumPy 2's rule)."""
    if b.ndim == 1:
        return shape.squeeze(solve(a, shape.expand_dims(b, -1)), -1)
    return solve(a, b)
