"""Tracing by abstract evaluation (kenaz.compiler.abstract): the same program as a trace
that runs every op on the real values, without running the arithmetic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Op
from kenaz.compiler.program import TracingHandler, trace
from kenaz.ops import batching

rng = np.random.default_rng(0)
M32 = rng.standard_normal((5, 4)).astype(np.float32)
V32 = rng.standard_normal(4).astype(np.float32)
M = rng.standard_normal((4, 4))
V = rng.standard_normal(4)
INTS = np.arange(12).reshape(3, 4)


def _mlp(w: Any, x: Any) -> Any:
    h = knp.tanh(x @ w + 0.5)
    return knp.sum(h - knp.logsumexp(h, axis=1, keepdims=True)) / x.shape[0]


CASES: dict[str, tuple[Callable, tuple]] = {
    "grad of an MLP loss, float32": (kenaz.grad(_mlp), (M32.T.copy(), M32)),
    "per-example grads": (
        kenaz.vmap(kenaz.grad(lambda w, x: knp.sum(knp.tanh(w @ x) ** 2)), in_axes=(None, 0)),
        (M, M),
    ),
    "jacrev": (kenaz.jacrev(lambda x: knp.tanh(M @ knp.tanh(M @ x + 1.0))), (V,)),
    "jacfwd": (kenaz.jacfwd(lambda x: knp.sin(x) * knp.sum(x**2)), (V,)),
    "hvp": (lambda x, v: kenaz.hvp(lambda x: knp.sum(knp.tanh(M @ x) ** 2), (x,), (v,)), (V, V)),
    "weak scalars keep float32": (lambda x: x * 2.0 + 1 - x / 3, (V32,)),
    "Python number inputs": (lambda x, a, n: x * a + n, (V32, 2.5, 3)),
    "numbers on either side": (
        lambda x, i: (2 * x - x * 3, 2.0 / x + x**2, (7 - x) * 0.5, i * 2 + 3 * i, i / 2),
        (V32, INTS.astype(np.int8)),
    ),
    "integers and booleans": (
        lambda i, x: (knp.where(i % 3 == 0, x, -x), i // 2, (i > 4).astype(np.float32)),
        (INTS, M32[:3]),
    ),
    "indexing and shapes": (
        lambda x: (
            x[1:3],
            x[np.array([0, 2])],
            x[None, :, 0],
            knp.concatenate([x, x * 2], axis=0),
            knp.stack([x, x]),
            knp.reshape(x, (-1,)),
            knp.transpose(x),
            knp.squeeze(knp.expand_dims(x, 0), 0),
            knp.flip(x, 1),
            knp.pad(x, 1),
            knp.tile(x, (2, 1)),
            knp.repeat(x, 2, axis=0),
            knp.broadcast_to(x[:1], (3, 4)),
        ),
        (M32[:3],),
    ),
    "reductions": (
        lambda x: (
            knp.sum(x, axis=(0, 1), keepdims=True),
            knp.max(x, axis=1),
            knp.argmax(x),
            knp.argmin(x, axis=0),
            knp.prod(x, axis=0),
            knp.mean(x),
            knp.std(x, axis=1),
        ),
        (M32,),
    ),
    "products": (
        lambda x, m: (
            x @ m,
            m @ x,
            x @ x,
            knp.stack([m, m]) @ m,
            knp.einsum("ij,jk->ik", m, m),
            knp.einsum("ii->i", m),
            knp.einsum("ij,j", m, x),
        ),
        (V, M),
    ),
    "complex": (lambda z: knp.abs(z * 1j + z.conj()), (M * (1 + 2j),)),
    "an op without a rule between abstract ones": (
        lambda x: knp.sin(knp.cumsum(knp.exp(x) * 2.0, axis=0)) + 1.0,
        (M,),
    ),
}


def _programs(f: Callable, args: tuple) -> tuple[str, str]:
    abstract = trace(f, args, {})
    concrete = TracingHandler(getattr(f, "__name__", "f"))
    concrete.abstract = False  # every op on the real values, as tracing was before
    return str(abstract), str(trace(f, args, {}, tracing=concrete))


@pytest.mark.parametrize("name", list(CASES))
def test_abstract_trace_is_the_program_of_a_real_trace(name: str) -> None:
    f, args = CASES[name]
    abstract, concrete = _programs(f, args)
    assert abstract == concrete
    jitted = kenaz.jit(f)
    expected = kenaz.tree.leaves(f(*args))
    for _ in range(3):  # traced, checked, then run on the staged program
        got = kenaz.tree.leaves(jitted(*args))
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            assert np.asarray(a).dtype == np.asarray(b).dtype


def test_tracing_runs_no_arithmetic_on_the_arrays() -> None:
    sizes: list[int] = []

    def impl(x: Any) -> Any:
        sizes.append(np.size(x))
        return np.cos(x)

    counted = Op("counted_cos", impl, batch=batching.elementwise)
    big = np.ones((300, 400))
    program = kenaz.make_program(lambda x: counted(counted(x) @ big.T) * 2.0)(big)
    names = [eq.op.name for eq in program.equations]
    assert names == ["counted_cos", "matmul", "counted_cos", "mul"]
    assert program.equations[2].outputs[0].shape == (300, 300)
    assert max(sizes) == 1  # a one-element stand-in, once: the dtype is remembered


def test_an_op_without_a_rule_runs_on_real_values_computed_on_demand() -> None:
    seen: list[np.ndarray] = []

    def impl(x: Any) -> Any:
        seen.append(np.array(x))
        return x[::-1].copy()

    reverse = Op("reverse_rows", impl)  # no batching rule: no abstract rule either
    x = rng.standard_normal((3, 2))
    program = kenaz.make_program(lambda x: reverse(knp.exp(x) + 1.0) * 3.0)(x)
    assert [eq.op.name for eq in program.equations] == ["exp", "add", "reverse_rows", "mul"]
    np.testing.assert_array_equal(seen[0], np.exp(x) + 1.0)  # the real operand, computed now
    np.testing.assert_array_equal(kenaz.jit(lambda x: reverse(knp.exp(x) + 1.0))(x).numpy(),
                                  (np.exp(x) + 1.0)[::-1])  # fmt: skip


def test_errors_are_the_ops_own() -> None:
    with pytest.raises(ValueError, match="broadcast"):
        kenaz.make_program(lambda x, y: x + y)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="matmul"):
        kenaz.make_program(lambda x, y: x @ y)(np.ones((2, 3)), np.ones((2, 3)))


@pytest.mark.parametrize("name", list(CASES))
def test_the_remembered_types_give_the_rules_program(name: str, monkeypatch) -> None:
    # The tracer looks ops of one variable, or of two operands (variables or arrays), up by
    # their operands' types before asking any rule: the same program as asking the rule
    # every time (an empty table, never filled), traced twice (the second from the table).
    import kenaz.compiler.program as program_module

    f, args = CASES[name]
    trace(f, args, {})
    fast = str(trace(f, args, {}))
    monkeypatch.setattr(program_module, "types_seen", {})
    assert str(trace(f, args, {})) == fast
    assert not program_module.types_seen


def test_only_rules_their_operands_types_decide_are_remembered() -> None:
    # A shape op's second operand may be an index array whose values make the shape: never
    # remembered by types; an elementwise op's and a product's are.
    from kenaz.compiler import abstract
    from kenaz.ops import linalg, shape

    f64 = np.dtype("float64")
    types = [((3,), f64)]
    for rule, operands, op, remembered in [
        (abstract._shape_op, 2, shape._reshape, False),
        (abstract._shape_op, 1, shape._reshape, True),
        (abstract._elementwise, 2, batching.elementwise, True),
        (abstract._matmul, 2, linalg._matmul, True),
        (abstract._einsum, 2, linalg._einsum, False),
        (abstract._reduction, 1, np.sum, True),
    ]:
        key = ("test key", op, operands)
        abstract.remember_types(key, rule, types, operands)
        assert (abstract.types_seen.pop(key, None) is types) == remembered, (rule, operands)


def test_a_remembered_type_is_told_from_a_weak_scalars() -> None:
    # float32 * a float64 0-d array is float64; float32 * a Python float (a weak input) stays
    # float32: the memo the tracer reads keys the weak type, not the dtype.
    x = V32
    strong = trace(lambda x, s: x * s, (x, np.float64(2.0)), {})
    weak = trace(lambda x, s: x * s, (x, 2.0), {})
    assert strong.equations[-1].outputs[0].dtype == np.float64
    assert weak.equations[-1].outputs[0].dtype == np.float32
    assert str(weak) == _programs(lambda x, s: x * s, (x, 2.0))[1]


def test_a_second_trace_finds_every_remembered_type(monkeypatch) -> None:
    # Per-example gradients: elementwise ops, products, reductions and shape ops with their
    # parameters, all remembered at the first trace; the second asks no rule for any.
    import kenaz.compiler.program as program_module

    f, args = CASES["per-example grads"]
    trace(f, args, {})
    asked: list = []
    monkeypatch.setattr(program_module, "remember_types", lambda *a: asked.append(a))
    program = trace(f, args, {})
    assert {eq.op.name for eq in program.equations} >= {"matmul", "tanh", "reshape", "sum"}
    assert asked == []


def test_values_are_computed_on_demand_inside_and_after_a_calls_body() -> None:
    # An op without a rule (cumsum) inside a call's body (checkpoint's, an inner jit's) reads
    # a value made before the call, and one made in the body; after the call, another reads
    # the call's output: the tracer finds each producer (the program's, the body's) then.
    inner = kenaz.jit(lambda v: knp.cumsum(knp.exp(v) * 2.0, axis=0) * 3.0)
    remat = kenaz.checkpoint(lambda v: knp.cumsum(knp.cos(v) * v, axis=0))

    def f(x):
        y = knp.sin(x) + 1.0
        z = knp.cumsum(remat(y) + inner(y * 0.5), axis=0)
        return knp.cumsum(z * y, axis=0)

    x = rng.standard_normal(5)
    program = kenaz.make_program(f)(x)
    assert program.calls is True
    expected = f(knp.asarray(x)).numpy()
    jitted = kenaz.jit(f)
    for _ in range(3):  # traced, checked, then the staged program
        np.testing.assert_array_equal(jitted(x).numpy(), expected)
