"""kenaz.scipy.integrate.odeint: SciPy's interface and values; derivatives by the adjoint method
(reverse), forward sensitivities (jvp), to second order, batched under vmap, against finite
differences; the right-hand side traced once per solve; tensors it reads found by running it."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import scipy.integrate

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, handler, perform_args
from kenaz.scipy.integrate import _solve, odeint
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


def central_difference(f, x, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[i] = eps
        out[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return out


# -- SciPy's interface -----------------------------------------------------------------------
def test_values_are_scipys():
    ours = odeint(dynamics, y0, times, (k, c)).numpy()
    theirs = scipy.integrate.odeint(lambda y, s: -k * y + c * np.sin(s) * y[::-1], y0, times)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    tfirst = odeint(lambda s, y, k, c: dynamics(y, s, k, c), y0, times, (k, c), tfirst=True)
    np.testing.assert_allclose(tfirst.numpy(), ours)


def test_scalar_state_full_output_and_options_are_scipys():
    ours, info = odeint(lambda y, t: -y, 2.0, times, full_output=True, hmax=0.1, mxstep=500)
    theirs, their_info = scipy.integrate.odeint(
        lambda y, t: -y, 2.0, times, full_output=True, hmax=0.1, mxstep=500
    )
    assert ours.shape == theirs.shape == (3, 1)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-7)
    assert info["message"] == their_info["message"]
    np.testing.assert_array_equal(info["nfe"], their_info["nfe"])
    # A list of scalars as dy/dt, a bare extra argument and a Jacobian, as SciPy takes them.
    rhs = lambda y, t, a: [-a * y[0], a * y[0] - y[1]]  # noqa: E731
    jac = lambda y, t, a: np.array([[-a, 0.0], [a, -1.0]])  # noqa: E731
    ours = odeint(rhs, y0, times, args=(0.5,), Dfun=jac)
    theirs = scipy.integrate.odeint(lambda y, t, a: np.array(rhs(y, t, a)), y0, times, (0.5,), jac)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)


@pytest.mark.parametrize("method", ["adjoint", "sensitivities"])
def test_args_is_any_pytree_handed_over_unchanged(method, monkeypatch):
    """A neural-network right-hand side with its layers as a list of (W, b) pairs in args;
    grad over the pairs matches finite differences, by the adjoint (a larger network's
    method) and by one forward-sensitivity solve (this small one's)."""
    monkeypatch.setattr(_solve, "REVERSE", method)
    rng = np.random.default_rng(0)
    layers = [
        (0.5 * rng.standard_normal((4, 2)), 0.1 * rng.standard_normal(4)),
        (0.5 * rng.standard_normal((2, 4)), 0.1 * rng.standard_normal(2)),
    ]

    def network(y, t, params, config):
        assert config == {"activation": "tanh"}  # handed over unchanged
        (w1, b1), (w2, b2) = params
        return w2 @ knp.tanh(w1 @ y + b1) + b2

    def final(params):
        ys = odeint(network, y0, times, (params, {"activation": "tanh"}), **TIGHT)
        return knp.sum(ys[-1] ** 2)

    grads = kenaz.grad(final)(layers)
    assert isinstance(grads, list) and isinstance(grads[0], tuple)
    for layer in range(2):
        for part in range(2):

            def moved(x, layer=layer, part=part):
                changed = [list(pair) for pair in layers]
                changed[layer][part] = x
                return final([tuple(pair) for pair in changed])

            expected = central_difference(moved, layers[layer][part])
            np.testing.assert_allclose(grads[layer][part].numpy(), expected, rtol=1e-5, atol=1e-8)


# -- derivatives -----------------------------------------------------------------------------
def test_reverse_forward_and_finite_differences_agree_in_every_argument():
    check_grads(loss, (y0, times, k, c), order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)
    by_grad = kenaz.grad(loss, argnums=(0, 1, 2, 3))(y0, times, k, c)
    direction = (np.array([0.3, -1.0]), np.array([0.1, 0.2, -0.3]), 0.7, np.array([1.0, 0.4]))
    _, by_jvp = kenaz.jvp(loss, (y0, times, k, c), direction)
    dot = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(by_grad, direction, strict=True))
    assert float(by_jvp) == pytest.approx(dot, rel=1e-6)


