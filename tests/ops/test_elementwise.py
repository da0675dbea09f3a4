"""check_op for every elementwise primitive, plus the conventions the rules follow."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import kenaz
import kenaz.numpy as knp
from kenaz.errors import ShapeError
from kenaz.ops import elementwise as ew
from kenaz.testing import check_op

from .cases import OpCase, away_from_integers, make_check_op_test, uniform

SHAPES = [(), (5,), (2, 3)]

# (op, low, high): inputs inside each op's domain, away from its edges.
UNARY_DOMAINS = [
    (ew.negative, -2.0, 2.0),
    (ew.exp, -2.0, 2.0),
    (ew.expm1, -2.0, 2.0),
    (ew.log, 0.5, 3.0),
    (ew.log1p, -0.5, 2.0),
    (ew.sqrt, 0.5, 3.0),
    (ew.cbrt, 0.5, 3.0),
    (ew.sin, -3.0, 3.0),
    (ew.cos, -3.0, 3.0),
    (ew.tan, -1.2, 1.2),
    (ew.arcsin, -0.8, 0.8),
    (ew.arccos, -0.8, 0.8),
    (ew.arctan, -3.0, 3.0),
    (ew.sinh, -2.0, 2.0),
    (ew.cosh, -2.0, 2.0),
    (ew.tanh, -2.0, 2.0),
    (ew.arcsinh, -3.0, 3.0),
    (ew.arccosh, 1.2, 3.0),
    (ew.arctanh, -0.8, 0.8),
    (ew.logistic, -4.0, 4.0),
    (ew.square, -2.0, 2.0),
    (ew.erf, -2.0, 2.0),
    (ew.alias, -2.0, 2.0),
    (ew.copy, -2.0, 2.0),
]

# Piecewise constant: zero derivative away from the jumps.
ZERO_DERIVATIVE = [ew.sign, ew.floor, ew.ceil, ew._round]


# The `d<name>(g, r) = g * f'(r)` primitives of `unary_with_slope`: (low, high) of r.
SLOPE_DOMAINS = {
    "dlog": (0.5, 3.0),
    "dsqrt": (0.5, 3.0),
    "dsin": (-3.0, 3.0),
    "dcos": (-3.0, 3.0),
    "dtanh": (-0.9, 0.9),
    "dlogistic": (0.1, 0.9),
    "dsquare": (-2.0, 2.0),
}


def _slope_cases() -> list[OpCase]:
    assert set(SLOPE_DOMAINS) == set(ew.slope_ops), "give every slope op a domain here"
    cases = []
    for name, (low, high) in SLOPE_DOMAINS.items():
        for seed, shape in enumerate(SHAPES):
            g, r = uniform(shape, -2.0, 2.0, seed), uniform(shape, low, high, seed + 7)
            cases.append(OpCase(f"{name}-{shape}", ew.slope_ops[name], (g, r)))
        # Broadcasting operands, as vmap makes them (a batched g, an unbatched r).
        g, r = uniform((2, 3), -2.0, 2.0, 3), uniform((3,), low, high, 4)
        cases.append(OpCase(f"{name}-broadcast-r", ew.slope_ops[name], (g, r)))
        cases.append(OpCase(f"{name}-broadcast-g", ew.slope_ops[name], (r, g[:, :1] + low)))
    return cases


def _signed_away_from_zero(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _unary_cases() -> list[OpCase]:
    cases = []
    for op, low, high in UNARY_DOMAINS:
        for seed, shape in enumerate(SHAPES):
            cases.append(OpCase(f"{op.name}-{shape}", op, (uniform(shape, low, high, seed),)))
    for seed, shape in enumerate(SHAPES):
        cases.append(OpCase(f"abs-{shape}", ew.absolute, (_signed_away_from_zero(shape, seed),)))
        for op in ZERO_DERIVATIVE:
            cases.append(OpCase(f"{op.name}-{shape}", op, (away_from_integers(shape, seed),)))
    cases += [
        OpCase("round-decimals", lambda x: ew.round_(x, 1), (np.array([0.12, -1.37, 2.51]),)),
        OpCase(
            "stop_gradient", ew.stop_gradient, (uniform((4,), -1, 1),), finite_differences=False
        ),
    ]
    return cases


def _complex(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, size=shape) + 1j * rng.uniform(-2, 2, size=shape)


COMPLEX_CASES = [
    OpCase("conj-complex", ew.conjugate, (_complex((4,)),)),
    OpCase("conj-real", ew.conjugate, (uniform((4,), -1, 1),)),
    OpCase("real-complex", ew.real, (_complex((2, 3)),)),
    OpCase("real-real", ew.real, (uniform((3,), -1, 1),)),
    OpCase("imag-complex", ew.imag, (_complex((2, 3)),)),
    OpCase("exp-complex", ew.exp, (_complex((3,)) / 2,)),
    OpCase("mul-complex", ew.multiply, (_complex((3,)), _complex((2, 3), 1))),
]

# Shapes of the two operands of a broadcasting binary op.
BINARY_SHAPES = [((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((), ())]


def _binary(op, x_range, y_range, name=None) -> list[OpCase]:
    cases = []
    for seed, (x_shape, y_shape) in enumerate(BINARY_SHAPES):
        x = uniform(x_shape, *x_range, seed=seed)
        y = uniform(y_shape, *y_range, seed=seed + 100)
        cases.append(OpCase(f"{name or op.name}-{x_shape}-{y_shape}", op, (x, y)))
    return cases


_NUMERATORS = np.array([2.3, -1.4, 5.6])


def _binary_cases() -> list[OpCase]:
    cases = []
    cases += _binary(ew.add, (-2, 2), (-2, 2))
    cases += _binary(ew.subtract, (-2, 2), (-2, 2))
    cases += _binary(ew.multiply, (-2, 2), (-2, 2))
    cases += _binary(ew.divide, (-2, 2), (0.5, 2))
    cases += _binary(ew.power, (0.5, 2), (-1.5, 1.5))
    cases += _binary(ew.maximum, (-2, 0), (0.1, 2), name="maximum-y-wins")
    cases += _binary(ew.maximum, (0.1, 2), (-2, 0), name="maximum-x-wins")
    cases += _binary(ew.minimum, (-2, 0), (0.1, 2), name="minimum-x-wins")
    cases += _binary(ew.minimum, (0.1, 2), (-2, 0), name="minimum-y-wins")
    cases += _binary(ew.arctan2, (-2, 2), (0.5, 2))
    cases += _binary(ew.arctan2, (0.5, 2), (-2, 2), name="atan2-left-half")
    mixed = np.array([-1.5, 0.3, 1.2, -0.4])
    cases += [
        OpCase("maximum-mixed", ew.maximum, (mixed, -mixed[::-1])),
        # x / y kept away from integers so that floor(x / y) is locally constant.
        OpCase("remainder-positive", ew.remainder, (_NUMERATORS, np.array([1.0, 0.9, 2.5]))),
        OpCase("remainder-negative", ew.remainder, (_NUMERATORS, np.array([-1.0, -0.9, -2.5]))),
        OpCase(
            "remainder-broadcast", ew.remainder, (np.array([[2.3], [-1.3]]), np.array([1.1, 0.7]))
        ),
        OpCase("floor_divide", ew.floor_divide, (_NUMERATORS, np.array([1.0, 0.9, 2.5]))),
        # pow: integer exponents of negative bases, a zero base, a constant exponent.
        OpCase("pow-negative-base-cube", lambda x: ew.power(x, 3), (uniform((4,), -2, 2),)),
        OpCase("pow-negative-base-square", lambda x: ew.power(x, 2.0), (uniform((4,), -2, 2),)),
        OpCase("pow-zero-base-squared", lambda x: ew.power(x, 2.0), (np.array([0.0, 1.0, -2.0]),)),
        OpCase("pow-zero-exponent", lambda x: ew.power(x, 0.0), (np.array([0.0, 1.5]),)),
        OpCase(
            "pow-zero-base-exponent",
            lambda y: ew.power(np.array([0.0, 2.0, 0.0]), y),
            (np.array([2.0, 1.5, 3.0]),),
        ),
        OpCase("pow-scalar-base", lambda y: ew.power(2.0, y), (uniform((3,), -1, 1),)),
    ]
    return cases


def _ties_cases() -> list[OpCase]:
    ties = np.array([1.0, -2.0, 0.5])
    return [
        # Structural ties are differentiable: max(x, x) = x, with the derivative split evenly.
        OpCase("maximum-tie-same-input", lambda x: ew.maximum(x, x), (ties,)),
        OpCase("minimum-tie-same-input", lambda x: ew.minimum(x, x), (ties,)),
        # At independent ties only the rules' consistency can be checked (no finite differences).
        OpCase("maximum-ties", ew.maximum, (ties, ties.copy()), finite_differences=False),
        OpCase("minimum-ties", ew.minimum, (ties, ties.copy()), finite_differences=False),
    ]


_BOOLS = (np.array([True, False, True, False]), np.array([True, True, False, False]))
_INTS = (np.array([3, 5, 12, 7]), np.array([6, 3, 10, 1]))
_FLOATS = (np.array([0.5, 1.0, -2.0, 3.0]), np.array([0.5, 2.0, -3.0, 1.0]))


def _no_derivative_cases() -> list[OpCase]:
    cases = []
    for op in (ew.equal, ew.not_equal, ew.less, ew.less_equal, ew.greater, ew.greater_equal):
        cases.append(OpCase(op.name, op, _FLOATS))
    for op in (ew.logical_and, ew.logical_or, ew.logical_xor):
        cases.append(OpCase(op.name, op, _BOOLS))
    for op in (ew.bitwise_and, ew.bitwise_or, ew.bitwise_xor):
        cases.append(OpCase(f"{op.name}-int", op, _INTS))
        cases.append(OpCase(f"{op.name}-bool", op, _BOOLS))
    special = np.array([1.0, np.inf, -np.inf, np.nan, -0.5])
    cases += [
        OpCase("isnan", ew.isnan, (special,)),
        OpCase("isinf", ew.isinf, (special,)),
        OpCase("isfinite", ew.isfinite, (special,)),
        OpCase("logical_not", ew.logical_not, (_BOOLS[0],)),
        OpCase("invert-bool", ew.invert, (_BOOLS[0],)),
        OpCase("invert-int", ew.invert, (_INTS[0],)),
    ]
    return cases


def _where_and_cast_cases() -> list[OpCase]:
    condition = np.array([[True, False, True], [False, False, True]])
    return [
        OpCase("where", ew.where, (condition, uniform((2, 3), -1, 1), uniform((2, 3), -1, 1, 1))),
        OpCase("where-broadcast", ew.where, (condition, uniform((3,), -1, 1), uniform((), -1, 1))),
        OpCase(
            "where-scalar-branch", lambda x: ew.where(condition, x, 0.0), (uniform((2, 3), -1, 1),)
        ),
        OpCase("cast-to-float32", lambda x: ew.astype(x, np.float32), (uniform((4,), -1, 1),)),
        OpCase("cast-to-float64", lambda x: ew.astype(x, np.float64), (uniform((4,), -1, 1),)),
        OpCase("cast-to-int", lambda x: ew.astype(x, np.int64), (away_from_integers((4,)),)),
        OpCase("cast-to-complex", lambda x: ew.astype(x, np.complex128), (uniform((3,), -1, 1),)),
        OpCase("cast-op", ew.cast, (uniform((2, 2), -1, 1),), {"dtype": np.dtype(np.float32)}),
        OpCase("clip", lambda x: ew.clip(x, -0.5, 0.5), (np.array([-1.0, -0.2, 0.3, 0.9]),)),
    ]


CASES = (
    _unary_cases()
    + _slope_cases()
    + COMPLEX_CASES
    + _binary_cases()
    + _ties_cases()
    + _no_derivative_cases()
    + _where_and_cast_cases()
)

test_check_op = make_check_op_test(CASES)


# -- conventions -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [ew.maximum, ew.minimum])
def test_ties_split_the_derivative_evenly(op):
    x = np.array([1.0, 2.0])
    gx, gy = kenaz.grad(lambda a, b: op(a, b).sum(), argnums=(0, 1))(x, x.copy())
    np.testing.assert_array_equal(gx, [0.5, 0.5])
    np.testing.assert_array_equal(gy, [0.5, 0.5])


def test_pow_at_zero_base_has_finite_derivatives():
    gx, gy = kenaz.grad(lambda x, y: ew.power(x, y).sum(), argnums=(0, 1))(
        np.array([0.0, 0.0]), np.array([2.0, 0.0])
    )
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0])


def test_zero_derivative_ops_give_zero_gradients():
    x = np.array([0.3, 1.7, -2.2])
    for op in ZERO_DERIVATIVE:
        np.testing.assert_array_equal(kenaz.grad(lambda v, op=op: op(v).sum())(x), np.zeros(3))


def test_stop_gradient_blocks_the_derivative():
    g = kenaz.grad(lambda x: (ew.stop_gradient(x) * x).sum())(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rules_keep_the_dtype(dtype):
    for op, low, high in UNARY_DOMAINS:
        x = np.array([low, high], dtype=dtype) * 0.9 + 0.05 * (low + high)
        assert kenaz.grad(lambda v, op=op: op(v).sum())(x).dtype == dtype, op.name


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: ew.add(np.ones(3), np.ones(4)),
            r"kenaz\.add: operands of shapes \(3,\) and \(4,\)",
        ),
        (lambda: knp.ones((2, 3)) * knp.ones(2), r"kenaz\.mul: .*\(2, 3\) and \(2,\)"),
        (lambda: knp.ones(3) < np.ones(2), r"kenaz\.lt: .*\(3,\) and \(2,\)"),
        (
            lambda: ew.where(np.ones(3, bool), np.ones(4), 0.0),
            r"kenaz\.where: .*\(3,\) and \(4,\) and \(\)",
        ),
        (lambda: kenaz.grad(lambda x: (x - np.ones(2)).sum())(np.ones(3)), r"kenaz\.sub"),
        (
            lambda: kenaz.jvp(lambda x: x / np.ones(2), (np.ones(3),), (np.ones(3),)),
            r"kenaz\.div",
        ),
    ],
    ids=["add", "mul-operator", "comparison", "where", "under-grad", "under-jvp"],
)
def test_incompatible_shapes_name_the_op_and_both_shapes(call, message):
    with pytest.raises(ShapeError, match=message):
        call()


# -- broadcasting, property-based ----------------------------------------------------------------
BROADCASTING_DOMAINS = {
    "add": (ew.add, (-2, 2), (-2, 2)),
    "sub": (ew.subtract, (-2, 2), (-2, 2)),
    "mul": (ew.multiply, (-2, 2), (-2, 2)),
    "div": (ew.divide, (-2, 2), (0.5, 2)),
    "pow": (ew.power, (0.5, 2), (-1.5, 1.5)),
    "atan2": (ew.arctan2, (0.5, 2), (0.5, 2)),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(BROADCASTING_DOMAINS)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_binary_rules_under_any_broadcasting(name, shapes, seed):
    op, x_range, y_range = BROADCASTING_DOMAINS[name]
    x_shape, y_shape = shapes.input_shapes
    x, y = uniform(x_shape, *x_range, seed=seed), uniform(y_shape, *y_range, seed=seed + 1)
    check_op(op, (x, y), order=1)


@pytest.mark.parametrize(
    "value",
    [
        np.array([True, False]),
        np.array([3, -4], dtype=np.int8),
        np.array([1.5, -2.0], dtype=np.float32),
        np.array(3.0),
        np.array([1 + 2j]),
    ],
    ids=["bool", "int8", "float32", "0-d", "complex"],
)
def test_power_of_two_is_square_with_numpys_result(value):
    got = (kenaz.Tensor(value) ** 2).numpy()
    expected = value**2
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert kenaz.jvp(lambda x: x**2, (1.5,), (1.0,))[1] == 3.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cbrt_is_numpy_s_and_its_derivative_is_infinite_at_zero(dtype):
    """cbrt was sign(x) * |x|**(1/3): its derivative at 0 was 0 * inf = nan (JAX: +inf,
    as sqrt's here), and cbrt(8) was 1.9999999999999998 (found by compare_with_jax)."""
    x = np.array([0.0, 8.0, -27.0, 0.5], dtype)
    np.testing.assert_array_equal(knp.cbrt(x), np.cbrt(x))
    assert knp.cbrt(x).dtype == dtype
    with np.errstate(divide="ignore"):
        g = kenaz.grad(lambda v: knp.sum(knp.cbrt(v)))(x)
    assert g.dtype == dtype and np.isposinf(g[0])
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(g[1:], 1 / (3 * np.cbrt(x[1:]) ** 2), rtol=rtol)
    h = kenaz.grad(kenaz.grad(lambda v: knp.cbrt(v)))(dtype(-8.0))
    np.testing.assert_allclose(h, -2 / 9 * np.cbrt(-8.0) ** -5, rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_power_with_an_integer_array_exponent_keeps_the_base_dtype(dtype):
    """power(x32, int8 array) is float32, and so must its derivative be (it was float64:
    the exponent minus 1 became float64; found by compare_with_jax)."""
    x = np.array([0.0, 2.0, -1.5], dtype)
    k = np.array([0, 3, 2], np.int8)
    g = kenaz.grad(lambda v: knp.sum(knp.power(v, k)))(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, [0.0, 12.0, -3.0], rtol=1e-6)
    tangent = kenaz.jvp(lambda v: knp.power(v, k), (x,), (np.ones_like(x),))[1]
    assert tangent.dtype == dtype
    h = kenaz.hessian(lambda v: knp.sum(knp.power(v, k)))(x)
    assert h.dtype == dtype
    np.testing.assert_allclose(np.diag(h), [0.0, 12.0, 2.0], rtol=1e-6)
