"""Elementwise primitives: unary math, broadcasting binary arithmetic, comparisons.

Each op is declared once with its NumPy implementation and its jvp and vjp
rules (batching rules come from the family helpers in ``kenaz.ops.batching``).
Rules receive tensors and are written with tensor operations, so they are
themselves differentiable: that is how higher-order derivatives work. As in
JAX, a rule ``g * f'(x)`` also serves complex inputs: cotangents are
transposes, not conjugate transposes.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import (
    NUMPY_TYPES,
    backend_dtype,
    common,
    namespace,
    numpy_array_like,
    numpy_dtype,
    promoted,
    special_function,
)
from ..convert import array_argument
from ..effects import Op, identity
from ..tensor import Tensor
from . import batching, shape
from .linearity import linear


def _erf_impl(x):
    """SciPy's erf when SciPy is installed (imported on first use: it is slow to
    import and optional), else ``math.erf`` per element. On other backends: the
    library's own special functions (CuPy's ``cupyx.scipy.special``; Dask maps
    SciPy's over its blocks)."""
    global _erf_backend
    if type(x) not in NUMPY_TYPES:
        return special_function(namespace(x), "erf")(x)
    if _erf_backend is None:
        try:
            from scipy.special import erf as _erf_backend
        except ImportError:  # pragma: no cover - exercised only without SciPy
            _erf_backend = _erf_per_element
    return _erf_backend(x)


_erf_backend = None
_erf_vectorized = np.vectorize(math.erf, otypes=[np.float64])


def _erf_per_element(x):
    x = np.asarray(x)
    return _erf_vectorized(x).astype(np.result_type(x, np.float16))


# NumPy's scalar types (what ops on 0-d values return); NumPy's values; and the
# operands that mix with them in Python's operators as in the ufunc (`_by_operator`).
_NUMPY_SCALARS = frozenset(t for t in set(np.sctypeDict.values()) if np.dtype(t).kind in "biufc")
_NUMPY_VALUES = _NUMPY_SCALARS | {np.ndarray}
_RIGHT_OPERANDS = _NUMPY_VALUES | {bool, int, float, complex}
# Not `complex` on the left: `1j * np.float64(2)` is Python's complex product (np.float64
# subclasses float), a Python complex.
_LEFT_OPERANDS = _NUMPY_VALUES | {bool, int, float}
# NumPy's module defines `__getattr__`, so CPython (3.11) never specializes `np.<name>`:
# each read is a full attribute lookup, several times an identity test. The hot paths
# below read this global instead (`type(x) is _ndarray` before any set lookup).
_ndarray = np.ndarray


# -- backend neutrality: NumPy's code on NumPy values, the namespace's function otherwise ----
def neutral_unary(numpy_function: Callable, standard_name: str) -> Callable:
    """``numpy_function(x)`` on NumPy values, else ``xp.<standard_name>(x)`` in ``x``'s namespace.

    The implementation names ``numpy_function`` as its ``numpy_impl``, which
    ``perform`` calls directly on NumPy values after one type test (see
    ``kenaz.effects.Op``).
    """

    def impl(x):
        xp = namespace(x)  # NumPy for NumPy values, lists and other values NumPy converts
        return numpy_function(x) if xp is np else getattr(xp, standard_name)(x)

    impl.__name__ = standard_name
    impl.numpy_impl = numpy_function  # what `perform` runs on NumPy values: no frame of ours
    return impl


def _on_backend(xp, standard_name: str, x, y):
    """``xp.<standard_name>(x, y)`` after NumPy's promotion (``kenaz.backend.promoted``);
    Python numbers made arrays of the other operand's dtype."""
    x, y = promoted(xp, (x, y))
    if type(x) in (bool, int, float, complex):
        x = _scalar_like(xp, x, y)
    elif type(y) in (bool, int, float, complex):
        y = _scalar_like(xp, y, x)
    return getattr(xp, standard_name)(x, y)


def _scalar_like(xp, scalar, array):
    dtype = np.result_type(scalar, np.empty(0, dtype=numpy_dtype(array.dtype)))
    return xp.asarray(scalar, dtype=backend_dtype(xp, dtype))


