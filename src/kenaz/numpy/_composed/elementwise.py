"""Elementwise functions of NumPy's namespace, composed from kenaz primitives.

The Array API's names for existing primitives (``acos``, ``pow``, ``bitwise_invert``...),
zero-derivative helpers (``signbit``, ``trunc``, ``rint``...), and functions such as
``fmod``, ``copysign``, ``heaviside``, ``ldexp``, ``frexp``, ``modf`` and ``nan_to_num``.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...mutation import write_out
from ...ops import bits as _bits
from ...ops import elementwise as _ew
from ...ops import special as _special
from ...tensor import Tensor
from .._namespace import composite as _composite
from .._out import into_out
from .._ufunc_keywords import result_dtype
from ._arguments import _float, _t

__all__ = [
    "fabs", "real_if_close", "float_power", "fmod", "copysign", "heaviside", "nan_to_num",
    "rint", "trunc", "fix", "isreal", "iscomplex", "signbit", "acos", "acosh", "asin",
    "asinh", "atan", "atanh", "pow", "positive", "bitwise_invert", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift", "left_shift", "right_shift", "nextafter",
    "frexp", "ldexp", "modf", "divmod", "spacing", "i0", "isneginf", "isposinf", "gcd",
    "lcm",
]  # fmt: skip


acos, acosh, asin, asinh = _ew.arccos, _ew.arccosh, _ew.arcsin, _ew.arcsinh
atan, atanh, pow = _ew.arctan, _ew.arctanh, _ew.power  # noqa: A001
bitwise_invert = bitwise_not = _ew.invert
left_shift = bitwise_left_shift = _bits.left_shift
right_shift = bitwise_right_shift = _bits.right_shift
signbit, spacing, nextafter = _bits.signbit, _bits.spacing, _bits.nextafter
gcd, lcm, rint, trunc = _bits.gcd, _bits.lcm, _bits.rint, _bits.trunc
@_composite
def fix(x: Any, out: Any = None) -> Tensor:
    """Round towards zero (zero derivative, as ``trunc``); ``out=`` as NumPy's."""
    result = trunc(x)
    return result if out is None else write_out(out, result, "kenaz.numpy.fix")


@_composite
def fabs(x: Any) -> Tensor:
    """Absolute value of real input."""
    return _ew.absolute(x)


@_composite
def positive(x: Any) -> Tensor:
    """``+x``: a copy, as NumPy's."""
    return _ew.copy(x)


@_composite
def float_power(x: Any, y: Any) -> Tensor:
    """``x ** y`` computed in float64 (complex128 for complex input)."""
    x = _t(x)
    target = _np.complex128 if x.dtype.kind == "c" or _t(y).dtype.kind == "c" else _np.float64
    return _ew.power(_ew.astype(x, target), y)


@_composite
def fmod(x: Any, y: Any) -> Tensor:
    """C-style remainder with the sign of ``x``: ``x - trunc(x / y) * y``."""
    return x - trunc(_ew.divide(x, y)) * y


@_composite
def copysign(x: Any, y: Any) -> Tensor:
    """``|x|`` with the sign of ``y``."""
    return _ew.where(signbit(y), -_ew.absolute(x), _ew.absolute(x))


@_composite
def heaviside(x: Any, h0: Any) -> Tensor:
    """0 for ``x < 0``, ``h0`` at 0, 1 for ``x > 0`` (differentiable in ``h0``), of the
    dtype NumPy's ufunc gives (a Python ``h0`` does not promote: float32 stays float32)."""
    x = _t(x)
    dtype = result_dtype(_np.heaviside, x, h0)
    step = _ew.where(_ew.less(x, 0), 0.0, _ew.where(_ew.greater(x, 0), 1.0, h0))
    return step if step.dtype == dtype else _ew.astype(step, dtype)


@_composite
def real_if_close(a: Any, tol: float = 100) -> Tensor:
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0
    (decided on the values; the real part is differentiable)."""
    a = _t(a)
    if a.dtype.kind != "c":
        return a
    limit = tol * _np.finfo(a.dtype).eps if tol > 1 else tol
    return _ew.real(a) if _np.all(_np.abs(_np.imag(_read_value(a))) < limit) else a


@_composite
def isreal(x: Any) -> Tensor:
    """Elementwise: is the imaginary part 0."""
    x = _t(x)
    return _ew.equal(_ew.imag(x), 0) if x.dtype.kind == "c" else Tensor(_np.ones(x.shape, bool))


@_composite
def iscomplex(x: Any) -> Tensor:
    """Elementwise: is the imaginary part nonzero."""
    return _ew.logical_not(isreal(x))


@_composite
def isneginf(x: Any, out: Any = None) -> Tensor:
    result = _ew.logical_and(_ew.isinf(x), signbit(x))
    return into_out(out, result, "isneginf", casting="same_kind", broadcast=True)


@_composite
def isposinf(x: Any, out: Any = None) -> Tensor:
    result = _ew.logical_and(_ew.isinf(x), _ew.logical_not(signbit(x)))
    return into_out(out, result, "isposinf", casting="same_kind", broadcast=True)


@_composite
def ldexp(x: Any, exponent: Any) -> Tensor:
    """``x * 2**exponent``."""
    return _float(x) * _ew.power(2.0, _float(exponent))


@_composite
def frexp(x: Any) -> tuple[Tensor, Tensor]:
    """Mantissa (differentiable) and integer exponent with ``x = mantissa * 2**exponent``."""
    x = _float(x)
    exponent = _bits.frexp_exponent(x)
    return x * _ew.power(2.0, -_ew.astype(exponent, x.dtype)), exponent


@_composite
def modf(x: Any) -> tuple[Tensor, Tensor]:
    """Fractional and integral parts (the fractional part carries the derivative)."""
    whole = trunc(x)
    return x - whole, whole


@_composite
def divmod(x: Any, y: Any) -> tuple[Tensor, Tensor]:  # noqa: A001
    """``(floor_divide(x, y), remainder(x, y))``."""
    return _ew.floor_divide(x, y), _ew.remainder(x, y)


@_composite
def i0(x: Any) -> Tensor:
    """Modified Bessel function of order 0 (needs SciPy, like ``kenaz.scipy``)."""
    return _special.i0(_float(x))


@_composite
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Tensor:  # fmt: skip
    """Replace NaN and infinities by finite numbers (the derivative is 0 there)."""
    x = _t(x)
    if x.dtype.kind == "c":
        return _ew.real(nan_to_num(_ew.real(x), nan=nan, posinf=posinf, neginf=neginf)) + 1j * (
            nan_to_num(_ew.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        )
    if x.dtype.kind != "f":
        return x
    info = _np.finfo(x.dtype)
    x = _ew.where(_ew.isnan(x), nan, x)
    x = _ew.where(isposinf(x), info.max if posinf is None else posinf, x)
    return _ew.where(isneginf(x), info.min if neginf is None else neginf, x)
