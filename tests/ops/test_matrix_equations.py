"""check_op for the primitives of kenaz.ops.matrix_equations (LU, Sylvester, logm),
at float64 and float32, to second order."""

from __future__ import annotations

import numpy as np

from kenaz.ops import matrix_equations as me

from .cases import OpCase, make_check_op_test

_rng = np.random.default_rng(11)


def _matrix(*shape):
    return _rng.uniform(-1, 1, size=shape)


def _lu_factors(a):
    _, lower, upper = me.lu_op(a)
    return lower, upper


def _logm(a):
    # a positive definite matrix from any a, so that the logarithm is real and defined
    spd = a @ a.swapaxes(-1, -2) + a.shape[-1] * np.eye(a.shape[-1])
    return me.matrix_function_op(spd, function="logm")


CASES = [
    OpCase("lu-square", _lu_factors, (_matrix(3, 3) + 2 * np.eye(3),)),
    OpCase("lu-tall", _lu_factors, (_matrix(4, 3),)),
    OpCase("lu-wide", _lu_factors, (_matrix(3, 4),)),
    OpCase("lu-stack", _lu_factors, (_matrix(2, 3, 3),), order=1),
    OpCase(
        "solve_sylvester",
        me.sylvester_op,
        (_matrix(3, 3) + 3 * np.eye(3), _matrix(2, 2) + 3 * np.eye(2), _matrix(3, 2)),
    ),
    # 2 x 2: the second order takes logarithms of 8 x 8 blocks of blocks, SciPy's slow path
    OpCase("logm", _logm, (_matrix(2, 2),)),
    OpCase(
        "logm-nonsymmetric",
        me.matrix_function_op,
        (_matrix(2, 2) + 2 * np.eye(2),),
        {"function": "logm"},
        order=1,
    ),  # fmt: skip
]

test_check_op = make_check_op_test(CASES)
