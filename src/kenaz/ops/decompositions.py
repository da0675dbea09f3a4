"""Linear-algebra primitives: solves and matrix decompositions.

Every op works on stacks of matrices (leading axes broadcast, as in
``numpy.linalg``). Each declares its jvp rule; the vjp of ``solve`` is written
out, and the vjps of the decompositions are the *transposes* of their jvp
rules: an op with no vjp rule gets the transpose of its (linear) jvp rule from
reverse mode (``kenaz.reverse.transpose``). That keeps one formula per op, and
the transposes
follow JAX's convention for complex numbers (cotangents are transposes, under
the real pairing ``Re(sum(a * b))``).

Backends: on NumPy values an implementation calls ``numpy.linalg`` at once (one
type-identity test, the fast path of every op); any other array runs the function
of the same name in its namespace's ``linalg`` extension of the Array API standard
(``cholesky``, ``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr``, ``solve``,
``slogdet``, ``pinv``, ``eig``, ``eigvals``), its named tuples taken as plain
tuples. The rules' constants (identity matrices, triangle masks) are made on their
tensors' backend. ``sqrtm`` (SciPy's) runs on NumPy only.

Conventions at singular points follow JAX: eigenvector derivatives of
``eigh`` with repeated eigenvalues, and singular-vector derivatives of ``svd``
with repeated singular values, are infinite or NaN (the vectors are not
unique there); eigenvalues alone (``eigvalsh``) and singular values alone
(``svdvals``) have their own primitives, whose derivatives stay finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import (
    NUMPY_TYPES,
    asarray_on,
    backend_dtype,
    common,
    dask_map_matrices,
    full_like,
    is_dask,
    namespace,
    numpy_dtype,
    promoted,
    value_of,
)
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


def _on_backend_of(like: Any, constant: np.ndarray) -> Any:
    """The NumPy ``constant`` on ``like``'s backend: itself on NumPy, else a Tensor of the
    backend's array (a Tensor, so that it mixes with tensors on either side of an operator:
    a strict array on the left refuses a Tensor on the right)."""
    if type(like) is Tensor and type(getattr(like, "_value", None)) in NUMPY_TYPES:
        return constant  # the fast path: a plain tensor of a NumPy value
    value = value_of(like)
    if type(value) in NUMPY_TYPES or value is None:
        return constant
    return Tensor(asarray_on(namespace(value), constant))


def _eye(n: int, dtype: Any, like: Any = None) -> Any:
    """The identity matrix of size ``n``, on the backend of ``like`` (NumPy without one)."""
    return _on_backend_of(like, np.eye(n, dtype=dtype))


def _tri(n: int, like: Any, k: int = 0, dtype: Any = bool) -> Any:
    """``numpy.tri(n, k=k, dtype=dtype)`` on the backend of ``like``."""
    return _on_backend_of(like, np.tri(n, k=k, dtype=dtype))


def _zeros(like: Tensor) -> Tensor:
    if type(like) is Tensor and type(getattr(like, "_value", None)) in NUMPY_TYPES:
        return Tensor(np.zeros(like.shape, like.dtype))
    return Tensor(full_like(like, like.shape, 0, like.dtype))


def _linalg(name: str, value: Any) -> Any:
    """The ``linalg`` function ``name`` of the namespace of ``value`` (not a NumPy value).

    On Dask, the function runs lazily per block of whole matrices (:func:`_dask_linalg`)
    unless Dask's own blocked algorithm takes the input as it is chunked. A namespace
    without it falls back, for arrays that take part in NumPy's dispatch
    (``__array_function__``: CuPy), to ``numpy.linalg``'s function, which hands the
    array to its library: what kenaz did before it used the standard.
    """
    xp = namespace(value)
    function = getattr(getattr(xp, "linalg", None), name, None)
    if is_dask(xp):
        if not _dask_blocked_algorithm_takes(name, value):
            return lambda *arrays, **params: _dask_linalg(name, *arrays, **params)
        if name == "cholesky":  # array-api-compat's Dask cholesky returns the upper factor
            import dask.array

            return lambda a: dask.array.linalg.cholesky(a, lower=True)
    if function is None and hasattr(value, "__array_function__"):
        function = getattr(np.linalg, name, None)
    if function is None:
        raise NotImplementedError(
            f"kenaz.linalg.{name}: the {xp.__name__} namespace has no linalg.{name} "
            "(the Array API standard's linalg extension); run it on NumPy"
        )
    return function


def _dask_blocked_algorithm_takes(name: str, a: Any) -> bool:
    """Whether Dask's own (blocked) ``linalg.name`` takes ``a`` as chunked: one 2-d matrix
    in square blocks for ``cholesky`` and ``solve``; one of a single column chunk (tall and
    skinny: Dask's ``tsqr``) for ``svd``, ``svdvals`` and ``qr``. Those scale past one block
    (``tsqr``'s vectors may differ from LAPACK's in sign). Real matrices only: Dask's blocked
    cholesky is wrong for complex ones (dask#12335)."""
    if a.ndim != 2 or numpy_dtype(a.dtype).kind == "c":
        return False
    if name in ("cholesky", "solve"):
        return a.chunks[-2] == a.chunks[-1]  # Dask's blocked cholesky and lu want square blocks
    return name in ("svd", "svdvals", "qr") and len(a.chunks[-1]) == 1


def _real_dtype(dtype: Any) -> np.dtype:
    return np.zeros((), dtype).real.dtype


# Per matrix on Dask: NumPy's function of the blocks, and each result's (core shape, dtype)
# for an (m, n) matrix of ``dtype`` (the standard's keyword arguments as in the calls above).
_PER_MATRIX: dict[str, tuple[Any, Any]] = {
    "cholesky": (np.linalg.cholesky, lambda m, n, k, dt: [((n, n), dt)]),
    "eigh": (np.linalg.eigh, lambda m, n, k, dt: [((n,), _real_dtype(dt)), ((n, n), dt)]),
    "eigvalsh": (np.linalg.eigvalsh, lambda m, n, k, dt: [((n,), _real_dtype(dt))]),
    "svd": (
        lambda a, full_matrices=False: np.linalg.svd(a, full_matrices=False),
        lambda m, n, k, dt: [((m, k), dt), ((k,), _real_dtype(dt)), ((k, n), dt)],
    ),
    "svdvals": (
        lambda a: np.linalg.svd(a, compute_uv=False),
        lambda m, n, k, dt: [((k,), _real_dtype(dt))],
    ),
    "qr": (
        lambda a, mode="reduced": np.linalg.qr(a, mode="reduced"),
        lambda m, n, k, dt: [((m, k), dt), ((k, n), dt)],
    ),
    "slogdet": (np.linalg.slogdet, lambda m, n, k, dt: [((), dt), ((), _real_dtype(dt))]),
    "eig": (
        np.linalg.eig,
        lambda m, n, k, dt: [((n,), _complex_dtype(dt)), ((n, n), _complex_dtype(dt))],
    ),
    "eigvals": (np.linalg.eigvals, lambda m, n, k, dt: [((n,), _complex_dtype(dt))]),
    "pinv": (None, lambda m, n, k, dt: [((n, m), dt)]),
    "solve": (np.linalg.solve, None),
}


def complete_svd(a: Any) -> tuple[Any, Any, Any]:
    """``svd(a, full_matrices=True)`` of a backend value (not differentiable: a non-square
    matrix's extra singular vectors are not unique), on ``a``'s backend."""
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.svd(a))
    if is_dask(namespace(a)):
        return _dask_linalg("svd", a, full_matrices=True)
    return tuple(_linalg("svd", a)(a, full_matrices=True))


def complete_qr(a: Any) -> tuple[Any, Any]:
    """``qr(a, mode="complete")`` of a backend value (not differentiable for a tall matrix:
    the extra columns of Q are not unique), on ``a``'s backend."""
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.qr(a, mode="complete"))
    if is_dask(namespace(a)):
        return _dask_linalg("qr", a, mode="complete")
    return tuple(_linalg("qr", a)(a, mode="complete"))


