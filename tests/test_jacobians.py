"""``jacfwd``, ``jacrev``, ``hessian`` and ``hvp``."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import grad, hessian, hvp, jacfwd, jacrev, vmap

RNG = np.random.default_rng(1)
W = RNG.normal(size=(4, 3))
B = RNG.normal(size=4)
X = RNG.normal(size=3)
JACOBIANS = [jacfwd, jacrev]


def close(actual, expected, **kwargs) -> None:
    kwargs.setdefault("rtol", 1e-10)
    kwargs.setdefault("atol", 1e-12)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), **kwargs)


def layer(x):
    return knp.tanh(W @ x + B)


def layer_jacobian(x):
    return (1 - np.tanh(W @ x + B) ** 2)[:, None] * W


@pytest.mark.parametrize("jac", JACOBIANS)
def test_jacobian_of_a_layer(jac):
    close(jac(layer)(X), layer_jacobian(X))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_shape_is_output_shape_plus_input_shape(jac):
    x = RNG.normal(size=(2, 3))
    f = lambda m: knp.sin(m).T[:, :, None] * knp.array([1.0, 2.0, 3.0, 4.0])
    j = jac(f)(x)
    assert j.shape == (3, 2, 4, 2, 3)
    expected = np.zeros((3, 2, 4, 2, 3))
    for a in range(3):
        for b in range(2):
            expected[a, b, :, b, a] = np.cos(x[b, a]) * np.arange(1.0, 5.0)
    close(j, expected)
    assert jac(lambda m: knp.sum(m**2))(x).shape == (2, 3)
    assert jac(lambda s: knp.array([s, 2 * s]))(1.5).shape == (2,)


@pytest.mark.parametrize("jac", JACOBIANS)
def test_argnums_tuple_and_pytrees(jac):
    f = lambda p, x: {"y": knp.tanh(p["w"] @ x + p["b"]), "s": knp.sum(x**2)}
    params = {"w": W, "b": B}
    j = jac(f, argnums=(0, 1))(params, X)
    derivative = 1 - np.tanh(W @ X + B) ** 2
    dy_dw = np.einsum("i,ij,k->ijk", derivative, np.eye(4), X)
    close(j["y"][0]["w"], dy_dw)
    close(j["y"][0]["b"], np.diag(derivative))
    close(j["y"][1], layer_jacobian(X))
    close(j["s"][0]["b"], np.zeros(4))
    close(j["s"][1], 2 * X)


@pytest.mark.parametrize("jac", JACOBIANS)
def test_has_aux(jac):
    j, aux = jac(lambda x: (layer(x), {"norm": knp.sum(x**2)}), has_aux=True)(X)
    close(j, layer_jacobian(X))
    close(aux["norm"], np.sum(X**2))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_jacobian_composes_with_vmap_and_grad(jac):
    xs = RNG.normal(size=(5, 3))
    batched = vmap(jac(layer))(xs)
    close(batched, np.stack([layer_jacobian(x) for x in xs]))
    close(jac(grad(lambda x: knp.sum(x**3)))(X), np.diag(6 * X))


def test_hessian_of_a_quadratic_form():
    a = RNG.normal(size=(3, 3))
    close(hessian(lambda x: x @ a @ x)(X), a + a.T)


def mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    hidden = knp.tanh(w1 @ x + b1)
    return knp.sum((w2 @ hidden + b2 - y) ** 2)


def test_hessian_of_a_two_layer_mlp_agrees_with_jacfwd_jacfwd_and_jacrev_jacrev():
    params = (
        (knp.array(RNG.normal(size=(4, 3))), knp.array(RNG.normal(size=4))),
        (knp.array(RNG.normal(size=(2, 4))), knp.array(RNG.normal(size=2))),
    )
    x, y = RNG.normal(size=3), RNG.normal(size=2)
    h = hessian(mlp_loss)(params, x, y)
    for other in (jacfwd(jacfwd(mlp_loss)), jacrev(jacrev(mlp_loss))):
        for got, want in zip(
            kenaz.tree.leaves(other(params, x, y)), kenaz.tree.leaves(h), strict=True
        ):
            close(got, want, rtol=1e-9, atol=1e-10)
    # The block of w1 with itself, against finite differences of the gradient.
    w1 = np.asarray(params[0][0])
    block = np.asarray(h[0][0][0][0])
    assert block.shape == (4, 3, 4, 3)
    eps, direction = 1e-6, RNG.normal(size=(4, 3))

    def grad_w1(w):
        return np.asarray(grad(mlp_loss)(((w, params[0][1]), params[1]), x, y)[0][0])

    finite = (grad_w1(w1 + eps * direction) - grad_w1(w1 - eps * direction)) / (2 * eps)
    close(np.einsum("ijkl,kl->ij", block, direction), finite, rtol=1e-6, atol=1e-6)


def test_hvp_equals_hessian_times_vector():
    a = RNG.normal(size=(6, 6))
    f = lambda x: knp.sum(knp.tanh(a @ x) ** 2)
    x, v = RNG.normal(size=6), RNG.normal(size=6)
    close(hvp(f, (x,), (v,)), np.asarray(hessian(f)(x)) @ v)


def test_hvp_of_several_arguments():
    f = lambda x, y: knp.sum(x**2 * y)
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    hx, hy = hvp(f, (x, y), (np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    # d2f/dx2 = diag(2y), d2f/dxdy = diag(2x)
    close(hx, 2 * y * [1.0, 0.0] + 2 * x * [0.0, 1.0])
    close(hy, 2 * x * [1.0, 0.0])
    with pytest.raises(TypeError, match=r"hvp\(f, \(x,\), \(v,\)\)"):
        hvp(f, x, y)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums"):
        jacrev(layer, argnums=2)(X)


@pytest.mark.parametrize("jac", JACOBIANS)
def test_a_jacobian_that_is_its_basis_is_a_fresh_writable_array(jac):
    """The bases are cached; the identity's Jacobian (the basis itself) is each call's own."""
    first = jac(lambda x: x)(knp.ones(3))
    first[0, 0] = 5.0  # an in-place change of the result touches no cached basis
    again = jac(lambda x: x)(knp.ones(3))
    close(again, np.eye(3))
    close(first, np.diag([5.0, 1.0, 1.0]))
    pair = jac(lambda x, y: (x, y), argnums=(0, 1))(knp.ones(2), knp.ones((1, 2)))
    pair[1][1][0, 1, 0, 0] = 7.0  # d y / d y, of shape (1, 2, 1, 2)
    pair = jac(lambda x, y: (x, y), argnums=(0, 1))(knp.ones(2), knp.ones((1, 2)))
    close(pair[1][1], np.eye(2).reshape(1, 2, 1, 2))
