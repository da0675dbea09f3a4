"""The full Jacobian of a 100 -> 100 function, ``tanh(W @ x + b)`` composed twice.

``jacfwd`` and ``jacrev`` (each one ``vmap`` over the basis vectors) against
the analytic Jacobian written in NumPy, ``diag(d2) W2 diag(d1) W1``.
Aim: at most 10x the analytic time.

Run: ``.venv/bin/python benchmarks/jacobian.py``
"""

from __future__ import annotations

import _timing  # noqa: I001  (first: pins BLAS to one thread before NumPy loads)
import numpy as np

import kenaz
import kenaz.numpy as knp

SIZE = 100


def make_inputs():
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE) for _ in range(2))
    b1, b2 = (0.1 * rng.standard_normal(SIZE) for _ in range(2))
    return (w1, b1, w2, b2), rng.standard_normal(SIZE)


def two_layers(params, x):
    w1, b1, w2, b2 = params
    return knp.tanh(w2 @ knp.tanh(w1 @ x + b1) + b2)


def numpy_jacobian(params, x):
    w1, b1, w2, b2 = params
    h = np.tanh(w1 @ x + b1)
    out = np.tanh(w2 @ h + b2)
    return ((1 - out * out)[:, None] * w2) @ ((1 - h * h)[:, None] * w1)


def main() -> None:
    params, x = make_inputs()
    kparams = tuple(knp.asarray(p) for p in params)
    kx = knp.asarray(x)
    forward = kenaz.jacfwd(two_layers, argnums=1)
    reverse = kenaz.jacrev(two_layers, argnums=1)
    expected = numpy_jacobian(params, x)
    for jacobian in (forward, reverse):
        np.testing.assert_allclose(np.asarray(jacobian(kparams, kx)), expected, rtol=1e-10)
    medians = _timing.interleaved_medians(
        {
            "numpy (analytic)": lambda: numpy_jacobian(params, x),
            "kenaz jacfwd": lambda: forward(kparams, kx),
            "kenaz jacrev": lambda: reverse(kparams, kx),
        }
    )
    _timing.report(
        f"Jacobian of tanh(W2 @ tanh(W1 @ x + b1) + b2), {SIZE} -> {SIZE}, float64 (aim: <= 10x)",
        medians,
        "numpy (analytic)",
    )


if __name__ == "__main__":
    main()
