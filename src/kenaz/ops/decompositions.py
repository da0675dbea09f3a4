"""Linear-algebra primitives: solves and matrix decompositions.

Every op works on stacks of matrices (leading axes broadcast, as in
``numpy.linalg``). Each declares its jvp rule; the vjp of ``solve`` is written
out, and the vjps of the decompositions are the *transposes* of their jvp
rules: an op with no vjp rule gets the transpose of its (linear) jvp rule from
reverse mode (``kenaz.reverse.transpose``). That keeps one formula per op, and
the transposes
follow JAX's convention for complex numbers (cotangents are transposes, under
the real pairing ``Re(sum(a * b))``).

Conventions at singular points follow JAX: eigenvector derivatives of
``eigh`` with repeated eigenvalues, and singular-vector derivatives of ``svd``
with repeated singular values, are infinite or NaN (the vectors are not
unique there); eigenvalues alone (``eigvalsh``) and singular values alone
(``svdvals``) have their own primitives, whose derivatives stay finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..effects import Op
from ..tensor import Tensor
from . import batching, reduction, shape
from . import elementwise as ew
from .linalg import einsum, matmul


# -- helpers ------------------------------------------------------------------------------
def matrix_transpose(x: Tensor) -> Tensor:
    """Swap the last two axes."""
    return shape.swapaxes(x, -1, -2)


def conj_transpose(x: Tensor) -> Tensor:
    """Conjugate transpose of the last two axes (plain transpose for real dtypes)."""
    x_t = matrix_transpose(x)
    return ew.conjugate(x_t) if x_t.dtype.kind == "c" else x_t


def _conj(x: Tensor) -> Tensor:
    return ew.conjugate(x) if x.dtype.kind == "c" else x


def _real(x: Tensor) -> Tensor:
    return ew.real(x) if x.dtype.kind == "c" else x


def _diagonal(x: Tensor) -> Tensor:
    return einsum("...ii->...i", x)


def _eye(n: int, dtype: Any) -> np.ndarray:
    return np.eye(n, dtype=dtype)


def _zeros(like: Tensor) -> Tensor:
    return Tensor(np.zeros(like.shape, like.dtype))


def matrix_batch(op: Op, args: tuple, batch_axes: tuple, **params: Any) -> tuple[Any, Any]:
    """Batching rule for stacked-matrix ops: batch axes to the front, the op broadcasts.

    Batched arguments get unit axes after the batch axis so that every
    argument's stack dimensions line up from the right.
    """
    rank = max(
        batching.ndim_of(a) - (ax is not None) for a, ax in zip(args, batch_axes, strict=True)
    )
    moved = [
        batching.move_batch_to_front(a, ax, rank) for a, ax in zip(args, batch_axes, strict=True)
    ]
    out = op(*moved, **params)
    return (out, (0,) * len(out)) if op.multiple_results else (out, 0)


# -- solve: general and triangular ----------------------------------------------------------
_FLIPPED = {None: None, "lower": "upper", "upper": "lower"}


def _triangle(x: Any, structure: str | None) -> Any:
    if structure is None:
        return x
    n = x.shape[-1]
    mask = np.tri(n, dtype=bool) if structure == "lower" else np.tri(n, dtype=bool).T
    return ew.where(mask, x, 0) if isinstance(x, Tensor) else np.where(mask, x, 0)


def _solve_impl(a: np.ndarray, b: np.ndarray, structure: str | None) -> np.ndarray:
    return np.linalg.solve(_triangle(a, structure), b)


def _solve_vjp_a(ans, a, b, structure):
    a_shape, a_dtype = a.shape, a.dtype

    def pullback(g):
        g_b = solve(matrix_transpose(a), g, _FLIPPED[structure])
        g_a = -_triangle(matmul(g_b, matrix_transpose(ans)), structure)
        return reduction.sum_to(g_a, a_shape, a_dtype)

    return pullback


def _solve_vjp_b(ans, a, b, structure):
    b_shape, b_dtype = b.shape, b.dtype
    return lambda g: reduction.sum_to(
        solve(matrix_transpose(a), g, _FLIPPED[structure]), b_shape, b_dtype
    )


solve_op = Op(
    "solve",
    _solve_impl,
    jvp=[
        lambda t, ans, a, b, structure: solve(a, -matmul(_triangle(t, structure), ans), structure),
        lambda t, ans, a, b, structure: _fit_stack(solve(a, t, structure), ans),
    ],
    vjp=[_solve_vjp_a, _solve_vjp_b],
    batch=matrix_batch,
)


def _fit_stack(x: Tensor, ans: Tensor) -> Tensor:
    return x if x.shape == ans.shape else shape.broadcast_to(x, ans.shape)


def solve(a: Any, b: Any, structure: str | None = None) -> Tensor:
    """Solve ``a @ x = b`` for stacks of matrices ``b`` (``(..., n, k)``).

    ``structure="lower"`` or ``"upper"`` uses only that triangle of ``a``.
    """
    return solve_op(a, b, structure=structure)


# -- Cholesky -------------------------------------------------------------------------------
def _phi(x: Tensor) -> Tensor:
    """The lower triangle of ``x`` with its diagonal halved."""
    n = x.shape[-1]
    weights = np.tri(n, k=-1) + 0.5 * np.eye(n)
    return x * weights.astype(np.zeros((), x.dtype).real.dtype)


def _cholesky_jvp(t, lower_factor, a):
    t = (t + conj_transpose(t)) * 0.5  # only the Hermitian part of a tangent moves the factor
    left = solve(lower_factor, t, "lower")  # L^-1 t
    middle = conj_transpose(solve(lower_factor, conj_transpose(left), "lower"))  # L^-1 t L^-H
    return matmul(lower_factor, _phi(middle))


def _cholesky_vjp(lower_factor, a):
    def pullback(g):
        # The transpose of the jvp: Q = L^-T phi(L^T g) conj(L)^-1, then its Hermitian part.
        projected = _phi(matmul(matrix_transpose(lower_factor), g))
        left = solve(matrix_transpose(lower_factor), projected, "upper")  # L^-T phi(L^T g)
        q = matrix_transpose(
            solve(conj_transpose(lower_factor), matrix_transpose(left), "upper")
        )  # ... conj(L)^-1
        return (q + conj_transpose(q)) * 0.5

    return pullback


cholesky_op = Op(
    "cholesky",
    lambda a: np.linalg.cholesky(a),
    jvp=[_cholesky_jvp],
    vjp=[_cholesky_vjp],
    batch=matrix_batch,
)


# -- symmetric eigendecomposition ---------------------------------------------------------------
def _eigen_gaps(w: Tensor) -> Tensor:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    n = w.shape[-1]
    eye = _eye(n, w.dtype)
    gaps = shape.expand_dims(w, -2) - shape.expand_dims(w, -1) + eye
    return 1.0 / gaps - eye


def _eigh_jvp(t, ans, a):
    w, v = ans
    projected = matmul(conj_transpose(v), matmul(t, v))  # V^H t V
    d_w = _real(_diagonal(projected))
    d_v = matmul(v, _eigen_gaps(w) * projected)
    return d_w, d_v


def _eigh_vjp(ans, a):
    w, v = ans

    def pullback(cotangents):
        g_w, g_v = cotangents  # None for an unused output (a symbolic zero)
        # The transpose of the jvp: conj(V) (diag(g_w) + F * (V^T g_v)) V^T. F is infinite
        # at repeated eigenvalues, so its term exists only when the eigenvectors are used.
        middle = _as_diagonal(_zeros(w) if g_w is None else g_w, v.dtype)
        if g_v is not None:
            middle = middle + _eigen_gaps(w) * matmul(matrix_transpose(v), g_v)
        return matmul(_conj(v), matmul(middle, matrix_transpose(v)))

    return pullback


def _as_diagonal(d: Tensor, dtype: Any) -> Tensor:
    """Diagonal matrices with ``d`` (``(..., n)``) on their diagonals."""
    n = d.shape[-1]
    d = d if d.dtype == dtype else ew.astype(d, dtype)
    return shape.expand_dims(d, -1) * _eye(n, np.zeros((), dtype).real.dtype)


eigh_op = Op(
    "eigh",
    lambda a: tuple(np.linalg.eigh(a)),
    jvp=[_eigh_jvp],
    vjp=[_eigh_vjp],
    batch=matrix_batch,
    multiple_results=True,
)


def _diagonal_of_projection(left: Tensor, t: Tensor, right: Tensor) -> Tensor:
    """``diag(left^H t right)`` without forming the product: ``sum(conj(left) * (t right))``."""
    return reduction.sum(_conj(left) * matmul(t, right), axis=-2)


def _eigvalsh_jvp(t, w, a):
    v = eigh_op(a)[1]
    return _real(_diagonal_of_projection(v, t, v))


def _eigvalsh_vjp(w, a):
    v = eigh_op(a)[1]  # conj(V) diag(g) V^T
    return lambda g: matmul(_conj(v) * shape.expand_dims(g, -2), matrix_transpose(v))


eigvalsh_op = Op(
    "eigvalsh",
    lambda a: np.linalg.eigvalsh(a),
    jvp=[_eigvalsh_jvp],
    vjp=[_eigvalsh_vjp],
    batch=matrix_batch,
)


# -- singular value decomposition -------------------------------------------------------------
def _svd_jvp(t, ans, a):
    u, s, vh = ans
    v = conj_transpose(vh)
    dtype = u.dtype
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    projected = matmul(conj_transpose(u), matmul(t, v))  # U^H t V, (k, k)
    d_s = _real(_diagonal(projected))
    s_row = shape.expand_dims(s, -2)  # s[j] along the last axis
    s_col = shape.expand_dims(s, -1)  # s[i] along the second to last
    eye = _eye(k, s.dtype)
    squared_gaps = (s_row - s_col) * (s_row + s_col)  # s[j]^2 - s[i]^2
    gaps = 1.0 / (squared_gaps + eye) - eye
    safe_s = ew.where(ew.equal(s, 0), 1.0, s)
    s_inverse = ew.where(ew.equal(s, 0), 0.0, 1.0 / safe_s)
    projected_s = projected * ew.astype(s_row, dtype)  # (U^H t V)[i, j] s[j]
    s_projected = ew.astype(s_col, dtype) * projected  # s[i] (U^H t V)[i, j]
    diagonal_part = (projected - conj_transpose(projected)) * (
        0.5 * eye * shape.expand_dims(s_inverse, -2)
    )
    d_u = matmul(u, gaps * (projected_s + conj_transpose(projected_s)) + diagonal_part)
    d_v = matmul(v, gaps * (s_projected + conj_transpose(s_projected)))
    s_divisor = ew.astype(shape.expand_dims(safe_s, -2), dtype)
    if m > n:  # the part of t V outside the span of U
        t_v = matmul(t, v)
        d_u = d_u + (t_v - matmul(u, matmul(conj_transpose(u), t_v))) / s_divisor
    if n > m:
        t_u = matmul(conj_transpose(t), u)
        d_v = d_v + (t_u - matmul(v, matmul(vh, t_u))) / s_divisor
    return d_u, d_s, conj_transpose(d_v)


svd_op = Op(
    "svd",
    lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
    jvp=[_svd_jvp],  # reverse mode transposes it: unused outputs' terms are never pulled back
    batch=matrix_batch,
    multiple_results=True,
)


def _svdvals_jvp(t, s, a):
    u, _, vh = svd_op(a)
    return _real(_diagonal_of_projection(u, t, conj_transpose(vh)))


def _svdvals_vjp(s, a):
    u, _, vh = svd_op(a)  # conj(U) diag(g) conj(Vh)
    return lambda g: matmul(_conj(u) * shape.expand_dims(g, -2), _conj(vh))


svdvals_op = Op(
    "svdvals",
    lambda a: np.linalg.svd(a, compute_uv=False),
    jvp=[_svdvals_jvp],
    vjp=[_svdvals_vjp],
    batch=matrix_batch,
)


# -- QR ---------------------------------------------------------------------------------------
def _qr_jvp(t, ans, a):
    q, r = ans
    # t R^-1, as (R^-T t^T)^T
    t_r_inverse = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(t), "lower"))
    projected = matmul(conj_transpose(q), t_r_inverse)  # Q^H t R^-1
    n = projected.shape[-1]
    strictly_lower = projected * np.tri(n, k=-1, dtype=bool)
    omega = strictly_lower - conj_transpose(strictly_lower)  # skew-Hermitian
    if projected.dtype.kind == "c":  # R's real diagonal fixes the imaginary diagonal
        omega = omega + (projected - ew.real(projected)) * _eye(n, bool)
    d_q = matmul(q, omega - projected) + t_r_inverse
    d_r = matmul(projected - omega, r)
    return d_q, d_r


qr_op = Op(
    "qr",
    lambda a: tuple(np.linalg.qr(a, mode="reduced")),
    jvp=[_qr_jvp],
    batch=matrix_batch,
    multiple_results=True,
)


# -- log-determinant ---------------------------------------------------------------------------
def _slogdet_jvp(t, ans, a):
    sign, _ = ans
    trace = einsum("...ii->...", solve(a, t))  # tr(A^-1 t)
    if trace.dtype.kind != "c":
        return None, trace
    return sign * (1j * ew.imag(trace)), ew.real(trace)


def _slogdet_vjp(ans, a):
    sign, _ = ans

    def pullback(cotangents):
        g_sign, g_log = cotangents  # None for an unused output (a symbolic zero)
        # The transpose of the jvp: c A^-T, with c = g_log (+ i Im(g_sign sign) if complex).
        inverse_transpose = solve(matrix_transpose(a), _eye(a.shape[-1], a.dtype))
        if g_log is None:
            g_log = _zeros(ans[1])
        if a.dtype.kind == "c" and g_sign is not None:
            g_log = g_log + 1j * ew.imag(g_sign * sign)
        return shape.expand_dims(shape.expand_dims(g_log, -1), -1) * inverse_transpose

    return pullback


slogdet_op = Op(
    "slogdet",
    lambda a: tuple(np.linalg.slogdet(a)),
    jvp=[_slogdet_jvp],
    vjp=[_slogdet_vjp],
    batch=matrix_batch,
    multiple_results=True,
)


# -- pseudo-inverse -------------------------------------------------------------------------------
def _pinv_jvp(t, p, a, rcond):
    m, n = a.shape[-2], a.shape[-1]
    t_h = conj_transpose(t)
    p_h = conj_transpose(p)
    term = -matmul(p, matmul(t, p))
    term = term + matmul(_eye(n, p.dtype) - matmul(p, a), matmul(t_h, matmul(p_h, p)))
    return term + matmul(matmul(p, p_h), matmul(t_h, _eye(m, p.dtype) - matmul(a, p)))


pinv_op = Op(
    "pinv",
    lambda a, rcond: np.linalg.pinv(a, rcond=rcond),
    jvp=[_pinv_jvp],
    batch=matrix_batch,
)


# -- matrix square root --------------------------------------------------------------------------
def _sqrtm_impl(a: np.ndarray) -> np.ndarray:
    from scipy.linalg import sqrtm  # SciPy only when used (kenaz.scipy.linalg.sqrtm)

    stack = a.reshape((-1,) + a.shape[-2:])
    roots = [np.asarray(sqrtm(m)) for m in stack]
    return np.stack(roots).reshape(a.shape[:-2] + roots[0].shape[-2:])


def _sqrtm_jvp(t, root, a):
    """Solve the Sylvester equation ``root @ d + d @ root = t`` for ``d`` (row-major vec form)."""
    n = root.shape[-1]
    eye = _eye(n, root.dtype)
    system = einsum("...ik,jl->...ijkl", root, eye) + einsum("ik,...lj->...ijkl", eye, root)
    system = shape.reshape(system, root.shape[:-2] + (n * n, n * n))
    t = t if t.dtype == root.dtype else ew.astype(t, root.dtype)
    flat = solve(system, shape.reshape(t, t.shape[:-2] + (n * n, 1)))
    return shape.reshape(flat, root.shape)


sqrtm_op = Op(
    "sqrtm",
    _sqrtm_impl,
    jvp=[_sqrtm_jvp],
    batch=matrix_batch,
)


# -- general (non-symmetric) eigendecomposition ----------------------------------------------
def _complex_dtype(dtype: Any) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _eig_impl(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eig(a)
    complex_dtype = _complex_dtype(a.dtype)  # always complex, as in JAX
    return w.astype(complex_dtype, copy=False), v.astype(complex_dtype, copy=False)


def _eig_jvp(t, ans, a):
    w, v = ans
    projected = solve(v, matmul(ew.astype(t, v.dtype), v))  # V^-1 t V
    d_w = _diagonal(projected)
    d_v = matmul(v, _eigen_gaps(w) * projected)
    # Keep the eigenvectors at unit norm: remove the component along v of Re(v^H dv).
    along = ew.real(reduction.sum(ew.conjugate(v) * d_v, axis=-2, keepdims=True))
    return d_w, d_v - v * along


eig_op = Op(
    "eig",
    _eig_impl,
    jvp=[_eig_jvp],
    batch=matrix_batch,
    multiple_results=True,
)


def _eigvals_jvp(t, w, a):
    v = eig_op(a)[1]
    return einsum("...ij,...jk,...ki->...i", solve(v, _eye(v.shape[-1], v.dtype)),
                  ew.astype(t, v.dtype), v)  # fmt: skip


eigvals_op = Op(
    "eigvals",
    lambda a: np.linalg.eigvals(a).astype(_complex_dtype(a.dtype), copy=False),
    jvp=[_eigvals_jvp],
    batch=matrix_batch,
)
