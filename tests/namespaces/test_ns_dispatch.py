"""Unmodified NumPy code on Tensors: __array_ufunc__ and __array_function__."""

import numpy as np
import pytest
from _check import check

import kenaz
import kenaz.numpy as knp


def test_ufunc_and_function_return_tensors():
    t = knp.array([1.0, 2.0, 3.0])
    assert isinstance(np.sin(t), kenaz.Tensor)
    assert isinstance(np.sum(t, axis=0), kenaz.Tensor)
    assert isinstance(np.ones(3) + t, kenaz.Tensor)
    assert isinstance(np.ones(3) * t, kenaz.Tensor)
    np.testing.assert_allclose(np.exp(t).numpy(), np.exp([1.0, 2.0, 3.0]))


def test_gradient_flows_through_numpy_functions():
    def f(x):
        return np.sum(np.sin(x) ** 2 * np.ones(3), axis=0) + np.mean(np.exp(x))

    x = np.array([0.3, -1.2, 2.0])
    check("numpy dispatch", f, x)
    expected = 2 * np.sin(x) * np.cos(x) + np.exp(x) / 3
    np.testing.assert_allclose(kenaz.grad(f)(x).numpy(), expected)


def test_ndarray_on_the_left_stays_differentiable():
    g = kenaz.grad(lambda x: (np.arange(3.0) * x + np.ones(3) - x).sum())(knp.ones(3))
    np.testing.assert_allclose(g.numpy(), np.arange(3.0) - 1)


def test_reduce_accumulate_outer():
    t = knp.array([1.0, 2.0, 3.0])
    assert float(np.add.reduce(t)) == 6.0
    assert float(np.multiply.reduce(t)) == 6.0
    np.testing.assert_allclose(np.add.accumulate(t).numpy(), [1, 3, 6])
    assert np.multiply.outer(t, t).shape == (3, 3)
    g = kenaz.grad(lambda x: np.multiply.reduce(x))(t)
    np.testing.assert_allclose(g.numpy(), [6, 3, 2])


def test_positional_and_default_arguments_are_rebound():
    t = knp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(np.sum(t, 0, None, None, False).numpy(), [3, 5, 7])
    expected = np.clip(np.arange(6.0).reshape(2, 3), 1, 4)
    np.testing.assert_allclose(np.clip(t, 1, 4).numpy(), expected)
    np.testing.assert_allclose(np.where(t > 2, t, 0).numpy(), np.where(t.numpy() > 2, t.numpy(), 0))
    np.testing.assert_allclose(np.concatenate([t, np.ones((1, 3))]).numpy()[-1], [1, 1, 1])
    assert float(np.einsum("ij,ij->", t, t)) == 55.0


def test_shape_helpers_and_inspection():
    t = knp.ones((2, 3))
    assert np.shape(t) == (2, 3)
    assert np.ndim(t) == 2
    assert np.size(t) == 6
    assert np.result_type(t, 1.0) == np.float64
    assert np.allclose(t, np.ones((2, 3)))
    assert np.array_equal(t, np.ones((2, 3)))
    assert not np.iscomplexobj(t)


def test_out_is_rejected():
    t = knp.ones(3)
    with pytest.raises(TypeError, match="out="):
        np.sin(t, out=np.zeros(3))
    with pytest.raises(TypeError, match="out="):
        np.sum(t, out=np.zeros(()))


def test_unimplemented_function_names_itself():
    t = knp.ones(3)
    with pytest.raises(TypeError, match="numpy.histogram"):
        np.histogram(t)
    with pytest.raises(TypeError, match="retstep"):
        np.linspace(knp.array(0.0), 1.0, retstep=True)
    with pytest.raises(TypeError, match="bitwise_count"):
        np.bitwise_count(knp.arange(3))
    with pytest.raises(TypeError, match="histogram2d"):
        np.histogram2d(t, t)


def test_dispatch_under_jvp_and_nested_grad():
    tangent_out = kenaz.jvp(lambda x: np.tanh(x) @ np.ones(3), (knp.zeros(3),), (knp.ones(3),))[1]
    assert float(tangent_out) == 3.0
    second = kenaz.grad(kenaz.grad(lambda x: np.sin(x)))(0.5)
    np.testing.assert_allclose(float(second), -np.sin(0.5))
