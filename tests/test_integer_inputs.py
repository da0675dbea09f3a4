"""Integer inputs are never a silent zero (issue 27).

Every transformation that differentiates refuses an integer or boolean input
with grad's message unless ``allow_int=True``; then the input is held constant
and its derivative is a ``kenaz.float0`` array (JAX's marker), which
arithmetic refuses. An integer output has a float0 tangent, and takes only a
float0 cotangent (any one under ``allow_int``).
"""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

N = np.array([1, 2, 3])
X = np.array([0.5, 1.5, 2.5])
REFUSED = r"kenaz\.{}: argument {} has dtype int64, but only float and complex.*allow_int=True"


def log_twice(t):
    return knp.log(t) * 2.0  # the example: vjp used to give Tensor([0, 0, 0])


def scaled(x, n):
    return knp.sum(knp.sin(x) * n)


def float0_like(shape):
    return np.zeros(shape, kenaz.float0)


def assert_float0(value, shape):
    assert isinstance(value, np.ndarray) and value.dtype == kenaz.float0
    assert value.shape == shape
    with pytest.raises(TypeError):  # arithmetic refuses it: no silent zero downstream
        value + 1.0
    with pytest.raises(TypeError):
        kenaz.Tensor(value)


# Each transformation, without allow_int: grad's message, naming it and the argument.
REFUSALS = {
    "grad": lambda: kenaz.grad(scaled, argnums=1)(X, N),
    "value_and_grad": lambda: kenaz.value_and_grad(scaled, argnums=(0, 1))(X, N),
    "vjp": lambda: kenaz.vjp(log_twice, N),
    "jvp": lambda: kenaz.jvp(log_twice, (N,), (np.ones(3),)),
    "linearize": lambda: kenaz.linearize(log_twice, N),
    "jacfwd": lambda: kenaz.jacfwd(log_twice)(N),
    "jacrev": lambda: kenaz.jacrev(log_twice)(N),
    "hessian": lambda: kenaz.hessian(scaled, argnums=1)(X, N),
}
POSITIONS = {"grad": 1, "value_and_grad": 1, "hessian": 1}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_an_integer_input_is_refused_with_grads_message(name):
    named = "grad" if name == "value_and_grad" else name  # value_and_grad is grad's
    with pytest.raises(TypeError, match=REFUSED.format(named, POSITIONS.get(name, 0))):
        REFUSALS[name]()


@pytest.mark.parametrize("name", ["vjp", "jvp", "hessian"])
def test_vmap_of_a_transformation_refuses_too(name):
    with pytest.raises(TypeError, match="allow_int=True"):
        kenaz.vmap(lambda n: REFUSALS[name]())(N)


def test_a_boolean_input_is_refused():
    with pytest.raises(TypeError, match=r"kenaz.vjp: argument 0 has dtype bool"):
        kenaz.vjp(lambda b: b * 1.0, np.array([True, False]))


# -- allow_int: held constant, derivative float0 --------------------------------------------
def test_grad_with_allow_int():
    g_x, g_n = kenaz.grad(scaled, argnums=(0, 1), allow_int=True)(X, N)
    np.testing.assert_allclose(np.asarray(g_x), np.cos(X) * N)
    assert_float0(g_n, (3,))


def test_vjp_with_allow_int():
    out, pullback = kenaz.vjp(scaled, X, N, allow_int=True)
    g_x, g_n = pullback(1.0)
    np.testing.assert_allclose(np.asarray(g_x), np.cos(X) * N)
    assert_float0(g_n, (3,))
    (g,) = kenaz.vjp(log_twice, N, allow_int=True)[1](np.ones(3))
    assert_float0(g, (3,))  # the example: no longer Tensor([0, 0, 0])


