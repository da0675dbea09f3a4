"""``kenaz.scipy.linalg``'s matrix functions and matrix equations: ``expm`` and its
Fréchet derivative, ``logm``, ``sqrtm``, ``funm``, the trigonometric and hyperbolic
functions, and the Sylvester and Lyapunov equations (SciPy's signatures).

``expm`` and everything built on it are composed from matmul and solve;
``logm``, ``sqrtm`` and ``solve_sylvester`` are primitives whose rules solve the
same problem again, so all are differentiable to any order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import read_value
from ...numpy._namespace import composite_of as _composite_of
from ...ops import decompositions as dec
from ...ops import elementwise as ew
from ...ops import shape
from ...ops.linalg import matmul
from ...ops.matrix_equations import matrix_function_op, sylvester
from ...tensor import Tensor
from ._common import as_inexact, checked, square

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.linalg")

# Padé coefficients of degree 13 and the largest 1-norm it handles (Higham 2005).
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
    40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


@_composite
def expm(A: Any) -> Tensor:  # noqa: N803  (SciPy's name)
    """Matrix exponential by scaling and squaring with a degree-13 Padé approximant.

    Composed from matmul and solve, so every derivative is that of the
    approximant (accurate to working precision). The number of squarings
    depends on the values, so inside ``vmap`` use ``method="loop"``.

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.expm([[0.0, 1.0], [0.0, 0.0]])
    Tensor([[1., 1.],
            [0., 1.]])
    """
    a = square(as_inexact(A), "expm")
    n = a.shape[-1]
    one_norm = float(np.max(np.sum(np.abs(read_value(a)), axis=-2)))  # the squarings
    squarings = max(0, int(np.ceil(np.log2(one_norm / _THETA13)))) if one_norm > 0 else 0
    a = a / (2.0**squarings)
    b = _PADE13
    eye = np.eye(n, dtype=a.dtype)
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    odd = matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
    u = matmul(a, odd + b[1] * eye)
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
    v = v + b[0] * eye
    result = dec.solve(v - u, v + u)
    for _ in range(squarings):
        result = matmul(result, result)
    return result


def _upper_block(a: Tensor, e: Tensor) -> Tensor:
    """``[[a, e], [0, a]]``."""
    zeros = Tensor(np.zeros(a.shape, a.dtype))
    top = shape.concatenate([a, e], axis=-1)
    return shape.concatenate([top, shape.concatenate([zeros, a], axis=-1)], axis=-2)


@_composite
def expm_frechet(
    A: Any,  # noqa: N803  (SciPy's names)
    E: Any,  # noqa: N803
    method: str | None = None,
    compute_expm: bool = True,
    check_finite: bool = True,
) -> Any:
    """Fréchet derivative of ``expm`` at ``A`` in the direction ``E``: ``(expm(A), L)``,
    or ``L`` alone without ``compute_expm``; from ``expm([[A, E], [0, A]])``.

    ``method`` (``"SPS"`` or ``"blockEnlarge"``) is accepted; both give these values.
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"kenaz.scipy.linalg.expm_frechet: unknown method {method!r}")
    a = square(checked(A, check_finite, "expm_frechet"), "expm_frechet")
    e = checked(E, check_finite, "expm_frechet")
    if e.shape != a.shape:
        raise ValueError(
            f"kenaz.scipy.linalg.expm_frechet: A {a.shape} and E {e.shape} differ in shape"
        )
    dtype = np.result_type(a.dtype, e.dtype)
    a, e = ew.astype(a, dtype), ew.astype(e, dtype)
    n = a.shape[-1]
    block = expm(_upper_block(a, e))
    frechet = block[..., :n, n:]
    return (block[..., :n, :n], frechet) if compute_expm else frechet


def _relative_error(residual: Tensor, a: Tensor, ord: Any) -> float:
    """``|residual| / |a|`` in the ``ord`` norm, on the values (SciPy's ``errest``)."""
    a_value = read_value(a)
    return float(np.linalg.norm(read_value(residual), ord) / np.linalg.norm(a_value, ord))