def _dask_linalg(name: str, *arrays: Any, **params: Any) -> Any:
    """``linalg.name`` of Dask arrays, lazily, one task per block of whole matrices
    (:func:`kenaz.backend.dask_map_matrices`): the result of ``numpy.linalg``, as Dask
    arrays of known shapes and dtypes; a tuple for several results."""
    function, results = _PER_MATRIX[name]
    a = arrays[0]
    m, n = a.shape[-2], a.shape[-1]
    dtype = numpy_dtype(a.dtype)
    operands = [(a, 2)]
    if name == "solve":
        b = arrays[1]
        operands.append((b, 2))
        specs = [((n, b.shape[-1]), np.result_type(dtype, numpy_dtype(b.dtype)))]
    elif name == "svd" and params.get("full_matrices"):  # complete: not differentiable
        function = np.linalg.svd
        specs = [((m, m), dtype), ((min(m, n),), _real_dtype(dtype)), ((n, n), dtype)]
    elif name == "qr" and params.get("mode") == "complete":
        function = lambda block: np.linalg.qr(block, mode="complete")  # noqa: E731
        specs = [((m, m), dtype), ((m, n), dtype)]
    else:
        specs = results(m, n, min(m, n), dtype)
    if name == "pinv":
        rtol = params.get("rtol")
        if rtol is None or np.ndim(rtol) == 0:
            function = lambda block: np.linalg.pinv(block, rcond=rtol)  # noqa: E731
        else:  # one tolerance per matrix of the stack
            operands.append((rtol, 0))
            function = lambda block, tolerance: np.linalg.pinv(block, rcond=tolerance)  # noqa: E731
    out = dask_map_matrices(function, operands, specs)
    return out if len(out) > 1 else out[0]


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
    if isinstance(x, Tensor):
        return ew.where(_on_backend_of(x, mask), x, 0)
    return np.where(mask, x, 0)


