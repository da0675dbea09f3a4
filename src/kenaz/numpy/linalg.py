"""``kenaz.numpy.linalg``: NumPy's ``linalg`` namespace, differentiable.

A few primitives (``solve``, ``cholesky``, ``eigh``, ``eigvalsh``, ``svd``,
``svdvals``, ``qr``, ``slogdet``, ``pinv`` in :mod:`kenaz.ops.decompositions`)
carry hand-written derivative rules; everything else here is composed from
them and from matmul. Functions accept stacks of matrices wherever NumPy does.

Symmetric inputs: like NumPy, ``cholesky``, ``eigh`` and ``eigvalsh`` read
only one triangle of the matrix (``UPLO``), and their derivatives are those of
the function NumPy computes: the other triangle gets a zero cotangent.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as _np

from ..ops import decompositions as _dec
from ..ops import elementwise as _ew
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops.indexing import getitem as _getitem
from ..ops.linalg import matmul, outer, tensordot  # noqa: F401  (re-exported)
from ..tensor import Tensor
from ._namespace import assembled as _assembled
from ._namespace import composite_of as _composite_of

_composite = _composite_of("kenaz.numpy.linalg")  # marks its composites (see _namespace)

__all__ = [
    "solve",
    "inv",
    "det",
    "slogdet",
    "cholesky",
    "eig",
    "eigvals",
    "eigh",
    "eigvalsh",
    "svd",
    "svdvals",
    "qr",
    "norm",
    "vector_norm",
    "matrix_norm",
    "pinv",
    "lstsq",
    "matrix_power",
    "matrix_rank",
    "cond",
    "tensorsolve",
    "tensorinv",
    "multi_dot",
    "trace",
    "diagonal",
    "matrix_transpose",
    "matmul",
    "outer",
    "tensordot",
    "vecdot",
    "cross",
    "LinAlgError",
]

LinAlgError = _np.linalg.LinAlgError


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _as_inexact(x: Any) -> Tensor:
    """``x`` as a float or complex tensor (integers become float64, as in NumPy)."""
    x = _tensor(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


def _square(x: Tensor, name: str) -> Tensor:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise LinAlgError(
            f"kenaz.linalg.{name}: expected a (stack of) square matrices, got shape {x.shape}"
        )
    return x


@_composite
def matrix_transpose(x: Any) -> Tensor:
    """Transpose the last two axes (Array API ``matrix_transpose``)."""
    return _dec.matrix_transpose(_tensor(x))


def _hermitian_from(a: Tensor, uplo: str) -> Tensor:
    """The Hermitian matrix NumPy reads from one triangle of ``a`` (``"L"`` or ``"U"``)."""
    n = a.shape[-1]
    if uplo.upper() == "U":
        a = _dec.conj_transpose(a)
    strictly_lower = _np.tri(n, k=-1, dtype=bool)
    lower = _ew.where(strictly_lower, a, 0)
    # NumPy ignores the imaginary part of the diagonal of a Hermitian matrix.
    diagonal = _ew.where(_np.eye(n, dtype=bool), _dec._real(a), 0)
    return lower + _dec.conj_transpose(lower) + diagonal


# -- solving ---------------------------------------------------------------------------------
@_composite
def solve(a: Any, b: Any) -> Tensor:
    """Solve ``a @ x = b`` (NumPy 2 semantics: ``b`` is a vector only when it is 1-d).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.linalg.solve(knp.array([[2.0, 0.0], [0.0, 4.0]]), knp.array([2.0, 2.0]))
    Tensor([1. , 0.5])
    """
    a = _square(_as_inexact(a), "solve")
    b = _as_inexact(b)
    if b.ndim == 1:
        return _shape.squeeze(_dec.solve(a, _shape.expand_dims(b, -1)), -1)
    return _dec.solve(a, b)


@_composite
def inv(a: Any) -> Tensor:
    """Inverse of a (stack of) square matrices."""
    a = _square(_as_inexact(a), "inv")
    return _dec.solve(a, Tensor(_np.eye(a.shape[-1], dtype=a.dtype)))


@_composite
def slogdet(a: Any) -> SlogdetResult:
    """Sign and natural log of the absolute value of the determinant."""
    return SlogdetResult(*_dec.slogdet_op(_square(_as_inexact(a), "slogdet")))


@_composite
def det(a: Any) -> Tensor:
    """Determinant, as ``sign * exp(logabsdet)`` (its derivative is infinite at singular matrices).

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> kenaz.grad(knp.linalg.det)(knp.array([[2.0, 1.0], [1.0, 3.0]]))
    Tensor([[ 3., -1.],
            [-1.,  2.]])
    """
    sign, logabsdet = slogdet(a)
    return sign * _ew.exp(logabsdet)


@_composite
def matrix_power(a: Any, n: int) -> Tensor:
    """``a`` raised to the integer power ``n`` (by repeated squaring; negative: of the inverse)."""
    a = _square(_tensor(a), "matrix_power")
    if not isinstance(n, (int, _np.integer)):
        raise TypeError(f"kenaz.linalg.matrix_power: the exponent must be an integer, got {n!r}")
    if n == 0:
        eye = _np.broadcast_to(_np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return Tensor(eye.copy())
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else matmul(result, a)
        n >>= 1
        if n:
            a = matmul(a, a)
    return result


@_composite
def tensorsolve(a: Any, b: Any, axes: Any = None) -> Tensor:
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x``."""
    a, b = _as_inexact(a), _as_inexact(b)
    if axes is not None:
        axes = [ax % a.ndim for ax in axes]
        rest = [ax for ax in range(a.ndim) if ax not in axes]
        a = _shape.transpose(a, rest + axes)
    x_shape = a.shape[b.ndim :]
    rows = math.prod(a.shape[: b.ndim])
    cols = math.prod(x_shape)
    if rows != cols:
        raise LinAlgError(
            f"kenaz.linalg.tensorsolve: the equation is not square ({rows} equations, "
            f"{cols} unknowns)"
        )
    x = solve(_shape.reshape(a, (rows, cols)), _shape.reshape(b, (rows,)))
    return _shape.reshape(x, x_shape)


