"""check_op for the reductions and scans, with axis and keepdims variants, ties and zeros."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.ops import reduction

from .cases import OpCase, make_check_op_test, uniform

# (shape, axis) pairs, each run with keepdims False and True.
AXES = [
    ((), None),
    ((5,), None),
    ((5,), 0),
    ((2, 3), None),
    ((2, 3), 0),
    ((2, 3), -1),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), 1),
]


def _reduce(function, axis, keepdims):
    return lambda x: function(x, axis=axis, keepdims=keepdims)


def _axis_cases(name, function, low=-2.0, high=2.0) -> list[OpCase]:
    cases = []
    for seed, (shape, axis) in enumerate(AXES):
        for keepdims in (False, True):
            cases.append(
                OpCase(
                    f"{name}-{shape}-axis={axis}-keepdims={keepdims}",
                    _reduce(function, axis, keepdims),
                    (uniform(shape, low, high, seed),),
                )
            )
    return cases


def _zeros_cases() -> list[OpCase]:
    one_zero = np.array([[1.5, 0.0, -2.0], [0.5, 1.2, -0.7]])
    two_zeros = np.array([[0.0, 0.0, -2.0], [0.5, 1.2, 0.0]])
    return [
        OpCase("prod-one-zero-axis=None", knp.prod, (one_zero,)),
        OpCase("prod-one-zero-axis=1", lambda x: knp.prod(x, axis=1), (one_zero,)),
        OpCase("prod-two-zeros-axis=1", lambda x: knp.prod(x, axis=1), (two_zeros,)),
        OpCase("prod-two-zeros-axis=None", knp.prod, (two_zeros,)),
        OpCase("cumprod-one-zero", lambda x: knp.cumprod(x, axis=1), (one_zero,)),
        OpCase("cumprod-two-zeros", lambda x: knp.cumprod(x, axis=1), (two_zeros,)),
        OpCase("cumprod-zeros-flat", knp.cumprod, (two_zeros,)),
    ]


def _scan_cases() -> list[OpCase]:
    cases = []
    for name, function in (("cumsum", knp.cumsum), ("cumprod", knp.cumprod)):
        for seed, (shape, axis) in enumerate(
            [((5,), 0), ((2, 3), None), ((2, 3), 0), ((2, 3, 4), -1)]
        ):
            low, high = (0.5, 1.5) if name == "cumprod" else (-2.0, 2.0)
            x = uniform(shape, low, high, seed) * np.where(
                np.arange(np.prod(shape)) % 3, 1, -1
            ).reshape(shape)
            cases.append(
                OpCase(
                    f"{name}-{shape}-axis={axis}", lambda v, f=function, a=axis: f(v, axis=a), (x,)
                )
            )
    return cases


def _ties_cases() -> list[OpCase]:
    tied = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    return [
        # Structural ties (the same value twice) are differentiable, with the derivative split.
        OpCase(
            "max-tie-structural",
            lambda x: knp.max(knp.concatenate([x, x])),
            (uniform((4,), -1, 1),),
        ),
        OpCase(
            "min-tie-structural",
            lambda x: knp.min(knp.stack([x, x]), axis=0),
            (uniform((4,), -1, 1),),
        ),
        # At independent ties only jvp-vjp consistency can be checked.
        OpCase("max-ties-axis=1", lambda x: knp.max(x, axis=1), (tied,), finite_differences=False),
        OpCase("min-ties-axis=None", knp.min, (tied,), finite_differences=False),
    ]


def _no_derivative_cases() -> list[OpCase]:
    x = uniform((3, 4), -1, 1)
    return [
        OpCase("argmax-axis=None", knp.argmax, (x,)),
        OpCase("argmax-axis=1-keepdims", lambda v: knp.argmax(v, axis=1, keepdims=True), (x,)),
        OpCase("argmin-axis=0", lambda v: knp.argmin(v, axis=0), (x,)),
        OpCase("argmin-axis=-1", lambda v: knp.argmin(v, axis=-1), (x,)),
    ]


EMPTY_AND_SINGLE_CASES = [
    OpCase("sum-empty-axis", lambda x: knp.sum(x, axis=0), (np.zeros((0, 3)),)),
    OpCase("prod-empty-axis", lambda x: knp.prod(x, axis=0), (np.zeros((0, 3)),)),
    OpCase("prod-empty-kept-axis", lambda x: knp.prod(x, axis=1), (np.zeros((0, 3)),)),
    OpCase("prod-axis-empty-tuple", lambda x: knp.prod(x, axis=()), (uniform((3,), 0.5, 1.5),)),
    OpCase("cumsum-empty", knp.cumsum, (np.zeros((0,)),)),
    OpCase("cumprod-empty", lambda x: knp.cumprod(x, axis=0), (np.zeros((0, 2)),)),
    OpCase("cumprod-single", knp.cumprod, (np.array([2.0]),)),
]

CASES = (
    _axis_cases("sum", knp.sum)
    + _axis_cases("prod", knp.prod, 0.5, 1.5)
    + _axis_cases("max", knp.max)
    + _axis_cases("min", knp.min)
    + _axis_cases("logsumexp", reduction.logsumexp)
    + [
        OpCase(
            "logsumexp-large",
            lambda x: reduction.logsumexp(x, axis=1),
            (uniform((2, 3), 700, 710),),
        ),
    ]
    + [OpCase("sum-dtype", lambda x: knp.sum(x, dtype=np.float64), (uniform((3,), -1, 1),))]
    + _zeros_cases()
    + EMPTY_AND_SINGLE_CASES
    + _scan_cases()
    + _ties_cases()
    + _no_derivative_cases()
)

test_check_op = make_check_op_test(CASES)


# -- conventions -------------------------------------------------------------------------------
def test_tied_maxima_share_the_gradient():
    g = kenaz.grad(lambda x: knp.max(x))(np.array([1.0, 3.0, 3.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, 1 / 3, 1 / 3, 1 / 3])


def test_prod_gradient_is_exact_at_zeros():
    g = kenaz.grad(knp.prod)(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(kenaz.grad(knp.prod)(np.array([0.0, 0.0, 3.0])), [0, 0, 0])


def test_cumprod_gradient_is_exact_at_zeros():
    g = kenaz.grad(lambda x: knp.cumprod(x).sum())(np.array([2.0, 0.0, 3.0]))
    # d/dx of x0 + x0 x1 + x0 x1 x2 at (2, 0, 3)
    np.testing.assert_array_equal(g, [1.0, 2.0 + 6.0, 0.0])


@pytest.mark.parametrize("axis", [2, -3, (0, 0)])
def test_bad_axis_is_named(axis):
    with pytest.raises((ValueError, np.exceptions.AxisError), match="kenaz.sum"):
        reduction.sum(np.ones((2, 3)), axis=axis)
