"""kenaz.scipy.integrate quadrature: quad differentiable in its limits and the integrand's
parameters (to second order, against finite differences); trapezoid, simpson and
cumulative_trapezoid with SciPy's values and finite-difference derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate

import kenaz
import kenaz.numpy as knp
from kenaz.scipy.integrate import cumulative_trapezoid, quad, simpson, trapezoid
from kenaz.testing import check_grads


def damped(x, k, c):
    return knp.exp(-k * x) * knp.sin(c * x)


def test_quad_value_is_scipys_and_derivatives_reach_second_order():
    value, error = quad(damped, 0.0, 2.0, args=(0.7, 1.3))
    expected, expected_error = scipy.integrate.quad(
        lambda x: np.exp(-0.7 * x) * np.sin(1.3 * x), 0.0, 2.0
    )
    assert float(value) == pytest.approx(expected, rel=1e-12)
    assert error == pytest.approx(expected_error)

    def integral(a, b, k, c):
        return quad(damped, a, b, args=(k, c))[0]

    check_grads(integral, (0.1, 2.0, 0.7, 1.3), order=2, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


def test_quad_infinite_limit_closed_over_parameter_and_vmap():
    def gaussian(k):
        return quad(lambda x: knp.exp(-k * x * x), 0.0, np.inf)[0]

    assert float(kenaz.grad(gaussian)(0.7)) == pytest.approx(-np.sqrt(np.pi) / 4 * 0.7**-1.5)
    ks = np.array([0.5, 0.7])
    batched = kenaz.vmap(lambda k: quad(damped, 0.0, 2.0, args=(k, 1.3))[0])(ks)
    for i, k in enumerate(ks):
        assert float(batched[i]) == pytest.approx(float(quad(damped, 0.0, 2.0, args=(k, 1.3))[0]))


@pytest.mark.parametrize("samples", [2, 5, 6])
def test_sampled_rules_are_scipys_and_differentiable(samples):
    rng = np.random.default_rng(samples)
    y = rng.standard_normal((3, samples))
    x = np.sort(rng.uniform(size=samples))
    pairs = [
        (simpson(y, x=x), scipy.integrate.simpson(y, x=x)),
        (simpson(y.T, dx=0.3, axis=0), scipy.integrate.simpson(y.T, dx=0.3, axis=0)),
        (trapezoid(y, x=x), scipy.integrate.trapezoid(y, x=x)),
        (
            cumulative_trapezoid(y, x=x, initial=0),
            scipy.integrate.cumulative_trapezoid(y, x=x, initial=0),
        ),
        (
            cumulative_trapezoid(y.T, dx=0.2, axis=0),
            scipy.integrate.cumulative_trapezoid(y.T, dx=0.2, axis=0),
        ),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, atol=1e-14)
    for rule in (simpson, trapezoid, cumulative_trapezoid):
        check_grads(lambda y, x, rule=rule: rule(y, x=x), (y, x), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    ("weight", "wvar", "b"),
    [("cos", 2.0, 2.0), ("sin", 3.0, np.inf), ("alg", (0.5, -0.5), 2.0), ("cauchy", 1.2, 2.0)],
)
def test_quad_weights_are_scipys_and_differentiable(weight, wvar, b):
    def weighted(k, upper=b):
        return quad(lambda x, k: knp.exp(-k * x), 0.1, upper, args=(k,), weight=weight,
                    wvar=wvar)[0]  # fmt: skip

    expected = scipy.integrate.quad(lambda x: np.exp(-0.7 * x), 0.1, b, weight=weight, wvar=wvar)
    assert float(weighted(0.7)) == pytest.approx(expected[0], rel=1e-10)
    by_differences = (float(weighted(0.7 + 1e-6)) - float(weighted(0.7 - 1e-6))) / 2e-6
    assert float(kenaz.grad(weighted)(0.7)) == pytest.approx(by_differences, rel=1e-6)
    if weight in ("cos", "cauchy"):  # the upper limit too: f(b) w(b)
        by_limit = kenaz.grad(lambda upper: weighted(0.7, upper))(b)
        w = np.cos(wvar * b) if weight == "cos" else 1 / (b - wvar)
        assert float(by_limit) == pytest.approx(np.exp(-0.7 * b) * w, rel=1e-10)


def test_jit_compiles_quad_and_its_error_estimate_is_never_the_traces():
    from kenaz.errors import ConcretizationError

    def area(k):
        return quad(lambda x: knp.exp(-k * x) * knp.sin(1.3 * x), 0.0, 2.0)

    jitted = kenaz.jit(lambda k: area(k)[0])
    for k in map(knp.asarray, (0.5, 0.7, 3.0)):  # (a tensor, as grad passes: one signature)
        assert float(jitted(k)) == pytest.approx(float(area(k)[0]), rel=1e-12)
        expected = float(kenaz.grad(lambda k: area(k)[0])(k))
        assert float(kenaz.grad(jitted)(k)) == pytest.approx(expected, rel=1e-9)
    assert jitted.impure is None and jitted.cache_info().traces == 1

    error = kenaz.jit(area)(0.5)[1]
    with pytest.raises(ConcretizationError, match="abserr is not available under jit"):
        float(error)
    with pytest.raises(ConcretizationError, match="full_output"):
        kenaz.jit(lambda k: quad(lambda x: k * x, 0.0, 1.0, full_output=1)[0])(0.5)