def neutral_binary(numpy_function: Callable, standard_name: str) -> Callable:
    """``numpy_function(x, y)`` on NumPy values, else the standard's ``standard_name``."""

    def impl(x, y):
        if type(x) in NUMPY_TYPES and type(y) in NUMPY_TYPES:
            return numpy_function(x, y)
        xp, (x, y) = common((x, y))
        if xp is np:  # lists and other values NumPy converts
            return numpy_function(x, y)
        return _on_backend(xp, standard_name, x, y)

    impl.__name__ = standard_name
    impl.numpy_impl = numpy_function
    return impl


def _fit(tangent: Tensor, ans: Tensor) -> Tensor:
    """Broadcast and cast one argument's tangent contribution to the output's shape and dtype."""
    if tangent.shape != ans.shape:
        tangent = shape.broadcast_to(tangent, ans.shape)
    if tangent.dtype != ans.dtype:
        tangent = astype(tangent, ans.dtype)
    return tangent


def _unbroadcast(
    x: Tensor, ans: Tensor, cotangent: Callable[[Tensor], Tensor]
) -> Callable[[Tensor], Tensor]:
    """A pullback for ``x`` that sums ``cotangent(g)`` back to ``x``'s shape and dtype.

    Only the shape and dtype of ``x`` are kept, not ``x`` itself; when ``x``
    already has the output's shape and dtype, ``cotangent`` is the pullback.
    """
    x_shape, x_dtype, ans_dtype = x.shape, x.dtype, ans.dtype
    # `is` first: NumPy's built-in dtypes are singletons, and `==` on dtypes is slow.
    if x_shape == ans.shape and (x_dtype is ans_dtype or x_dtype == ans_dtype):
        return cotangent

    def pullback(g: Tensor) -> Tensor:
        return shape.sum_to(cotangent(g), x_shape, x_dtype)

    return pullback


# -- unary ---------------------------------------------------------------------------
def unary(
    name: str,
    impl: Callable,
    *,
    d_x: Callable[[Tensor], Tensor] | None = None,
    d_ans: Callable[[Tensor], Tensor] | None = None,
) -> Op:
    """Define a differentiable unary op from its derivative.

    Exactly one of ``d_x`` (derivative as a function of the input) or
    ``d_ans`` (as a function of the output) is given; the pullback keeps only
    that one residual.
    """
    if d_ans is not None:
        jvp = lambda t, ans, x: t * d_ans(ans)
        vjp = lambda ans, x: lambda g: g * d_ans(ans)
    else:
        jvp = lambda t, ans, x: t * d_x(x)
        vjp = lambda ans, x: lambda g: g * d_x(x)
    saves = [(-1,)] if d_ans is not None else [(0,)]
    return Op(name, impl, jvp=[jvp], vjp=[vjp], batch=batching.elementwise, saves=saves)


# The `slope` primitives of the unary ops defined with `unary_with_slope`, by name.
slope_ops: dict[str, Op] = {}


