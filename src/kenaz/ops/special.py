"""Special functions (gamma, error, Bessel, incomplete gamma/beta ...) as elementwise primitives.

The values come from SciPy, imported when an op first runs, so that
``kenaz`` itself needs only NumPy. Derivatives are the classical identities,
written with kenaz ops so that they differentiate again (``digamma`` ->
``polygamma(1)`` -> ``polygamma(2)`` ...). Arguments with no derivative
implemented (the order of a Bessel function, the parameters of the incomplete
beta function) raise when a transformation asks for one, instead of
silently returning zero.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ..effects import Op
from ..tensor import Tensor
from . import batching, reduction, shape
from . import elementwise as ew

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@functools.cache
def scipy_special() -> ModuleType:
    """``scipy.special``, with an error naming the extra to install when SciPy is missing."""
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - exercised only without SciPy
        raise ImportError(
            "kenaz.scipy needs SciPy for its special functions; install it with "
            "`pip install kenaz[scipy]`"
        ) from None
    return scipy.special


def _fit(tangent: Any, ans: Any) -> Any:
    """A tangent contribution broadcast and cast to the output's shape and dtype."""
    if tangent.shape != ans.shape:
        tangent = shape.broadcast_to(tangent, ans.shape)
    return tangent if tangent.dtype == ans.dtype else ew.astype(tangent, ans.dtype)


