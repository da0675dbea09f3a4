"""check_op for the special-function primitives of kenaz.ops.special (values from SciPy)."""

from __future__ import annotations

import numpy as np

from kenaz.ops import special as sp

from .cases import OpCase, make_check_op_test, uniform

_positive = uniform((4,), 0.5, 3.0, seed=1)
_unit = uniform((4,), 0.1, 0.9, seed=2)
_signed = uniform((4,), -2.0, 2.0, seed=3)


def _unary(op, x, order=2):
    return OpCase(op.name, op, (x,), order=order)


def _second_only(op, first, x):
    """An op ``f(a, x)`` differentiable in ``x`` only: ``a`` is closed over."""
    return OpCase(op.name, lambda v: op(first, v), (x,))


CASES = [
    _unary(sp.gammaln, _positive),
    _unary(sp.digamma, _positive),
    _unary(sp.gamma, _positive),
    _unary(sp.rgamma, _positive),
    _unary(sp.erfc, _signed),
    _unary(sp.erfinv, _unit * 2 - 1),
    _unary(sp.erfcinv, _unit * 2),
    _unary(sp.ndtri, _unit),
    _unary(sp.log_ndtr, _signed),
    _unary(sp.i0, _signed),
    _unary(sp.i1, _signed),
    _unary(sp.i0e, _signed),
    _unary(sp.i1e, _signed),
    _unary(sp.j0, _signed),
    _unary(sp.j1, _signed),
    _unary(sp.y0, _positive),
    _unary(sp.y1, _positive),
    _second_only(sp.polygamma, 1, _positive),
    OpCase("gammainc", sp.gammainc, (_positive[::-1] + 0.5, _positive)),  # both arguments
    OpCase("gammaincc", sp.gammaincc, (_positive[::-1] + 0.5, _positive)),
    _second_only(sp.stdtr, 3.0, _signed),
    _second_only(sp.iv, 1.5, _positive),
    _second_only(sp.ive, 2.0, _signed),
    _second_only(sp.jv, 1.0, _signed),
    _second_only(sp.yv, 0.5, _positive),
    OpCase("betainc", lambda x: sp.betainc(2.5, 1.5, x), (_unit,)),
    OpCase("xlogy", sp.xlogy, (_signed, _positive)),
    OpCase("xlog1py", sp.xlog1py, (_signed, _unit)),
    OpCase("xlogy-broadcast", sp.xlogy, (np.float64(0.7), _positive)),
]

test_check_op = make_check_op_test(CASES)