def unary_with_slope(
    name: str,
    impl: Callable,
    *,
    slope_times: Callable[[Any, Any, Any], Any],
    slope_derivative: Callable[[Tensor], Tensor],
    of_output: bool = False,
) -> Op:
    """Define a unary op whose rules are one primitive, ``d<name>(g, r) = g * f'(r)``.

    ``unary`` composes ``g * f'(x)`` from two or three primitives (``tanh``:
    ``1 - ans * ans``, then the product); here the product is one op, as
    PyTorch's ``tanh_backward``. That halves the ops a backward pass runs (and
    a Hessian-vector product differentiates) for the commonest functions.

    Parameters
    ----------
    slope_times : callable
        ``slope_times(xp, g, r) = g * f'(r)`` in the array namespace ``xp``
        (``r`` is ``x``, or ``ans`` with ``of_output``): one formula for every
        backend, called with ``np`` on NumPy values at once and through
        :func:`_slope_on_backend` on other backends' (see :func:`_slope_impl`),
        and on symbols by the jit's fusion, which writes the same operations in
        its fused loops (:mod:`kenaz.compiler.fusion`). Only arithmetic
        operators, numbers and ``xp``'s unary functions, so that all three can.
    slope_derivative : callable
        ``d f'(r) / dr`` written with tensor ops: the ``r`` rule of the product,
        so that derivatives of every order hold.
    of_output : bool, optional
        ``f'`` is written in terms of the output (``tanh``: ``1 - ans**2``).
    """
    # Linear in g (so its jvp there is itself on the tangent); in r, g * f''(r).
    # Under vmap g and r may broadcast (one batched, one not), as any binary op's.
    slope = Op(
        f"d{name}",
        _slope_impl(slope_times),
        jvp=[None, lambda t, ans, g, r: _fit(t * g * slope_derivative(r), ans)],
        vjp=[
            lambda ans, g, r: _unbroadcast(g, ans, lambda c: slope(c, r)),
            lambda ans, g, r: _unbroadcast(r, ans, lambda c: c * g * slope_derivative(r)),
        ],
        batch=batching.elementwise,
        saves=[(1,), (0, 1)],  # g's rule reads r; r's reads g and r (shapes are not values)
    )
    linear(slope, (0,))
    slope_ops[slope.name] = slope
    if of_output:
        jvp = lambda t, ans, x: slope(t, ans)
        vjp = lambda ans, x: lambda g: slope(g, ans)
    else:
        jvp = lambda t, ans, x: slope(t, x)
        vjp = lambda ans, x: lambda g: slope(g, x)
    saves = [(-1,)] if of_output else [(0,)]
    return Op(name, impl, jvp=[jvp], vjp=[vjp], batch=batching.elementwise, saves=saves)


def _slope_impl(slope_times: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The slope op's implementation: ``slope_times(np, g, r)`` on NumPy values (one type
    test), else ``slope_times`` in the operands' common namespace."""

    def impl(g, r):
        if type(g) is _ndarray is type(r) or (  # both arrays: the commonest case
            type(g) in NUMPY_TYPES and type(r) in NUMPY_TYPES
        ):
            return slope_times(np, g, r)
        return _slope_on_backend(g, r, slope_times)

    # An explicit field: the jit's fusion (kenaz.compiler.fusion) spells the same formula
    # in its fused loops by calling it on symbols, so the formula is written once.
    impl.slope_times = slope_times  # type: ignore[attr-defined]
    return impl


def _slope_on_backend(g, r, slope_times: Callable) -> object:
    """``slope_times(xp, g, r)`` with ``g`` and ``r`` on one backend, promoted as NumPy would."""
    xp, (g, r) = common((g, r))  # NumPy values and numbers moved to the other backend
    if xp is np:
        return slope_times(np, g, r)
    g, r = promoted(xp, (xp.asarray(g), xp.asarray(r)))
    return slope_times(xp, g, r)


def zero_derivative(name: str, impl: Callable) -> Op:
    """An op whose output carries no derivative (piecewise constant or boolean)."""
    return Op(name, impl, batch=batching.elementwise, differentiable=False)


def _negative_impl(x):
    if type(x) is _ndarray:
        return np.negative(x)
    # `-x` on NumPy scalars (see `_by_operator`) and on other backends' arrays
    if type(x) in _NUMPY_SCALARS or namespace(x) is not np:
        return -x
    return np.negative(x)


negative = Op(
    "neg",
    _negative_impl,
    vjp=[lambda ans, x: lambda g: -g],
    batch=batching.elementwise,
    saves=[],
)
linear(negative)


def _phase(x, ans):
    """``x / |x|`` (0 at 0), written with differentiable ops so that second derivatives hold."""
    at_zero = equal(ans, 0)
    return where(at_zero, 0, x / where(at_zero, 1, ans))


def _abs_jvp(t, ans, x):
    # |x| is not holomorphic: for complex x its derivative is Re(conj(x / |x|) * t).
    if x.dtype.kind == "c":
        return real(conjugate(_phase(x, ans)) * t)
    return t * sign(x)


def _abs_vjp(ans, x):
    if x.dtype.kind == "c":  # JAX's convention: the cotangent of a real function of z
        return lambda g: g * conjugate(_phase(x, ans))
    return lambda g: g * sign(x)


