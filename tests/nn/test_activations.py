"""Activations against NumPy formulas, at extreme inputs, and their derivatives."""

import math

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import nn
from kenaz.testing import check_grads

X = np.linspace(-4, 4, 17) + 0.05  # avoid exactly 0, where relu has a kink
ERF = np.vectorize(math.erf)

REFERENCES = {
    nn.relu: lambda x: np.maximum(x, 0),
    nn.leaky_relu: lambda x: np.where(x > 0, x, 0.01 * x),
    nn.elu: lambda x: np.where(x > 0, x, np.expm1(x)),
    nn.gelu: lambda x: 0.5 * x * (1 + ERF(x / np.sqrt(2))),
    nn.silu: lambda x: x / (1 + np.exp(-x)),
    nn.softplus: lambda x: np.log1p(np.exp(x)),
    nn.sigmoid: lambda x: 1 / (1 + np.exp(-x)),
    nn.log_sigmoid: lambda x: -np.log1p(np.exp(-x)),
    nn.tanh: np.tanh,
}


@pytest.mark.parametrize("activation", list(REFERENCES), ids=lambda f: f.__name__)
def test_activation_values(activation):
    np.testing.assert_allclose(
        activation(X).numpy(), REFERENCES[activation](X), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("activation", list(REFERENCES), ids=lambda f: f.__name__)
def test_activation_derivatives(activation):
    check_grads(activation, (X,), order=2)


def test_gelu_tanh_approximation_is_close():
    np.testing.assert_allclose(
        nn.gelu(X, approximate=True).numpy(), REFERENCES[nn.gelu](X), atol=1e-3
    )
    check_grads(lambda x: nn.gelu(x, approximate=True), (X,), order=2)


@pytest.mark.parametrize(
    "activation", [nn.softplus, nn.sigmoid, nn.log_sigmoid, nn.silu, nn.elu, nn.gelu]
)
def test_finite_values_and_gradients_at_extremes(activation):
    x = knp.array([-1000.0, -50.0, 50.0, 1000.0])
    assert np.all(np.isfinite(activation(x).numpy()))
    grad = kenaz.grad(lambda x: knp.sum(activation(x)))(x).numpy()
    assert np.all(np.isfinite(grad))


def test_kinks_at_zero():
    assert float(kenaz.grad(nn.softplus)(0.0)) == 0.5
    assert float(kenaz.grad(nn.relu)(0.0)) == 0.0
    assert float(kenaz.grad(kenaz.grad(nn.softplus))(0.0)) == pytest.approx(0.25)


def test_softmax_and_log_softmax():
    x = np.random.default_rng(0).normal(size=(3, 5)) * 5
    expected = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(nn.softmax(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(nn.log_softmax(x).numpy(), np.log(expected), rtol=1e-12)
    np.testing.assert_allclose(nn.softmax(x, axis=0).numpy().sum(axis=0), np.ones(5))
    check_grads(nn.softmax, (x,), order=2)
    check_grads(lambda x: nn.log_softmax(x, axis=0), (x,), order=2)


def test_softmax_is_stable_for_huge_inputs():
    x = knp.array([[1000.0, 1001.0, -1e6]])
    np.testing.assert_allclose(
        nn.softmax(x).numpy(), [[1 / (1 + math.e), math.e / (1 + math.e), 0]]
    )
    log_probs = nn.log_softmax(x).numpy()
    assert np.all(np.isfinite(log_probs[:, :2]))
    grad = kenaz.grad(lambda x: nn.log_softmax(x)[0, 0])(x).numpy()
    assert np.all(np.isfinite(grad))


def test_float32_stays_float32():
    x = X.astype(np.float32)
    for activation in [*REFERENCES, nn.softmax, nn.log_softmax]:
        assert activation(x).dtype == np.float32, activation.__name__
