"""A Hessian-vector product of ``sum(tanh(A @ x) ** 2)``, A 500 x 500, float64.

``hvp`` (forward-over-reverse) against the product written by hand in NumPy.
Aim: at most 3x the hand-written time.

Run: ``.venv/bin/python benchmarks/hvp.py``
"""

from __future__ import annotations

import _timing  # noqa: I001  (first: pins BLAS to one thread before NumPy loads)
import numpy as np

import kenaz
import kenaz.numpy as knp

SIZE = 500


def make_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE)
    return a, rng.standard_normal(SIZE), rng.standard_normal(SIZE)


def numpy_hvp(a, x, v):
    """f = sum(t**2), t = tanh(a x): H v = a^T (f''(z) * (a v)), f''(z) = 2 (1 - t^2)(1 - 3 t^2)."""
    t = np.tanh(a @ x)
    curvature = 2 * (1 - t * t) * (1 - 3 * t * t)
    return a.T @ (curvature * (a @ v))


def main() -> None:
    a, x, v = make_inputs()
    ka, kx, kv = knp.asarray(a), knp.asarray(x), knp.asarray(v)
    f = lambda y: knp.sum(knp.tanh(ka @ y) ** 2)
    np.testing.assert_allclose(
        np.asarray(kenaz.hvp(f, (kx,), (kv,))), numpy_hvp(a, x, v), rtol=1e-9
    )
    medians = _timing.interleaved_medians(
        {
            "numpy (hand-written)": lambda: numpy_hvp(a, x, v),
            "kenaz hvp": lambda: kenaz.hvp(f, (kx,), (kv,)),
        }
    )
    _timing.report(
        f"Hessian-vector product of sum(tanh(A @ x)**2), A {SIZE}x{SIZE}, float64 (aim: <= 3x)",
        medians,
        "numpy (hand-written)",
    )


if __name__ == "__main__":
    main()
