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


# -- events ----------------------------------------------------------------------------------
GRAVITY = 9.81


def falling(t, y, level):
    return knp.stack([y[1], -GRAVITY + 0.0 * y[0]])


def test_events_are_scipys_and_a_terminal_one_ends_the_solve():
    def ground(t, y, level):
        return y[0] - level

    def halfway(t, y, level):
        return y[0] - 5.0

    ground.terminal, ground.direction = True, -1
    ours = solve_ivp(falling, (0.0, 10.0), [10.0, 2.0], events=[ground, halfway], args=(0.0,),
                     t_eval=np.linspace(0.0, 10.0, 11), rtol=1e-10, atol=1e-10)  # fmt: skip
    theirs = scipy.integrate.solve_ivp(
        lambda t, y, level: np.array([y[1], -GRAVITY]), (0.0, 10.0), [10.0, 2.0],
        events=[ground, halfway], args=(0.0,), t_eval=np.linspace(0.0, 10.0, 11),
        rtol=1e-10, atol=1e-10,
    )  # fmt: skip
    assert ours.status == theirs.status == 1
    np.testing.assert_allclose(ours.t.numpy(), theirs.t)
    for mine, scipys in zip(ours.t_events, theirs.t_events, strict=True):
        np.testing.assert_allclose(mine.numpy(), scipys, rtol=1e-9)
    for mine, scipys in zip(ours.y_events, theirs.y_events, strict=True):
        np.testing.assert_allclose(mine.numpy(), scipys, rtol=1e-7, atol=1e-9)


def test_event_times_and_the_state_there_are_differentiable():
    """Landing time of a thrown ball: t* = (v0 + sqrt(v0^2 + 2 g (h0 - level))) / g, in h0,
    v0 and the ground level (an argument of the event function), and its speed there."""

    def ground(t, y, level):
        return y[0] - level

    ground.terminal = True

    def landing(h0, v0, level):
        out = solve_ivp(falling, (0.0, 10.0), knp.stack([h0, v0]), events=ground, args=(level,),
                        rtol=1e-10, atol=1e-10)  # fmt: skip
        return out.t_events[0][0], out.y[1, -1]

    h0, v0, level = 10.0, 2.0, 1.0
    root = np.sqrt(v0**2 + 2 * GRAVITY * (h0 - level))
    when = kenaz.grad(lambda *a: landing(*a)[0], argnums=(0, 1, 2))(h0, v0, level)
    expected = (1 / root, (1 + v0 / root) / GRAVITY, -1 / root)
    np.testing.assert_allclose([float(g) for g in when], expected, rtol=1e-6)
    speed = kenaz.grad(lambda h: landing(h, v0, level)[1])(h0)
    assert float(speed) == pytest.approx(-GRAVITY / root, rel=1e-6)


def test_jit_compiles_a_solve_and_its_counts_are_never_the_traces():
    """Traced once, checked once, every input solved anew; the solver's counts, the
    solver's own output times and events depend on the values: unavailable under jit."""
    from kenaz.errors import ConcretizationError

    def at_end(k):
        solved = solve_ivp(lambda t, y: -k * y, (0.0, 1.5), y0, t_eval=t_eval, rtol=1e-8)
        return knp.sum(solved.y[:, -1]), solved

    jitted = kenaz.jit(lambda k: at_end(k)[0])
    for k in map(knp.asarray, (0.5, 0.7, 3.0)):  # (a tensor, as grad passes: one signature)
        assert float(jitted(k)) == pytest.approx(float(at_end(k)[0]), rel=1e-12)
        expected = float(kenaz.grad(lambda k: at_end(k)[0])(k))
        assert float(kenaz.grad(jitted)(k)) == pytest.approx(expected, rel=1e-9)
    assert jitted.impure is None and jitted.cache_info().traces == 1

    counted = kenaz.jit(lambda k: at_end(k)[1].nfev)(0.5)
    with pytest.raises(ConcretizationError, match="result.nfev is not available under jit"):
        int(counted)
    assert "not available under jit" in repr(counted)
    assert at_end(0.5)[1].nfev != at_end(30.0)[1].nfev  # what jit would have frozen
    with pytest.raises(ConcretizationError, match="Pass t_eval"):
        kenaz.jit(lambda k: solve_ivp(lambda t, y: -k * y, (0.0, 1.5), y0).y)(0.5)
    event = lambda t, y, k=None: y[0] - 0.5  # noqa: E731
    with pytest.raises(ConcretizationError, match="events"):
        kenaz.jit(lambda k: solve_ivp(lambda t, y: -k * y, (0.0, 2.0), y0, events=event).y)(0.5)
