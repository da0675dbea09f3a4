"""Newton's method with ``kenaz.hessian``: Rosenbrock's valley, then logistic regression.

Run: ``python examples/newton.py`` (the second part needs scikit-learn's digits,
``pip install 'kenaz[examples]'``).

Newton's method minimizes ``f`` by solving ``H(x) step = -grad f(x)`` at each
iterate: near a minimum it converges quadratically (the number of correct
digits doubles each step), where gradient descent crawls. kenaz gives both
derivatives of the same plain function: ``kenaz.grad(f)`` and
``kenaz.hessian(f)`` (forward-over-reverse).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: threads only add overhead

import time
from collections.abc import Callable

import numpy as np

import kenaz
import kenaz.numpy as knp
from kenaz import nn


def rosenbrock(x: kenaz.Tensor) -> kenaz.Tensor:
    """The banana-shaped valley ``(1 - x0)^2 + 100 (x1 - x0^2)^2``, minimum 0 at (1, 1)."""
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def newton_minimize(
    f: Callable[[kenaz.Tensor], kenaz.Tensor],
    x: kenaz.Tensor,
    steps: int = 50,
    tolerance: float = 1e-12,
    verbose: bool = True,
) -> tuple[kenaz.Tensor, int]:
    """Damped Newton: a Newton step, halved until ``f`` decreases (a backtracking line search)."""
    value_and_gradient = kenaz.value_and_grad(f)
    hessian = kenaz.hessian(f)
    for iteration in range(1, steps + 1):
        value, gradient = value_and_gradient(x)
        if verbose:
            print(
                f"  step {iteration - 1:2d}: f = {float(value):.3e}  |grad| = "
                f"{float(knp.linalg.norm(gradient)):.3e}"
            )
        if float(knp.linalg.norm(gradient)) < tolerance:
            return x, iteration - 1
        direction = -knp.linalg.solve(hessian(x), gradient)
        step_size = 1.0
        while float(f(x + step_size * direction)) > float(value) and step_size > 1e-8:
            step_size /= 2
        x = x + step_size * direction
    return x, steps


def gradient_descent_steps(
    f: Callable, x: kenaz.Tensor, learning_rate: float, target: float, limit: int = 20000
) -> int | None:
    """How many plain gradient steps bring ``f`` below ``target`` (None: not within ``limit``)."""
    gradient = kenaz.grad(f)
    for step in range(1, limit + 1):
        x = x - learning_rate * gradient(x)
        if float(f(x)) < target:
            return step
    return None


def gradient_descent_value(f: Callable, x: kenaz.Tensor, learning_rate: float, steps: int) -> float:
    """``f`` after ``steps`` plain gradient steps."""
    gradient = kenaz.grad(f)
    for _ in range(steps):
        x = x - learning_rate * gradient(x)
    return float(f(x))


def logistic_regression_demo() -> None:
    """Fit L2-regularized logistic regression "is this digit a 3 or an 8?" by Newton's method."""
    from kenaz import data

    (x_train, y_train), (x_test, y_test) = data.load_digits(seed=0)
    keep_train, keep_test = np.isin(y_train, (3, 8)), np.isin(y_test, (3, 8))
    x_train, y_train = x_train[keep_train], (y_train[keep_train] == 8).astype(float)
    x_test, y_test = x_test[keep_test], (y_test[keep_test] == 8).astype(float)
    features = x_train.shape[1]

    def loss(w: kenaz.Tensor) -> kenaz.Tensor:
        logits = x_train @ w[:features] + w[features]
        return nn.binary_cross_entropy(logits, y_train) + 1e-3 * knp.sum(w[:features] ** 2)

    print(f"\nLogistic regression, 3 vs 8: {len(x_train)} training images, {features + 1} weights")
    w, iterations = newton_minimize(loss, knp.zeros(features + 1), verbose=False)
    predictions = (x_test @ w[:features] + w[features]).numpy() > 0
    print(
        f"  Newton converged in {iterations} steps (Hessian {features + 1}x{features + 1}), "
        f"loss {float(loss(w)):.5f}"
    )
    print(f"  test accuracy: {100 * np.mean(predictions == y_test):.2f}%")
    target = float(loss(w)) + 1e-3
    steps = gradient_descent_steps(loss, knp.zeros(features + 1), 1.0, target)
    print(f"  gradient descent needs {steps} steps just to get within 1e-3 of that loss")


def main() -> None:
    started = time.perf_counter()
    print("Rosenbrock from (-1.2, 1):")
    x, iterations = newton_minimize(rosenbrock, knp.array([-1.2, 1.0]))
    print(f"Newton: minimum at {np.round(x.numpy(), 8).tolist()} after {iterations} steps")
    print(f"Hessian there:\n{kenaz.hessian(rosenbrock)(x).numpy()}")
    for steps in (iterations, 2000):
        value = gradient_descent_value(rosenbrock, knp.array([-1.2, 1.0]), 1e-3, steps)
        print(f"gradient descent (learning rate 1e-3) after {steps} steps: f = {value:.3e}")
    logistic_regression_demo()
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
