"""CuPy (GPU): the same primitives and compositions on a device, where one is present.

Skipped cleanly without CuPy or without a GPU. The tests move the values to the device,
run kenaz on them, and compare with NumPy: outputs must stay CuPy arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

cupy = pytest.importorskip("cupy")
try:
    _DEVICES = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver, no device: CuPy imports but cannot run
    _DEVICES = 0
pytestmark = pytest.mark.skipif(_DEVICES == 0, reason="no CUDA device")


def _loss(params, x, y):
    hidden = knp.tanh(x @ params["w"] + params["b"])
    return knp.mean((hidden - y) ** 2) + knp.sum(knp.abs(params["w"][1:3]))


def _problem():
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(5, 3)), "b": rng.normal(size=3)}
    return params, rng.normal(size=(16, 5)), rng.normal(size=(16, 3))


def _on_device(tree):
    return kenaz.tree.map(lambda v: kenaz.Tensor(cupy.asarray(v)), tree)


def test_grad_on_the_gpu_equals_numpys():
    params, x, y = _problem()
    expected = kenaz.grad(_loss)(params, x, y)
    got = kenaz.grad(_loss)(_on_device(params), cupy.asarray(x), cupy.asarray(y))
    for name in expected:
        assert isinstance(got[name]._value, cupy.ndarray)
        np.testing.assert_allclose(got[name].numpy(), expected[name].numpy(), rtol=1e-10)


def test_scatter_add_accumulates_repeated_indices_on_the_gpu():
    x = kenaz.Tensor(cupy.zeros(4))
    out = x.at[np.array([0, 0, 2])].add(kenaz.Tensor(cupy.ones(3)))
    assert isinstance(out._value, cupy.ndarray)
    np.testing.assert_array_equal(out.numpy(), [2.0, 0.0, 1.0, 0.0])


def test_vmap_of_grad_and_jvp_on_the_gpu_equal_numpys():
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(6, 3))
    f = lambda v: knp.sum(knp.sin(v) * knp.exp(v))
    expected = kenaz.vmap(kenaz.grad(f))(xs)
    got = kenaz.vmap(kenaz.grad(f))(cupy.asarray(xs))
    assert isinstance(got._value, cupy.ndarray)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)
    _, tangent = kenaz.jvp(f, (cupy.asarray(xs),), (cupy.ones((6, 3)),))
    _, expected_tangent = kenaz.jvp(f, (xs,), (np.ones((6, 3)),))
    np.testing.assert_allclose(tangent.numpy(), expected_tangent.numpy(), rtol=1e-10)


def test_creation_follows_the_default_backend_onto_the_gpu():
    with kenaz.default_backend(kenaz.backend.namespace(cupy.zeros(1))):
        assert isinstance(knp.zeros(3)._value, cupy.ndarray)
