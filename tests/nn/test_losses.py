"""Losses against NumPy formulas, reductions, label formats, errors and derivatives."""

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import nn
from kenaz.testing import check_grads

RNG = np.random.default_rng(0)
PRED, TARGET = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))


@pytest.mark.parametrize(
    "loss, reference",
    [
        (nn.mse, lambda e: e**2),
        (nn.mae, np.abs),
        (nn.huber, lambda e: np.where(np.abs(e) <= 1, 0.5 * e**2, np.abs(e) - 0.5)),
    ],
    ids=["mse", "mae", "huber"],
)
def test_regression_losses_and_reductions(loss, reference):
    elementwise = reference(PRED - TARGET)
    np.testing.assert_allclose(loss(PRED, TARGET, reduction="none").numpy(), elementwise)
    np.testing.assert_allclose(float(loss(PRED, TARGET)), elementwise.mean())
    np.testing.assert_allclose(float(loss(PRED, TARGET, reduction="sum")), elementwise.sum())
    check_grads(lambda p: loss(p, TARGET), (PRED,), order=1)


def test_huber_delta():
    errors = np.array([0.5, 3.0])
    np.testing.assert_allclose(
        nn.huber(errors, np.zeros(2), delta=2.0, reduction="none").numpy(), [0.125, 2 * (3 - 1)]
    )


def test_shape_mismatch_and_bad_reduction():
    with pytest.raises(ValueError, match=r"\(4, 1\).*\(4,\)"):
        nn.mse(np.zeros((4, 1)), np.zeros(4))
    with pytest.raises(ValueError, match="reduction"):
        nn.mse(PRED, TARGET, reduction="average")


def test_binary_cross_entropy():
    logits = np.array([-800.0, -2.0, 0.0, 3.0, 800.0])
    targets = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    probs = 1 / (1 + np.exp(-logits[1:4]))
    naive = -(targets[1:4] * np.log(probs) + (1 - targets[1:4]) * np.log(1 - probs))
    per_example = nn.binary_cross_entropy(logits, targets, reduction="none").numpy()
    np.testing.assert_allclose(per_example[1:4], naive, rtol=1e-12)
    np.testing.assert_allclose(per_example[[0, 4]], 0.0, atol=1e-300)  # confident and right
    grad = kenaz.grad(lambda z: nn.binary_cross_entropy(z, targets, reduction="sum"))(logits)
    sigmoid = 0.5 * (1 + np.tanh(logits / 2))  # overflow-free logistic
    np.testing.assert_allclose(grad.numpy(), sigmoid - targets, atol=1e-15)
    check_grads(lambda z: nn.binary_cross_entropy(z, targets[1:4]), (logits[1:4],), order=2)


def test_softmax_cross_entropy_integer_and_one_hot_labels():
    logits = RNG.normal(size=(5, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2])
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[np.arange(5), labels]
    np.testing.assert_allclose(
        nn.softmax_cross_entropy(logits, labels, reduction="none").numpy(), expected
    )
    one_hot = np.eye(4)[labels]
    np.testing.assert_allclose(float(nn.softmax_cross_entropy(logits, one_hot)), expected.mean())
    np.testing.assert_allclose(
        float(nn.softmax_cross_entropy(logits, labels, reduction="sum")), expected.sum()
    )
    np.testing.assert_array_equal(nn.one_hot(labels, 4).numpy(), one_hot)
    grad = kenaz.grad(lambda z: nn.softmax_cross_entropy(z, labels, reduction="sum"))(logits)
    np.testing.assert_allclose(grad.numpy(), np.exp(log_probs) - one_hot, atol=1e-14)
    check_grads(lambda z: nn.softmax_cross_entropy(z, labels), (logits,), order=2)


def test_label_smoothing_and_soft_targets():
    logits = RNG.normal(size=(2, 3))
    labels = np.array([2, 0])
    smoothed = 0.9 * np.eye(3)[labels] + 0.1 / 3
    np.testing.assert_allclose(
        float(nn.softmax_cross_entropy(logits, labels, label_smoothing=0.1)),
        float(nn.softmax_cross_entropy(logits, smoothed)),
    )


def test_softmax_cross_entropy_errors():
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        nn.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="integer labels must have shape"):
        nn.softmax_cross_entropy(np.zeros((2, 3)), np.array([[0], [1]]))
    with pytest.raises(ValueError, match="one-hot or probability labels"):
        nn.softmax_cross_entropy(np.zeros((2, 3)), np.zeros((2, 4)))


def test_softmax_cross_entropy_under_vmap_with_scalar_labels():
    logits, labels = RNG.normal(size=(6, 4)), np.array([0, 1, 2, 3, 0, 1])
    per_example = kenaz.vmap(nn.softmax_cross_entropy)(logits, labels)
    np.testing.assert_allclose(
        per_example.numpy(), nn.softmax_cross_entropy(logits, labels, reduction="none").numpy()
    )
    assert isinstance(nn.mse(knp.ones(2), knp.zeros(2)), kenaz.Tensor)