@_composite
def logm(A: Any, disp: bool = True) -> Any:  # noqa: N803
    """Principal matrix logarithm (SciPy's values; complex when ``A`` has negative real
    eigenvalues). ``disp=False`` returns ``(logm, errest)`` as SciPy did.

    Its derivative is the Fréchet derivative, the upper right block of the logarithm of
    ``[[A, E], [0, A]]``: defined where ``A`` has no eigenvalue on the closed negative axis.
    """
    a = square(as_inexact(A), "logm")
    result = matrix_function_op(a, function="logm")
    if disp:
        return result
    return result, _relative_error(expm(result) - a, a, 1)


@_composite
def sqrtm(A: Any, disp: bool = True, blocksize: int = 64) -> Any:  # noqa: N803
    """Principal matrix square root (SciPy's values; derivative from the Sylvester equation
    ``X dX + dX X = dA``, defined when no two eigenvalues of ``X`` sum to zero).

    ``disp=False`` returns ``(sqrtm, errest)``; ``blocksize`` is accepted (SciPy's own
    algorithm detail).
    """
    a = square(as_inexact(A), "sqrtm")
    root = dec.sqrtm_op(a)
    if disp:
        return root
    return root, _relative_error(matmul(root, root) - a, a, "fro")


@_composite
def funm(A: Any, func: Any, disp: bool = True) -> Any:  # noqa: N803
    """The matrix function ``f(A)`` of the scalar function ``func``, applied to the
    eigenvalues: ``V diag(func(w)) V^-1``.

    ``func`` receives the eigenvalues as one 1-d complex tensor and must work on
    tensors (write it with ``kenaz.numpy``; NumPy's ufuncs dispatch to it). SciPy uses
    the Schur-Parlett algorithm; on diagonalizable matrices both give ``f(A)``, and
    here it is differentiable in ``A`` and in the tensors ``func`` closes over, where the
    eigenvalues are distinct. A real ``A`` whose result has a negligible imaginary part
    gets a real result, as in SciPy. ``disp=False`` returns ``(F, errest)``, ``errest``
    the relative residual ``|F A - A F|_1 / |F|_1``.
    """
    a = square(as_inexact(A), "funm")
    w, v = dec.eig_op(a)
    values = func(w)
    values = values if isinstance(values, Tensor) else Tensor(np.asarray(values))
    if values.dtype != w.dtype:
        values = ew.astype(values, np.result_type(values.dtype, w.dtype))
    result = dec.solve(dec.matrix_transpose(v), dec.matrix_transpose(v * values[..., None, :]))
    result = dec.matrix_transpose(result)  # V diag(f(w)) V^-1
    if a.dtype.kind != "c":
        imaginary = np.abs(read_value(ew.imag(result)))
        scale = max(float(np.max(np.abs(read_value(result)), initial=0.0)), 1.0)
        if np.max(imaginary, initial=0.0) <= 1000 * np.finfo(a.dtype).eps * scale:
            result = ew.real(result)
    if disp:
        return result
    return result, _relative_error(matmul(result, a) - matmul(a, result), result, 1)


# -- trigonometric and hyperbolic matrix functions, from expm ------------------------------------
def _real_if_real(result: Tensor, a: Tensor) -> Tensor:
    return ew.real(result) if a.dtype.kind != "c" else result


@_composite
def cosm(A: Any) -> Tensor:  # noqa: N803
    """Matrix cosine, ``(expm(iA) + expm(-iA)) / 2``."""
    a = as_inexact(A)
    i_a = a * 1j
    return _real_if_real((expm(i_a) + expm(-i_a)) * 0.5, a)


@_composite
def sinm(A: Any) -> Tensor:  # noqa: N803
    """Matrix sine, ``(expm(iA) - expm(-iA)) / 2i``."""
    a = as_inexact(A)
    i_a = a * 1j
    return _real_if_real((expm(i_a) - expm(-i_a)) * -0.5j, a)


