"""Differentially private SGD (Abadi et al., 2016) with per-example gradients from ``vmap(grad)``.

Run: ``python examples/dp_sgd.py`` (needs ``pip install 'kenaz[examples]'``).

DP-SGD bounds how much any single training example can move the model:
each example's gradient is clipped to L2 norm ``clip_norm``, the clipped
gradients are summed, and Gaussian noise of standard deviation
``noise_multiplier * clip_norm`` is added before averaging. The one thing an
ordinary training loop cannot give is the *per-example* gradient; with kenaz
it is ``vmap(grad(loss), in_axes=(None, 0, 0))``: the per-example loss is
written for one example, and ``vmap`` runs it over the whole batch at once.

This example trains the same MLP on the digits with and without privacy and
prints both test accuracies. It does not compute the privacy budget
(epsilon); use a privacy accountant for that.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: threads only add overhead

import time
from typing import Any

import numpy as np

import kenaz
import kenaz.numpy as knp
from kenaz import data, nn, optim, tree

MODEL = nn.MLP([64, 64, 10], activation=nn.tanh)


def example_loss(params: Any, image: Any, label: Any) -> kenaz.Tensor:
    """The loss of ONE example: ``image`` has shape (64,), ``label`` is a scalar."""
    return nn.softmax_cross_entropy(MODEL(params, image), label)


per_example_grads = kenaz.vmap(kenaz.grad(example_loss), in_axes=(None, 0, 0))


def private_gradient(
    params: Any,
    images: Any,
    labels: Any,
    clip_norm: float,
    noise_multiplier: float,
    rng: np.random.Generator,
) -> Any:
    """Clipped, summed, noised and averaged per-example gradients."""
    grads = per_example_grads(params, images, labels)  # each leaf: (batch, *param_shape)
    batch = len(labels)
    squared = sum(knp.sum(knp.reshape(g * g, (batch, -1)), axis=1) for g in tree.leaves(grads))
    scale = clip_norm / knp.maximum(knp.sqrt(squared), clip_norm)  # (batch,): at most 1

    def clip_sum_and_noise(g: kenaz.Tensor) -> kenaz.Tensor:
        clipped_sum = knp.tensordot(scale, g, axes=1)  # sum over the batch of scale_i * g_i
        noise = rng.normal(0.0, noise_multiplier * clip_norm, size=clipped_sum.shape)
        return (clipped_sum + noise) / batch

    return tree.map(clip_sum_and_noise, grads)


def check_per_example_gradients(params: Any, images: Any, labels: Any) -> float:
    """Largest difference between ``vmap(grad)`` and a Python loop of ``grad`` calls."""
    batched = per_example_grads(params, images, labels)
    worst = 0.0
    for i in range(len(labels)):
        single = kenaz.grad(example_loss)(params, images[i], labels[i])
        for b, s in zip(tree.leaves(batched), tree.leaves(single), strict=True):
            worst = max(worst, float(np.abs(np.asarray(b)[i] - np.asarray(s)).max()))
    return worst


def train(
    private: bool,
    epochs: int = 20,
    batch_size: int = 128,
    clip_norm: float = 1.0,
    noise_multiplier: float = 1.0,
    seed: int = 0,
) -> float:
    """Train with DP-SGD (or plain SGD) and return the test accuracy."""
    (x_train, y_train), (x_test, y_test) = data.load_digits(seed=seed)
    params = MODEL.init(seed)
    optimizer = optim.sgd(0.5 if private else 0.2, momentum=0.9)
    opt_state = optimizer.init(params)
    rng = np.random.default_rng(seed)
    batch_loss = kenaz.grad(lambda p, x, y: nn.softmax_cross_entropy(MODEL(p, x), y))
    batches = data.Batches((x_train, y_train), batch_size, seed=seed, drop_last=True)
    for _ in range(epochs):
        for images, labels in batches:
            if private:
                grads = private_gradient(params, images, labels, clip_norm, noise_multiplier, rng)
            else:
                grads = batch_loss(params, images, labels)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            params = optim.apply_updates(params, updates)
    return nn.accuracy(MODEL(params, x_test), y_test)


def main() -> None:
    started = time.perf_counter()
    (x_train, y_train), _ = data.load_digits()
    params = MODEL.init(0)
    difference = check_per_example_gradients(params, x_train[:8], y_train[:8])
    print(f"vmap(grad) vs a loop of grad, 8 examples: max difference {difference:.2e}")
    grads = per_example_grads(params, x_train[:64], y_train[:64])
    print(f"per-example gradient of the first weight: shape {grads[0]['weight'].shape}")
    print(f"plain SGD test accuracy:                       {100 * train(private=False):.2f}%")
    print(f"DP-SGD test accuracy (clip 1.0, noise mult. 1.0): {100 * train(private=True):.2f}%")
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
