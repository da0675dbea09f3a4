"""``kenaz.scipy.linalg``: triangular and Cholesky solves, ``expm``, ``sqrtm``, differentiable."""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..convert import read_value as _read_value
from ..numpy import linalg as _la
from ..ops import decompositions as _dec
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from ..ops.linalg import matmul as _matmul
from ..tensor import Tensor

__all__ = [
    "solve_triangular", "cholesky", "cho_factor", "cho_solve", "expm", "sqrtm", "solve", "inv",
    "det", "eigh", "svd", "qr", "pinv", "norm", "lstsq",
]  # fmt: skip

solve = _la.solve
inv = _la.inv
det = _la.det
svd = _la.svd
qr = _la.qr
pinv = _la.pinv
norm = _la.norm


def lstsq(a: Any, b: Any, cond: Any = None) -> tuple[Tensor, Tensor, int, Tensor]:
    """Least-squares solution: ``(x, residues, rank, s)`` (as ``numpy.linalg.lstsq``)."""
    return _la.lstsq(a, b, rcond=cond)


def eigh(a: Any, lower: bool = True, eigvals_only: bool = False) -> Any:
    """Eigen-decomposition of a Hermitian matrix (reads the ``lower`` or upper triangle)."""
    uplo = "L" if lower else "U"
    return _la.eigvalsh(a, uplo) if eigvals_only else tuple(_la.eigh(a, uplo))


def _float(x: Any) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


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
    a, b = _float(a), _float(b)
    structure = "lower" if lower else "upper"
    if unit_diagonal:
        a = _ew.where(_np.eye(a.shape[-1], dtype=bool), 1.0, a)
    trans = {0: "N", 1: "T", 2: "C"}.get(trans, trans)
    if trans in ("T", "C"):
        a = _dec.conj_transpose(a) if trans == "C" else _dec.matrix_transpose(a)
        structure = "upper" if lower else "lower"
    elif trans != "N":
        raise ValueError(f"kenaz.scipy.linalg.solve_triangular: invalid trans {trans!r}")
    if b.ndim == 1:
        return _shape.squeeze(_dec.solve(a, _shape.expand_dims(b, -1), structure), -1)
    return _dec.solve(a, b, structure)


def cholesky(a: Any, lower: bool = False) -> Tensor:
    """Cholesky factor (upper by default, as in SciPy)."""
    return _la.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False) -> tuple[Tensor, bool]:
    """``(c, lower)`` for :func:`cho_solve`; ``c`` is the factor, zero in the other triangle."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Tensor:
    """Solve ``a @ x = b`` given ``cho_factor(a)``."""
    c, lower = c_and_lower
    c = _float(c)
    if lower:
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans="C", lower=True)
    y = solve_triangular(c, b, trans="C", lower=False)
    return solve_triangular(c, y, lower=False)


# Padé coefficients of degree 13 and the largest 1-norm it handles (Higham 2005).
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


def expm(a: Any) -> Tensor:
    """Matrix exponential by scaling and squaring with a degree-13 Padé approximant.

    Composed from matmul and solve, so every derivative is that of the
    approximant (accurate to working precision). The number of squarings
    depends on the values, so inside ``vmap`` use ``method="loop"``.
    """
    a = _float(a)
    n = a.shape[-1]
    one_norm = float(_np.max(_np.sum(_np.abs(_read_value(a)), axis=-2)))  # the squarings
    squarings = max(0, int(_np.ceil(_np.log2(one_norm / _THETA13)))) if one_norm > 0 else 0
    a = a / (2.0**squarings)
    b = _PADE13
    eye = _np.eye(n, dtype=a.dtype)
    a2 = _matmul(a, a)
    a4 = _matmul(a2, a2)
    a6 = _matmul(a4, a2)
    odd = _matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
    u = _matmul(a, odd + b[1] * eye)
    v = _matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
    v = v + b[0] * eye
    result = _dec.solve(v - u, v + u)
    for _ in range(squarings):
        result = _matmul(result, result)
    return result


def sqrtm(a: Any) -> Tensor:
    """Principal matrix square root (SciPy's values; derivative from the Sylvester equation
    ``X dX + dX X = dA``, defined when no two eigenvalues of ``X`` sum to zero)."""
    return _dec.sqrtm_op(_float(a))


from ..convert import accept_nested_lists_in as _accept_nested_lists_in  # noqa: E402

# Every public function accepts lists holding tensors as array-likes (kenaz.convert).
_accept_nested_lists_in(globals())
