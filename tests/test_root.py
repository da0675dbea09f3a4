"""custom_root and fixed_point: implicit derivatives to any order, under vmap and jit."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import custom_root, fixed_point, grad, jit, jvp, vmap


def sqrt_by_fixed_point(a):
    return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)


def sqrt_by_newton(a):
    def newton(f, x):
        for _ in range(40):
            x = x - f(x) / (2 * x)
        return x

    return custom_root(lambda x: x * x - a, a, newton, lambda g, y: y / g(knp.ones_like(y)))


@pytest.mark.parametrize("sqrt", [sqrt_by_fixed_point, sqrt_by_newton])
def test_sqrt_and_its_derivatives_to_third_order(sqrt):
    a = 2.0
    assert float(sqrt(a)) == pytest.approx(np.sqrt(a), rel=1e-12)
    assert float(grad(sqrt)(a)) == pytest.approx(0.5 * a**-0.5, rel=1e-10)
    assert float(grad(grad(sqrt))(a)) == pytest.approx(-0.25 * a**-1.5, rel=1e-9)
    assert float(grad(grad(grad(sqrt)))(a)) == pytest.approx(0.375 * a**-2.5, rel=1e-8)
    assert float(jvp(sqrt, (a,), (1.0,))[1]) == pytest.approx(0.5 * a**-0.5, rel=1e-10)
    assert float(jvp(grad(sqrt), (a,), (1.0,))[1]) == pytest.approx(-0.25 * a**-1.5, rel=1e-9)
    assert float(kenaz.linearize(sqrt, a)[1](1.0)) == pytest.approx(0.5 * a**-0.5, rel=1e-10)
    assert float(jit(grad(sqrt))(a)) == pytest.approx(0.5 * a**-0.5, rel=1e-10)


@pytest.mark.parametrize("sqrt", [sqrt_by_fixed_point, sqrt_by_newton])
def test_sqrt_under_vmap(sqrt):
    a = knp.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(vmap(sqrt)(a).numpy(), [1.0, 2.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(vmap(grad(sqrt))(a).numpy(), 0.5 / np.sqrt([1, 4, 9.0]))
    np.testing.assert_allclose(
        vmap(grad(grad(sqrt)))(a).numpy(), -0.25 * np.array([1, 4, 9.0]) ** -1.5, rtol=1e-9
    )
    np.testing.assert_allclose(
        grad(lambda a: knp.sum(vmap(sqrt)(a)))(a).numpy(), 0.5 / np.sqrt([1, 4, 9.0])
    )


def test_the_iterations_are_not_differentiated():
    # The reverse pass records one entry for the solve, whatever the number of iterations.
    from kenaz.reverse import ReverseHandler

    sizes = []
    original = ReverseHandler.__init__

    def spy(self):
        original(self)
        sizes.append(self)

    ReverseHandler.__init__ = spy
    try:
        grad(sqrt_by_fixed_point)(2.0)
    finally:
        ReverseHandler.__init__ = original
    assert len(sizes[0].tape) < 5


# -- the pattern of JAX's custom_vjp documentation: a fixed point whose bwd is a fixed point
@functools.partial(kenaz.custom_vjp, nondiff_argnums=(0,))
def user_fixed_point(f, a, x_guess):
    def step(x):
        return f(a, x)

    x, previous = step(x_guess), x_guess
    while float(knp.abs(x - previous)) > 1e-13:
        x, previous = step(x), x
    return x


def _fwd(f, a, x_init):
    x_star = user_fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def _rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = kenaz.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def _rev(f, residuals, x_star_bar):
    a, x_star = residuals
    _, vjp_a = kenaz.vjp(lambda a: f(a, x_star), a)
    (a_bar,) = vjp_a(
        user_fixed_point(functools.partial(_rev_iter, f), (a, x_star, x_star_bar), x_star_bar)
    )
    return a_bar, knp.zeros_like(x_star)


user_fixed_point.defvjp(_fwd, _rev)


def test_grad_of_grad_of_sqrt_whose_custom_vjp_backward_calls_the_fixed_point():
    def sqrt(a):
        return user_fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    assert float(sqrt(2.0)) == pytest.approx(np.sqrt(2.0), rel=1e-12)
    assert float(grad(sqrt)(2.0)) == pytest.approx(0.5 * 2**-0.5, rel=1e-10)
    assert float(grad(grad(sqrt))(2.0)) == pytest.approx(-0.25 * 2**-1.5, rel=1e-8)


# -- a linear system solved by Jacobi iteration ----------------------------------------------
A = np.array([[4.0, 1.0, 0.5], [1.0, 5.0, 1.0], [0.5, 1.0, 3.0]])
B = np.array([1.0, 2.0, 3.0])


def jacobi_solve(a, b):
    diagonal = knp.diagonal(a)
    rest = a - knp.diag(diagonal)
    return fixed_point(lambda p, x: (p[1] - p[0] @ x) / diagonal, (rest, b), knp.zeros_like(b))


def test_jacobi_solution_and_its_gradients_equal_the_closed_form():
    x = np.linalg.solve(A, B)
    np.testing.assert_allclose(jacobi_solve(knp.array(A), knp.array(B)).numpy(), x, rtol=1e-10)
    loss = lambda a, b: knp.sum(jacobi_solve(a, b) ** 2)  # noqa: E731
    ga, gb = grad(loss, argnums=(0, 1))(knp.array(A), knp.array(B))
    adjoint = np.linalg.solve(A.T, 2 * x)
    np.testing.assert_allclose(gb.numpy(), adjoint, rtol=1e-8)
    np.testing.assert_allclose(ga.numpy(), -np.outer(adjoint, x), rtol=1e-8, atol=1e-12)
    # second order: d/db of the gradient is 2 A^-T A^-1
    hessian = kenaz.jacfwd(grad(loss, argnums=1), argnums=1)(knp.array(A), knp.array(B))
    inverse = np.linalg.inv(A)
    np.testing.assert_allclose(hessian.numpy(), 2 * inverse.T @ inverse, rtol=1e-7)
    # batched right-hand sides
    bs = np.stack([B, 2 * B, -B])
    got = vmap(lambda b: jacobi_solve(knp.array(A), b))(knp.array(bs)).numpy()
    np.testing.assert_allclose(got, np.linalg.solve(A, bs.T).T, rtol=1e-10)