@_composite
def tensorinv(a: Any, ind: int = 2) -> Tensor:
    """The inverse of ``a`` with respect to ``tensordot(., ., ind)``."""
    a = _as_inexact(a)
    if ind <= 0:
        raise ValueError("kenaz.linalg.tensorinv: ind must be a positive integer")
    out_shape = a.shape[ind:] + a.shape[:ind]
    rows = math.prod(a.shape[:ind])
    inverse = inv(_shape.reshape(a, (rows, -1)))
    return _shape.reshape(inverse, out_shape)


# -- decompositions ----------------------------------------------------------------------------
@_composite
def cholesky(a: Any, /, *, upper: bool = False) -> Tensor:
    """Cholesky factor ``L`` with ``a = L @ L^H`` (reads the lower triangle, as NumPy does)."""
    a = _square(_as_inexact(a), "cholesky")
    lower = _dec.cholesky_op(_hermitian_from(a, "L"))
    return _dec.conj_transpose(lower) if upper else lower


@_composite
def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (unit norm) of a general square matrix.

    Unlike NumPy, the results are always complex (as in JAX), so that their
    derivatives have a fixed dtype. Eigenvector derivatives are infinite where
    eigenvalues repeat; eigenvectors are defined up to a phase, so
    differentiate phase-invariant functions of them (``abs(v) ** 2``, ...).
    """
    return EigResult(*_dec.eig_op(_square(_as_inexact(a), "eig")))


@_composite
def eigvals(a: Any) -> Tensor:
    """Eigenvalues of a general square matrix (always complex, as in JAX)."""
    return _dec.eigvals_op(_square(_as_inexact(a), "eigvals"))


@_composite
def eigh(a: Any, UPLO: str = "L") -> EighResult:  # noqa: N803  (NumPy's name)
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix.

    Eigenvector derivatives are infinite where eigenvalues repeat (as in JAX);
    use :func:`eigvalsh` when only eigenvalues are needed.
    """
    a = _square(_as_inexact(a), "eigh")
    return EighResult(*_dec.eigh_op(_hermitian_from(a, UPLO)))


