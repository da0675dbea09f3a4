"""Numerical conventions (docs/conventions.md): derivatives at kinks, ties and poles,
the ``where`` NaN trap and its safe pattern, float32 versus float64, and gradients
with respect to inputs a function does not depend on.

Each test checks one statement of the page, in both modes (grad and jvp) where the
statement is about a derivative.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.nn as nn
import kenaz.numpy as knp
from kenaz import grad, jvp


@pytest.fixture(autouse=True)
def _quiet_floating_point() -> Iterator[None]:
    """Poles create infinities on purpose here; NumPy's warnings about them are expected."""
    with np.errstate(divide="ignore", invalid="ignore"):
        yield


def derivative(f: Callable[[Any], Any], x: float) -> tuple[float, float]:
    """The derivative of scalar ``f`` at ``x`` by reverse mode and by forward mode."""
    by_grad = float(grad(f)(np.float64(x)))
    by_jvp = float(jvp(f, (np.float64(x),), (1.0,))[1])
    return by_grad, by_jvp


# (statement, f, x, expected derivative) -- each checked by grad and by jvp
KINKS: list[tuple[str, Callable[[Any], Any], float, float]] = [
    ("abs at 0 is 0 (JAX: 1; see the page)", knp.abs, 0.0, 0.0),
    ("abs at -0.0 is 0", knp.abs, -0.0, 0.0),
    ("abs away from 0 is the sign", knp.abs, -2.0, -1.0),
    ("sign has derivative 0 at its jump", knp.sign, 0.0, 0.0),
    ("floor has derivative 0 at its jump", knp.floor, 1.0, 0.0),
    ("round has derivative 0", knp.round, 1.5, 0.0),
    ("relu at 0 is 0", nn.relu, 0.0, 0.0),
    ("relu written with where is 0 at 0", lambda x: knp.where(x > 0, x, 0.0), 0.0, 0.0),
    ("maximum(x, 0) at the tie is 0.5", lambda x: knp.maximum(x, 0.0), 0.0, 0.5),
    ("minimum(x, 0) at the tie is 0.5", lambda x: knp.minimum(x, 0.0), 0.0, 0.5),
    ("maximum(x, x) is 1", lambda x: knp.maximum(x, x), 1.3, 1.0),
    ("clip at its lower bound is 0.5", lambda x: knp.clip(x, 0.0, 1.0), 0.0, 0.5),
    ("clip at its upper bound is 0.5", lambda x: knp.clip(x, 0.0, 1.0), 1.0, 0.5),
    ("clip inside is 1", lambda x: knp.clip(x, 0.0, 1.0), 0.5, 1.0),
    ("clip outside is 0", lambda x: knp.clip(x, 0.0, 1.0), 2.0, 0.0),
    ("stop_gradient is 0", lambda x: kenaz.stop_gradient(x) * 3.0, 1.0, 0.0),
    ("scatter-max at a tie splits evenly", lambda x: knp.sum(knp.ones(3).at[1].max(x)), 1.0, 0.5),
]


@pytest.mark.parametrize("statement, f, x, expected", KINKS, ids=[k[0] for k in KINKS])
def test_derivative_at_kinks_and_ties(
    statement: str, f: Callable[[Any], Any], x: float, expected: float
) -> None:
    """grad and jvp agree with each other and with the documented convention."""
    assert derivative(f, x) == (expected, expected), statement