def _unbroadcast(x: Any, cotangent: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A pullback for ``x``: ``cotangent(g)`` summed back to ``x``'s shape and dtype."""
    x_shape, x_dtype = x.shape, x.dtype
    return lambda g: reduction.sum_to(cotangent(g), x_shape, x_dtype)


def _from_scipy(name: str) -> Callable[..., Any]:
    def impl(*args: Any) -> Any:
        out = np.asarray(getattr(scipy_special(), name)(*args))
        # Some SciPy functions compute float32 inputs in float64: keep NumPy's result dtype
        # (Python scalars are weak, as in NEP 50).
        arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
        if arrays and out.dtype.kind == "f":
            target = np.result_type(*arrays, 0.0)
            if target != out.dtype:
                out = out.astype(target)
        return out

    impl.__name__ = name
    return impl


def _no_derivative(op_name: str, argument: str) -> Callable[..., Any]:
    def rule(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"kenaz: the derivative of {op_name} with respect to {argument} is not implemented"
        )

    return rule


def _no_derivative_vjp(op_name: str, argument: str) -> Callable[..., Any]:
    def maker(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"kenaz: the derivative of {op_name} with respect to {argument} is not implemented"
        )

    return maker


def unary(name: str, d_x: Callable | None = None, d_ans: Callable | None = None) -> Op:
    """An elementwise SciPy function of one argument, with its derivative."""
    return ew.unary(name, _from_scipy(name), d_x=d_x, d_ans=d_ans)


def with_fixed_first(name: str, d_x: Callable, first: str) -> Op:
    """An elementwise SciPy function ``f(a, x)`` differentiable in ``x`` only.

    ``d_x(ans, a, x)`` is the derivative in ``x``; asking for one in ``a``
    (named ``first`` in the error) raises.
    """
    return Op(
        name,
        _from_scipy(name),
        jvp=[
            _no_derivative(name, first),
            lambda t, ans, a, x: _fit(t * d_x(ans, a, x), ans),
        ],
        vjp=[
            _no_derivative_vjp(name, first),
            lambda ans, a, x: _unbroadcast(x, lambda g: g * d_x(ans, a, x)),
        ],
        batch=batching.elementwise,
        saves=[(), (-1, 0, 1)],
    )


# -- gamma family -----------------------------------------------------------------------------
gammaln = unary("gammaln", d_x=lambda x: digamma(x))
digamma = unary("digamma", d_x=lambda x: polygamma(1, x))
gamma = unary("gamma", d_ans=None, d_x=lambda x: gamma(x) * digamma(x))
polygamma = with_fixed_first("polygamma", lambda ans, n, x: polygamma(n + 1, x), "the order n")
rgamma = unary("rgamma", d_x=lambda x: -rgamma(x) * digamma(x))


# Regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x).
def _gamma_density(a, x):
    """``dP/dx = x^(a-1) e^-x / Gamma(a)``."""
    return ew.exp((a - 1) * ew.log(x) - x - gammaln(a))


# Terms of the series below when the values cannot be read (inside vmap): enough for x < 150.
_SERIES_TERMS = 256


def _series_length(x) -> int:
    """Terms the series of P needs to reach double precision: past its peak at ``n ~ x``.

    Read from the values (a batched view of ``vmap`` is a subclass: it has no one value)."""
    if type(x) is not Tensor or not isinstance(x._value, np.ndarray) or x.size == 0:
        return _SERIES_TERMS
    largest = float(np.max(np.where(np.isfinite(x._value), x._value, 0.0), initial=0.0))
    return max(int(largest + 12 * math.sqrt(largest) + 40), 40)


def _gammainc_d_a(a, x):
    """``dP(a, x)/da`` from the series ``P = sum_n exp((a + n) log x - x - gammaln(a + n + 1))``,
    differentiated term by term: ``sum_n term_n (log x - digamma(a + n + 1))``.

    Written with kenaz ops (gammaln, digamma), so it differentiates again, to any order.
    The terms are positive and peak near ``n = x``: the sum is accurate in absolute terms.
    """
    a, x = _broadcast(a, x)
    positive = ew.greater(x, 0)
    x = ew.where(positive, x, 1.0)  # log(0): the derivative is 0 there
    n = np.arange(_series_length(x), dtype=x.dtype)
    a_n = shape.expand_dims(a, -1) + n
    log_x = shape.expand_dims(ew.log(x), -1)
    terms = ew.exp(a_n * log_x - shape.expand_dims(x, -1) - gammaln(a_n + 1))
    return ew.where(positive, reduction.sum(terms * (log_x - digamma(a_n + 1)), axis=-1), 0.0)


def _broadcast(a, x):
    target = np.broadcast_shapes(a.shape, x.shape)
    a = a if a.shape == target else shape.broadcast_to(a, target)
    x = x if x.shape == target else shape.broadcast_to(x, target)
    dtype = np.result_type(a.dtype, x.dtype)
    return (a if a.dtype == dtype else ew.astype(a, dtype)), (
        x if x.dtype == dtype else ew.astype(x, dtype)
    )


def _incomplete_gamma(name: str, sign: float) -> Op:
    """``gammainc`` (``sign=1``) or ``gammaincc`` (``sign=-1``), differentiable in both."""
    return Op(
        name,
        _from_scipy(name),
        jvp=[
            lambda t, ans, a, x: _fit(t * (sign * _gammainc_d_a(a, x)), ans),
            lambda t, ans, a, x: _fit(t * (sign * _gamma_density(a, x)), ans),
        ],
        vjp=[
            lambda ans, a, x: _unbroadcast(a, lambda g: g * (sign * _gammainc_d_a(a, x))),
            lambda ans, a, x: _unbroadcast(x, lambda g: g * (sign * _gamma_density(a, x))),
        ],
        batch=batching.elementwise,
        saves=[(0, 1), (0, 1)],
    )


gammainc = _incomplete_gamma("gammainc", 1.0)
gammaincc = _incomplete_gamma("gammaincc", -1.0)


def _betainc_d_x(a, b, x):
    log_density = (a - 1) * ew.log(x) + (b - 1) * ew.log1p(-x)
    return ew.exp(log_density - (gammaln(a) + gammaln(b) - gammaln(a + b)))


betainc = Op(
    "betainc",
    _from_scipy("betainc"),
    jvp=[
        _no_derivative("betainc", "a"),
        _no_derivative("betainc", "b"),
        lambda t, ans, a, b, x: _fit(t * _betainc_d_x(a, b, x), ans),
    ],
    vjp=[
        _no_derivative_vjp("betainc", "a"),
        _no_derivative_vjp("betainc", "b"),
        lambda ans, a, b, x: _unbroadcast(x, lambda g: g * _betainc_d_x(a, b, x)),
    ],
    batch=batching.elementwise,
    saves=[(), (), (0, 1, 2)],
)

# -- error functions --------------------------------------------------------------------------
erfc = unary("erfc", d_x=lambda x: (-2 / _SQRT_PI) * ew.exp(-x * x))
erfinv = unary("erfinv", d_ans=lambda ans: (_SQRT_PI / 2) * ew.exp(ans * ans))
erfcinv = unary("erfcinv", d_ans=lambda ans: (-_SQRT_PI / 2) * ew.exp(ans * ans))
ndtri = unary("ndtri", d_ans=lambda ans: ew.exp(0.5 * ans * ans + _LOG_SQRT_2PI))
log_ndtr = unary("log_ndtr", d_x=lambda x: ew.exp(-0.5 * x * x - _LOG_SQRT_2PI - log_ndtr(x)))

# Student's t distribution function: derivative in t only (the density).
stdtr = with_fixed_first(
    "stdtr",
    lambda ans, df, x: ew.exp(
        gammaln((df + 1) / 2)
        - gammaln(df / 2)
        - 0.5 * ew.log(df * math.pi)
        - (df + 1) / 2 * ew.log1p(x * x / df)
    ),
    "the degrees of freedom",
)


# -- x log y --------------------------------------------------------------------------------------
def _safe_ratio(x, y):
    """``x / y``, 0 where ``x == 0``."""
    zero = ew.equal(x, 0)
    return ew.where(zero, 0.0, x / ew.where(zero, 1.0, y))


xlogy = ew.binary(
    "xlogy",
    _from_scipy("xlogy"),
    jvp=[
        lambda t, ans, x, y: _fit(t * ew.log(y), ans),
        lambda t, ans, x, y: _fit(t * _safe_ratio(x, y), ans),
    ],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, lambda g: g * ew.log(y)),
        lambda ans, x, y: _unbroadcast(y, lambda g: g * _safe_ratio(x, y)),
    ],
    saves=[(1,), (0, 1)],
)
xlog1py = ew.binary(
    "xlog1py",
    _from_scipy("xlog1py"),
    jvp=[
        lambda t, ans, x, y: _fit(t * ew.log1p(y), ans),
        lambda t, ans, x, y: _fit(t * _safe_ratio(x, 1 + y), ans),
    ],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, lambda g: g * ew.log1p(y)),
        lambda ans, x, y: _unbroadcast(y, lambda g: g * _safe_ratio(x, 1 + y)),
    ],
    saves=[(1,), (0, 1)],
)


