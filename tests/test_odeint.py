"""Issue 14: kenaz.scipy.integrate.odeint, differentiated by the adjoint method (reverse)
and by forward sensitivities (jvp), against finite differences and each other."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.integrate

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, handler, perform_args
from kenaz.scipy.integrate import odeint
from kenaz.testing import check_grads

TIGHT = {"rtol": 1e-10, "atol": 1e-10}
weights = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 1.0]])


def dynamics(y, t, k, c):
    return -k * y + c * knp.sin(t) * y[::-1]


def loss(y0, t, k, c):
    return knp.sum(odeint(dynamics, y0, t, (k, c), **TIGHT) * weights)


y0 = np.array([1.0, 0.5])
times = np.array([0.0, 0.4, 1.1])
k, c = 0.7, np.array([0.3, -0.2])


def test_values_are_scipys():
    ours = odeint(dynamics, y0, times, (k, c)).numpy()
    theirs = scipy.integrate.odeint(lambda y, s: -k * y + c * np.sin(s) * y[::-1], y0, times)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    tfirst = odeint(lambda s, y, k, c: dynamics(y, s, k, c), y0, times, (k, c), tfirst=True)
    np.testing.assert_allclose(tfirst.numpy(), ours)


def test_reverse_forward_and_finite_differences_agree_in_every_argument():
    check_grads(loss, (y0, times, k, c), order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    by_grad = kenaz.grad(loss, argnums=(0, 1, 2, 3))(y0, times, k, c)
    direction = (np.array([0.3, -1.0]), np.array([0.1, 0.2, -0.3]), 0.7, np.array([1.0, 0.4]))
    _, by_jvp = kenaz.jvp(loss, (y0, times, k, c), direction)
    dot = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(by_grad, direction, strict=True))
    assert float(by_jvp) == pytest.approx(dot, rel=1e-6)


class CountOps(Handler):
    def __init__(self):
        self.count = 0

    def handle(self, op, args, params):
        self.count += 1
        return perform_args(op, args, params)


@pytest.mark.parametrize("horizon", [1.0, 40.0])
def test_the_tape_does_not_grow_with_the_solver_steps(horizon):
    """Adjoint method: grad records one op for the whole solve, whatever the steps taken
    (the long horizon takes hundreds of solver steps)."""
    counter = CountOps()
    t = np.linspace(0.0, horizon, 3)
    with handler(counter):
        kenaz.grad(lambda k: knp.sum(odeint(dynamics, y0, t, (k, c))))(0.1)
    assert counter.count < 20


def test_vmap_matches_a_loop():
    ks = np.array([0.3, 0.7, 1.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # odeint has a batching rule: no per-example fallback
        batched = kenaz.vmap(lambda k: loss(y0, times, k, c))(ks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the adjoint solve runs once per example (no rule)
        grads = kenaz.vmap(kenaz.grad(lambda k: loss(y0, times, k, c)))(ks)
    for i, value in enumerate(ks):
        assert float(batched[i]) == pytest.approx(float(loss(y0, times, value, c)))
        assert float(grads[i]) == pytest.approx(
            float(kenaz.grad(lambda k: loss(y0, times, k, c))(value))
        )


def test_vmap_over_the_initial_state_and_the_times():
    y0s = np.stack([y0, 2 * y0, -y0])
    batched = kenaz.vmap(lambda y: odeint(dynamics, y, times, (k, c)))(y0s)
    for i in range(3):
        np.testing.assert_allclose(
            batched[i].numpy(), odeint(dynamics, y0s[i], times, (k, c)).numpy(), rtol=1e-6
        )
    grids = np.stack([times, 1.5 * times])
    per_grid = kenaz.vmap(lambda s: odeint(dynamics, y0, s, (k, c)))(grids)
    for i in range(2):
        np.testing.assert_allclose(
            per_grid[i].numpy(), odeint(dynamics, y0, grids[i], (k, c)).numpy(), rtol=1e-9
        )


def test_a_closure_over_a_differentiated_tensor_is_refused():
    def f(k):
        return knp.sum(odeint(lambda y, t: -k * y, y0, times))

    with pytest.raises(ValueError, match="args"):
        kenaz.grad(f)(0.5)


def test_second_order_is_refused_not_wrong():
    with pytest.raises(NotImplementedError, match="odeint"):
        kenaz.grad(kenaz.grad(lambda k: loss(y0, times, k, c)))(0.5)