def test_max_reduction_splits_ties_evenly() -> None:
    """The gradient of max over tied maxima is split evenly and sums to 1 (per group)."""
    g = grad(lambda x: knp.max(x))(np.array([1.0, 3.0, 3.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1 / 3, 1 / 3, 1 / 3])
    rows = grad(lambda x: knp.sum(knp.min(x, axis=1)))(np.array([[2.0, 2.0], [1.0, 5.0]]))
    np.testing.assert_array_equal(np.asarray(rows), [[0.5, 0.5], [1.0, 0.0]])
    _, tangent = jvp(lambda x: knp.max(x), (np.array([3.0, 3.0]),), (np.array([1.0, 3.0]),))
    assert float(tangent) == 2.0  # the average of the tied tangents


def test_sort_with_ties_follows_the_stable_permutation() -> None:
    """Tied elements keep their input order, so each gets the cotangent of the position
    it is sorted to; sum(sort(x)) has gradient 1 everywhere."""
    x = np.array([2.0, 1.0, 2.0, 0.5])
    weights = np.array([10.0, 20.0, 30.0, 40.0])  # cotangent of sorted positions 0..3
    g = grad(lambda v: knp.sum(knp.sort(v) * weights))(x)
    # sorted: 0.5 (index 3), 1.0 (index 1), 2.0 (index 0), 2.0 (index 2)
    np.testing.assert_array_equal(np.asarray(g), [30.0, 20.0, 40.0, 10.0])
    np.testing.assert_array_equal(np.asarray(grad(lambda v: knp.sum(knp.sort(v)))(x)), np.ones(4))
    _, tangent = jvp(knp.sort, (x,), (np.arange(4.0),))
    np.testing.assert_array_equal(np.asarray(tangent), [3.0, 1.0, 0.0, 2.0])


# (statement, f, x, expected value, expected derivative)
POLES: list[tuple[str, Callable[[Any], Any], float, float, float]] = [
    ("sqrt at 0", knp.sqrt, 0.0, 0.0, np.inf),
    ("log at 0", knp.log, 0.0, -np.inf, np.inf),
    ("x ** 0.5 at 0", lambda x: x**0.5, 0.0, 0.0, np.inf),
    ("x ** 2 at 0", lambda x: x**2, 0.0, 0.0, 0.0),
    ("x ** 0 at 0", lambda x: x**0, 0.0, 1.0, 0.0),
    ("x ** 0 away from 0", lambda x: x**0, 3.0, 1.0, 0.0),
    ("0 ** y in y, y > 0", lambda y: knp.power(0.0, y), 2.0, 0.0, 0.0),
    ("log of a negative number", knp.log, -1.0, np.nan, -1.0),
]


@pytest.mark.parametrize("statement, f, x, value, slope", POLES, ids=[p[0] for p in POLES])
def test_values_and_derivatives_at_poles(
    statement: str, f: Callable[[Any], Any], x: float, value: float, slope: float
) -> None:
    """Poles give infinities (and NaN outside the domain), never an exception."""
    np.testing.assert_array_equal(float(f(np.float64(x))), value, err_msg=statement)
    np.testing.assert_array_equal(derivative(f, x), (slope, slope), err_msg=statement)


def test_numpy_warnings_at_poles_are_warnings_not_errors() -> None:
    """With NumPy's default error state, log(0) warns (RuntimeWarning) and returns -inf."""
    with np.errstate(divide="warn"), pytest.warns(RuntimeWarning, match="divide by zero"):
        assert float(knp.log(np.float64(0.0))) == -np.inf


def test_the_where_nan_trap_and_its_safe_pattern() -> None:
    """where(x > 0, sqrt(x), 0) has a NaN gradient at 0 (cotangent 0 times sqrt'(0) = inf),
    as in JAX, while forward mode selects the tangent and gives 0; the double-where
    pattern gives 0 in both modes and the same derivative everywhere else."""

    def trap(x: Any) -> Any:
        return knp.where(x > 0, knp.sqrt(x), 0.0)

    def safe(x: Any) -> Any:
        positive = x > 0
        safe_x = knp.where(positive, x, 1.0)
        return knp.where(positive, knp.sqrt(safe_x), 0.0)

    by_grad, by_jvp = derivative(trap, 0.0)
    assert np.isnan(by_grad) and by_jvp == 0.0
    assert derivative(safe, 0.0) == (0.0, 0.0)
    xs = np.array([0.0, 0.25, 4.0])
    g = grad(lambda v: knp.sum(safe(v)))(xs)
    np.testing.assert_allclose(np.asarray(g), [0.0, 1.0, 0.25])
    np.testing.assert_array_equal(np.asarray(safe(xs)), np.asarray(trap(xs)))


def test_norm_at_zero_trap_and_safe_pattern() -> None:
    """sqrt(sum(x*x)) has a NaN gradient at 0; the safe pattern gives zeros."""

    def naive(x: Any) -> Any:
        return knp.sqrt(knp.sum(x * x))

    def safe(x: Any) -> Any:
        squared = knp.sum(x * x)
        positive = squared > 0
        return knp.where(positive, knp.sqrt(knp.where(positive, squared, 1.0)), 0.0)

    assert np.isnan(np.asarray(grad(naive)(np.zeros(3)))).all()
    np.testing.assert_array_equal(np.asarray(grad(safe)(np.zeros(3))), np.zeros(3))
    np.testing.assert_allclose(np.asarray(grad(safe)(np.array([3.0, 4.0]))), [0.6, 0.8])


def test_nan_propagates_only_where_it_flows() -> None:
    """A NaN input makes NaN exactly the derivatives it flows into."""
    g = grad(lambda v: knp.sum(knp.exp(v)))(np.array([np.nan, 0.0]))
    np.testing.assert_array_equal(np.asarray(g), [np.nan, 1.0])


# -- float32 and float64 -------------------------------------------------------------------
UNARY = ["sin", "cos", "tan", "exp", "expm1", "log", "log1p", "sqrt", "tanh", "sinh", "cosh",
         "arcsin", "arctan", "arcsinh", "arctanh", "expit", "erf", "abs", "square",
         "reciprocal", "cbrt", "exp2", "log2", "log10", "sinc", "logsumexp", "mean", "var",
         "std", "prod", "cumprod", "cumsum", "max", "sort"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2",
          "hypot", "logaddexp", "logaddexp2", "fmax", "matmul"]


def _with_second(fn: Callable[[Any, Any], Any], other: np.ndarray) -> Callable[[Any], Any]:
    return lambda v: fn(v, other)


def _float32_cases() -> list[tuple[str, Callable[[Any], Any]]]:
    cases: list[tuple[str, Callable[[Any], Any]]] = [(name, getattr(knp, name)) for name in UNARY]
    for name in BINARY:
        other = np.array([0.7, 0.4, 0.9], np.float32)
        if name == "matmul":
            other = np.ones((3, 3), np.float32)
        cases.append((name, _with_second(getattr(knp, name), other)))
    cases += [
        ("times a Python float", lambda v: v * 2.5),
        ("nn.relu", nn.relu),
        ("nn.softplus", nn.softplus),
        ("where", lambda v: knp.where(v > 0.4, v, 2.0 * v)),
        ("indexing", lambda v: v[::-1][:2]),
        ("einsum", lambda v: knp.einsum("i,i->", v, v)),
    ]
    return cases


@pytest.mark.parametrize("name, f", _float32_cases(), ids=[c[0] for c in _float32_cases()])
def test_float32_stays_float32(name: str, f: Callable[[Any], Any]) -> None:
    """A float32 input gives a float32 output, tangent and gradient (no silent promotion),
    and the float32 derivatives agree with the float64 ones to float32 precision."""
    x32 = np.array([0.3, 0.6, 0.2], np.float32)
    out, tangent = jvp(f, (x32,), (np.ones(3, np.float32),))
    gradient = grad(lambda v: knp.sum(f(v)))(x32)
    assert (out.dtype, tangent.dtype, gradient.dtype) == (np.float32,) * 3, name
    gradient64 = grad(lambda v: knp.sum(f(v)))(x32.astype(np.float64))
    assert gradient64.dtype == np.float64
    np.testing.assert_allclose(np.asarray(gradient), np.asarray(gradient64), rtol=2e-5, atol=1e-6)


def test_numpy_float64_scalar_promotes_but_the_gradient_keeps_the_input_dtype() -> None:
    """NEP 50: a NumPy float64 scalar promotes the value; the gradient is still float32."""
    x32 = np.ones(3, np.float32)
    assert (knp.asarray(x32) * np.float64(2.0)).dtype == np.float64
    assert grad(lambda v: knp.sum(v * np.float64(2.0)))(x32).dtype == np.float32
    assert grad(lambda v: knp.sum(v * 2.0))(x32).dtype == np.float32


def test_float64_is_exact_and_float32_is_close() -> None:
    """float64 derivatives match the exact formula to ~1e-12; float32 to its precision;
    Python floats and lists are float64 inputs."""
    xs = np.linspace(-2.0, 2.0, 7)
    exact = np.cos(xs) * np.exp(np.sin(xs))
    g64 = grad(lambda v: knp.sum(knp.exp(knp.sin(v))))(xs)
    np.testing.assert_allclose(np.asarray(g64), exact, rtol=1e-13)
    g32 = grad(lambda v: knp.sum(knp.exp(knp.sin(v))))(xs.astype(np.float32))
    np.testing.assert_allclose(np.asarray(g32), exact, rtol=1e-6)
    assert not np.allclose(np.asarray(g32), exact, rtol=1e-10, atol=0)  # really float32
    assert grad(lambda v: v * v)(1.5).dtype == np.float64
    assert grad(lambda v: v[0] * v[1])([1.0, 2.0])[0].dtype == np.float64
    # A Python float input is a float64 array, not a weak scalar (JAX's would be weak).
    v32 = np.ones(3, np.float32)
    out, tangent = jvp(lambda s: v32 * s, (1.0,), (1.0,))
    assert (out.dtype, tangent.dtype) == (np.float64, np.float64)
    out32, _ = jvp(lambda s: v32 * s, (np.float32(1.0),), (np.float32(1.0),))
    assert out32.dtype == np.float32


# -- functions that do not depend on an input ------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_of_an_unused_input_is_zeros_of_its_shape_and_dtype(dtype: type) -> None:
    """grad w.r.t. an argument the output ignores (or reaches only through non-
    differentiable ops) gives zeros with that argument's shape and dtype."""
    y = np.ones((2, 3), dtype)
    cases = [
        lambda x, y: knp.sum(x),
        lambda x, y: 3.0,
        lambda x, y: knp.sum(x) + knp.argmax(y).astype(float),
        lambda x, y: knp.sum(x) * knp.sum(kenaz.stop_gradient(y)),
        lambda x, y: knp.sum(x) * knp.sum(knp.floor(y)),
        lambda x, y: knp.sum(x) + knp.sum((y > 0).astype(float)),
    ]
    for f in cases:
        g = grad(f, argnums=1)(np.ones(4), y)
        assert g.shape == (2, 3) and g.dtype == dtype
        np.testing.assert_array_equal(np.asarray(g), 0.0)


def test_gradient_of_an_unused_pytree_input_is_a_pytree_of_zeros() -> None:
    params = {"a": np.ones(2, np.float32), "b": [np.ones((2, 2)), np.float64(1.0)]}
    g = grad(lambda p, x: knp.sum(x * x), argnums=0)(params, np.ones(3))
    assert g["a"].dtype == np.float32 and g["a"].shape == (2,)
    assert g["b"][0].shape == (2, 2) and g["b"][1].shape == ()
    assert all(not np.asarray(leaf).any() for leaf in kenaz.tree.leaves(g))


def test_constant_outputs_have_zero_tangents_and_jacobians() -> None:
    """jvp, vjp, jacfwd, jacrev, hessian and vmap(grad) of constant functions: zeros of the
    right shapes and dtypes."""
    x32 = np.ones(3, np.float32)
    out, tangent = jvp(lambda x: knp.ones((2, 2)), (x32,), (x32,))
    assert tangent.shape == (2, 2) and tangent.dtype == out.dtype and not tangent.numpy().any()
    (cotangent,) = kenaz.vjp(lambda x: knp.ones(2), x32)[1](np.ones(2))
    assert cotangent.shape == (3,) and cotangent.dtype == np.float32
    assert not cotangent.numpy().any()
    for jacobian in (kenaz.jacfwd, kenaz.jacrev):
        j = jacobian(lambda x: knp.ones(2) * 5.0)(np.ones(3))
        assert j.shape == (2, 3) and not np.asarray(j).any()
    h = kenaz.hessian(lambda x: knp.sum(x) * 2.0)(np.ones(3))
    assert h.shape == (3, 3) and not np.asarray(h).any()
    per_example = kenaz.vmap(grad(lambda x: 1.0))(np.ones((4, 2)))
    assert per_example.shape == (4, 2) and not np.asarray(per_example).any()


def test_integer_inputs_with_allow_int_get_float0() -> None:
    """allow_int=True: an integer argument's gradient is a float0 array (JAX's marker), not
    a zero that looks like an answer."""
    g_x, g_n = grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, np.int32(3))
    assert float(g_x) == 3.0
    assert g_n.dtype == kenaz.float0 and g_n.shape == ()