def test_hessian_of_a_one_parameter_solve():
    def final(rate):
        return odeint(dynamics, y0, times, (rate, c), **TIGHT)[-1, 0]

    hessian = float(kenaz.hessian(final)(0.7))
    by_differences = central_difference(lambda x: kenaz.grad(final)(float(x)), 0.7, eps=1e-4)
    assert hessian == pytest.approx(float(by_differences), rel=1e-5)
    check_grads(final, (0.7,), order=2, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


def test_vmap_of_grad_over_16_initial_states_has_no_loop():
    starts = np.random.default_rng(1).standard_normal((16, 2))
    per_state = kenaz.grad(lambda y: loss(y, times, k, c))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a per-example fallback would warn
        batched = kenaz.vmap(per_state)(starts)
        jacobian = kenaz.jacfwd(lambda rate: odeint(dynamics, y0, times, (rate, c), **TIGHT))(k)
    for i in (0, 7, 15):
        np.testing.assert_allclose(batched[i].numpy(), per_state(starts[i]).numpy(), rtol=1e-6)
    expected = central_difference(lambda x: odeint(dynamics, y0, times, (x, c), **TIGHT)[2, 1], k)
    assert float(jacobian[2, 1]) == pytest.approx(float(expected), rel=1e-5)


def test_vmap_over_the_parameters_and_the_times():
    ks = np.array([0.3, 0.7, 1.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batched = kenaz.vmap(lambda rate: loss(y0, times, rate, c))(ks)
    for i, value in enumerate(ks):
        assert float(batched[i]) == pytest.approx(float(loss(y0, times, value, c)), rel=1e-7)
    grids = np.stack([times, 1.5 * times])
    per_grid = kenaz.vmap(lambda s: odeint(dynamics, y0, s, (k, c)))(grids)
    for i in range(2):
        np.testing.assert_allclose(
            per_grid[i].numpy(), odeint(dynamics, y0, grids[i], (k, c)).numpy(), rtol=1e-9
        )


class CountOps(Handler):
    def __init__(self):
        self.count = 0

    def handle(self, op, args, params):
        self.count += 1
        return perform_args(op, args, params)


def test_the_tape_does_not_grow_with_the_solver_steps():
    """Reverse mode (here by forward sensitivities) performs the same ops for a short and a
    long horizon (the long one takes hundreds of solver steps); the right-hand side runs
    compiled, once traced."""
    counts = []
    for horizon in (1.0, 40.0):
        counter = CountOps()
        t = np.linspace(0.0, horizon, 3)
        with handler(counter):
            kenaz.grad(lambda rate, t=t: knp.sum(odeint(dynamics, y0, t, (rate, c))))(0.1)
        counts.append(counter.count)
    assert counts[0] == counts[1] < 200


def test_func_is_traced_once_per_solve():
    calls = []

    def counted(y, t, rate):
        calls.append(t)
        return -rate * y

    odeint(counted, y0, np.linspace(0.0, 5.0, 11), (0.5,))
    assert len(calls) == 1  # traced once, then compiled code takes every step
    kenaz.grad(lambda rate: knp.sum(odeint(counted, y0, times, (rate,))))(0.5)
    assert len(calls) == 2  # the adjoint's right-hand side derives from that trace


# -- tensors the right-hand side reads (closure conversion by running it) -----------------------
class Decay:
    def __init__(self, rate):
        self.rate = rate

    def rhs(self, y, t):
        return -self.rate * y + t


def _by_default(rate):
    def rhs(y, t, rate=rate):
        return -rate * y + t

    return rhs


def _nested(rate):
    scale = rate * 1.0

    def middle():
        def inner():
            return lambda y, t: -scale * y + t

        return inner()

    return middle()


ZOO = {
    "bound method": lambda rate: Decay(rate).rhs,
    "partial": lambda rate: functools.partial(lambda y, t, r: -r * y + t, r=rate),
    "default argument": _by_default,
    "closure three deep": _nested,
}


@pytest.mark.parametrize("name", [*ZOO, "tfirst"])
def test_tensors_func_reads_are_differentiated(name):
    grid = np.array([0.0, 1.0, 2.0])

    def at_two(rate):
        if name == "tfirst":
            return odeint(lambda s, y: -rate * y + s, y0, grid, tfirst=True, **TIGHT)[2, 0]
        return odeint(ZOO[name](rate), y0, grid, **TIGHT)[2, 0]

    expected = central_difference(at_two, 0.8)
    assert float(kenaz.grad(at_two)(0.8)) == pytest.approx(float(expected), rel=1e-6)
    _, tangent = kenaz.jvp(at_two, (0.8,), (1.0,))
    assert float(tangent) == pytest.approx(float(expected), rel=1e-6)


def test_a_func_that_reads_a_value_runs_eagerly_and_closures_are_refused_there():
    def switching(y, t, rate):
        return -rate * y if float(t) < 0.5 else -2 * rate * y

    ours = odeint(switching, y0, times, (0.7,), **TIGHT)
    theirs = scipy.integrate.odeint(
        lambda y, t: -0.7 * y if t < 0.5 else -1.4 * y, y0, times, rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-7)
    grad = kenaz.grad(lambda rate: odeint(switching, y0, times, (rate,), **TIGHT)[-1, 0])(0.7)
    expected = central_difference(
        lambda rate: odeint(switching, y0, times, (float(rate),), **TIGHT)[-1, 0], 0.7
    )
    assert float(grad) == pytest.approx(float(expected), rel=1e-4)

    def closed(rate):
        return odeint(lambda y, t: -rate * y if float(t) < 0.5 else -y, y0, times)[-1, 0]

    with pytest.raises(ValueError, match="args"):
        kenaz.grad(closed)(0.5)


@pytest.mark.parametrize("method", ["adjoint", "sensitivities"])
def test_the_adjoint_of_a_stiff_system_is_stable(method, monkeypatch):
    """Robertson's kinetics: integrating y backwards with the adjoint diverges (its fast mode
    grows backwards); the adjoint takes y from a dense forward solve instead, and agrees with
    the forward sensitivities. So does reverse mode by one forward-sensitivity solve, which
    a system this small takes unless told otherwise."""
    monkeypatch.setattr(_solve, "REVERSE", method)

    def robertson(y, t, k1, k2, k3):
        fast = k2 * y[1] * y[2]
        return knp.stack([-k1 * y[0] + fast, k1 * y[0] - fast - k3 * y[1] ** 2, k3 * y[1] ** 2])

    grid = np.array([0.0, 0.1, 1.0])
    rates = (0.04, 1.0e4, 3.0e7)

    def loss(k1, k2, k3):
        ys = odeint(robertson, np.array([1.0, 0.0, 0.0]), grid, (k1, k2, k3), rtol=1e-8, atol=1e-12)
        return knp.sum(ys[:, 0]) + 1e4 * knp.sum(ys[:, 1])

    by_adjoint = kenaz.grad(loss, argnums=(0, 1, 2))(*rates)
    for i, direction in enumerate(np.eye(3)):
        _, by_sensitivity = kenaz.jvp(loss, rates, tuple(direction))
        assert float(by_adjoint[i]) == pytest.approx(float(by_sensitivity), rel=1e-4)


@pytest.mark.parametrize("method", ["adjoint", "sensitivities"])
def test_second_order_on_a_stiff_system_is_exact(method, monkeypatch):
    """A mode decaying at rate k = 1000: integrating y backwards would make it grow as
    exp(1000 t). Second derivatives come from the sensitivities' solves instead (forward in
    time), both forward over reverse and reverse over reverse, whichever method took the
    first: the closed form's."""
    monkeypatch.setattr(_solve, "REVERSE", method)

    def stiff(y, t, rate):
        return knp.stack([-rate * y[0] + y[1], -0.5 * y[1] + 0.0 * y[0]])

    grid = np.array([0.0, 0.5, 2.0])

    def total(rate):
        ys = odeint(stiff, np.array([1.0, 1.0]), grid, (rate,), rtol=1e-10, atol=1e-12)
        return knp.sum(ys[:, 0])

    rate = 1000.0
    # y0(t) = exp(-t/2) / (k - 1/2) + (1 - 1 / (k - 1/2)) exp(-k t); exp(-500) is nothing.
    exact = 2 * (np.exp(-0.25) + np.exp(-1.0)) / (rate - 0.5) ** 3
    assert float(kenaz.hessian(total)(rate)) == pytest.approx(exact, rel=1e-5)
    assert float(kenaz.grad(kenaz.grad(total))(rate)) == pytest.approx(exact, rel=1e-5)


def test_a_changed_closed_over_value_is_not_replayed():
    """Compiled right-hand sides (and their adjoints) are shared between solves only when
    the traced programs agree, constants included: a new value read by func is used."""
    scale = [0.5]

    def rhs(y, t, rate):
        return -rate * scale[0] * y

    def final(rate):
        return odeint(rhs, y0, times, (rate,), **TIGHT)[-1, 0]

    for value in (0.5, 1.5):
        scale[0] = value
        assert float(final(1.0)) == pytest.approx(np.exp(-value * 1.1), rel=1e-8)
        expected = -value * 1.1 * np.exp(-value * 1.1)
        assert float(kenaz.grad(final)(1.0)) == pytest.approx(expected, rel=1e-6)


def _not_pure_warnings(record):
    return [w for w in record if "not pure" in str(w.message)]


def test_jit_of_a_function_that_solves_compiles_and_agrees_with_eager():
    """Each trace makes a new system (func closes over a traced tensor, and over an array
    too large to key by value, made anew); the purity check finds them equal: traced once,
    checked once, never run eagerly, and every new input solved anew."""

    def at_end(rate, start):
        ramp = np.linspace(0.5, 1.5, 100)  # made at each trace: compared by value

        def rhs(y, t):
            return knp.sum(y[:, None] * ramp, axis=1) * (-rate / 100)

        return knp.sum(odeint(rhs, start, times, **TIGHT)[-1] * knp.array([1.0, -2.0]))

    jitted = kenaz.jit(at_end)
    start = y0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for rate in (0.5, 0.7, 3.0, 0.5):
            assert float(jitted(rate, start)) == pytest.approx(
                float(at_end(rate, start)), rel=1e-12
            )
    assert not _not_pure_warnings(record) and jitted.impure is None
    assert jitted.cache_info() == (1, 3, 1, 1)  # traces, hits, size, checks

    slope = kenaz.jit(kenaz.grad(at_end))
    for rate in (0.5, 0.9, 2.0):
        expected = float(kenaz.grad(at_end)(rate, start))
        assert float(slope(rate, start)) == pytest.approx(expected, rel=1e-9)
        assert float(kenaz.grad(jitted)(rate, start)) == pytest.approx(expected, rel=1e-9)
    assert slope.impure is None and slope.cache_info().traces == 1


def test_a_changed_solver_option_is_not_replayed_under_jit():
    options = {"rtol": 1e-10}

    def at_end(rate):
        return odeint(lambda y, t: -rate * y, y0, times, **options)[-1, 0]

    jitted = kenaz.jit(at_end)
    jitted(0.5)
    options["rtol"] = 1e-3  # the second trace's system solves otherwise: not the same
    with pytest.warns(RuntimeWarning, match="not pure"):
        assert float(jitted(0.5)) == float(at_end(0.5))
    assert jitted.impure is not None


def test_full_output_under_jit_is_refused_never_stale():
    from kenaz.errors import ConcretizationError

    def with_info(rate):
        solved, info = odeint(lambda y, t: -rate * y, y0, times, full_output=True)
        return solved[-1, 0], info["nfe"]

    with pytest.raises(ConcretizationError, match="full_output.*not available under jit"):
        kenaz.jit(with_info)(0.5)
    assert with_info(0.5)[1][-1] != with_info(9.0)[1][-1]  # what jit would have frozen


def test_jit_of_a_solve_whose_func_runs_eagerly_compiles_and_reads_its_state_then():
    switch = [0.5]

    def rhs(y, t, rate):  # `float(t)`: cannot be traced, so it runs eagerly at each step
        return -rate * y if float(t) < switch[0] else -2.0 * rate * y

    def at_end(rate):
        return odeint(rhs, y0, times, (rate,), **TIGHT)[-1, 0]

    jitted = kenaz.jit(at_end)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for rate, when in ((0.5, 0.5), (0.7, 0.5), (0.7, 0.2)):
            switch[0] = when
            assert float(jitted(rate)) == float(at_end(rate))
    assert not _not_pure_warnings(record) and jitted.impure is None
    assert jitted.cache_info().traces == 1
