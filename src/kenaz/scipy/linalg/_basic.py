"""``kenaz.scipy.linalg``'s solvers: ``solve`` with ``assume_a``, triangular and banded
solves, ``inv``, ``det``, ``lstsq``, ``pinv``, ``norm`` (SciPy's signatures).

All are composed from kenaz's solve, Cholesky and SVD primitives, so they are
differentiable in every array argument.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import read_value
from ...numpy import linalg as la
from ...numpy._namespace import composite_of as _composite_of
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import reduction, shape
from ...ops.indexing import getitem
from ...tensor import Tensor
from ._common import checked, from_triangle, square, vector_solve

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.linalg")

# SciPy's names for the structure of `a` in solve(assume_a=...), and what each reads.
_ASSUME_A = {
    None: "general", "gen": "general", "general": "general", "banded": "general",
    "sym": "symmetric", "symmetric": "symmetric",
    "her": "hermitian", "hermitian": "hermitian",
    "pos": "positive definite", "positive definite": "positive definite",
    "diagonal": "diagonal", "tridiagonal": "tridiagonal",
    "upper triangular": "upper triangular", "lower triangular": "lower triangular",
}  # fmt: skip


def _structured(a: Tensor, assume_a: Any, lower: bool) -> tuple[Tensor, str]:
    """The matrix ``solve`` reads from ``a`` under ``assume_a``, and the structure's name."""
    if assume_a not in _ASSUME_A:
        raise ValueError(
            f"kenaz.scipy.linalg.solve: assume_a={assume_a!r} is not one of SciPy's: "
            f"{', '.join(repr(k) for k in _ASSUME_A if k is not None)}"
        )
    structure = _ASSUME_A[assume_a]
    n = a.shape[-1]
    if structure in ("symmetric", "hermitian", "positive definite"):
        hermitian = structure != "symmetric" or a.dtype.kind != "c"
        return from_triangle(a, lower, hermitian=hermitian), structure
    if structure == "diagonal":
        return ew.where(np.eye(n, dtype=bool), a, 0), structure
    if structure == "tridiagonal":
        band = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1
        return ew.where(band, a, 0), structure
    return a, structure


def _cholesky_solve(lower_factor: Tensor, b: Tensor) -> Tensor:
    """``x`` with ``L L^H x = b``: two triangular solves."""
    y = dec.solve(lower_factor, b, "lower")
    return dec.solve(dec.conj_transpose(lower_factor), y, "upper")


@_composite
def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: str | None = None,
    transposed: bool = False,
) -> Tensor:
    """Solve ``a @ x = b`` for square ``a``, reading ``a`` as ``assume_a`` says (SciPy's).

    ``assume_a`` is ``"gen"`` (default), ``"sym"``, ``"her"``, ``"pos"`` (these three read
    the ``lower`` or upper triangle only), ``"diagonal"``, ``"tridiagonal"``, ``"banded"``,
    ``"upper triangular"`` or ``"lower triangular"``. ``transposed=True`` solves
    ``a.T @ x = b``. ``overwrite_*`` are accepted and ignored (kenaz never overwrites).

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.solve([[4.0, 99.0], [1.0, 2.0]], [4.0, 3.0], assume_a="pos", lower=True)
    Tensor([0.5, 1.25])
    """
    a = square(checked(a, check_finite, "solve"), "solve")
    b = checked(b, check_finite, "solve")
    a, structure = _structured(a, assume_a, lower)
    if transposed:
        a = dec.matrix_transpose(a)
        structure = {"upper triangular": "lower triangular",
                     "lower triangular": "upper triangular"}.get(structure, structure)  # fmt: skip
    if structure == "positive definite":
        factor = dec.cholesky_op(a)
        return vector_solve(lambda m, v: _cholesky_solve(m, v), factor, b)
    triangle = {"upper triangular": "upper", "lower triangular": "lower"}.get(structure)
    return vector_solve(lambda m, v: dec.solve(m, v, triangle), a, b)


@_composite
def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Tensor:
    """Solve ``op(a) @ x = b`` for triangular ``a``; ``trans`` is 0/'N', 1/'T' or 2/'C'.

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.solve_triangular([[2.0, 0.0], [1.0, 1.0]], [2.0, 3.0], lower=True)
    Tensor([1., 2.])
    """
    a = square(checked(a, check_finite, "solve_triangular"), "solve_triangular")
    b = checked(b, check_finite, "solve_triangular")
    structure = "lower" if lower else "upper"
    if unit_diagonal:
        a = ew.where(np.eye(a.shape[-1], dtype=bool), 1.0, a)
    trans = {0: "N", 1: "T", 2: "C"}.get(trans, trans)
    if trans in ("T", "C"):
        a = dec.conj_transpose(a) if trans == "C" else dec.matrix_transpose(a)
        structure = "upper" if lower else "lower"
    elif trans != "N":
        raise ValueError(
            f"kenaz.scipy.linalg.solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', "
            f"got {trans!r}"
        )
    return vector_solve(lambda m, v: dec.solve(m, v, structure), a, b)


def _from_band(ab: Tensor, upper_diagonals: int, lower_diagonals: int) -> Tensor:
    """The dense matrix of LAPACK's band storage: ``a[i, j] = ab[u + i - j, j]``."""
    n = ab.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    rows = upper_diagonals + i - j
    inside = (i - j <= lower_diagonals) & (j - i <= upper_diagonals)
    gathered = getitem(ab, (Ellipsis, np.clip(rows, 0, ab.shape[-2] - 1), j + 0 * i))
    return ew.where(inside, gathered, 0)


