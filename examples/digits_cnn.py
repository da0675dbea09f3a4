"""A small convolutional network on scikit-learn's 8x8 digits, trained with kenaz.

Run: ``python examples/digits_cnn.py`` (needs ``pip install 'kenaz[examples]'``).
Two 3x3 convolutions with max pooling, dropout, then a dense layer; float32
and SGD with Nesterov momentum. About 99% test accuracy in well under a minute.
"""

from __future__ import annotations

import os

# These matrices are tiny: BLAS threads only add overhead (and fight over a busy machine).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time
from typing import Any

import numpy as np

import kenaz
import kenaz.numpy as knp
from kenaz import data, nn, optim, train


class DigitsCNN(nn.Module):
    """conv(1->16) -> relu -> pool -> conv(16->32) -> relu -> pool -> dropout -> dense(128->10).

    Written as a module of its own, to show how: hyperparameters and sub-modules
    in ``__init__``, a parameter pytree from ``init(key)``, a pure ``__call__``.
    ``nn.Sequential`` with ``nn.MaxPool2d`` and ``nn.Flatten`` builds the same
    network without a class.
    """

    def __init__(self, dtype: Any = np.float32) -> None:
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1, dtype=dtype)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1, dtype=dtype)
        self.head = nn.Linear(32 * 2 * 2, 10, dtype=dtype)

    def init(self, key: nn.initializers.Key) -> dict[str, Any]:
        keys = nn.split(key, 3)
        return {
            "conv1": self.conv1.init(keys[0]),
            "conv2": self.conv2.init(keys[1]),
            "head": self.head.init(keys[2]),
        }

    def __call__(
        self, params: dict[str, Any], images: Any, key: Any = None, training: bool = False
    ) -> kenaz.Tensor:
        x = nn.max_pool2d(nn.relu(self.conv1(params["conv1"], images)), 2)  # (n, 16, 4, 4)
        x = nn.max_pool2d(nn.relu(self.conv2(params["conv2"], x)), 2)  # (n, 32, 2, 2)
        features = nn.dropout(knp.reshape(x, (x.shape[0], -1)), 0.2, key, training)
        return self.head(params["head"], features)


def train_digits_cnn(epochs: int = 12, seed: int = 0, progress: bool | None = None):
    """Train the CNN; return ``(params, history, test_accuracy)``."""
    (x_train, y_train), (x_test, y_test) = data.load_digits(
        test_fraction=0.2, seed=seed, images=True, dtype=np.float32
    )
    model = DigitsCNN()
    params = model.init(seed)

    def loss(params: Any, images: Any, labels: Any, key: Any) -> kenaz.Tensor:
        logits = model(params, images, key=key, training=True)  # dropout: a fresh key per step
        return nn.softmax_cross_entropy(logits, labels)

    def evaluate(params: Any) -> dict[str, float]:
        logits = model(params, x_test)
        return {
            "test_loss": float(nn.softmax_cross_entropy(logits, y_test)),
            "test_accuracy": nn.accuracy(logits, y_test),
        }

    steps = epochs * -(-len(x_train) // 32)
    optimizer = optim.sgd(optim.cosine_decay_schedule(0.05, steps), momentum=0.9, nesterov=True)
    result = train.fit(
        loss,
        params,
        optimizer,
        (x_train, y_train),
        epochs=epochs,
        batch_size=32,
        seed=seed,
        evaluate=evaluate,
        key=seed,
        progress=progress,
        description="digits CNN",
    )
    return result.params, result.history, result.history["test_accuracy"][-1]


def main() -> None:
    started = time.perf_counter()
    params, history, test_accuracy = train_digits_cnn()
    print(f"parameters: {nn.count_parameters(params)}")
    print(f"final training loss: {history['loss'][-1]:.4f}")
    print(f"test accuracy: {100 * test_accuracy:.2f}%")
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