# -- Bessel functions ----------------------------------------------------------------------------
def _over_x(f, x, at_zero: float):
    """``f / x`` with the limit ``at_zero`` at ``x == 0`` (``f`` vanishes there)."""
    zero = ew.equal(x, 0)
    return ew.where(zero, at_zero, f / ew.where(zero, 1.0, x))


i0 = unary("i0", d_x=lambda x: i1(x))
i1 = unary("i1", d_x=lambda x: i0(x) - _over_x(i1(x), x, 0.5))
i0e = unary("i0e", d_x=lambda x: i1e(x) - ew.sign(x) * i0e(x))
i1e = unary("i1e", d_x=lambda x: i0e(x) - _over_x(i1e(x), x, 0.5) - ew.sign(x) * i1e(x))
j0 = unary("j0", d_x=lambda x: -j1(x))
j1 = unary("j1", d_x=lambda x: j0(x) - _over_x(j1(x), x, 0.5))
y0 = unary("y0", d_x=lambda x: -y1(x))
y1 = unary("y1", d_x=lambda x: y0(x) - y1(x) / x)
iv = with_fixed_first("iv", lambda ans, v, x: (iv(v - 1, x) + iv(v + 1, x)) / 2, "the order v")
ive = with_fixed_first(
    "ive",
    lambda ans, v, x: (ive(v - 1, x) + ive(v + 1, x)) / 2 - ew.sign(x) * ans,
    "the order v",
)
jv = with_fixed_first("jv", lambda ans, v, x: (jv(v - 1, x) - jv(v + 1, x)) / 2, "the order v")
yv = with_fixed_first("yv", lambda ans, v, x: (yv(v - 1, x) - yv(v + 1, x)) / 2, "the order v")
