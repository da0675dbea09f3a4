"""check_op for the zero-derivative elementwise ops of kenaz.ops.bits."""

from __future__ import annotations

import numpy as np

from kenaz.ops import bits

from .cases import OpCase, away_from_integers, make_check_op_test

_x = away_from_integers((5,), seed=4)
_ints = np.array([12, 18, 7, 30, 4])

CASES = [
    OpCase("signbit", bits.signbit, (_x,)),
    OpCase("spacing", bits.spacing, (_x,)),
    OpCase("nextafter", bits.nextafter, (_x, np.zeros(5))),
    OpCase("trunc", bits.trunc, (_x,)),
    OpCase("rint", bits.rint, (_x,)),
    OpCase("frexp_exponent", bits.frexp_exponent, (_x,)),
    OpCase("gcd", bits.gcd, (_ints, _ints[::-1])),
    OpCase("lcm", bits.lcm, (_ints, _ints[::-1])),
    OpCase("left_shift", bits.left_shift, (_ints, np.array([1, 2, 0, 3, 1]))),
    OpCase("right_shift", bits.right_shift, (_ints, np.array([1, 2, 0, 3, 1]))),
]

test_check_op = make_check_op_test(CASES)