def _solve_impl(a: Any, b: Any, structure: str | None) -> Any:
    if type(a) in NUMPY_TYPES and type(b) in NUMPY_TYPES:
        return np.linalg.solve(_triangle(a, structure), b)
    xp, (a, b) = common((a, b))
    if xp is np:  # lists and other values NumPy converts
        return np.linalg.solve(_triangle(np.asarray(a), structure), b)
    a, b = promoted(xp, (a, b))
    if structure is not None:  # a general solve of the triangle (the standard has no other)
        a = xp.tril(a) if structure == "lower" else xp.triu(a)
    return _linalg("solve", a)(a, b)


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
    # a's rules read a and the solution, b's only a (of b itself: its shape).
    saves=[(0, -1), (0,)],
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
    return x * _on_backend_of(x, weights.astype(np.zeros((), x.dtype).real.dtype))


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


def _cholesky_impl(a: Any) -> Any:
    if type(a) in NUMPY_TYPES:
        return np.linalg.cholesky(a)
    return _linalg("cholesky", a)(a)


cholesky_op = Op(
    "cholesky",
    _cholesky_impl,
    jvp=[_cholesky_jvp],
    vjp=[_cholesky_vjp],
    batch=matrix_batch,
    saves=[(-1,)],  # the factor only
)