@_composite
def tanm(A: Any) -> Tensor:  # noqa: N803
    """Matrix tangent, ``cosm(A)^-1 sinm(A)``."""
    return dec.solve(cosm(A), sinm(A))


@_composite
def coshm(A: Any) -> Tensor:  # noqa: N803
    """Matrix hyperbolic cosine, ``(expm(A) + expm(-A)) / 2``."""
    a = as_inexact(A)
    return (expm(a) + expm(-a)) * 0.5


@_composite
def sinhm(A: Any) -> Tensor:  # noqa: N803
    """Matrix hyperbolic sine, ``(expm(A) - expm(-A)) / 2``."""
    a = as_inexact(A)
    return (expm(a) - expm(-a)) * 0.5


@_composite
def tanhm(A: Any) -> Tensor:  # noqa: N803
    """Matrix hyperbolic tangent, ``coshm(A)^-1 sinhm(A)``."""
    return dec.solve(coshm(A), sinhm(A))


# -- matrix equations ------------------------------------------------------------------------------
@_composite
def solve_sylvester(a: Any, b: Any, q: Any) -> Tensor:
    """Solve the Sylvester equation ``a @ x + x @ b = q`` (Bartels-Stewart, SciPy's).

    Its derivatives solve the same equation again, so they exist to any order where
    ``a`` and ``-b`` share no eigenvalue.

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.solve_sylvester([[1.0, 0.0], [0.0, 2.0]], [[3.0]], [[4.0], [10.0]])
    Tensor([[1.],
            [2.]])
    """
    a = square(as_inexact(a), "solve_sylvester")
    b = square(as_inexact(b), "solve_sylvester")
    q = as_inexact(q)
    if q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ValueError(
            f"kenaz.scipy.linalg.solve_sylvester: q must be {a.shape[-1]} x {b.shape[-1]} for "
            f"a {a.shape} and b {b.shape}, got {q.shape}"
        )
    dtype = np.result_type(a.dtype, b.dtype, q.dtype)
    return sylvester(*(x if x.dtype == dtype else ew.astype(x, dtype) for x in (a, b, q)))


@_composite
def solve_continuous_lyapunov(a: Any, q: Any) -> Tensor:
    """Solve the continuous Lyapunov equation ``a @ x + x @ a^H = q``."""
    a = as_inexact(a)
    return solve_sylvester(a, dec.conj_transpose(a), q)


@_composite
def solve_discrete_lyapunov(a: Any, q: Any, method: str | None = None) -> Tensor:
    """Solve the discrete Lyapunov equation ``a @ x @ a^H - x + q = 0``.

    ``method="direct"`` solves the ``n^2 x n^2`` Kronecker system (SciPy's default below
    ``n = 10``); ``"bilinear"`` maps it to a continuous equation (SciPy's default above).
    """
    a, q = square(as_inexact(a), "solve_discrete_lyapunov"), as_inexact(q)
    n = a.shape[-1]
    method = method or ("direct" if n < 10 else "bilinear")
    eye = np.eye(n)
    if method == "direct":
        # vec(a x a^H) = (a kron conj(a)) vec(x) for row-major vec
        kron = shape.reshape(a[:, None, :, None] * dec._conj(a)[None, :, None, :], (n * n, n * n))
        flat = dec.solve(np.eye(n * n) - kron, shape.reshape(q, (n * n, 1)))
        return shape.reshape(flat, (n, n))
    if method != "bilinear":
        raise ValueError(
            f"kenaz.scipy.linalg.solve_discrete_lyapunov: method must be 'direct' or "
            f"'bilinear', got {method!r}"
        )
    a_h = dec.conj_transpose(a)
    inverse_a_h_plus_eye = dec.solve(a_h + eye, np.eye(n, dtype=a.dtype))
    b = matmul(a_h - eye, inverse_a_h_plus_eye)
    c = 2 * matmul(dec.solve(a + eye, q), inverse_a_h_plus_eye)
    return solve_continuous_lyapunov(dec.conj_transpose(b), -c)