@_composite
def eigvalsh(a: Any, UPLO: str = "L") -> Tensor:  # noqa: N803
    """Eigenvalues (ascending) of a Hermitian matrix; finite derivatives also when they repeat."""
    a = _square(_as_inexact(a), "eigvalsh")
    return _dec.eigvalsh_op(_hermitian_from(a, UPLO))


@_composite
def svd(
    a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` (``S`` only without ``compute_uv``).

    ``full_matrices=True`` of a non-square matrix is computed but not
    differentiable (the extra vectors are not unique).
    """
    a = _as_inexact(a)
    if a.ndim < 2:
        raise LinAlgError(f"kenaz.linalg.svd: expected at least 2 dimensions, got {a.ndim}")
    if not compute_uv:
        return _dec.svdvals_op(a)
    if a.shape[-1] == a.shape[-2] or not full_matrices:
        return SVDResult(*_dec.svd_op(a))
    if a._trace:
        raise ValueError(
            "kenaz.linalg.svd: with full_matrices=True the extra singular vectors of a "
            "non-square matrix are not unique, so they have no derivative; pass "
            "full_matrices=False"
        )
    value = a._value if type(a) is Tensor else _np.asarray(a)
    return SVDResult(*(Tensor(part) for part in _dec.complete_svd(value)))


@_composite
def svdvals(x: Any, /) -> Tensor:
    """Singular values, descending (Array API ``svdvals``)."""
    return svd(x, compute_uv=False)


@_composite
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition; modes ``"reduced"``, ``"complete"`` and ``"r"``.

    Differentiable for every shape in ``"reduced"`` and ``"r"`` mode, and in
    ``"complete"`` mode when the matrix has no more rows than columns.
    """
    a = _as_inexact(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"kenaz.linalg.qr: mode {mode!r} is not supported; use reduced/complete/r")
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        if mode == "complete" and m > n:
            if a._trace:
                raise ValueError(
                    "kenaz.linalg.qr: mode='complete' of a tall matrix is not differentiable "
                    "(the extra columns of Q are not unique); use mode='reduced'"
                )
            q, r = _dec.complete_qr(a._value if type(a) is Tensor else _np.asarray(a))
            return QRResult(Tensor(q), Tensor(r))
        q, r = _dec.qr_op(a)
    else:  # wide: factor the leading square block, then R's other columns are Q^H a
        q, r_square = _dec.qr_op(_shape.slice_axis(a, a.ndim - 1, 0, m))
        rest = _shape.slice_axis(a, a.ndim - 1, m, n)
        r = _shape.concatenate([r_square, matmul(_dec.conj_transpose(q), rest)], axis=-1)
    return r if mode == "r" else QRResult(q, r)


@_composite
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tensor:
    """Moore-Penrose pseudo-inverse; differentiable where the rank is locally constant
    (``rtol``, the Array API's name, is ``rcond``)."""
    if rtol is not None:
        if rcond is not None:
            raise ValueError("kenaz.linalg.pinv: give rcond or rtol, not both")
        rcond = rtol
    return _dec.pinv_op(_as_inexact(a), rcond=rcond)


@_composite
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Tensor, Tensor, int, Tensor]:
    """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, singular_values)``."""
    a, b = _as_inexact(a), _as_inexact(b)
    m, n = a.shape[-2], a.shape[-1]
    if rcond is None:
        rcond = _np.finfo(a.dtype).eps * max(m, n)
    x = matmul(pinv(a, rcond=rcond), b)
    singular_values = svdvals(a)
    largest = _reduction.amax(singular_values, axis=-1, keepdims=True)
    above = _ew.greater(singular_values, largest * rcond)
    rank: Any = _reduction.sum(_ew.astype(above, _np.int64), axis=-1)
    try:
        rank = int(rank)
    except TypeError:  # inside vmap (ConcretizationError): one rank per example, as a tensor
        pass
    if m > n and (not isinstance(rank, int) or rank == n):
        error = b - matmul(a, x)
        residuals = _reduction.sum(_abs_squared(error), axis=0)
        if b.ndim == 1:
            residuals = _shape.reshape(residuals, (1,))
    else:
        residuals = Tensor(_np.zeros((0,), dtype=_real_dtype(a)))
    return x, residuals, rank, singular_values


@_composite
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tensor:  # noqa: N803
    """Rank from the singular values (an integer: no derivative), as NumPy counts it.

    Computed with kenaz's own decompositions, so on the input's backend (lazily on Dask).
    """
    a = A  # NumPy's name for the argument
    a = _ew.stop_gradient(a if isinstance(a, Tensor) else Tensor(a))
    if a.ndim < 2:
        return _ew.astype(_ew.greater(_reduction.sum(_ew.not_equal(a, 0)), 0), _np.intp)
    s = _ew.absolute(eigvalsh(a)) if hermitian else svdvals(a)
    if tol is None:
        if rtol is None:
            rtol = max(a.shape[-2:]) * _np.finfo(s.dtype).eps
        else:
            rtol = _shape.expand_dims(Tensor(rtol), -1)
        tol = _reduction.amax(s, axis=-1, keepdims=True) * rtol
    else:
        tol = _shape.expand_dims(Tensor(tol), -1)
    return _reduction.sum(_ew.greater(s, tol), axis=-1)


@_composite
def cond(x: Any, p: Any = None) -> Tensor:
    """Condition number: ``s_max / s_min`` for ``p`` in (None, 2, -2), else ``|x| |inv(x)|``."""
    x = _as_inexact(x)
    if p in (None, 2, -2):
        s = svdvals(x)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1 / ratio
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


@_composite
def multi_dot(arrays: Any, *, out: Any = None) -> Tensor:
    """Product of several matrices, left to right (1-d first/last are vectors)."""
    if out is not None:
        raise TypeError("kenaz.linalg.multi_dot: out= is not supported; use the returned value")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("kenaz.linalg.multi_dot: needs at least two arrays")
    result = arrays[0]
    for a in arrays[1:]:
        result = matmul(result, a)
    return result


# -- norms ---------------------------------------------------------------------------------------
def _abs_squared(x: Tensor) -> Tensor:
    return _ew.real(x * _ew.conjugate(x)) if x.dtype.kind == "c" else x * x


def _vector_norm(x: Tensor, ord: Any, axis: tuple[int, ...]) -> Tensor:
    if ord is None or ord == 2:
        return _ew.sqrt(_reduction.sum(_abs_squared(x), axis=axis))
    if ord == 1:
        return _reduction.sum(_ew.absolute(x), axis=axis)
    if ord == _np.inf:
        return _reduction.amax(_ew.absolute(x), axis=axis)
    if ord == -_np.inf:
        return _reduction.amin(_ew.absolute(x), axis=axis)
    if ord == 0:
        return _reduction.sum(_ew.astype(_ew.not_equal(x, 0), _real_dtype(x)), axis=axis)
    if isinstance(ord, str):
        raise ValueError(f"kenaz.linalg.norm: invalid norm order {ord!r} for vectors")
    powered = _reduction.sum(_ew.power(_ew.absolute(x), ord), axis=axis)
    return _ew.power(powered, 1.0 / ord)


def _real_dtype(x: Tensor) -> Any:
    return _np.zeros((), x.dtype).real.dtype


def _matrix_norm(x: Tensor, ord: Any, axis: tuple[int, int]) -> Tensor:
    if ord is None or ord == "fro":
        return _ew.sqrt(_reduction.sum(_abs_squared(x), axis=axis))
    x = _shape.moveaxis(x, axis, (-2, -1))
    if ord == "nuc":
        return _reduction.sum(svdvals(x), axis=-1)
    if ord == 2:
        return _reduction.amax(svdvals(x), axis=-1)
    if ord == -2:
        return _reduction.amin(svdvals(x), axis=-1)
    column_sums = _reduction.sum(_ew.absolute(x), axis=-2)
    row_sums = _reduction.sum(_ew.absolute(x), axis=-1)
    choices = {
        1: lambda: _reduction.amax(column_sums, axis=-1),
        -1: lambda: _reduction.amin(column_sums, axis=-1),
        _np.inf: lambda: _reduction.amax(row_sums, axis=-1),
        -_np.inf: lambda: _reduction.amin(row_sums, axis=-1),
    }
    if ord not in choices:
        raise ValueError(f"kenaz.linalg.norm: invalid norm order {ord!r} for matrices")
    return choices[ord]()


@_composite
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Matrix or vector norm, with NumPy's ``ord`` and ``axis`` conventions.

    At ``x = 0`` the 2-norm's derivative is NaN, as in JAX (the norm is not
    differentiable there); use ``sum(x**2)`` for a smooth squared norm.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> kenaz.grad(knp.linalg.norm)(knp.array([3.0, 4.0]))
    Tensor([0.6, 0.8])
    """
    x = _as_inexact(x)
    if axis is None:
        if ord is None:
            axes: tuple[int, ...] = tuple(range(x.ndim))
            result = _ew.sqrt(_reduction.sum(_abs_squared(x)))
            return _keep(result, axes, x.ndim) if keepdims else result
        if x.ndim not in (1, 2):
            raise ValueError("kenaz.linalg.norm: improper number of dimensions to norm")
        axis = tuple(range(x.ndim))
    axes = _reduction.normalize_axes(axis, x.ndim, "norm")
    if isinstance(axis, (tuple, list)):
        axes = tuple(int(a) % x.ndim for a in axis)  # keep the given order (rows, columns)
    if len(axes) == 1:
        result = _vector_norm(x, ord, axes)
    elif len(axes) == 2:
        result = _matrix_norm(x, ord, axes)
    else:
        raise ValueError("kenaz.linalg.norm: improper number of dimensions to norm")
    return _keep(result, tuple(sorted(axes)), x.ndim) if keepdims else result


def _keep(result: Tensor, axes: tuple[int, ...], ndim: int) -> Tensor:
    """Put the reduced ``axes`` back as unit axes (``keepdims=True``)."""
    return _shape.expand_dims(result, tuple(sorted(axes)))


@_composite
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Tensor:
    """Array API ``vector_norm`` (``axis=None`` flattens)."""
    x = _as_inexact(x)
    if axis is None:
        result = _vector_norm(_shape.ravel(x), ord, (0,))
        return _keep(result, tuple(range(x.ndim)), x.ndim) if keepdims else result
    axes = _reduction.normalize_axes(axis, x.ndim, "vector_norm")
    result = _vector_norm(x, ord, axes)
    return _keep(result, axes, x.ndim) if keepdims else result


@_composite
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Tensor:
    """Array API ``matrix_norm`` over the last two axes."""
    x = _as_inexact(x)
    return norm(x, ord=ord, axis=(x.ndim - 2, x.ndim - 1), keepdims=keepdims)


# -- Array API helpers -------------------------------------------------------------------------
@_composite
def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """Sum of the diagonal of the last two axes (Array API ``linalg.trace``)."""
    result = _reduction.sum(diagonal(x, offset=offset), axis=-1)
    return result if dtype is None else _ew.astype(result, dtype)


@_composite
def diagonal(x: Any, /, *, offset: int = 0) -> Tensor:
    """The diagonal of the last two axes (Array API ``linalg.diagonal``)."""
    x = _tensor(x)
    n, m = x.shape[-2], x.shape[-1]
    rows = _np.arange(max(0, -offset), max(max(0, -offset), min(n, m - offset)))
    return _ew.read_only_view(_getitem(x, (Ellipsis, rows, rows + offset)))  # as NumPy's view


@_composite
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """``sum(conj(x1) * x2, axis)`` (Array API ``vecdot``)."""
    x1 = _tensor(x1)
    x1 = _ew.conjugate(x1) if x1.dtype.kind == "c" else x1
    return _reduction.sum(x1 * x2, axis=axis)


@_composite
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Tensor:
    """Cross product of 3-vectors (Array API ``linalg.cross``)."""
    _cross = _assembled().cross  # kenaz.numpy's, which imports this module: see _namespace
    return _cross(x1, x2, axis=axis)