absolute = Op(
    "abs",
    neutral_unary(np.absolute, "abs"),
    jvp=[_abs_jvp],
    vjp=[_abs_vjp],
    batch=batching.elementwise,
    saves=[(0, -1)],
)
exp = unary("exp", neutral_unary(np.exp, "exp"), d_ans=lambda ans: ans)
expm1 = unary("expm1", neutral_unary(np.expm1, "expm1"), d_ans=lambda ans: ans + 1)
log = unary_with_slope(
    "log",
    neutral_unary(np.log, "log"),
    slope_times=lambda xp, g, x: g / x,
    slope_derivative=lambda x: -1 / (x * x),
)
log1p = unary("log1p", neutral_unary(np.log1p, "log1p"), d_x=lambda x: 1 / (x + 1))
def _cbrt_impl(x):
    xp = namespace(x)
    if xp is np or hasattr(xp, "cbrt"):
        return xp.cbrt(x)
    return xp.sign(x) * xp.abs(x) ** (1 / 3)  # the Array API has no cbrt


_cbrt_impl.numpy_impl = np.cbrt  # type: ignore[attr-defined]
# The real cube root. Its derivative 1 / (3 cbrt(x)**2) is +inf at 0 (as sqrt's): a
# composite sign(x) * |x|**(1/3) gave 0 * inf = nan there.
cbrt = unary("cbrt", _cbrt_impl, d_ans=lambda ans: 1 / (3 * (ans * ans)))
sqrt = unary_with_slope(
    "sqrt",
    neutral_unary(np.sqrt, "sqrt"),
    slope_times=lambda xp, g, ans: g * 0.5 / ans,
    slope_derivative=lambda ans: -0.5 / (ans * ans),
    of_output=True,
)
sin = unary_with_slope(
    "sin",
    neutral_unary(np.sin, "sin"),
    slope_times=lambda xp, g, x: g * xp.cos(x),
    slope_derivative=lambda x: -sin(x),
)
cos = unary_with_slope(
    "cos",
    neutral_unary(np.cos, "cos"),
    slope_times=lambda xp, g, x: g * -xp.sin(x),
    slope_derivative=lambda x: -cos(x),
)
tan = unary("tan", neutral_unary(np.tan, "tan"), d_ans=lambda ans: 1 + ans * ans)
arcsin = unary("arcsin", neutral_unary(np.arcsin, "asin"), d_x=lambda x: 1 / sqrt(1 - x * x))
arccos = unary("arccos", neutral_unary(np.arccos, "acos"), d_x=lambda x: -1 / sqrt(1 - x * x))
arctan = unary("arctan", neutral_unary(np.arctan, "atan"), d_x=lambda x: 1 / (1 + x * x))
sinh = unary("sinh", neutral_unary(np.sinh, "sinh"), d_x=lambda x: cosh(x))
cosh = unary("cosh", neutral_unary(np.cosh, "cosh"), d_x=lambda x: sinh(x))
tanh = unary_with_slope(
    "tanh",
    neutral_unary(np.tanh, "tanh"),
    slope_times=lambda xp, g, ans: g * (1 - ans * ans),
    slope_derivative=lambda ans: -2 * ans,
    of_output=True,
)
arcsinh = unary("arcsinh", neutral_unary(np.arcsinh, "asinh"), d_x=lambda x: 1 / sqrt(x * x + 1))
# sqrt(x - 1) * sqrt(x + 1) rather than sqrt(x * x - 1): the same for real x > 1, and
# the right branch for complex x.
arccosh = unary(
    "arccosh", neutral_unary(np.arccosh, "acosh"), d_x=lambda x: 1 / (sqrt(x - 1) * sqrt(x + 1))
)
arctanh = unary("arctanh", neutral_unary(np.arctanh, "atanh"), d_x=lambda x: 1 / (1 - x * x))


# `x ** 2` (Tensor.__pow__ with the int 2) and kenaz.numpy.square: one op whose
# backward is one op, where `power` needs three and `x * x` two edges and a sum.
square = unary_with_slope(
    "square",
    neutral_unary(np.square, "square"),
    slope_times=lambda xp, g, x: g * (2 * x),
    slope_derivative=lambda x: 2,
)


