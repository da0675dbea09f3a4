"""``kenaz.scipy.linalg``'s decompositions with SciPy's signatures: Cholesky, LU, the
(generalized) symmetric eigenproblem, QR, SVD, polar, and the Schur and Hessenberg
forms.

Differentiable: everything but ``schur``, ``rsf2csf``, ``hessenberg`` and
``qr(mode="raw")``, whose results are not unique functions of the matrix (the
Schur vectors' phases, the real Schur form's 2x2 blocks, LAPACK's Householder
reflectors): those compute values and refuse a tensor a transformation tracks.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...convert import read_value
from ...numpy import linalg as la
from ...numpy._namespace import composite_of as _composite_of
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import shape
from ...ops.indexing import getitem
from ...ops.linalg import matmul
from ...ops.matrix_equations import lu_op
from ...tensor import Tensor
from ._basic import solve_triangular
from ._common import checked, from_triangle, square

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.linalg")


def _values_only(name: str, why: str, *tensors: Tensor) -> list[np.ndarray]:
    """The NumPy values of ``tensors``; refuses one that a transformation tracks."""
    for x in tensors:
        if x._trace or type(x) is not Tensor:
            raise ValueError(
                f"kenaz.scipy.linalg.{name}: not differentiable ({why}), so it is not "
                "available under grad, jvp or vmap; apply kenaz.stop_gradient first if a "
                "constant is meant"
            )
    return [read_value(x) for x in tensors]


# -- Cholesky ------------------------------------------------------------------------------
@_composite
def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Tensor:
    """Cholesky factor of a Hermitian positive definite matrix: upper by default, as SciPy's.

    Reads the lower triangle of ``a`` (as LAPACK's ``potrf`` with ``lower=True``; both
    triangles agree for a Hermitian ``a``).
    """
    a = square(checked(a, check_finite, "cholesky"), "cholesky")
    factor = dec.cholesky_op(from_triangle(a, lower=True, hermitian=True))
    return factor if lower else dec.conj_transpose(factor)


@_composite
def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Tensor, bool]:
    """``(c, lower)`` for :func:`cho_solve`: the factor, zero in the other triangle
    (SciPy leaves arbitrary values there)."""
    return cholesky(a, lower=lower, check_finite=check_finite), lower


@_composite
def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> Tensor:
    """Solve ``a @ x = b`` given ``cho_factor(a)`` (reads only the factor's triangle)."""
    c, lower = c_and_lower
    c = checked(c, check_finite, "cho_solve")
    if lower:
        y = solve_triangular(c, b, lower=True, check_finite=check_finite)
        return solve_triangular(c, y, trans="C", lower=True, check_finite=False)
    y = solve_triangular(c, b, trans="C", lower=False, check_finite=check_finite)
    return solve_triangular(c, y, lower=False, check_finite=False)


# -- LU --------------------------------------------------------------------------------------
def _permutation_matrix(perm: Tensor, dtype: Any) -> Tensor:
    """``P`` with ``P[i, j] = (perm[i] == j)``, so that ``a = P @ L @ U``."""
    m = perm.shape[-1]
    return ew.astype(ew.equal(shape.expand_dims(perm, -1), np.arange(m)), dtype)


@_composite
def lu(
    a: Any,
    permute_l: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
) -> tuple[Tensor, ...]:
    """LU decomposition with partial pivoting, ``a = P @ L @ U`` (stacks too).

    Returns ``(P, L, U)``; ``(P @ L, U)`` with ``permute_l``; ``(p, L, U)`` with
    ``p_indices`` (``a == (L @ U)[p]``). ``L`` and ``U`` are differentiable.

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> p, l, u = ksl.lu([[1.0, 2.0], [3.0, 4.0]])
    >>> u
    Tensor([[3.        , 4.        ],
            [0.        , 0.66666667]])
    """
    a = checked(a, check_finite, "lu")
    perm, lower, upper = lu_op(a)
    if p_indices:
        return perm, lower, upper
    p = _permutation_matrix(perm, a.dtype)
    return (matmul(p, lower), upper) if permute_l else (p, lower, upper)


def _pivots(perm: np.ndarray, k: int) -> np.ndarray:
    """LAPACK's pivot indices (row ``i`` swapped with row ``piv[i]``), for ``a == (LU)[perm]``."""
    order = np.argsort(perm)  # L U = a[order]
    current = list(range(perm.shape[0]))  # the row of a at each position, as rows are swapped
    pivots = np.empty(k, dtype=np.int32)
    for i in range(k):
        j = current.index(order[i])
        pivots[i] = j
        current[i], current[j] = current[j], current[i]
    return pivots


def _order(pivots: np.ndarray, m: int) -> np.ndarray:
    """The rows of ``a`` in the order of ``L U``, from LAPACK's pivot indices."""
    order = np.arange(m)
    for i, j in enumerate(pivots):
        order[[i, j]] = order[[j, i]]
    return order


@_composite
def lu_factor(
    a: Any, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Tensor, np.ndarray]:
    """``(lu, piv)``: ``L`` (unit diagonal implied) and ``U`` packed in one matrix, and
    LAPACK's pivot indices, for :func:`lu_solve`. ``lu`` is differentiable."""
    a = checked(a, check_finite, "lu_factor")
    perm, lower, upper = lu_op(a)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    strictly_lower = ew.where(np.tri(m, k, k=-1, dtype=bool), lower, 0)  # (m, k)
    if n > k:
        zeros = Tensor(np.zeros(a.shape[:-2] + (m, n - k), dtype=upper.dtype))
        strictly_lower = shape.concatenate([strictly_lower, zeros], axis=-1)
    if m > k:
        zeros = Tensor(np.zeros(a.shape[:-2] + (m - k, n), dtype=upper.dtype))
        upper = shape.concatenate([upper, zeros], axis=-2)
    perms = read_value(perm)
    flat = perms.reshape((-1, m))
    pivots = np.stack([_pivots(p, k) for p in flat]).reshape(perms.shape[:-1] + (k,))
    return strictly_lower + upper, pivots


@_composite
def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Tensor:
    """Solve ``a @ x = b`` (``trans=1``: ``a.T``; ``2``: ``a.conj().T``) given ``lu_factor(a)``."""
    packed, pivots = lu_and_piv
    packed = square(checked(packed, check_finite, "lu_solve"), "lu_solve")
    b = checked(b, check_finite, "lu_solve")
    if packed.ndim != 2:
        raise ValueError(f"kenaz.scipy.linalg.lu_solve: expected one matrix, got {packed.shape}")
    n = packed.shape[-1]
    if b.shape[0] != n:
        raise ValueError(
            f"kenaz.scipy.linalg.lu_solve: shapes of lu {packed.shape} and b {b.shape} do not match"
        )
    order = _order(np.asarray(pivots), n)
    unit_lower = ew.where(np.tri(n, k=-1, dtype=bool), packed, 0) + np.eye(n, dtype=packed.dtype)
    if trans in (0, "N"):
        y = solve_triangular(unit_lower, getitem(b, order), lower=True, check_finite=False)
        return solve_triangular(packed, y, lower=False, check_finite=False)
    if trans not in (1, 2, "T", "C"):
        raise ValueError(f"kenaz.scipy.linalg.lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    y = solve_triangular(packed, b, trans=trans, lower=False, check_finite=False)
    z = solve_triangular(unit_lower, y, trans=trans, lower=True, check_finite=False)
    return getitem(z, np.argsort(order))  # x[order] = z


# -- the symmetric (generalized) eigenproblem ----------------------------------------------------
def _subset(
    w: Tensor, v: Tensor | None, by_index: Any, by_value: Any
) -> tuple[Tensor, Tensor | None]:
    """Eigenpairs ``lo..hi`` (inclusive indices) or with values in ``(lo, hi]``."""
    if by_index is not None and by_value is not None:
        raise ValueError("kenaz.scipy.linalg.eigh: give subset_by_index or subset_by_value")
    if by_index is not None:
        low, high = (int(i) for i in by_index)
        n = w.shape[-1]
        if not 0 <= low <= high < n:
            raise ValueError(
                f"kenaz.scipy.linalg.eigh: subset_by_index {tuple(by_index)} is out of range "
                f"for {n} eigenvalues"
            )
        keep: Any = slice(low, high + 1)
    elif by_value is not None:
        low, high = by_value
        values = read_value(w)  # which pairs to keep: piecewise constant, no derivative
        keep = np.flatnonzero((values > low) & (values <= high))
    else:
        return w, v
    return getitem(w, (Ellipsis, keep)), None if v is None else getitem(v, (Ellipsis, keep))


@_composite
def eigh(
    a: Any,
    b: Any = None,
    *,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,  # noqa: A002  (SciPy's name)
    check_finite: bool = True,
    subset_by_index: Any = None,
    subset_by_value: Any = None,
    driver: str | None = None,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, or of the generalized
    problem with Hermitian positive definite ``b``.

    ``type`` 1: ``a v = w b v``; 2: ``a b v = w v``; 3: ``b a v = w v``. Eigenvectors are
    ``b``-orthonormal (``v^H b v = I``; type 3: ``v^H b^-1 v = I``). Only the ``lower``
    (or upper) triangle of ``a`` and ``b`` is read. ``subset_by_index=(lo, hi)`` keeps
    eigenpairs ``lo`` to ``hi`` (inclusive), ``subset_by_value=(lo, hi)`` those with
    ``lo < w <= hi``. ``driver`` is accepted; the values do not depend on it.

    Eigenvector derivatives are infinite where eigenvalues repeat (as in JAX); the
    eigenvalues alone (``eigvals_only=True``) stay differentiable there.

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.eigh([[2.0, 0.0], [0.0, 8.0]], [[1.0, 0.0], [0.0, 4.0]], eigvals_only=True)
    Tensor([2., 2.])
    """
    if type not in (1, 2, 3):
        raise ValueError(f"kenaz.scipy.linalg.eigh: type must be 1, 2 or 3, got {type!r}")
    a = from_triangle(square(checked(a, check_finite, "eigh"), "eigh"), lower, hermitian=True)
    factor = None
    if b is not None:
        b = square(checked(b, check_finite, "eigh"), "eigh")
        if b.shape[-1] != a.shape[-1]:
            raise ValueError(f"kenaz.scipy.linalg.eigh: a {a.shape} and b {b.shape} differ in size")
        factor = dec.cholesky_op(from_triangle(b, lower, hermitian=True))  # b = L L^H
        if type == 1:  # L^-1 a L^-H
            left = dec.solve(factor, a, "lower")
            a = dec.conj_transpose(dec.solve(factor, dec.conj_transpose(left), "lower"))
        else:  # L^H a L
            a = matmul(dec.conj_transpose(factor), matmul(a, factor))
        a = (a + dec.conj_transpose(a)) * 0.5  # Hermitian to the last bit
    if eigvals_only:
        w = dec.eigvalsh_op(a)
        return _subset(w, None, subset_by_index, subset_by_value)[0]
    w, v = dec.eigh_op(a)
    if factor is not None:
        if type == 3:
            v = matmul(factor, v)
        else:
            v = dec.solve(dec.conj_transpose(factor), v, "upper")
    return _subset(w, v, subset_by_index, subset_by_value)


@_composite
def eigvalsh(
    a: Any,
    b: Any = None,
    *,
    lower: bool = True,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,  # noqa: A002  (SciPy's name)
    check_finite: bool = True,
    subset_by_index: Any = None,
    subset_by_value: Any = None,
    driver: str | None = None,
) -> Tensor:
    """Eigenvalues of the (generalized) Hermitian problem: ``eigh(..., eigvals_only=True)``."""
    return eigh(a, b, lower=lower, eigvals_only=True, type=type, check_finite=check_finite,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value)  # fmt: skip


@_composite
def eigh_tridiagonal(
    d: Any,
    e: Any,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: Any = None,
    check_finite: bool = True,
    tol: float = 0.0,
    lapack_driver: str = "auto",
) -> Any:
    """Eigenpairs of the real symmetric tridiagonal matrix with diagonal ``d`` and
    off-diagonal ``e``; ``select`` is ``"a"`` (all), ``"i"`` (indices ``select_range``,
    inclusive) or ``"v"`` (values in ``(lo, hi]``)."""
    from ... import numpy as knp  # the namespace's diag (the scipy layer sits beside it)

    d = checked(d, check_finite, "eigh_tridiagonal")
    e = checked(e, check_finite, "eigh_tridiagonal")
    if d.ndim != 1 or e.shape != (builtins.max(d.shape[0] - 1, 0),):
        raise ValueError(
            f"kenaz.scipy.linalg.eigh_tridiagonal: d must be 1-d and e one shorter; got "
            f"{d.shape} and {e.shape}"
        )
    if select not in ("a", "i", "v", "all", "index", "value"):
        raise ValueError(f"kenaz.scipy.linalg.eigh_tridiagonal: invalid select {select!r}")
    matrix = knp.diag(d) + knp.diag(e, 1) + knp.diag(e, -1)
    by_index = select_range if select[0] == "i" else None
    by_value = select_range if select[0] == "v" else None
    return eigh(matrix, eigvals_only=eigvals_only, check_finite=False,
                subset_by_index=by_index, subset_by_value=by_value)  # fmt: skip


# -- QR, SVD, polar ----------------------------------------------------------------------------
@_composite
def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Tensor, ...]:
    """QR decomposition, SciPy's modes: ``"full"`` (``Q`` is ``m x m``), ``"economic"``
    (``m x k``), ``"r"`` (returns ``(R,)``, ``R`` of shape ``m x n``) and ``"raw"``.

    ``pivoting=True`` also returns the column permutation ``P`` (``a[:, P] = Q R``).
    Differentiable but for ``"raw"`` and ``"full"`` of a tall matrix (whose extra
    columns of ``Q`` are not unique).
    """
    a = checked(a, check_finite, "qr")
    if mode not in ("full", "economic", "r", "raw"):
        raise ValueError(
            f"kenaz.scipy.linalg.qr: mode must be 'full', 'economic', 'r' or 'raw', got {mode!r}"
        )
    import scipy.linalg  # SciPy only when used: the raw mode and the pivots

    if mode == "raw":
        (value,) = _values_only("qr", "LAPACK's Householder reflectors are its own", a)
        return tuple(_as_tensors(scipy.linalg.qr(value, mode="raw", pivoting=pivoting)))
    extra: tuple = ()
    if pivoting:
        value = read_value(a)  # the pivot order: piecewise constant, no derivative
        columns = scipy.linalg.qr(value, mode="r", pivoting=True)[1]
        a = getitem(a, (Ellipsis, columns))
        extra = (columns,)
    m, n = a.shape[-2], a.shape[-1]
    if mode == "r":
        r = la.qr(a, mode="r")
        if m > n:
            zeros = Tensor(np.zeros(a.shape[:-2] + (m - n, n), dtype=r.dtype))
            r = shape.concatenate([r, zeros], axis=-2)
        return (r, *extra)
    q, r = la.qr(a, mode="complete" if mode == "full" else "reduced")
    return (q, r, *extra)


def _as_tensors(parts: Any) -> Any:
    if isinstance(parts, tuple):
        return tuple(_as_tensors(p) for p in parts)
    return Tensor(parts) if isinstance(parts, np.ndarray) and parts.dtype.kind in "fc" else parts


@_composite
def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """Singular value decomposition ``a = U @ diag(s) @ Vh`` (``s`` only without ``compute_uv``)."""
    a = checked(a, check_finite, "svd")
    result = la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(result) if compute_uv else result


@_composite
def svdvals(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Tensor:
    """Singular values, descending."""
    return la.svdvals(checked(a, check_finite, "svdvals"))


@_composite
def polar(a: Any, side: str = "right") -> tuple[Tensor, Tensor]:
    """Polar decomposition ``a = u @ p`` (``side="right"``) or ``a = p @ u`` (``"left"``),
    ``u`` with orthonormal columns and ``p`` Hermitian positive semidefinite; from the SVD.

    Differentiable where the singular values are distinct and nonzero.
    """
    if side not in ("right", "left"):
        raise ValueError(f"kenaz.scipy.linalg.polar: side must be 'right' or 'left', got {side!r}")
    a = checked(a, True, "polar")
    if a.ndim != 2:
        raise ValueError(f"kenaz.scipy.linalg.polar: a must be 2-d, got shape {a.shape}")
    w, s, vh = la.svd(a, full_matrices=False)
    u = matmul(w, vh)
    s = ew.astype(s, a.dtype) if a.dtype.kind == "c" else s
    if side == "right":
        p = matmul(dec.conj_transpose(vh) * s, vh)
    else:
        p = matmul(w * s, dec.conj_transpose(w))
    return u, p


# -- Schur and Hessenberg forms: values only ---------------------------------------------------
@_composite
def schur(
    a: Any,
    output: str = "real",
    lwork: Any = None,
    overwrite_a: bool = False,
    sort: Any = None,
    check_finite: bool = True,
) -> tuple[Any, ...]:
    """Schur decomposition ``a = Z T Z^H`` (SciPy's values; not differentiable: the Schur
    vectors are unique only up to phases, and the real form's 2x2 blocks are not unique)."""
    import scipy.linalg

    a = square(checked(a, check_finite, "schur"), "schur")
    (value,) = _values_only("schur", "the Schur vectors are not unique", a)
    return _as_tensors(tuple(scipy.linalg.schur(value, output=output, sort=sort)))


@_composite
def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Tensor, Tensor]:  # noqa: N803
    """The complex Schur form from the real one (SciPy's values; not differentiable)."""
    import scipy.linalg

    t, z = (checked(x, check_finite, "rsf2csf") for x in (T, Z))
    t, z = _values_only("rsf2csf", "the Schur vectors are not unique", t, z)
    return _as_tensors(tuple(scipy.linalg.rsf2csf(t, z)))


@_composite
def hessenberg(
    a: Any, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """Hessenberg form ``a = Q H Q^H`` (SciPy's values; not differentiable: LAPACK's
    reflectors fix the signs)."""
    import scipy.linalg

    a = square(checked(a, check_finite, "hessenberg"), "hessenberg")
    (value,) = _values_only("hessenberg", "the signs of Q are LAPACK's choice", a)
    return _as_tensors(scipy.linalg.hessenberg(value, calc_q=calc_q))
