"""no_grad: scoped per transformation level, not a global flag."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import grad, jvp, no_grad, vmap
from kenaz.effects import current_handlers


def test_results_are_constants_for_outer_grad_and_jvp():
    def f(x):
        with no_grad():
            c = x * x
        return c * x

    assert float(grad(f)(3.0)) == 9.0
    assert float(jvp(f, (3.0,), (1.0,))[1]) == 9.0
    assert float(f(3.0)) == 27.0


def test_transformations_started_inside_work():
    def f(x):
        with no_grad():
            slope = grad(lambda y: y**3)(x)
            curvature = grad(grad(lambda y: y**3))(x)
            tangent = jvp(lambda y: knp.sin(y), (x,), (1.0,))[1]
        return slope * x + curvature + tangent

    x = 2.0
    assert float(grad(f)(x)) == pytest.approx(12.0)


def test_per_level_inside_nested_grads():
    # Entered inside the inner grad: both running levels see a constant...
    def inner(x, y):
        with no_grad():
            c = x * y
        return c * y

    g = grad(lambda x: grad(lambda y: inner(x, y))(2.0))(3.0)
    assert float(g) == 0.0  # d/dx of (c) with c constant for both levels

    # ... while a level started inside is unaffected.
    def inner_started_inside(x, y):
        with no_grad():
            c = grad(lambda y: x * y * y)(y)  # 2xy, computed by a grad inside the block
        return c * y

    g = grad(lambda x: grad(lambda y: inner_started_inside(x, y))(2.0))(3.0)
    assert float(g) == 0.0
    assert float(grad(lambda y: inner_started_inside(3.0, y))(2.0)) == 12.0


def test_outer_vmap_still_batches():
    xs = knp.array([1.0, 2.0, 3.0])

    def f(x):
        with no_grad():
            c = x * 2
        return c * x

    np.testing.assert_allclose(vmap(f)(xs).numpy(), 2 * xs.numpy() ** 2)
    np.testing.assert_allclose(vmap(grad(f))(xs).numpy(), 2 * xs.numpy())
    np.testing.assert_allclose(grad(lambda xs: knp.sum(vmap(f)(xs)))(xs).numpy(), 2 * xs.numpy())


def test_decorator_and_gradients_of_parameters():
    @no_grad()
    def target(w, x):
        return knp.tanh(x @ w)

    w = knp.array([[0.5, -0.2], [0.1, 0.3]])
    x = knp.array([[1.0, 2.0]])
    loss = lambda w: knp.sum((x @ w - target(w, x)) ** 2)
    expected = grad(lambda w: knp.sum((x @ w - kenaz.stop_gradient(knp.tanh(x @ w))) ** 2))(w)
    np.testing.assert_allclose(grad(loss)(w).numpy(), expected.numpy())


def test_no_handler_outside_means_no_cost_and_stack_restored():
    with no_grad():
        assert current_handlers() == ()
    ctx = no_grad()
    with pytest.raises(RuntimeError):
        grad(lambda x: _raise_inside(ctx, x))(1.0)
    assert current_handlers() == ()


def _raise_inside(ctx, x):
    with ctx:
        raise RuntimeError("boom")


def test_custom_functions_inside_no_grad():
    def f(x):
        with no_grad():
            c = kenaz.checkpoint(knp.sin)(x)
        return c * x

    assert float(grad(f)(0.5)) == pytest.approx(np.sin(0.5))
