"""Metrics, and initializers' determinism, shapes, dtypes and variances."""

import numpy as np
import pytest

from kenaz import nn
from kenaz.nn import initializers as init


def test_accuracy_and_top_k():
    logits = np.array([[0.1, 0.7, 0.2], [0.5, 0.1, 0.4], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    labels = np.array([1, 2, 2, 1])
    assert nn.accuracy(logits, labels) == 0.5
    assert nn.accuracy(logits, np.eye(3)[labels]) == 0.5  # one-hot labels
    assert nn.top_k_accuracy(logits, labels, k=2) == 1.0
    assert nn.top_k_accuracy(logits, labels, k=1) == 0.5
    assert nn.top_k_accuracy(logits, labels, k=3) == 1.0
    with pytest.raises(ValueError, match="k=4"):
        nn.top_k_accuracy(logits, labels, k=4)
    with pytest.raises(ValueError, match="integer classes or one-hot"):
        nn.accuracy(logits, np.array([0.5, 0.5, 0.5, 0.5]))


def test_fans():
    assert init.fans((64, 10)) == (64, 10)
    assert init.fans((8, 3, 5, 5), in_axis=1, out_axis=0) == (75, 200)
    assert init.fans((7,)) == (7, 7)


@pytest.mark.parametrize(
    "initializer, variance",
    [
        (init.glorot_uniform, 2 / (400 + 300)),
        (init.glorot_normal, 2 / (400 + 300)),
        (init.he_uniform, 2 / 400),
        (init.he_normal, 2 / 400),
        (init.lecun_uniform, 1 / 400),
        (init.lecun_normal, 1 / 400),
        (init.normal(0.1), 0.01),
        (init.uniform(0.3), 0.09 / 3),
    ],
)
def test_initializer_variance_and_determinism(initializer, variance):
    values = initializer(0, (400, 300)).numpy()
    assert values.shape == (400, 300) and values.dtype == np.float64
    assert abs(values.var() / variance - 1) < 0.05
    np.testing.assert_array_equal(values, initializer(np.random.default_rng(0), (400, 300)).numpy())
    assert not np.array_equal(values, initializer(1, (400, 300)).numpy())
    assert initializer(0, (3, 2), np.float32).dtype == np.float32


def test_truncated_normal_is_truncated():
    values = init.variance_scaling(1.0, "fan_in", "truncated_normal")(0, (1000, 100)).numpy()
    assert np.abs(values).max() <= 2 * np.sqrt(1 / 1000) / 0.8796256610342398 + 1e-12


def test_constants_and_split():
    np.testing.assert_array_equal(init.zeros(None, (2,)).numpy(), [0, 0])
    np.testing.assert_array_equal(init.constant(3.0)(None, (2,)).numpy(), [3, 3])
    a, b = nn.split(0)
    assert a.random() != b.random()
    with pytest.raises(ValueError, match="unknown mode"):
        init.variance_scaling(1.0, "fan_middle", "normal")