def test_jvp_and_linearize_with_allow_int():
    t = np.array([1.0, -1.0, 2.0])
    for tangent_n in (float0_like((3,)), np.ones(3)):  # float0, as JAX asks, or ignored
        out, tangent = kenaz.jvp(scaled, (X, N), (t, tangent_n), allow_int=True)
        assert float(tangent) == pytest.approx(float(np.sum(np.cos(X) * N * t)))
    out, f_jvp = kenaz.linearize(scaled, X, N, allow_int=True)
    assert float(f_jvp(t, float0_like((3,)))) == pytest.approx(float(tangent))
    _, tangent = kenaz.jvp(log_twice, (N,), (float0_like((3,)),), allow_int=True)
    np.testing.assert_array_equal(np.asarray(tangent), np.zeros(3))  # a float output: a real 0


def test_jvp_refuses_a_tangent_of_the_wrong_shape_for_an_integer_input():
    with pytest.raises(ValueError, match=r"tangent of shape \(2,\).*shape \(3,\)"):
        kenaz.jvp(scaled, (X, N), (X, np.ones(2)), allow_int=True)


def test_jacobians_with_allow_int():
    for jacobian in (kenaz.jacfwd, kenaz.jacrev):
        j_x, j_n = jacobian(lambda x, n: knp.sin(x) * n, argnums=(0, 1), allow_int=True)(X, N)
        np.testing.assert_allclose(np.asarray(j_x), np.diag(np.cos(X) * N), rtol=1e-14)
        assert_float0(j_n, (3, 3))
    (h_xx, h_xn), (h_nx, h_nn) = kenaz.hessian(scaled, argnums=(0, 1), allow_int=True)(X, N)
    np.testing.assert_allclose(np.asarray(h_xx), np.diag(-np.sin(X) * N), rtol=1e-14)
    for block in (h_xn, h_nx, h_nn):
        assert_float0(block, (3, 3))
    hessians = kenaz.vmap(kenaz.hessian(scaled, allow_int=True), in_axes=(0, None))(
        np.stack([X, -X]), N
    )
    np.testing.assert_allclose(np.asarray(hessians[1]), np.diag(np.sin(X) * N), rtol=1e-14)


# -- integer outputs ----------------------------------------------------------------------------
def with_index(x):
    return x * 2.0, knp.argmax(x)


def test_an_integer_output_has_a_float0_tangent():
    _, (t_value, t_index) = kenaz.jvp(with_index, (X,), (np.ones(3),))
    np.testing.assert_array_equal(np.asarray(t_value), 2 * np.ones(3))
    assert_float0(t_index, ())
    _, f_jvp = kenaz.linearize(with_index, X)
    assert_float0(f_jvp(np.ones(3))[1], ())
    for jacobian in (kenaz.jacfwd, kenaz.jacrev):
        j_value, j_index = jacobian(with_index)(X)
        np.testing.assert_array_equal(np.asarray(j_value), 2 * np.eye(3))
        assert_float0(j_index, (3,))


def test_a_float_cotangent_for_an_integer_output_follows_the_same_rule():
    _, pullback = kenaz.vjp(with_index, X)
    with pytest.raises(
        TypeError,
        match=r"cotangent of dtype float64.*dtype int64.*float0.*"
        r"allow_int=True",
    ):
        pullback((np.ones(3), np.ones(())))
    with pytest.raises(TypeError, match="dtype int64"):  # an integer zero is no better
        pullback((np.ones(3), np.zeros((), int)))
    (g,) = pullback((np.ones(3), float0_like(())))
    np.testing.assert_array_equal(np.asarray(g), 2 * np.ones(3))
    _, pullback = kenaz.vjp(with_index, X, allow_int=True)
    (g,) = pullback((np.ones(3), np.ones(())))  # ignored, as asked
    np.testing.assert_array_equal(np.asarray(g), 2 * np.ones(3))


def test_a_float0_cotangent_of_the_wrong_shape_is_refused():
    _, pullback = kenaz.vjp(with_index, X)
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(\)"):
        pullback((np.ones(3), float0_like((2,))))


def test_check_grads_holds_integer_arguments_fixed_with_float0():
    kenaz.testing.check_grads(scaled, (X, N), order=2)
    kenaz.testing.check_grads(with_index, (X,), order=2)
