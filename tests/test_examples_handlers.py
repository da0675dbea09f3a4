"""The user-handler examples (examples/op_counter.py, flop_counter.py, float32_policy.py)
compose with grad and vmap like the built-in handlers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import grad, handler, vmap

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"kenaz_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


op_counter = load("op_counter")
flop_counter = load("flop_counter")
float32_policy = load("float32_policy")


def loss(w, x):
    return knp.sum(knp.tanh(x @ w) ** 2)


W = knp.array(np.random.default_rng(0).normal(size=(3, 2)))
X = knp.array(np.random.default_rng(1).normal(size=(4, 3)))


# -- op counter ------------------------------------------------------------------------------
def test_op_counter_outside_grad_sees_forward_and_backward():
    counter = op_counter.OpCounter()
    with handler(counter):
        g = grad(loss)(W, X)
    np.testing.assert_allclose(g.numpy(), grad(loss)(W, X).numpy())
    assert counter.counts["tanh"] == 1 and counter.counts["matmul"] == 2
    assert counter.counts["transpose"] == 1  # backward only


def test_op_counter_inside_grad_and_vmap():
    counter = op_counter.OpCounter()
    g = grad(op_counter.counting(loss, counter))(W, X)
    np.testing.assert_allclose(g.numpy(), grad(loss)(W, X).numpy())
    assert dict(counter.counts) == {"matmul": 1, "tanh": 1, "square": 1, "sum": 1}
    inside, outside = op_counter.OpCounter(), op_counter.OpCounter()
    per_example = vmap(op_counter.counting(loss, inside), in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(
        per_example.numpy(), [float(loss(W, X[i : i + 1])) for i in range(4)], rtol=1e-12
    )
    assert inside.counts["matmul"] == 1  # vectorized: once for the whole batch
    op_counter.counting(vmap(loss, in_axes=(None, 0)), outside)(W, X)
    assert outside.counts["matmul"] == 1


def test_op_counter_sees_a_custom_rule_as_one_op():
    counter = op_counter.OpCounter()
    layer = kenaz.checkpoint(lambda x: knp.tanh(x) * 2)
    op_counter.counting(layer, counter)(knp.ones(3))
    assert dict(counter.counts) == {"checkpoint[<lambda>]": 1}


# -- FLOP counter ----------------------------------------------------------------------------
def test_flop_formulas():
    assert flop_counter.matmul_flops((8, 4), (4, 5)) == 2 * 8 * 4 * 5
    assert flop_counter.matmul_flops((4,), (4, 5)) == 2 * 4 * 5
    assert flop_counter.matmul_flops((7, 8, 4), (4,)) == 2 * 7 * 8 * 4
    assert flop_counter.einsum_flops("ij,jk->ik", [(8, 4), (4, 5)]) == 2 * 8 * 4 * 5


def test_flop_counter_with_grad_and_vmap():
    flops = flop_counter.FlopCounter()
    with handler(flops):
        grad(loss)(W, X)
    forward = 2 * 4 * 3 * 2
    assert flops.total == forward * 2  # the forward product and one for dL/dW
    flops = flop_counter.FlopCounter()
    with handler(flops):
        vmap(loss, in_axes=(None, 0))(W, X)  # the whole batch, once
    assert flops.total == forward
    inside = flop_counter.FlopCounter()

    def counted(x):
        with handler(inside):
            return loss(W, x)

    vmap(counted)(knp.reshape(X, (4, 1, 3)))  # one example's product
    assert inside.total == forward // 4
    flops = flop_counter.FlopCounter()
    with handler(flops):
        knp.einsum("bi,ij->bj", X, W)
    assert flops.by_op["einsum"] == forward


# -- float32 policy --------------------------------------------------------------------------
def test_float32_policy_values_and_dtypes():
    f32 = float32_policy.in_float32(loss)
    out = f32(W, X)
    assert out.dtype == np.float32
    assert float(out) == pytest.approx(float(loss(W, X)), rel=1e-5)
    with handler(float32_policy.Float32Policy()):
        assert (knp.ones(2).astype(float) * 2.0).dtype == np.float32


def test_float32_policy_composes_with_grad_and_vmap():
    expected = grad(loss)(W, X).numpy()
    outside = grad(float32_policy.in_float32(loss))(W, X)  # grad differentiates the casts
    assert outside.dtype == np.float64
    np.testing.assert_allclose(outside.numpy(), expected, rtol=1e-5)
    inside = float32_policy.in_float32(grad(loss))(W, X)  # backward arithmetic in float32 too
    assert inside.dtype == np.float32
    np.testing.assert_allclose(inside.numpy(), expected, rtol=1e-5)
    batched = vmap(float32_policy.in_float32(loss), in_axes=(None, 0))(W, X)
    assert batched.dtype == np.float32 and batched.shape == (4,)
    batched = float32_policy.in_float32(vmap(grad(loss), in_axes=(None, 0)))(W, X)
    assert batched.dtype == np.float32 and batched.shape == (4, 3, 2)


@pytest.mark.parametrize("name", ["op_counter", "flop_counter", "float32_policy"])
def test_examples_run(name, capsys):
    load(name).main()
    assert capsys.readouterr().out
