"""A user's typed script: `mypy --strict` must accept it and infer what the asserts say.

tests/typing/test_typing.py runs mypy on this file (and pytest runs it too, so
that it stays a working program). `assert_type` fails the mypy check when kenaz's
annotations stop telling an editor what a call returns.
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor
from kenaz.scipy.optimize import OptimizeResult, minimize

if TYPE_CHECKING or sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover - Python 3.10 runs the script without the checks

    def assert_type(value: Any, _type: Any) -> Any:
        return value


Params = dict[str, Tensor]


def predict(params: Params, x: Tensor) -> Tensor:
    return knp.tanh(x @ params["w"] + params["b"])


def loss(params: Params, x: Tensor, y: Tensor) -> Tensor:
    return knp.mean((predict(params, x) - y) ** 2)


def loss_with_aux(params: Params, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    error = predict(params, x) - y
    return knp.mean(error**2), knp.max(knp.abs(error))


def main() -> None:
    rng = np.random.default_rng(0)
    params: Params = {"w": knp.asarray(rng.normal(size=(3, 1))), "b": knp.zeros(1)}
    x, y = knp.asarray(rng.normal(size=(8, 3))), knp.zeros((8, 1))

    # -- kenaz.numpy functions and Tensor methods return Tensors --------------------
    assert_type(knp.sin(x), Tensor)
    assert_type(knp.sum(x, axis=0), Tensor)
    assert_type(knp.ones(3), Tensor)
    assert_type(knp.linspace(0.0, 1.0, 5), Tensor)
    assert_type(knp.concatenate([x, x]), Tensor)
    assert_type(knp.linalg.norm(x), Tensor)
    assert_type(knp.fft.rfft(x), Tensor)
    assert_type(x + 1, Tensor)
    assert_type(2.0 * x, Tensor)
    assert_type(x @ params["w"], Tensor)
    assert_type(-x, Tensor)
    assert_type(x[0], Tensor)
    assert_type(x.T, Tensor)
    assert_type(x.sum(), Tensor)
    assert_type(x.reshape(4, 6).mean(axis=1), Tensor)
    assert_type(x.at[0].set(1.0), Tensor)
    assert_type(x.shape, tuple[int, ...])
    assert_type(x.numpy(), np.ndarray)
    assert_type(float(x.sum()), float)
    assert_type(knp.from_dlpack(np.ones(3)), Tensor)

    # -- transformations keep the function's parameters ----------------------------
    grad_loss = kenaz.grad(loss)  # an editor shows (params, x, y); test_typing checks misuse
    gradient = grad_loss(params, x, y)
    assert gradient["w"].shape == (3, 1)

    value, gradient = kenaz.value_and_grad(loss)(params, x, y)
    assert_type(value, Tensor)
    (value, worst), gradient = kenaz.value_and_grad(loss_with_aux, has_aux=True)(params, x, y)
    assert_type(value, Tensor)

    # vmap keeps parameters and result type: a batch of Tensors is a Tensor
    per_example = kenaz.vmap(predict, in_axes=(None, 0))
    assert_type(per_example(params, x), Tensor)
    per_example_grads = kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    assert per_example_grads["w"].shape == (8, 3, 1)

    def f(v: Tensor) -> Tensor:
        return knp.sum(knp.sin(v) ** 2)

    out, tangent = kenaz.jvp(f, (x,), (knp.ones_like(x),))
    assert_type(out, Tensor)
    assert_type(tangent, Tensor)
    out, pullback = kenaz.vjp(f, x)
    assert_type(out, Tensor)
    (cotangent,) = pullback(knp.ones(()))
    out, f_jvp = kenaz.linearize(f, x)
    assert_type(f_jvp(x), Tensor)
    assert_type(kenaz.debug(f, file=io.StringIO(), ops=("sin",))(x), Tensor)
    assert kenaz.hessian(f)(knp.ones(2)).shape == (2, 2)
    assert kenaz.jacrev(knp.tanh)(knp.ones(3)).shape == (3, 3)

    # -- the SciPy bridge ------------------------------------------------------------
    result = minimize(loss, params, args=(x, y), method="L-BFGS-B")
    assert_type(result, OptimizeResult)
    assert loss(result.x, x, y) <= loss(params, x, y)


if __name__ == "__main__":
    main()
