"""Elementwise ops with no derivative: sign bits, float spacing, integer arithmetic, shifts.

Their outputs are booleans, integers or piecewise-constant floats, so
transformations treat them as constants; they batch like any elementwise op.
``nextafter`` is the exception: one ulp away from ``x``, it has ``x``'s derivative.
"""

from __future__ import annotations

import numpy as np

from ..effects import Op
from . import batching
from .shape import broadcast_to, sum_to


def _identity_pullback(x):
    x_shape, x_dtype = x.shape, x.dtype
    return lambda g: sum_to(g, x_shape, x_dtype)


def _broadcast_tangent(t, ans):
    return t if t.shape == ans.shape else broadcast_to(t, ans.shape)


def _constant_op(name: str, impl) -> Op:
    return Op(name, impl, batch=batching.elementwise, differentiable=False)


signbit = _constant_op("signbit", np.signbit)
spacing = _constant_op("spacing", np.spacing)
# nextafter(x, y) moves x by one ulp: its derivative in x is 1 (as x itself), in y 0.
nextafter = Op(
    "nextafter",
    np.nextafter,
    jvp=[lambda t, ans, x, y: _broadcast_tangent(t, ans), None],
    vjp=[lambda ans, x, y: _identity_pullback(x), None],
    batch=batching.elementwise,
)
gcd = _constant_op("gcd", np.gcd)
lcm = _constant_op("lcm", np.lcm)
left_shift = _constant_op("left_shift", np.left_shift)
right_shift = _constant_op("right_shift", np.right_shift)
trunc = _constant_op("trunc", np.trunc)
rint = _constant_op("rint", np.rint)
frexp_exponent = _constant_op("frexp_exponent", lambda x: np.frexp(x)[1])
