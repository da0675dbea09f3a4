"""Per-example gradients of a 100 -> 32 -> 1 tanh MLP (squared error), batch 256, float32.

``vmap(grad(loss))`` against the gradient vectorized by hand in NumPy, and
against a Python loop of ``grad`` over the examples.
Aims: at most 1.5x the NumPy time, at least 30x faster than the loop.

Run: ``.venv/bin/python benchmarks/per_example_grads.py``
"""

from __future__ import annotations

import _timing  # noqa: I001  (first: pins BLAS to one thread before NumPy loads)
import numpy as np

import kenaz
import kenaz.numpy as knp

BATCH, INPUTS, HIDDEN = 256, 100, 32


def make_inputs():
    rng = np.random.default_rng(0)
    params = (
        (rng.standard_normal((INPUTS, HIDDEN)) / np.sqrt(INPUTS)).astype(np.float32),
        (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32),
        (rng.standard_normal((HIDDEN, 1)) / np.sqrt(HIDDEN)).astype(np.float32),
        (0.1 * rng.standard_normal(1)).astype(np.float32),
    )
    x = rng.standard_normal((BATCH, INPUTS)).astype(np.float32)
    y = rng.standard_normal(BATCH).astype(np.float32)
    return params, x, y


def loss(params, x, y):
    """Squared error of one example: ``x`` of shape (100,), ``y`` a scalar."""
    w1, b1, w2, b2 = params
    prediction = knp.tanh(x @ w1 + b1) @ w2 + b2
    return knp.sum((prediction - y) ** 2)


def numpy_per_example_grads(params, x, y):
    """The backward pass by hand, with a leading batch axis on every cotangent."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    d_out = 2 * (h @ w2 + b2 - y[:, None])
    d_z = (d_out @ w2.T) * (1 - h * h)
    return x[:, :, None] * d_z[:, None, :], d_z, h[:, :, None] * d_out[:, None, :], d_out


def main() -> None:
    params, x, y = make_inputs()
    kparams = tuple(knp.asarray(p) for p in params)
    kx, ky = knp.asarray(x), knp.asarray(y)
    per_example = kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))
    one_grad = kenaz.grad(loss)

    def python_loop():
        return [one_grad(kparams, kx[i], ky[i]) for i in range(BATCH)]

    for got, want in zip(
        per_example(kparams, kx, ky), numpy_per_example_grads(params, x, y), strict=True
    ):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)

    medians = _timing.interleaved_medians(
        {
            "numpy (hand-vectorized)": lambda: numpy_per_example_grads(params, x, y),
            "kenaz vmap(grad(loss))": lambda: per_example(kparams, kx, ky),
            "kenaz loop of grad": python_loop,
        },
        rounds=21,
    )
    _timing.report(
        f"per-example gradients, MLP {INPUTS}->{HIDDEN}->1, batch {BATCH}, float32",
        medians,
        "numpy (hand-vectorized)",
    )
    speedup = medians["kenaz loop of grad"] / medians["kenaz vmap(grad(loss))"]
    print(f"  vmap is {speedup:.1f}x faster than the loop (aim: >= 30x); aim vs numpy: <= 1.5x")


if __name__ == "__main__":
    main()