def _logistic_impl(x):
    # exp(-logaddexp(0, -x)) is exact for large |x| in both directions.
    if type(x) in NUMPY_TYPES:
        return np.exp(-np.logaddexp(0, -x))
    xp = namespace(x)
    return xp.exp(-xp.logaddexp(xp.zeros_like(x), -x))


logistic = unary_with_slope(
    "logistic",
    _logistic_impl,
    slope_times=lambda xp, g, ans: g * ans * (1 - ans),
    slope_derivative=lambda ans: 1 - 2 * ans,
    of_output=True,
)
erf = unary("erf", _erf_impl, d_x=lambda x: (2 / math.sqrt(math.pi)) * exp(-x * x))

sign = zero_derivative("sign", neutral_unary(np.sign, "sign"))
floor = zero_derivative("floor", neutral_unary(np.floor, "floor"))
ceil = zero_derivative("ceil", neutral_unary(np.ceil, "ceil"))
_round = zero_derivative("round", neutral_unary(np.round, "round"))
isnan = zero_derivative("isnan", neutral_unary(np.isnan, "isnan"))
isinf = zero_derivative("isinf", neutral_unary(np.isinf, "isinf"))
isfinite = zero_derivative("isfinite", neutral_unary(np.isfinite, "isfinite"))
logical_not = zero_derivative("logical_not", neutral_unary(np.logical_not, "logical_not"))
invert = zero_derivative("invert", neutral_unary(np.invert, "bitwise_invert"))


def round_(x, decimals: int = 0) -> Tensor:
    """Round to ``decimals`` decimals (zero derivative, as in JAX)."""
    if decimals == 0:
        return _round(x)
    scale = 10.0**decimals
    return _round(x * scale) / scale


# -- complex parts (linear; JAX's transposes) ------------------------------------------
conjugate = Op(
    "conj",
    neutral_unary(np.conjugate, "conj"),
    vjp=[lambda ans, x: lambda g: conjugate(g)],
    batch=batching.elementwise,
    saves=[],
)
linear(conjugate)


def _real_part(x: Tensor) -> Tensor:
    return real(x) if x.dtype.kind == "c" else x


def _complex_part_vjp(project: Callable[[Tensor], Tensor]):
    def maker(ans, x):
        x_dtype = x.dtype
        if x_dtype.kind != "c":  # a real input: only the real part of the projection reaches it
            return lambda g: astype(_real_part(project(g)), x_dtype)
        return lambda g: astype(project(g), x_dtype)

    return maker


real = Op(
    "real",
    neutral_unary(np.real, "real"),
    vjp=[_complex_part_vjp(lambda g: g)],
    batch=batching.elementwise,
    saves=[],  # x's dtype only
)
linear(real)
imag = Op(
    "imag",
    neutral_unary(np.imag, "imag"),
    vjp=[_complex_part_vjp(lambda g: -1j * g)],
    batch=batching.elementwise,
    saves=[],
)
linear(imag)


# -- binary, broadcasting ------------------------------------------------------------------
def _by_operator(ufunc: np.ufunc, operation: Callable) -> Callable:
    """``ufunc(x, y)``, computed as ``operation(x, y)`` (``x * y``) where that is the same.

    Ops on 0-d values give NumPy scalars, and NumPy's scalar arithmetic behind
    ``x * y`` takes 40 ns where the ufunc call ``np.multiply(x, y)`` takes 500 ns
    (its generic argument handling). It is only used when one operand is a
    NumPy array or scalar and the other one too or a Python number: a list
    would be repeated by ``*``, and an ndarray subclass may redefine the
    operator (``np.matrix``).
    """

    def impl(x, y):
        if type(x) is _ndarray:  # the commonest case first: the ufunc, at once
            if type(y) is _ndarray or type(y) is float or type(y) in _RIGHT_OPERANDS:
                return ufunc(x, y)
        elif type(x) in _NUMPY_SCALARS:
            if type(y) in _RIGHT_OPERANDS:
                return operation(x, y)
        elif type(y) in _NUMPY_VALUES and type(x) in _LEFT_OPERANDS:
            return operation(x, y)
        # Another backend's arrays (NumPy constants moved to it): the operator, which
        # every Array API array has, and which mixes in Python numbers by NumPy's rule.
        xp, (x, y) = common((x, y))
        return ufunc(x, y) if xp is np else operation(*promoted(xp, (x, y)))

    impl.__name__ = ufunc.__name__
    # Explicit fields for the compiler (kenaz.compiler.codegen, .fusion): what this computes,
    # so that no one reads this closure's cells.
    impl.ufunc = ufunc
    impl.operator = operation
    return impl


