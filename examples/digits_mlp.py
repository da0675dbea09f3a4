"""Train a multi-layer perceptron on scikit-learn's bundled 8x8 digits (no download).

Run: ``python examples/digits_mlp.py`` (needs ``pip install 'kenaz[examples]'``).
It prints a progress bar, the test accuracy (about 98%) and writes the
training curves to ``docs/digits_mlp_training.png``.
"""

from __future__ import annotations

import os

# These matrices are tiny: BLAS threads only add overhead (and fight over a busy machine).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time
from pathlib import Path
from typing import Any

import numpy as np

import kenaz
from kenaz import data, nn, optim, train

DOCS = Path(__file__).resolve().parent.parent / "docs"


def train_digits_mlp(
    epochs: int = 30,
    seed: int = 0,
    progress: bool | None = None,
    plot_path: Path | None = DOCS / "digits_mlp_training.png",
) -> tuple[Any, dict[str, list[float]], float]:
    """Train a 64-128-10 ReLU MLP with Adam; return ``(params, history, test_accuracy)``."""
    (x_train, y_train), (x_test, y_test) = data.load_digits(test_fraction=0.2, seed=seed)
    model = nn.MLP([64, 128, 10], activation=nn.relu)
    params = model.init(seed)

    def loss(params: Any, images: Any, labels: Any) -> kenaz.Tensor:
        return nn.softmax_cross_entropy(model(params, images), labels)

    def evaluate(params: Any) -> dict[str, float]:
        logits = model(params, x_test)
        return {
            "test_loss": float(nn.softmax_cross_entropy(logits, y_test)),
            "test_accuracy": nn.accuracy(logits, y_test),
        }

    steps_per_epoch = -(-len(x_train) // 32)
    schedule = optim.warmup_cosine_decay_schedule(
        0.0, 3e-3, warmup_steps=steps_per_epoch, decay_steps=epochs * steps_per_epoch
    )
    optimizer = optim.chain(
        optim.clip_by_global_norm(5.0), optim.adamw(schedule, weight_decay=1e-4)
    )
    result = train.fit(
        loss,
        params,
        optimizer,
        (x_train, y_train),
        epochs=epochs,
        batch_size=32,
        seed=seed,
        evaluate=evaluate,
        progress=progress,
        description="digits MLP",
    )
    if plot_path is not None:
        title = "kenaz: 64-128-10 MLP on scikit-learn's digits"
        train.plot_history(result.history, plot_path, title=title)
    return result.params, result.history, result.history["test_accuracy"][-1]


def main() -> None:
    started = time.perf_counter()
    params, history, test_accuracy = train_digits_mlp()
    print(f"parameters: {nn.count_parameters(params)}")
    print(f"final training loss: {history['loss'][-1]:.4f}")
    print(f"test accuracy: {100 * test_accuracy:.2f}%")
    print(f"best test accuracy: {100 * np.max(history['test_accuracy']):.2f}%")
    print(f"training curves: {DOCS / 'digits_mlp_training.png'}")
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