def test_power_second_derivatives_at_a_zero_exponent() -> None:
    """Regression (found by the second-order property test): the Hessian of x**y at y == 0
    is exact, [[0, 1/x], [1/x, log(x)**2]]; the rule used to substitute x**0 for x**(y-1)
    at every y == 0, which made the mixed derivative 1 instead of 1/x. At x == y == 0 the
    first derivatives stay finite (0) with no warning."""
    h = kenaz.hessian(lambda v: knp.power(v[0], v[1]))(np.array([2.0, 0.0]))
    np.testing.assert_allclose(np.asarray(h), [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], rtol=1e-14)
    with np.errstate(all="raise"):
        g = grad(lambda v: knp.power(v[0], v[1]))(np.array([0.0, 0.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0])


def test_scatter_set_with_duplicate_indices_credits_only_the_update_that_landed() -> None:
    """Regression (fwd and rev disagreed): x.at[[1, 1, 2]].set(v) writes v[1] (the last
    update for position 1) and v[2]; only those get a derivative, in both modes, and a
    scalar set at [1, 1, 2] has derivative 2 (two positions hold it), not 3."""
    index = np.array([1, 1, 2])
    weights = np.arange(5.0)

    def f(v: Any) -> Any:
        return knp.sum(knp.zeros(5).at[index].set(v) * weights)

    v = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(np.asarray(grad(f)(v)), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(kenaz.jacfwd(f)(v)), [0.0, 1.0, 2.0])
    assert derivative(lambda s: knp.sum(knp.zeros(5).at[index].set(s)), 1.0) == (2.0, 2.0)
    batched = kenaz.vmap(grad(f))(np.stack([v, 2 * v]))
    np.testing.assert_array_equal(np.asarray(batched), [[0.0, 1.0, 2.0]] * 2)


@pytest.mark.parametrize(
    "name, convert", [("float", float), ("item", lambda x: x.item())]
)
def test_converting_to_a_python_number_raises(name: str, convert: Callable) -> None:
    """float(x) and x.item() under grad/jvp would be silent constants (issue 22): they
    raise, naming stop_gradient; after stop_gradient the constant is what was asked, so the
    derivative of x * float(stop_gradient(x)) at 3 is 3. int(x) stays allowed (control
    flow). See docs/conventions.md, "Conversions"."""
    from kenaz.errors import TrackedConversionError

    with pytest.raises(TrackedConversionError, match="stop_gradient"):
        derivative(lambda x: x * convert(x), 3.0)
    assert derivative(lambda x: x * convert(kenaz.stop_gradient(x)), 3.0) == (3.0, 3.0), name
    assert derivative(lambda x: x * int(x), 3.0) == (3.0, 3.0)


@pytest.mark.parametrize(
    "name, convert",
    [
        ("numpy", lambda x: x.numpy()),
        ("np.asarray", np.asarray),
        ("np.array of a list", lambda x: np.array([x, x])),
        ("Tensor", kenaz.Tensor),
    ],
)
def test_converting_a_tracked_tensor_to_an_array_raises(name: str, convert: Callable) -> None:
    """A NumPy array of a tracked tensor would be a silent constant: refused, naming the fix."""
    from kenaz.convert import TrackedConversionError

    for transform in (kenaz.grad, lambda f: lambda x: kenaz.jvp(f, (x,), (1.0,))):
        with pytest.raises(TrackedConversionError, match="stop_gradient"):
            transform(lambda x: knp.sum(x * convert(x)))(3.0)
    constant = float(np.sum(np.asarray(convert(kenaz.Tensor(3.0)))))  # outside: passes
    with_stop = kenaz.grad(lambda x: knp.sum(x * convert(kenaz.stop_gradient(x))))(3.0)
    assert float(with_stop) == constant


def test_python_control_flow_and_numpy_functions_are_differentiated() -> None:
    """``if`` on a tensor takes the branch of its value; NumPy ufuncs and functions on
    tensors dispatch to kenaz and are differentiated."""
    f = lambda x: x * x if x > 0 else -x  # noqa: E731
    assert derivative(f, 3.0) == (6.0, 6.0)
    assert derivative(f, -3.0) == (-1.0, -1.0)
    g = lambda x: np.sin(x) * np.sum(x * x)  # noqa: E731
    assert derivative(g, 3.0)[0] == pytest.approx(np.cos(3.0) * 9 + np.sin(3.0) * 6, rel=1e-12)


def test_mixed_dtype_concatenate_keeps_each_derivative_in_its_dtype() -> None:
    """Regression (found by the float32 property test): concatenating a float32 tensor
    with a float64 one gave the float32 input a float64 cotangent, and its tangent the
    input's dtype instead of the output's."""
    x32 = np.arange(2.0, dtype=np.float32)
    for f in (
        lambda x: knp.concatenate([x, knp.ones(3)]),
        lambda x: knp.stack([x, x + np.array(0.5)]),
        lambda x: knp.concatenate([x, knp.ones(1, dtype=np.complex128)]),
    ):
        out, pullback = kenaz.vjp(f, x32)
        (cotangent,) = pullback(np.ones(out.shape, out.dtype))
        _, tangent = jvp(f, (x32,), (np.ones(2, np.float32),))
        assert cotangent.dtype == np.float32 and tangent.dtype == out.dtype != np.float32