def binary(name: str, impl: Callable, jvp, vjp, saves=None) -> Op:
    return Op(name, impl, jvp=jvp, vjp=vjp, batch=batching.elementwise, saves=saves)


add = binary(
    "add",
    _by_operator(np.add, operator.add),
    jvp=[lambda t, ans, x, y: _fit(t, ans), lambda t, ans, x, y: _fit(t, ans)],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, identity),
        lambda ans, x, y: _unbroadcast(y, ans, identity),
    ],
    saves=[],  # shapes and dtypes only
)
subtract = binary(
    "sub",
    _by_operator(np.subtract, operator.sub),
    jvp=[lambda t, ans, x, y: _fit(t, ans), lambda t, ans, x, y: _fit(-t, ans)],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, identity),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: -g),
    ],
    saves=[],
)
multiply = binary(  # bilinear: its jvp rules are itself with the tangent for x, for y
    "mul",
    _by_operator(np.multiply, operator.mul),
    jvp=None,
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, lambda g: g * y),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: x * g),
    ],
    saves=[(1,), (0,)],
)
linear(multiply, (0, 1))
divide = binary(  # linear in x
    "div",
    _by_operator(np.true_divide, operator.truediv),
    jvp=[None, lambda t, ans, x, y: _fit(-t * ans / y, ans)],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, lambda g: g / y),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: -g * ans / y),
    ],
    saves=[(1,), (-1, 1)],
)
linear(divide, (0,))


def _pow_d_base(x, y):
    # y * x**(y-1), with y == 0 giving 0 rather than 0 * inf = nan at x == 0 (JAX's choice).
    # (A Tensor first: an isinstance that fails on one reads its `__class__` property.)
    if not isinstance(y, Tensor) and isinstance(y, (int, float)):
        if y == 2:  # the square, the commonest power: 2 x is one op, not two
            return 2 * x
        return y * power(x, y - 1) if y != 0 else 0.0 * x
    # Where x == 0 and y == 0, x**(1 - 1) stands in for x**(y - 1): the product is still 0,
    # and 0.0**-1 (inf, with a warning) is never computed. Only there: elsewhere the formula
    # stays exact, so that its own derivative in y (x**(y-1) * (1 + y log x), the mixed
    # second derivative) is right also at y == 0 (substituting for every y == 0 gave 1, not 1/x).
    # An integer exponent stays integer (a Python 1, not 1.0): a float64 exponent would make
    # the derivative of a float32 base float64 (power(x32, int8 array) is float32).
    one = 1 if np.dtype(getattr(y, "dtype", np.float64)).kind in "iub" else 1.0
    return y * power(x, where(logical_and(equal(y, 0), equal(x, 0)), one, y) - 1)


def _pow_d_exponent(ans, x):
    # log(x) * x**y, taken as 0 where x == 0 (the limit from the right for y > 0).
    if not isinstance(x, Tensor):  # a Python base: keep the output's precision
        x = Tensor(x, dtype=ans.dtype)
    safe_x = where(equal(x, 0), 1.0, x)
    return where(equal(x, 0), 0.0, log(safe_x) * ans)


power = binary(
    "pow",
    neutral_binary(np.power, "pow"),
    jvp=[
        lambda t, ans, x, y: _fit(t * _pow_d_base(x, y), ans),
        lambda t, ans, x, y: _fit(t * _pow_d_exponent(ans, x), ans),
    ],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, lambda g: g * _pow_d_base(x, y)),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: g * _pow_d_exponent(ans, x)),
    ],
    saves=[(0, 1), (-1, 0)],
)


def _chooser_weights(ans, x, y):
    """Where ``x`` is selected by max/min: 1, at ties 0.5 (JAX splits ties evenly)."""
    return (equal(ans, x) * 1.0 + equal(x, y) * -0.5).astype(ans.dtype, copy=False)


