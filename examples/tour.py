"""A tour of kenaz: run it first (``make demo``).

It shows the transformations on small functions, printing what each one
computes, and how much faster ``kenaz.jit`` runs one, then trains a small
neural network on scikit-learn's bundled handwritten digits with a progress
bar, reports the test accuracy and writes the training curves to ``docs/digits_mlp_training.png``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: threads only add overhead

import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kenaz
import kenaz.numpy as knp
from kenaz import io, nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from digits_mlp import DOCS, train_digits_mlp  # noqa: I001  (the example next to this file)


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def show_grad() -> None:
    section("grad: derivatives of ordinary Python functions")

    def f(x):
        return knp.sin(x) * x**2

    x = 1.5
    exact = math.cos(x) * x**2 + 2 * x * math.sin(x)
    print("f(x) = sin(x) * x**2 at x = 1.5")
    print(f"  kenaz.grad(f)(x)                = {float(kenaz.grad(f)(x)):.10f}")
    print(f"  by hand: cos(x) x^2 + 2x sin(x) = {exact:.10f}")
    print(f"  kenaz.grad(kenaz.grad(f))(x)    = {float(kenaz.grad(kenaz.grad(f))(x)):.10f}")

    def relu_or_square(x):
        return x * 2 if x > 0 else x**2  # Python control flow just works

    print(
        f"  control flow: grad of (2x if x > 0 else x^2) at 3 and -3: "
        f"{float(kenaz.grad(relu_or_square)(3.0))}, {float(kenaz.grad(relu_or_square)(-3.0))}"
    )
    params = {"w": knp.array([1.0, -2.0]), "b": 0.5}
    grads = kenaz.grad(lambda p: knp.sum(knp.tanh(p["w"] * 3 + p["b"])))(params)
    print(
        f"  pytrees: gradient of sum(tanh(3 w + b)) w.r.t. {{'w', 'b'}} = "
        f"{{'w': {np.round(grads['w'].numpy(), 4).tolist()}, 'b': {float(grads['b']):.4f}}}"
    )


def show_jvp() -> None:
    section("jvp: forward mode, a directional derivative in one pass")

    def g(v):
        return knp.array([v[0] * v[1], knp.sin(v[0]) + v[1] ** 3])

    point, direction = knp.array([1.0, 2.0]), knp.array([1.0, 0.0])
    value, tangent = kenaz.jvp(g, (point,), (direction,))
    print("g(v) = [v0 v1, sin v0 + v1^3] at v = (1, 2), along (1, 0)")
    print(f"  g(v) = {np.round(value.numpy(), 6).tolist()}")
    print(
        f"  J(v) @ (1, 0) = {np.round(tangent.numpy(), 6).tolist()}   (by hand: [v1, cos v0] = "
        f"[2.0, {math.cos(1.0):.6f}])"
    )
    jacobian = np.round(kenaz.jacfwd(g)(point).numpy(), 6)
    print("  the whole Jacobian, jacfwd(g)(v):")
    print("    " + str(jacobian).replace("\n", "\n    "))


def show_vmap() -> None:
    section("vmap: write it for one example, run it on a batch")

    def predict(w, x):  # one example: x has shape (3,)
        return knp.tanh(knp.dot(w, x))

    w = knp.array([0.5, -1.0, 2.0])
    batch = knp.array(np.arange(12.0).reshape(4, 3) / 10)
    batched = kenaz.vmap(predict, in_axes=(None, 0))(w, batch)
    print(f"  predict(w, x) for 4 examples at once: {np.round(batched.numpy(), 4).tolist()}")

    def loss(w, x, y):
        return (predict(w, x) - y) ** 2

    per_example = kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))(w, batch, knp.ones(4))
    print(f"  per-example gradients, vmap(grad(loss)): shape {per_example.shape}")
    rows = str(np.round(per_example.numpy(), 4) + 0.0)  # + 0.0 turns -0.0 into 0.0
    print("    " + rows.replace("\n", "\n    "))
    hessian = kenaz.hessian(lambda v: knp.sum(v**3))(knp.array([1.0, 2.0]))
    print(f"  hessian(sum(v**3)) at (1, 2) = {hessian.numpy().tolist()}  (diag(6 v))")


def show_debug() -> None:
    section("debug: watch every op a function performs, under any transformation")

    def f(x):
        return knp.sum(knp.exp(x) * 2.0)

    print("kenaz.debug(kenaz.grad(f))(x) for f(x) = sum(exp(x) * 2), x = [1, 1, 1]:")
    gradient = kenaz.debug(kenaz.grad(f))(knp.ones(3))
    print(f"  -> gradient 2 exp(x) = {np.round(gradient.numpy(), 6).tolist()}")


def show_jit() -> None:
    section("jit: trace once, then run one compiled NumPy function")

    def loss(w, x):
        for _ in range(50):  # 150 small ops: eager kenaz pays its bookkeeping for each
            x = knp.tanh(x @ w) * 0.9 + 0.1
        return knp.sum(x**2)

    gradient = kenaz.grad(loss)
    compiled = kenaz.jit(gradient)
    w = knp.eye(4) * 0.5
    x = knp.ones((2, 4))
    print("the program jit traced from loss(w, x) (first lines):")
    for line in str(kenaz.make_program(loss)(w, x)).splitlines()[:4]:
        print("    " + line)
    compiled(w, x)  # the first call traces and compiles

    def per_call(f, repeats=50):
        started = time.process_time()
        for _ in range(repeats):
            f(w, x)
        return (time.process_time() - started) / repeats * 1e3

    eager_ms, jit_ms = per_call(gradient), per_call(compiled)
    ops = kenaz.make_program(gradient)(w, x).primitive_count()
    same = np.allclose(gradient(w, x).numpy(), compiled(w, x).numpy(), rtol=1e-12)
    print(
        f"  grad(loss), {ops} ops forward and backward: eager {eager_ms:.2f} ms, "
        f"jit {jit_ms:.2f} ms per call ({eager_ms / jit_ms:.1f}x faster); same gradient: {same}"
    )
    print(f"  {compiled.cache_info()}")


def train_digits() -> None:
    section("training: a 64-128-10 MLP on scikit-learn's handwritten digits")
    started = time.perf_counter()
    params, history, test_accuracy = train_digits_mlp(epochs=30, progress=True)
    seconds = time.perf_counter() - started
    print(
        f"  {nn.count_parameters(params)} parameters, {len(history['loss'])} epochs "
        f"in {seconds:.1f} s"
    )
    print(f"  final training loss {history['loss'][-1]:.4f}")
    print(f"  TEST ACCURACY: {100 * test_accuracy:.2f}% on 359 held-out images")
    print(f"  training curves written to {DOCS / 'digits_mlp_training.png'}")
    with tempfile.TemporaryDirectory() as directory:
        path = io.save(Path(directory) / "digits_mlp.npz", params)
        restored = io.load(path, template=params)
        same = all(
            np.array_equal(a, b)
            for a, b in zip(kenaz.tree.leaves(params), kenaz.tree.leaves(restored), strict=True)
        )
        print(
            f"  saved and reloaded the parameters with kenaz.io (.npz, no pickle): "
            f"identical = {same}"
        )


def main() -> None:
    started = time.perf_counter()
    print(
        f"kenaz {kenaz.__version__}: automatic differentiation for NumPy, built on effect handlers"
    )
    show_grad()
    show_jvp()
    show_vmap()
    show_debug()
    show_jit()
    train_digits()
    print(
        f"\nTour finished in {time.perf_counter() - started:.1f} s. "
        "More in examples/: digits_cnn.py, dp_sgd.py, newton.py, projectile_ode.py"
    )


if __name__ == "__main__":
    main()