@_composite
def solve_banded(
    l_and_u: tuple[int, int],
    ab: Any,
    b: Any,
    overwrite_ab: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Tensor:
    """Solve ``a @ x = b`` for the banded ``a`` stored as ``ab`` (``ab[u + i - j, j] = a[i, j]``).

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ab = [[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]]  # tridiagonal: l = u = 1
    >>> ksl.solve_banded((1, 1), ab, [3.0, 4.0, 3.0])
    Tensor([1., 1., 1.])
    """
    lower_diagonals, upper_diagonals = (int(k) for k in l_and_u)
    ab = checked(ab, check_finite, "solve_banded")
    b = checked(b, check_finite, "solve_banded")
    if ab.shape[-2] != lower_diagonals + upper_diagonals + 1:
        raise ValueError(
            f"kenaz.scipy.linalg.solve_banded: ab has {ab.shape[-2]} rows; (l, u) = "
            f"{tuple(l_and_u)} needs l + u + 1 = {lower_diagonals + upper_diagonals + 1}"
        )
    a = _from_band(ab, upper_diagonals, lower_diagonals)
    return vector_solve(lambda m, v: dec.solve(m, v), a, b)


@_composite
def solveh_banded(
    ab: Any,
    b: Any,
    overwrite_ab: bool = False,
    overwrite_b: bool = False,
    lower: bool = False,
    check_finite: bool = True,
) -> Tensor:
    """Solve ``a @ x = b`` for Hermitian positive definite banded ``a`` (by Cholesky).

    ``ab`` holds the upper diagonals (``ab[u + i - j, j] = a[i, j]``, ``i <= j``) or, with
    ``lower=True``, the lower ones (``ab[i - j, j] = a[i, j]``, ``i >= j``).
    """
    ab = checked(ab, check_finite, "solveh_banded")
    b = checked(b, check_finite, "solveh_banded")
    bands = ab.shape[-2] - 1
    if lower:
        triangle = _from_band_lower(ab, bands)
    else:
        triangle = _from_band(ab, bands, 0)
    a = from_triangle(triangle, lower, hermitian=True)
    return vector_solve(_cholesky_solve, dec.cholesky_op(a), b)


def _from_band_lower(ab: Tensor, bands: int) -> Tensor:
    """The lower triangle stored as ``ab[i - j, j] = a[i, j]``."""
    n = ab.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    inside = (i - j >= 0) & (i - j <= bands)
    gathered = getitem(ab, (Ellipsis, np.clip(i - j, 0, bands), j + 0 * i))
    return ew.where(inside, gathered, 0)


@_composite
def inv(
    a: Any,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    assume_a: str | None = None,
    lower: bool = False,
) -> Tensor:
    """Inverse of a square matrix, read as ``assume_a`` says (see :func:`solve`)."""
    a = square(checked(a, check_finite, "inv"), "inv")
    eye = Tensor(np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy())
    return solve(a, eye, lower=lower, check_finite=False, assume_a=assume_a)


@_composite
def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    """Determinant of a square matrix (or a stack of them)."""
    return la.det(square(checked(a, check_finite, "det"), "det"))


@_composite
def lstsq(
    a: Any,
    b: Any,
    cond: Any = None,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    lapack_driver: str | None = None,
) -> tuple[Tensor, Tensor, int, Tensor]:
    """Least-squares solution ``(x, residues, rank, s)`` of ``a @ x = b``, as SciPy's.

    Singular values below ``cond`` times the largest count as zero (default: machine
    precision). ``residues`` are the squared residual norms when ``a`` is tall and of
    full rank (a scalar for a 1-d ``b``), else an empty array.
    """
    a = checked(a, check_finite, "lstsq")
    b = checked(b, check_finite, "lstsq")
    if cond is None or cond < 0:
        cond = np.finfo(np.result_type(a.dtype, b.dtype)).eps
    x, residues, rank, s = la.lstsq(a, b, rcond=cond)
    if b.ndim == 1 and residues.shape == (1,):
        residues = shape.reshape(residues, ())
    return x, residues, rank, s


@_composite
def pinv(
    a: Any,
    *,
    atol: Any = None,
    rtol: Any = None,
    return_rank: bool = False,
    check_finite: bool = True,
) -> Any:
    """Moore-Penrose pseudo-inverse; singular values up to ``atol + rtol * max(s)`` count as zero.

    ``rtol`` defaults to ``max(m, n) * eps`` (``atol``: 0). With ``return_rank``,
    returns ``(pinv, rank)``.
    """
    a = checked(a, check_finite, "pinv")
    m, n = a.shape[-2], a.shape[-1]
    rtol = max(m, n) * np.finfo(a.dtype).eps if rtol is None else rtol
    rcond = rtol
    if atol:  # the cutoff relative to the largest singular value, read from the values
        largest = np.max(read_value(dec.svdvals_op(ew.stop_gradient(a))), axis=-1)
        rcond = (atol + rtol * largest) / np.where(largest > 0, largest, 1.0)
    inverse = dec.pinv_op(a, rcond=rcond)
    if not return_rank:
        return inverse
    s = dec.svdvals_op(ew.stop_gradient(a))
    cutoff = reduction.amax(s, axis=-1, keepdims=True) * rtol + (atol or 0.0)
    return inverse, reduction.sum(ew.greater(s, cutoff), axis=-1)


@_composite
def norm(
    a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False, check_finite: bool = True
) -> Tensor:
    """Matrix or vector norm, as ``numpy.linalg.norm``."""
    return la.norm(checked(a, check_finite, "norm"), ord=ord, axis=axis, keepdims=keepdims)