# -- symmetric eigendecomposition ---------------------------------------------------------------
def _eigen_gaps(w: Tensor) -> Tensor:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it."""
    n = w.shape[-1]
    eye = _eye(n, w.dtype, w)
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
    return shape.expand_dims(d, -1) * _eye(n, np.zeros((), dtype).real.dtype, d)


def _eigh_impl(a: Any) -> tuple[Any, Any]:
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.eigh(a))
    return tuple(_linalg("eigh", a)(a))  # the standard's EighResult, as a plain tuple


eigh_op = Op(
    "eigh",
    _eigh_impl,
    jvp=[_eigh_jvp],
    vjp=[_eigh_vjp],
    batch=matrix_batch,
    saves=[(-1,)],  # the eigenvalues and eigenvectors, not the matrix
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


def _eigvalsh_impl(a: Any) -> Any:
    if type(a) in NUMPY_TYPES:
        return np.linalg.eigvalsh(a)
    return _linalg("eigvalsh", a)(a)


eigvalsh_op = Op(
    "eigvalsh",
    _eigvalsh_impl,
    jvp=[_eigvalsh_jvp],
    vjp=[_eigvalsh_vjp],
    batch=matrix_batch,
    # The jvp rule decomposes the matrix again (the pullback, eigenvectors of its own).
    saves=[(0,)],
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
    eye = _eye(k, s.dtype, s)
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


def _svd_impl(a: Any) -> tuple[Any, Any, Any]:
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.svd(a, full_matrices=False))
    return tuple(_linalg("svd", a)(a, full_matrices=False))  # the standard's SVDResult


svd_op = Op(
    "svd",
    _svd_impl,
    jvp=[_svd_jvp],  # reverse mode transposes it: unused outputs' terms are never pulled back
    batch=matrix_batch,
    saves=[(-1,)],  # the factors; of the matrix, its shape
    multiple_results=True,
)


def _svdvals_jvp(t, s, a):
    u, _, vh = svd_op(a)
    return _real(_diagonal_of_projection(u, t, conj_transpose(vh)))


def _svdvals_vjp(s, a):
    u, _, vh = svd_op(a)  # conj(U) diag(g) conj(Vh)
    return lambda g: matmul(_conj(u) * shape.expand_dims(g, -2), _conj(vh))


def _svdvals_impl(a: Any) -> Any:
    if type(a) in NUMPY_TYPES:
        return np.linalg.svd(a, compute_uv=False)
    if is_dask(namespace(a)) and _dask_blocked_algorithm_takes("svdvals", a):
        # array-api-compat's Dask svdvals asks for full matrices, which Dask refuses
        return _linalg("svd", a)(a, full_matrices=False)[1]
    return _linalg("svdvals", a)(a)


svdvals_op = Op(
    "svdvals",
    _svdvals_impl,
    jvp=[_svdvals_jvp],
    vjp=[_svdvals_vjp],
    batch=matrix_batch,
    # The jvp rule decomposes the matrix again (the pullback, factors of its own).
    saves=[(0,)],
)


# -- QR ---------------------------------------------------------------------------------------
def _qr_jvp(t, ans, a):
    q, r = ans
    # t R^-1, as (R^-T t^T)^T
    t_r_inverse = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(t), "lower"))
    projected = matmul(conj_transpose(q), t_r_inverse)  # Q^H t R^-1
    n = projected.shape[-1]
    strictly_lower = projected * _tri(n, projected, k=-1)
    omega = strictly_lower - conj_transpose(strictly_lower)  # skew-Hermitian
    if projected.dtype.kind == "c":  # R's real diagonal fixes the imaginary diagonal
        omega = omega + (projected - ew.real(projected)) * _eye(n, bool, projected)
    d_q = matmul(q, omega - projected) + t_r_inverse
    d_r = matmul(projected - omega, r)
    return d_q, d_r


def _qr_impl(a: Any) -> tuple[Any, Any]:
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.qr(a, mode="reduced"))
    return tuple(_linalg("qr", a)(a, mode="reduced"))  # the standard's QRResult


qr_op = Op(
    "qr",
    _qr_impl,
    jvp=[_qr_jvp],
    batch=matrix_batch,
    saves=[(-1,)],  # the factors only
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
        inverse_transpose = solve(matrix_transpose(a), _eye(a.shape[-1], a.dtype, a))
        if g_log is None:
            g_log = _zeros(ans[1])
        if a.dtype.kind == "c" and g_sign is not None:
            g_log = g_log + 1j * ew.imag(g_sign * sign)
        return shape.expand_dims(shape.expand_dims(g_log, -1), -1) * inverse_transpose

    return pullback


def _slogdet_impl(a: Any) -> tuple[Any, Any]:
    if type(a) in NUMPY_TYPES:
        return tuple(np.linalg.slogdet(a))
    return tuple(_linalg("slogdet", a)(a))  # the standard's SlogdetResult


slogdet_op = Op(
    "slogdet",
    _slogdet_impl,
    jvp=[_slogdet_jvp],
    vjp=[_slogdet_vjp],
    batch=matrix_batch,
    saves=[(0, -1)],  # the matrix (its inverse) and the sign
    multiple_results=True,
)


# -- pseudo-inverse -------------------------------------------------------------------------------
def _pinv_jvp(t, p, a, rcond):
    m, n = a.shape[-2], a.shape[-1]
    t_h = conj_transpose(t)
    p_h = conj_transpose(p)
    term = -matmul(p, matmul(t, p))
    term = term + matmul(_eye(n, p.dtype, p) - matmul(p, a), matmul(t_h, matmul(p_h, p)))
    return term + matmul(matmul(p, p_h), matmul(t_h, _eye(m, p.dtype, p) - matmul(a, p)))


def _pinv_impl(a: Any, rcond: Any) -> Any:
    if type(a) in NUMPY_TYPES:
        return np.linalg.pinv(a, rcond=rcond)
    # The standard's ``rtol`` is NumPy's ``rcond`` (relative to the largest singular value;
    # both default to max(m, n) * eps).
    if rcond is not None:
        rcond = float(rcond) if np.ndim(rcond) == 0 else asarray_on(namespace(a), rcond)
    return _linalg("pinv", a)(a, rtol=rcond)


pinv_op = Op(
    "pinv",
    _pinv_impl,
    jvp=[_pinv_jvp],
    batch=matrix_batch,
    saves=[(0, -1)],
)


# -- matrix square root --------------------------------------------------------------------------
def _sqrtm_impl(a: np.ndarray) -> np.ndarray:
    if type(a) not in NUMPY_TYPES:
        raise NotImplementedError(
            f"kenaz.scipy.linalg.sqrtm: runs on NumPy only (SciPy's sqrtm; the Array API "
            f"standard has no matrix square root), not on {namespace(a).__name__}: convert "
            "the matrix with numpy.asarray first"
        )
    from scipy.linalg import sqrtm  # SciPy only when used (kenaz.scipy.linalg.sqrtm)

    stack = a.reshape((-1,) + a.shape[-2:])
    roots = [np.asarray(sqrtm(m)) for m in stack]
    return np.stack(roots).reshape(a.shape[:-2] + roots[0].shape[-2:])


def _sqrtm_jvp(t, root, a):
    """Solve the Sylvester equation ``root @ d + d @ root = t`` for ``d`` (row-major vec form)."""
    n = root.shape[-1]
    eye = _eye(n, root.dtype, root)
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
    saves=[(-1,)],  # the root only
)


# -- general (non-symmetric) eigendecomposition ----------------------------------------------
def _complex_dtype(dtype: Any) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _eig_impl(a: Any) -> tuple[Any, Any]:
    if type(a) in NUMPY_TYPES:
        w, v = np.linalg.eig(a)
        complex_dtype = _complex_dtype(a.dtype)  # always complex, as in JAX
        return w.astype(complex_dtype, copy=False), v.astype(complex_dtype, copy=False)
    w, v = _linalg("eig", a)(a)  # the standard's (2025.12) eig: complex results
    return _as_complex(w, a), _as_complex(v, a)


def _as_complex(x: Any, a: Any) -> Any:
    """A backend's ``x`` cast to the complex dtype of ``a``'s precision (if it is not already)."""
    target = _complex_dtype(numpy_dtype(a.dtype))
    if numpy_dtype(x.dtype) == target:
        return x
    xp = namespace(x)
    return xp.astype(x, backend_dtype(xp, target))


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
    saves=[(-1,)],  # the eigenvalues and eigenvectors, not the matrix
    multiple_results=True,
)


def _eigvals_jvp(t, w, a):
    v = eig_op(a)[1]
    return einsum("...ij,...jk,...ki->...i", solve(v, _eye(v.shape[-1], v.dtype, v)),
                  ew.astype(t, v.dtype), v)  # fmt: skip


def _eigvals_impl(a: Any) -> Any:
    if type(a) in NUMPY_TYPES:
        return np.linalg.eigvals(a).astype(_complex_dtype(a.dtype), copy=False)
    return _as_complex(_linalg("eigvals", a)(a), a)  # the standard's (2025.12) eigvals


eigvals_op = Op(
    "eigvals",
    _eigvals_impl,
    jvp=[_eigvals_jvp],
    batch=matrix_batch,
    saves=[(0,)],  # the jvp rule decomposes the matrix again
)
