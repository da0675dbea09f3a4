"""Primitives behind ``kenaz.scipy.linalg``: LU with partial pivoting, the Sylvester
equation, and primary matrix functions (the matrix logarithm).

Their values come from SciPy on NumPy arrays (imported when first used, so plain
kenaz does not need SciPy); their rules are written with kenaz ops, so every
derivative is differentiable again (second order and up). Conventions for complex
numbers follow :mod:`kenaz.ops.decompositions`: cotangents are transposes under the
real pairing ``Re(sum(a * b))``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import NUMPY_TYPES, namespace
from ..effects import Op
from ..tensor import Tensor
from . import elementwise as ew
from . import reduction, shape
from .decompositions import matrix_batch, matrix_transpose, solve
from .linalg import matmul


def _numpy_only(name: str, *values: Any) -> None:
    for value in values:
        if type(value) not in NUMPY_TYPES:
            raise NotImplementedError(
                f"kenaz.scipy.linalg.{name}: runs on NumPy only (SciPy computes it), not on "
                f"{namespace(value).__name__}: convert the matrix with numpy.asarray first"
            )


def _per_matrix(function: Any, *stacks: np.ndarray) -> Any:
    """``function`` of each matrix of broadcast stacks, the results stacked back."""
    batch = np.broadcast_shapes(*(s.shape[:-2] for s in stacks))
    flat = [np.broadcast_to(s, batch + s.shape[-2:]).reshape((-1,) + s.shape[-2:]) for s in stacks]
    results = [function(*matrices) for matrices in zip(*flat, strict=True)]
    if isinstance(results[0], tuple):
        return tuple(
            np.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*results, strict=True)
        )
    return np.stack(results).reshape(batch + results[0].shape)


def _triangle(x: Tensor, k: int, lower: bool) -> Tensor:
    """``tril(x, k)`` (``lower``) or ``triu(x, k)`` of the last two axes."""
    m, n = x.shape[-2], x.shape[-1]
    mask = np.tri(m, n, k=k, dtype=bool)
    return ew.where(mask if lower else ~np.tri(m, n, k=k - 1, dtype=bool), x, 0)


def _pad_columns(x: Tensor, columns: int) -> Tensor:
    """``x`` with ``columns`` more columns: zeros above, the identity below its rows."""
    m, k = x.shape[-2], x.shape[-1]
    extra = np.zeros(x.shape[:-2] + (m, columns), dtype=x.dtype)
    extra[..., k:, :] = np.eye(columns, dtype=x.dtype)
    return shape.concatenate([x, Tensor(extra)], axis=-1)


# -- LU with partial pivoting ---------------------------------------------------------------
def _lu_impl(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _numpy_only("lu", a)
    import scipy.linalg  # SciPy only when used

    perm, lower, upper = scipy.linalg.lu(a, p_indices=True)  # a == (lower @ upper)[perm]
    return perm.astype(np.intp), lower, upper


def _lu_jvp(t, ans, a):
    """With ``P^T a = L U``: ``L^-1 P^T t U^-1`` splits into ``L^-1 dL`` (strictly
    lower) and ``dU U^-1`` (upper). A rectangular factor is completed to a square one
    (identity columns for L, identity rows for U) so both inverses exist."""
    perm, lower, upper = ans
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    # a = P L U with P[i, j] = (perm[i] == j), so L U = P^T a
    rows = ew.equal(shape.expand_dims(perm, -1), np.arange(m))
    permuted = matmul(matrix_transpose(ew.astype(rows, t.dtype)), t)
    lower_square = _pad_columns(lower, m - k)  # (m, m)
    upper_square = matrix_transpose(_pad_columns(matrix_transpose(upper), n - k))  # (n, n)
    la = solve(lower_square, permuted, "lower")  # L^-1 P^T t, (m, n)
    # (L^-1 P^T t) U^-1, as (U^-T (L^-1 P^T t)^T)^T
    lau = matrix_transpose(solve(matrix_transpose(upper_square), matrix_transpose(la), "lower"))
    d_lower = matmul(lower_square, _triangle(lau, -1, lower=True))[..., :, :k]
    d_upper = matmul(_triangle(lau, 0, lower=False), upper_square)[..., :k, :]
    return None, d_lower, d_upper


lu_op = Op(
    "lu",
    _lu_impl,
    jvp=[_lu_jvp],  # reverse mode transposes it
    batch=matrix_batch,
    saves=[(-1,)],  # the factors; of the matrix, its shape
    multiple_results=True,
)


# -- the Sylvester equation a x + x b = q ---------------------------------------------------------
def _sylvester_impl(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    _numpy_only("solve_sylvester", a, b, q)
    import scipy.linalg

    return _per_matrix(scipy.linalg.solve_sylvester, a, b, q)


def sylvester(a: Any, b: Any, q: Any) -> Tensor:
    """The solution ``x`` of ``a @ x + x @ b = q`` (stacks broadcast)."""
    return sylvester_op(a, b, q)


def _adjoint_solution(a, b, g):
    """The cotangent of ``q``: the solution of the transposed equation ``a^T y + y b^T = g``."""
    return sylvester(matrix_transpose(a), matrix_transpose(b), g)


def _sylvester_vjp_a(x, a, b, q):
    a_shape, a_dtype = a.shape, a.dtype
    return lambda g: reduction.sum_to(
        -matmul(_adjoint_solution(a, b, g), matrix_transpose(x)), a_shape, a_dtype
    )


def _sylvester_vjp_b(x, a, b, q):
    b_shape, b_dtype = b.shape, b.dtype
    return lambda g: reduction.sum_to(
        -matmul(matrix_transpose(x), _adjoint_solution(a, b, g)), b_shape, b_dtype
    )


def _sylvester_vjp_q(x, a, b, q):
    q_shape, q_dtype = q.shape, q.dtype
    return lambda g: reduction.sum_to(_adjoint_solution(a, b, g), q_shape, q_dtype)


sylvester_op = Op(
    "solve_sylvester",
    _sylvester_impl,
    # d(a x + x b) = dq: a dx + dx b = dq - da x - x db, the same equation again
    jvp=[
        lambda t, x, a, b, q: sylvester(a, b, -matmul(t, x)),
        lambda t, x, a, b, q: sylvester(a, b, -matmul(x, t)),
        lambda t, x, a, b, q: sylvester(a, b, t),
    ],
    vjp=[_sylvester_vjp_a, _sylvester_vjp_b, _sylvester_vjp_q],
    batch=matrix_batch,
    # a's and b's rules read a, b and the solution; q's only a and b.
    saves=[(0, 1, -1), (0, 1, -1), (0, 1)],
)


# -- primary matrix functions: the matrix logarithm ----------------------------------------------
def _scipy_logm(a: np.ndarray) -> np.ndarray:
    import scipy.linalg

    # in double precision: SciPy's single-precision logm is inaccurate (and warns so)
    return np.asarray(scipy.linalg.logm(a.astype(np.result_type(a.dtype, np.float64))))


_MATRIX_FUNCTIONS = {"logm": _scipy_logm}


def _matrix_function_impl(a: np.ndarray, function: str) -> np.ndarray:
    _numpy_only(function, a)
    values = _per_matrix(_MATRIX_FUNCTIONS[function], a)
    # SciPy works in double precision: single precision in, single precision out
    single = np.complex64 if values.dtype.kind == "c" else np.float32
    return values.astype(single) if a.dtype in (np.float32, np.complex64) else values


def frechet_derivative(a: Tensor, e: Tensor, function: str) -> Tensor:
    """The Fréchet derivative ``L_f(a, e)`` of the primary matrix function ``f``: the
    upper right block of ``f([[a, e], [0, a]])`` (Higham, *Functions of Matrices*, 3.2).

    It is an op of ``a`` and ``e``, so it is differentiable again.
    """
    n = a.shape[-1]
    dtype = np.result_type(a.dtype, e.dtype)
    a = a if a.dtype == dtype else ew.astype(a, dtype)
    e = e if e.dtype == dtype else ew.astype(e, dtype)
    zeros = Tensor(np.zeros(a.shape, dtype))
    block = shape.concatenate(
        [shape.concatenate([a, e], axis=-1), shape.concatenate([zeros, a], axis=-1)], axis=-2
    )
    return matrix_function_op(block, function=function)[..., :n, n:]


def _matrix_function_jvp(t, ans, a, function):
    return _fit_dtype(frechet_derivative(a, t, function), ans.dtype)


def _matrix_function_vjp(ans, a, function):
    # f has a power series with real coefficients, so the transpose of e -> L_f(a, e)
    # under the bilinear pairing is g -> L_f(a^T, g).
    def pullback(g):
        cotangent = frechet_derivative(matrix_transpose(a), g, function)
        if a.dtype.kind != "c" and cotangent.dtype.kind == "c":
            cotangent = ew.real(cotangent)  # a real input's cotangent is real
        return _fit_dtype(cotangent, a.dtype)

    return pullback


def _fit_dtype(x: Tensor, dtype: Any) -> Tensor:
    return x if x.dtype == dtype else ew.astype(x, dtype)


matrix_function_op = Op(
    "matrix_function",
    _matrix_function_impl,
    jvp=[_matrix_function_jvp],
    vjp=[_matrix_function_vjp],
    batch=matrix_batch,
    saves=[(0,)],  # the matrix (of the output, its dtype)
)
