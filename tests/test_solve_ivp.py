"""kenaz.scipy.integrate.solve_ivp: SciPy's values for each method, with and without t_eval;
derivatives in y0, t_span, t_eval, args and closed-over tensors (adjoint and sensitivities)
against finite differences; dense output; vmap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.integrate

import kenaz
import kenaz.numpy as knp
from kenaz.scipy.integrate import solve_ivp
from kenaz.testing import check_grads

METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"]
y0 = np.array([1.0, 0.5])
rate, coupling = 0.7, np.array([0.3, -0.2])
t_eval = np.array([0.3, 0.9, 1.5])


def dynamics(t, y, k, c):
    return -k * y + c * knp.sin(t) * y[::-1]


def dynamics_numpy(t, y, k, c):
    return -k * y + c * np.sin(t) * y[::-1]


@pytest.mark.parametrize("method", METHODS)
def test_values_are_scipys(method):
    options = {"method": method, "args": (rate, coupling), "rtol": 1e-8, "atol": 1e-10}
    ours = solve_ivp(dynamics, (0.0, 1.5), y0, t_eval=t_eval, **options)
    theirs = scipy.integrate.solve_ivp(dynamics_numpy, (0.0, 1.5), y0, t_eval=t_eval, **options)
    np.testing.assert_allclose(ours.y.numpy(), theirs.y, rtol=1e-12)
    np.testing.assert_allclose(ours.t.numpy(), theirs.t)
    own_steps = solve_ivp(dynamics, (0.0, 1.5), y0, method=method, args=(rate, coupling))
    their_steps = scipy.integrate.solve_ivp(
        dynamics_numpy, (0.0, 1.5), y0, method=method, args=(rate, coupling)
    )
    np.testing.assert_allclose(own_steps.t.numpy(), their_steps.t)
    np.testing.assert_allclose(own_steps.y.numpy(), their_steps.y, rtol=1e-12)
    assert own_steps.nfev == their_steps.nfev and own_steps.success


@pytest.mark.parametrize("method", ["RK45", "Radau", "LSODA"])
def test_derivatives_in_y0_t_span_t_eval_and_args(method):
    def loss(y0, t0, t_eval, k, c):
        solution = solve_ivp(
            dynamics, (t0, 2.0), y0, method, t_eval, args=(k, c), rtol=1e-10, atol=1e-12
        )
        return knp.sum(solution.y**2)

    if method == "RK45":  # every argument
        arguments = (y0, 0.0, t_eval, rate, coupling)
        check_grads(loss, arguments, order=1, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)
    else:  # SciPy's implicit methods step in Python: a shorter span, y0 and one parameter

        def in_y0_and_rate(y0, k):
            solution = solve_ivp(
                dynamics, (0.0, 0.5), y0, method, [0.2, 0.5], args=(k, coupling), rtol=1e-10
            )
            return knp.sum(solution.y**2)

        check_grads(in_y0_and_rate, (y0, rate), order=1, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


def test_closed_over_parameters_the_final_time_and_dense_output():
    def loss(k, end):
        solution = solve_ivp(
            lambda t, y: -k * y + t, (0.0, end), y0, rtol=1e-10, atol=1e-12, dense_output=True
        )
        return knp.sum(solution.y[:, -1]) + knp.sum(solution.sol(np.array([0.5, 0.2])))

    check_grads(loss, (0.7, 1.2), order=1, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)
    plain = solve_ivp(lambda t, y: -0.7 * y, (0.0, 1.0), y0, dense_output=True)
    np.testing.assert_allclose(plain.sol(0.5).numpy(), np.exp(-0.35) * y0, rtol=1e-4)
    assert plain.sol(np.array([0.5, 0.2])).shape == (2, 2)


def test_vmap_over_initial_states_is_one_solve():
    starts = np.random.default_rng(0).standard_normal((4, 2))

    def final(y):
        options = {"args": (rate, coupling), "rtol": 1e-10, "atol": 1e-12}
        return solve_ivp(dynamics, (0.0, 1.5), y, t_eval=t_eval, **options).y[:, -1]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batched = kenaz.vmap(final)(starts)
        grads = kenaz.vmap(kenaz.grad(lambda y: knp.sum(final(y))))(starts)
    for i in range(4):
        np.testing.assert_allclose(batched[i].numpy(), final(starts[i]).numpy(), rtol=1e-7)
        expected = kenaz.grad(lambda y: knp.sum(final(y)))(starts[i])
        np.testing.assert_allclose(grads[i].numpy(), expected.numpy(), rtol=1e-6)


def test_events_are_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="events"):
        solve_ivp(lambda t, y: -y, (0.0, 1.0), y0, events=lambda t, y: y[0] - 0.5)