maximum = binary(
    "maximum",
    neutral_binary(np.maximum, "maximum"),
    jvp=[
        lambda t, ans, x, y: _fit(t * _chooser_weights(ans, x, y), ans),
        lambda t, ans, x, y: _fit(t * _chooser_weights(ans, y, x), ans),
    ],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, lambda g: g * _chooser_weights(ans, x, y)),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: g * _chooser_weights(ans, y, x)),
    ],
    saves=[(-1, 0, 1), (-1, 0, 1)],
)
minimum = binary(
    "minimum",
    neutral_binary(np.minimum, "minimum"),
    jvp=maximum.jvp,
    vjp=maximum.vjp,
    saves=[(-1, 0, 1), (-1, 0, 1)],
)


def _atan2_denominator(x, y):
    return x * x + y * y


arctan2 = binary(
    "atan2",
    neutral_binary(np.arctan2, "atan2"),
    jvp=[
        lambda t, ans, y, x: _fit(t * x / _atan2_denominator(x, y), ans),
        lambda t, ans, y, x: _fit(-t * y / _atan2_denominator(x, y), ans),
    ],
    vjp=[
        lambda ans, y, x: _unbroadcast(y, ans, lambda g: g * x / _atan2_denominator(x, y)),
        lambda ans, y, x: _unbroadcast(x, ans, lambda g: -g * y / _atan2_denominator(x, y)),
    ],
    saves=[(0, 1), (0, 1)],
)
floor_divide = Op(
    "floor_divide",
    neutral_binary(np.floor_divide, "floor_divide"),
    batch=batching.elementwise,
    differentiable=False,
)
remainder = binary(
    "remainder",
    neutral_binary(np.remainder, "remainder"),
    # x - floor(x / y) * y: derivative 1 in x and -floor(x / y) in y.
    jvp=[
        lambda t, ans, x, y: _fit(t, ans),
        lambda t, ans, x, y: _fit(-t * floor_divide(x, y), ans),
    ],
    vjp=[
        lambda ans, x, y: _unbroadcast(x, ans, identity),
        lambda ans, x, y: _unbroadcast(y, ans, lambda g: -g * floor_divide(x, y)),
    ],
    saves=[(), (0, 1)],
)


# -- comparisons and logic: boolean results, no derivative -----------------------------------
def _comparison(name: str, impl: Callable) -> Op:
    return Op(name, impl, batch=batching.elementwise, differentiable=False)


equal = _comparison("eq", neutral_binary(np.equal, "equal"))
not_equal = _comparison("ne", neutral_binary(np.not_equal, "not_equal"))
less = _comparison("lt", neutral_binary(np.less, "less"))
less_equal = _comparison("le", neutral_binary(np.less_equal, "less_equal"))
greater = _comparison("gt", neutral_binary(np.greater, "greater"))
greater_equal = _comparison("ge", neutral_binary(np.greater_equal, "greater_equal"))
logical_and = _comparison("logical_and", neutral_binary(np.logical_and, "logical_and"))
logical_or = _comparison("logical_or", neutral_binary(np.logical_or, "logical_or"))
logical_xor = _comparison("logical_xor", neutral_binary(np.logical_xor, "logical_xor"))
bitwise_and = _comparison("bitwise_and", neutral_binary(np.bitwise_and, "bitwise_and"))
bitwise_or = _comparison("bitwise_or", neutral_binary(np.bitwise_or, "bitwise_or"))
bitwise_xor = _comparison("bitwise_xor", neutral_binary(np.bitwise_xor, "bitwise_xor"))


# -- where, cast, identity -----------------------------------------------------------
def _where_impl(condition, x, y):
    if (type(x) is _ndarray is type(y) and type(condition) is _ndarray) or (
        type(condition) in NUMPY_TYPES and type(x) in NUMPY_TYPES and type(y) in NUMPY_TYPES
    ):
        return np.where(condition, x, y)
    xp, (condition, x, y) = common((condition, x, y))
    if xp is np:  # lists and other values NumPy converts
        return np.where(condition, x, y)
    x, y = promoted(xp, (x, y))
    if type(x) in (bool, int, float, complex):
        x = _scalar_like(xp, x, y) if hasattr(y, "dtype") else xp.asarray(x)
    if type(y) in (bool, int, float, complex):
        y = _scalar_like(xp, y, x)
    return xp.where(condition, x, y)


