"""Calls with rules of their own (custom_vjp, checkpoint, fixed_point, an inner jit) in jit.

Each trace makes its calls' infos (and, inside the function, the custom functions)
anew: the purity check compares them part by part, so such a function compiles. And a
finished trace leaves nothing of itself behind: no tracer holds its handler alive.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.compiler.program import TracingHandler


@pytest.fixture
def traces(monkeypatch):
    """Weak references to every tracing handler made while the test runs."""
    made: list[weakref.ref] = []
    init = TracingHandler.__init__

    def noting(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(TracingHandler, "__init__", noting)
    return made


def _alive(made):
    gc.collect()
    return [ref() for ref in made if ref() is not None]


W = knp.array([0.5, -0.25])


_sin_w = kenaz.custom_vjp(lambda x: knp.sin(x) * W)
_sin_w.defvjp(lambda x: (knp.sin(x) * W, x), lambda x, g: (g * knp.cos(x) * W,))
_checkpointed = kenaz.checkpoint(lambda x: knp.sin(x) * W)
_inner = kenaz.jit(lambda x: knp.sin(x) * W)

CONTAINERS = {
    "custom_vjp": _sin_w,
    "checkpoint": _checkpointed,
    "fixed_point": lambda x: kenaz.fixed_point(lambda a, z: 0.5 * knp.sin(z) + 0.1 * a, x, x),
    "inner jit": _inner,
}


def _sum_of(container):
    return lambda x: knp.sum(container(x))


@pytest.mark.parametrize("name", list(CONTAINERS))
def test_a_compiled_program_keeps_no_trace_alive(traces, name):
    """While a jitted function lives (its programs cached), the traces that made them are
    gone: a call's rules, info and ops keep no tracer of a finished trace."""
    f = kenaz.jit(_sum_of(CONTAINERS[name]))
    g = kenaz.jit(kenaz.grad(_sum_of(CONTAINERS[name])))
    x = knp.array([0.3, 0.7])
    for _ in range(3):  # trace, purity check, compiled run
        f(x)
        g(x)
        kenaz.grad(f)(x)  # the call op, its vjp program traced
    assert traces, "nothing was traced"
    assert _alive(traces) == []


def test_a_call_made_while_tracing_is_not_kept_by_a_cache(traces):
    """A call op made inside a traced function (fixed_point's, per call) whose function
    closes over a tracer is the program's to keep, and goes with it: no module-level cache
    (the abstract rules' memo of ops) keeps it, and so the trace, alive."""

    def loss(k):
        step = lambda a, z: 0.5 * knp.sin(z) + 0.1 * a * k  # closes over the traced k
        return knp.sum(kenaz.fixed_point(step, k, knp.zeros_like(k)))

    jitted = kenaz.jit(kenaz.grad(loss))
    results = [jitted(knp.array([0.3, 0.7])) for _ in range(3)]
    assert traces
    del jitted, results
    assert _alive(traces) == []


def _made_inside(x):
    """A custom_vjp and a checkpoint made anew at each call (and trace)."""
    scale = kenaz.custom_vjp(lambda x: x * 2.0)
    scale.defvjp(lambda x: (x * 2.0, None), lambda _, g: (g * 3.0,))  # not the true 2
    return kenaz.checkpoint(lambda x: knp.sin(scale(x)))(x)


@pytest.mark.parametrize("name", [*CONTAINERS, "made inside"])
def test_calls_pass_the_purity_check_and_run_compiled(name):
    """A call's info is new at each trace (a function made inside even more): the second
    trace compares equal part by part, and the third call runs the compiled program."""
    container = _made_inside if name == "made inside" else CONTAINERS[name]
    f = kenaz.jit(_sum_of(container))
    g = kenaz.jit(kenaz.grad(_sum_of(container)))
    x = knp.array([0.3, 0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an impure verdict warns
        values = [(f(x), g(x)) for _ in range(3)]
    assert f.impure is None and g.impure is None
    assert f.cache_info().checks == 1 and g.cache_info().traces == 1
    expected = (_sum_of(container)(x), kenaz.grad(_sum_of(container))(x))
    for value, gradient in values:
        np.testing.assert_allclose(value.numpy(), expected[0].numpy(), rtol=1e-12)
        np.testing.assert_allclose(gradient.numpy(), expected[1].numpy(), rtol=1e-12)


def test_a_rule_closing_over_a_changed_value_is_impure():
    """Only a rule reads the value (the forward program is the same at each trace): its
    closure differs, so the function is impure and runs eagerly, never with a stale rule."""
    factors = iter([3.0, 5.0, 7.0, 9.0])

    def loss(x):
        factor = next(factors)  # a Python side effect: a new value at each trace
        scale = kenaz.custom_vjp(lambda x: x * 2.0)
        scale.defvjp(lambda x: (x * 2.0, None), lambda _, g: (g * factor,))
        return knp.sum(scale(x))

    f = kenaz.jit(loss)
    x = knp.array([0.3, 0.7])
    f(x)
    with pytest.warns(RuntimeWarning, match="not pure"):
        f(x)
    np.testing.assert_allclose(kenaz.grad(f)(x).numpy(), [7.0, 7.0])  # eagerly: this call's
