"""Unmodified NumPy code on Tensors: __array_ufunc__ and __array_function__."""

import numpy as np
import pytest
from _check import check

import kenaz
import kenaz.numpy as knp


def tracked(f, *args):
    """``f(*args)`` with the arguments tracked by a running transformation (vjp)."""
    return kenaz.vjp(f, *args)[0]


def test_ufuncs_return_tensors_and_untracked_functions_return_numpy_values():
    t = knp.array([1.0, 2.0, 3.0])
    assert isinstance(np.sin(t), kenaz.Tensor)
    assert isinstance(np.ones(3) + t, kenaz.Tensor)
    assert isinstance(np.ones(3) * t, kenaz.Tensor)
    assert isinstance(np.float64(2.0) * t, kenaz.Tensor)
    np.testing.assert_allclose(np.exp(t).numpy(), np.exp([1.0, 2.0, 3.0]))
    # NumPy's functions on a Tensor nothing tracks are NumPy's own (what SciPy needs) ...
    assert type(np.sum(t, axis=0)) is np.float64
    assert type(np.atleast_1d(t)) is np.ndarray
    # ... and kenaz's on a tracked one.
    assert isinstance(tracked(lambda x: np.sum(x, axis=0), t), kenaz.Tensor)


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
    summed = tracked(lambda x: np.sum(x, 0, None, None, False), t)
    np.testing.assert_allclose(summed.numpy(), [3, 5, 7])
    expected = np.clip(np.arange(6.0).reshape(2, 3), 1, 4)
    np.testing.assert_allclose(tracked(lambda x: np.clip(x, 1, 4), t).numpy(), expected)
    chosen = tracked(lambda x: np.where(x > 2, x, 0), t)
    np.testing.assert_allclose(chosen.numpy(), np.where(t.numpy() > 2, t.numpy(), 0))
    joined = tracked(lambda x: np.concatenate([x, np.ones((1, 3))]), t)
    np.testing.assert_allclose(joined.numpy()[-1], [1, 1, 1])
    assert float(tracked(lambda x: np.einsum("ij,ij->", x, x), t)) == 55.0


def test_shape_helpers_and_inspection():
    t = knp.ones((2, 3))
    assert np.shape(t) == (2, 3)
    assert np.ndim(t) == 2
    assert np.size(t) == 6
    assert np.result_type(t, 1.0) == np.float64
    assert np.allclose(t, np.ones((2, 3)))
    assert np.array_equal(t, np.ones((2, 3)))
    assert not np.iscomplexobj(t)


def test_out_is_rejected_for_tracked_tensors():
    t = knp.ones(3)
    with pytest.raises(TypeError, match="out="):
        tracked(lambda x: np.sin(x, out=np.zeros(3)), t)
    with pytest.raises(TypeError, match="out="):
        tracked(lambda x: np.sum(x, out=np.zeros(())), t)


def test_out_writes_into_an_untracked_tensor():
    t, out = knp.array([1.0, 2.0]), knp.zeros(2)
    assert np.add(t, t, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    total = knp.zeros(())
    assert np.sum(t, out=total) is total and float(total) == 3.0


def test_unimplemented_function_names_itself_on_tracked_tensors():
    t = knp.ones(3)
    with pytest.raises(TypeError, match="histogram2d"):
        tracked(lambda x: np.histogram2d(x, x), t)


def test_untracked_tensors_run_numpys_own_functions():
    t = knp.array([0.5, 1.5, 1.7, 3.0])
    counts, edges = np.histogram(t, bins=3)
    expected_counts, expected_edges = np.histogram(t.numpy(), bins=3)
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_array_equal(edges, expected_edges)
    np.testing.assert_array_equal(np.bitwise_count(knp.arange(3)).numpy(), [0, 1, 1])


def test_dispatch_under_jvp_and_nested_grad():
    tangent_out = kenaz.jvp(lambda x: np.tanh(x) @ np.ones(3), (knp.zeros(3),), (knp.ones(3),))[1]
    assert float(tangent_out) == 3.0
    second = kenaz.grad(kenaz.grad(lambda x: np.sin(x)))(0.5)
    np.testing.assert_allclose(float(second), -np.sin(0.5))