where = Op(
    "where",
    _where_impl,
    jvp=[
        None,
        lambda t, ans, c, x, y: _fit(where(c, t, 0), ans),
        lambda t, ans, c, x, y: _fit(where(c, 0, t), ans),
    ],
    vjp=[
        None,
        lambda ans, c, x, y: _unbroadcast(x, ans, lambda g: where(c, g, 0)),
        lambda ans, c, x, y: _unbroadcast(y, ans, lambda g: where(c, 0, g)),
    ],
    batch=batching.elementwise,
    saves=[(), (0,), (0,)],  # the condition
)


def _cast_impl(x, dtype):
    if type(x) in NUMPY_TYPES:
        return np.asarray(x).astype(dtype, copy=False)
    xp = namespace(x)
    return xp.astype(x, backend_dtype(xp, dtype))


def _cast_vjp(ans, x, dtype):
    x_dtype = x.dtype
    if x_dtype.kind == "c":
        return lambda g: astype(g, x_dtype)
    return lambda g: astype(real(g) if g.dtype.kind == "c" else g, x_dtype)


cast = Op(
    "cast",
    _cast_impl,
    vjp=[_cast_vjp],
    batch=batching.elementwise,
    saves=[],  # x's dtype only
)
linear(cast)


def astype(x, dtype) -> Tensor:
    """Cast ``x`` to ``dtype`` (differentiable between inexact dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biufc":
        raise TypeError(
            f"kenaz.astype: cannot cast to dtype {dtype}; tensors hold only bool, integer, "
            "float and complex data"
        )
    if isinstance(x, Tensor):
        if x.dtype == dtype:
            return x
    else:  # a list: a tensor first (the cast's NumPy code takes arrays only)
        x = array_argument(x)
    return cast(x, dtype=dtype)


# Shape ops below cast (sum_to, a tensor fill value of pad): handed down, not imported.
shape.provide(astype=astype, real=real)


def _same_value(x):
    """``x`` itself, a NumPy array-like of another type (pandas, xarray) as NumPy converts it:
    the value a transformation's input (``vmap(f)(dataframe)``) gets."""
    return x if type(x) is _ndarray else numpy_array_like(x)


# Identity with a fresh tensor: transformations use it to give their inputs new identities.
alias = Op(
    "alias",
    _same_value,
    jvp=[lambda t, ans, x: t],
    vjp=[lambda ans, x: identity],
    batch=batching.elementwise,
    saves=[],
)

# A copy with its own memory (Tensors may be changed in place outside transformations).
copy = Op(
    "copy",
    lambda x: (
        np.array(x, copy=True) if type(x) in NUMPY_TYPES else namespace(x).asarray(x, copy=True)
    ),
    jvp=[lambda t, ans, x: t],
    vjp=[lambda ans, x: identity],
    batch=batching.elementwise,
    saves=[],
)

def broadcast_copy(x, target_shape) -> Tensor:
    """``x`` broadcast to ``target_shape`` in fresh, writable memory: what ``numpy.full``
    and ``numpy.full_like`` return (``broadcast_to`` alone is a read-only view, as
    NumPy's), differentiable in ``x``."""
    return copy(shape.broadcast_to(x, target_shape))


def read_only_view(x: Tensor) -> Tensor:
    """``x`` marked read-only, as NumPy marks the views it returns read-only
    (``numpy.diagonal``): writing into it would not reach the input, so it raises as in
    NumPy. Only outside transformations (an untracked NumPy value); returns ``x``."""
    value = getattr(x, "_value", None) if type(x) is Tensor and not x._trace else None
    if type(value) is _ndarray:
        value.flags.writeable = False
    return x


stop_gradient = Op("stop_gradient", _same_value, batch=batching.elementwise, differentiable=False)


def clip(x, a_min=None, a_max=None) -> Tensor:
    """Limit values to ``[a_min, a_max]``; the derivative is 1 inside, 0 outside."""
    if a_min is not None:
        x = maximum(x, a_min)
    if a_max is not None:
        x = minimum(x, a_max)
    return x
