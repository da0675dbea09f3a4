"""Arithmetic on NumPy scalars uses Python's operators (fast): the same results as the ufunc."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from kenaz.ops.elementwise import add, divide, multiply, negative, subtract

OPERANDS = [
    True,
    3,
    2.5,
    1.5 - 2j,
    np.float64(1.25),
    np.float32(0.5),
    np.float16(2),
    np.longdouble(1.5),
    np.int64(7),
    np.int8(-3),
    np.uint8(4),
    np.bool_(True),
    np.complex128(1 + 1j),
    np.complex64(2 - 1j),
    np.arange(3.0),
    np.asarray(2.0),
    np.arange(3, dtype=np.float32),
    [1.0, 2.0, 3.0],
    np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False]),  # a subclass
]


def _outcome(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception as error:  # noqa: BLE001 - the exception type is the outcome
            return type(error)


def _same(expected, got) -> bool:
    if isinstance(expected, type) or isinstance(got, type):
        return expected is got
    return (
        type(expected) is type(got)
        and np.asarray(expected).dtype == np.asarray(got).dtype
        and np.array_equal(expected, got, equal_nan=True)
    )


@pytest.mark.parametrize(
    "op, ufunc",
    [(add, np.add), (subtract, np.subtract), (multiply, np.multiply), (divide, np.true_divide)],
    ids=["add", "sub", "mul", "div"],
)
def test_binary_impl_matches_the_ufunc_for_every_pair_of_operand_types(op, ufunc):
    for x, y in itertools.product(OPERANDS, OPERANDS):
        expected, got = _outcome(ufunc, x, y), _outcome(op.impl, x, y)
        assert _same(expected, got), (op.name, repr(x), repr(y), expected, got)


def test_negative_impl_matches_the_ufunc():
    for x in OPERANDS:
        expected, got = _outcome(np.negative, x), _outcome(negative.impl, x)
        assert _same(expected, got), (repr(x), expected, got)
