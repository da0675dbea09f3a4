"""Per-op overhead of kenaz next to hand-written NumPy.

Prints, in one run:
- for 1000 steps of ``x = sin(x) * 1.01 + 0.1`` on 16 float64 elements, the
  gradient of ``sum(x)``: kenaz's microseconds per op next to a hand-written
  NumPy forward+backward pass;
- the cost of one ``kenaz.numpy.sin`` (and ``+``) with no handler next to NumPy's.

Run: ``.venv/bin/python benchmarks/overhead.py``
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import timeit  # noqa: E402

import numpy as np  # noqa: E402

import kenaz  # noqa: E402
import kenaz.numpy as knp  # noqa: E402

STEPS = 1000
OPS_PER_STEP = 3  # sin, mul, add


def kenaz_loss(x):
    for _ in range(STEPS):
        x = knp.sin(x) * 1.01 + 0.1
    return knp.sum(x)


def numpy_grad(x):
    """Forward keeping cos(x) for the backward pass, then the chain rule by hand."""
    derivatives = []
    for _ in range(STEPS):
        derivatives.append(np.cos(x) * 1.01)
        x = np.sin(x) * 1.01 + 0.1
    g = np.ones_like(x)
    for d in reversed(derivatives):
        g = g * d
    return g


def median_seconds(fn, repeat: int = 7, number: int = 3) -> float:
    fn()  # warm up
    return float(np.median(timeit.repeat(fn, repeat=repeat, number=number))) / number


def main() -> None:
    x0 = np.linspace(-1.0, 1.0, 16)
    grad_fn = kenaz.grad(kenaz_loss)
    np.testing.assert_allclose(np.asarray(grad_fn(x0)), numpy_grad(x0), rtol=1e-10)

    ops = STEPS * OPS_PER_STEP
    t_kenaz = median_seconds(lambda: grad_fn(x0))
    t_numpy = median_seconds(lambda: numpy_grad(x0))
    print(f"grad of {STEPS} steps of x = sin(x) * 1.01 + 0.1 on 16 float64 ({ops} ops)")
    print(f"  kenaz grad        {t_kenaz / ops * 1e6:7.2f} us/op")
    print(f"  NumPy by hand     {t_numpy / ops * 1e6:7.2f} us/op")
    print(f"  ratio             {t_kenaz / t_numpy:7.2f}x")

    a = np.linspace(-1.0, 1.0, 16)
    ka = knp.asarray(a)
    n = 200_000
    for name, kenaz_call, numpy_call in [
        ("sin", lambda: knp.sin(ka), lambda: np.sin(a)),
        ("add", lambda: ka + ka, lambda: a + a),
    ]:
        t_k = min(timeit.repeat(kenaz_call, repeat=5, number=n)) / n
        t_n = min(timeit.repeat(numpy_call, repeat=5, number=n)) / n
        print(f"no handler, one {name} on 16 float64")
        print(f"  kenaz             {t_k * 1e9:7.0f} ns")
        print(f"  NumPy             {t_n * 1e9:7.0f} ns")
        print(f"  ratio             {t_k / t_n:7.2f}x")


if __name__ == "__main__":
    main()
