"""kenaz.jit: equal to the function it compiles, in every composition; traced once per
signature; clear errors instead of baked-in values; safe from many threads."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor
from kenaz.compiler.api import CacheInfo
from kenaz.errors import ConcretizationError, EscapedTracerError

from .reliability.test_properties import EXAMPLES, PROPERTY_SETTINGS, programs

JIT_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=max(10, EXAMPLES // 2))


def close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    for x, y in zip(kenaz.tree.leaves(a), kenaz.tree.leaves(b), strict=True):
        assert np.shape(x) == np.shape(y)
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


# -- jit(f) equals f on random programs ----------------------------------------------------------
@JIT_SETTINGS
@given(programs(), st.integers(0, 2**16))
def test_jit_equals_the_function_value_grad_jvp(case, seed: int) -> None:
    program, inputs = case
    rng = np.random.default_rng(seed)
    out = program(*inputs)
    weights = rng.normal(size=np.shape(out))
    tangents = tuple(rng.normal(size=x.shape) for x in inputs)

    def scalar(*xs):
        return knp.sum(program(*xs) * weights)

    jitted = kenaz.jit(program)
    close(jitted(*inputs), out)
    close(jitted(*inputs), out)  # the cached, compiled path
    argnums = tuple(range(len(inputs)))
    expected_grads = kenaz.grad(scalar, argnums)(*inputs)
    close(kenaz.jit(kenaz.grad(scalar, argnums))(*inputs), expected_grads)
    close(kenaz.grad(kenaz.jit(scalar), argnums)(*inputs), expected_grads)
    expected_jvp = kenaz.jvp(program, tuple(inputs), tangents)
    close(kenaz.jvp(jitted, tuple(inputs), tangents), expected_jvp)
    close(kenaz.jit(lambda *xs: kenaz.jvp(program, xs, tangents))(*inputs), expected_jvp)
    assert jitted.cache_info().traces == 1


@JIT_SETTINGS
@given(programs())
def test_jit_equals_the_function_vmap(case) -> None:
    program, inputs = case
    batched = [np.stack([x * (1.0 + 0.25 * b) - 0.1 * b for b in range(3)]) for x in inputs]
    expected = kenaz.vmap(program)(*batched)
    close(kenaz.vmap(kenaz.jit(program))(*batched), expected)
    close(kenaz.jit(kenaz.vmap(program))(*batched), expected)


@JIT_SETTINGS
@given(programs(smooth_only=True))
def test_jit_equals_the_function_hessian(case) -> None:
    program, inputs = case
    x = inputs[0]
    if x.size > 12:
        x = x.ravel()[:12].reshape(-1)
        rest = []
    else:
        rest = inputs[1:]

    def scalar(x):
        return knp.sum(program(x, *rest)) if x.shape == inputs[0].shape else knp.sum(knp.sin(x))

    expected = kenaz.hessian(scalar)(x)
    close(kenaz.hessian(kenaz.jit(scalar))(x), expected, rtol=1e-9, atol=1e-10)
    close(kenaz.jit(kenaz.hessian(scalar))(x), expected, rtol=1e-9, atol=1e-10)


# -- compositions --------------------------------------------------------------------------
def f(x, y):
    return knp.sum(knp.tanh(x * y) ** 2 + knp.sin(x) * y)


X = knp.array([0.3, -0.7, 1.1])
Y = knp.array([0.5, 0.2, -0.4])


def test_jit_of_grad_and_grad_of_jit() -> None:
    expected = kenaz.grad(f, (0, 1))(X, Y)
    close(kenaz.jit(kenaz.grad(f, (0, 1)))(X, Y), expected)
    close(kenaz.grad(kenaz.jit(f), (0, 1))(X, Y), expected)
    close(kenaz.value_and_grad(kenaz.jit(f))(X, Y), kenaz.value_and_grad(f)(X, Y))


def test_jit_of_vmap_and_vmap_of_jit() -> None:
    xs = knp.stack([X, X * 2.0, X - 1.0])
    expected = kenaz.vmap(f, in_axes=(0, None))(xs, Y)
    close(kenaz.vmap(kenaz.jit(f), in_axes=(0, None))(xs, Y), expected)
    close(kenaz.jit(kenaz.vmap(f, in_axes=(0, None)))(xs, Y), expected)
    close(kenaz.vmap(kenaz.grad(kenaz.jit(f)), in_axes=(0, None))(xs, Y),
          kenaz.vmap(kenaz.grad(f), in_axes=(0, None))(xs, Y))


def test_jvp_of_jit_and_hessian_of_jit() -> None:
    close(kenaz.jvp(kenaz.jit(f), (X, Y), (Y, X)), kenaz.jvp(f, (X, Y), (Y, X)))
    close(kenaz.hessian(kenaz.jit(f))(X, Y), kenaz.hessian(f)(X, Y))
    close(kenaz.jit(kenaz.hessian(f))(X, Y), kenaz.hessian(f)(X, Y))


def test_second_order_through_jit_with_an_integer_output() -> None:
    # A jitted call's derived jvp program has tangents for its inexact outputs only (an
    # integer output's is float0, not a tensor): they used to shift by one, silently.
    def g(x):
        return knp.sin(x), knp.argmax(x), knp.cos(x) * 2.0

    x, t, u = np.array([0.0, 1.0, 2.0]), np.array([1.0, -1.0, 0.5]), np.array([0.3, 0.2, 1.0])
    for function in (g, kenaz.jit(g)):
        inner = lambda v, function=function: kenaz.jvp(function, (v,), (knp.cos(v),))[1]
        tangent = kenaz.jvp(inner, (x,), (u,))[1]
        # d/dv of (cos(v)^2, -2 sin(v) cos(v)) along u
        analytic_second = (
            -2.0 * np.sin(x) * np.cos(x) * u,
            -2.0 * (np.cos(x) ** 2 - np.sin(x) ** 2) * u,
        )
        first = kenaz.jvp(function, (x,), (t,))[1]
        close((first[0], first[2]), (np.cos(x) * t, -2.0 * np.sin(x) * t))
        close((tangent[0], tangent[2]), analytic_second)
        assert tangent[1].dtype == kenaz.float0


def test_grad_of_grad_of_jit_through_a_boolean() -> None:
    # The vjp program seeds a boolean value's cotangent with float0, as vjp asks.
    def h(x, y):
        return knp.where(x > y, x * x, 2.0 * y)

    for x, y in ((0.3, 0.1), (0.1, 0.3)):
        expected = kenaz.grad(kenaz.grad(h))(x, y)
        assert kenaz.grad(kenaz.grad(kenaz.jit(h)))(x, y) == expected
    assert kenaz.grad(kenaz.grad(kenaz.jit(h)))(0.3, 0.1) == 2.0


def test_grad_of_jit_of_grad() -> None:
    inner = kenaz.jit(kenaz.grad(f))
    expected = kenaz.grad(lambda x: knp.sum(kenaz.grad(f)(x, Y) ** 2))(X)
    close(kenaz.grad(lambda x: knp.sum(inner(x, Y) ** 2))(X), expected)


def test_jit_inside_jit() -> None:
    inner = kenaz.jit(lambda x: knp.exp(x) * 2.0)
    outer = kenaz.jit(lambda x, y: knp.sum(inner(x) * inner(y)))
    expected = np.sum(np.exp(X.numpy()) * 2.0 * np.exp(Y.numpy()) * 2.0)
    close(outer(X, Y), Tensor(expected))
    close(kenaz.grad(outer)(X, Y), kenaz.grad(lambda x, y: knp.sum(inner(x) * inner(y)))(X, Y))
    assert inner.cache_info().traces == 1  # traced once, inlined into the outer program
    assert "exp" in str(outer.program(X, Y))


def test_debug_of_jit_shows_the_ops(capsys) -> None:
    jitted = kenaz.jit(f)
    close(kenaz.debug(jitted)(X, Y), f(X, Y))
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "jit[f]" in text  # one call op


def test_custom_vjp_inside_jit_keeps_its_rule() -> None:
    @kenaz.custom_vjp
    def scaled(x):
        return x * 1.0

    scaled.defvjp(lambda x: (x * 1.0, None), lambda residuals, g: (g * 0.0 + 7.0,))

    def loss(x):
        return knp.sum(scaled(x) * 2.0)

    expected = np.full(3, 7.0)
    close(kenaz.grad(loss)(X), Tensor(expected))
    close(kenaz.jit(kenaz.grad(loss))(X), Tensor(expected))
    close(kenaz.grad(kenaz.jit(loss))(X), Tensor(expected))  # the rule, not the primal's 2
    close(kenaz.jit(loss)(X), loss(X))
    assert "custom_vjp[scaled]" in str(kenaz.make_program(loss)(X))


def test_custom_jvp_inside_jit_keeps_its_rule() -> None:
    @kenaz.custom_jvp
    def safe_log(x):
        return knp.log(x)

    safe_log.defjvp(lambda primals, tangents: (safe_log(primals[0]), tangents[0] * 5.0))
    x = knp.array([1.0, 2.0])
    expected = kenaz.jvp(safe_log, (x,), (knp.ones(2),))
    close(kenaz.jvp(kenaz.jit(safe_log), (x,), (knp.ones(2),)), expected)
    close(kenaz.jit(lambda x: kenaz.jvp(safe_log, (x,), (knp.ones(2),)))(x), expected)
    close(kenaz.grad(kenaz.jit(lambda x: knp.sum(safe_log(x))))(x), Tensor(np.full(2, 5.0)))


def test_checkpoint_inside_jit() -> None:
    layer = kenaz.checkpoint(lambda w, h: knp.tanh(h * w))

    def loss(w, h):
        for _ in range(3):
            h = layer(w, h)
        return knp.sum(h)

    expected = kenaz.grad(loss, (0, 1))(X, Y)
    close(kenaz.jit(kenaz.grad(loss, (0, 1)))(X, Y), expected)
    close(kenaz.grad(kenaz.jit(loss), (0, 1))(X, Y), expected)
    close(kenaz.jit(loss)(X, Y), loss(X, Y))


def test_closed_over_tensor_tracked_by_an_outer_grad() -> None:
    def outer(w):
        return kenaz.jit(lambda x: knp.sum(knp.sin(x * w)))(X)

    close(kenaz.grad(outer)(Y), kenaz.grad(lambda w: knp.sum(knp.sin(X * w)))(Y))
    close(kenaz.vmap(outer)(knp.stack([Y, 2.0 * Y])),
          kenaz.vmap(lambda w: knp.sum(knp.sin(X * w)))(knp.stack([Y, 2.0 * Y])))


# -- caching and retracing ---------------------------------------------------------------------
def test_retraces_on_new_shape_dtype_or_static_value_only() -> None:
    calls = []

    def g(x, n):
        calls.append(1)  # a Python side effect: runs while tracing only
        return knp.sum(x**n)

    jitted = kenaz.jit(g, static_argnums=1)
    x = knp.ones(3)
    jitted(x, 2)
    jitted(x, 2)
    jitted(x + 1.0, 2)  # new values, same signature
    jitted(x.numpy(), 2)  # an array instead of a tensor: same shape and dtype
    assert jitted.cache_info() == CacheInfo(traces=1, hits=3, size=1, checks=1)
    jitted(knp.ones(4), 2)  # new shape
    assert jitted.cache_info().traces == 2
    jitted(knp.ones(3, dtype=np.float32), 2)  # new dtype
    assert jitted.cache_info().traces == 3
    jitted(x, 3)  # new static value
    assert jitted.cache_info().traces == 4
    jitted(x, 3)
    assert jitted.cache_info().traces == 4
    assert len(calls) == 4 + 2  # and the purity checks at the second calls of (3,), 2 and 3
    close(jitted(x * 2.0, 3), Tensor(24.0))


def test_steady_calls_keep_the_signature_rules() -> None:
    # From the third call a call with the last call's signature skips the cache's key
    # (kenaz.compiler.api._plain_signature): any other signature still retraces or hits.
    traced = []

    def f(x, pair):
        traced.append(1)
        return x * pair[0] + pair[1], 3  # a non-tensor leaf in the result

    jitted = kenaz.jit(f)
    x = knp.ones(3)
    for i in range(4):  # new values each call: computed, not replayed
        out, three = jitted(x, (knp.full(3, float(i)), 1.0))
        close(out, Tensor(np.full(3, i + 1.0)))
        assert three == 3
    assert jitted.cache_info() == CacheInfo(traces=1, hits=3, size=1, checks=1)
    jitted(x, [knp.ones(3), 1.0])  # a list, not a tuple
    jitted(x, (knp.ones(3), 1))  # an int, not a float
    jitted(x, (knp.ones(3, dtype=np.float32), 1.0))  # another dtype
    jitted(x, (knp.ones(1), 1.0))  # another shape
    assert jitted.cache_info().traces == 5
    close(jitted(x.numpy(), (knp.ones(3), 2.0))[0], Tensor(np.full(3, 3.0)))  # an array: a hit
    assert jitted.cache_info().traces == 5 and len(traced) == 5 + 1  # one purity check
    # Under a transformation the call is one op again.
    close(kenaz.grad(lambda x: knp.sum(jitted(x, (x, 1.0))[0]))(x), Tensor(np.full(3, 2.0)))

    state = {"c": 1.0}
    scaled = kenaz.jit(lambda x: x * state["c"])
    for _ in range(3):
        scaled(x)
    scaled(knp.ones(4))
    state["c"] = 2.0  # found at the new signature's second call: eager from then on
    with pytest.warns(RuntimeWarning, match="not pure"):
        scaled(knp.ones(4))
    close(scaled(x), Tensor(np.full(3, 2.0)))


def test_steady_calls_with_keywords_dicts_and_static_arguments(monkeypatch) -> None:
    # The steady path covers dicts, None, keyword and static arguments too: such a call
    # with the last call's signature neither flattens its arguments nor builds a key.
    traced = []

    def f(params, x, act, *, scale, extra=None):
        traced.append(act)
        return getattr(knp, act)(x @ params["w"] + params["b"]) * scale

    jitted = kenaz.jit(f, static_argnums=2)
    params = {"w": knp.ones((2, 3)), "b": knp.zeros(3)}
    x = knp.ones((4, 2))
    jitted(params, x, "tanh", scale=1.0)
    jitted(params, x, "tanh", scale=1.0)  # the purity check
    flattened = []
    flatten = kenaz.compiler.api.tree.flatten
    monkeypatch.setattr(
        kenaz.compiler.api.tree, "flatten", lambda *a, **k: flattened.append(1) or flatten(*a, **k)
    )
    for i in range(3):  # new values each call, keys in another order: computed by key
        moved = {"b": knp.full(3, float(i)), "w": params["w"] * i}
        close(jitted(moved, x, "tanh", scale=2.0), Tensor(2.0 * np.tanh(np.full((4, 3), 3.0 * i))))
    assert flattened == [1]  # one slow call (the first after the check), then the steady ones
    assert jitted.cache_info().traces == 1
    # Any other signature traces again or hits, as on the general path.
    close(jitted(params, x, "sin", scale=1.0), Tensor(np.sin(np.full((4, 3), 2.0))))
    close(jitted(params, x, "sin", scale=1, extra=None), Tensor(np.sin(np.full((4, 3), 2.0))))
    jitted(params, x, "sin", scale=1.0, extra={"c": 1.0})  # a keyword more
    jitted({**params, "c": knp.ones(())}, x, "sin", scale=1.0)  # a key more
    assert jitted.cache_info().traces == 5
    close(jitted(params, x, "tanh", scale=3.0), Tensor(3.0 * np.tanh(np.full((4, 3), 2.0))))
    assert jitted.cache_info().traces == 5 and traced.count("tanh") == 2

    named = kenaz.jit(lambda x, mode: knp.sum(x) if mode == "sum" else knp.max(x),
                      static_argnames="mode")  # fmt: skip
    for _ in range(3):
        assert float(named(X, mode="sum")) == pytest.approx(float(knp.sum(X)))
        assert float(named(X, mode="max")) == pytest.approx(1.1)  # alternating: both right
    assert named.cache_info().traces == 2


def test_static_argnames_and_pytrees() -> None:
    @kenaz.jit
    def step(params, batch, scale=1.0):
        return {"w": params["w"] - scale * batch[0], "b": params["b"] + batch[1]}

    params = {"w": knp.ones(2), "b": knp.zeros(())}
    out = step(params, (knp.ones(2), 1.0))
    close(out, {"w": Tensor(np.zeros(2)), "b": Tensor(1.0)})
    step(params, (knp.ones(2), 2.0), scale=0.5)  # a Python float: traced, same type
    assert step.cache_info().traces == 2  # a keyword argument changes the structure
    step(params, (knp.ones(2), 3.0), scale=0.25)
    assert step.cache_info().traces == 2

    jitted = kenaz.jit(lambda x, mode: knp.sum(x) if mode == "sum" else knp.max(x),
                       static_argnames="mode")
    assert float(jitted(X, mode="sum")) == pytest.approx(float(knp.sum(X)))
    assert float(jitted(X, mode="max")) == pytest.approx(1.1)
    assert jitted.cache_info().traces == 2


def test_python_numbers_keep_weak_promotion() -> None:
    jitted = kenaz.jit(lambda x, c: x * c)
    x32 = knp.ones(3, dtype=np.float32)
    assert jitted(x32, 2.0).dtype == np.float32
    assert (x32 * 2.0).dtype == np.float32


def test_closed_over_arrays_are_constants_checked_at_the_second_call() -> None:
    scale = np.array([2.0])
    jitted = kenaz.jit(lambda x: x * scale)
    close(jitted(X), X * 2.0)
    scale = np.array([3.0])  # rebinding is seen by the second trace: no frozen value
    with pytest.warns(RuntimeWarning, match=r"the constant \[2\.0\], operand 1 of mul"):
        close(jitted(X), X * 3.0)
    frozen = kenaz.jit(lambda x: x * scale, check_purity=False)
    close(frozen(X), X * 3.0)
    scale = np.array([4.0])  # noqa: F841 - without the check the value stays baked in
    close(frozen(X), X * 3.0)


# -- errors: never a baked-in value ---------------------------------------------------------------
@pytest.mark.parametrize(
    "body, asked_by",
    [
        (lambda x: x * 2 if x[0] > 0 else x, "bool()"),
        (lambda x: x * float(x[0]), "float()"),
        (lambda x: knp.zeros(x[0].astype(int)), "shape"),
        (lambda x: x * x.numpy(), ".numpy()"),
        (lambda x: x * np.asarray(x), "numpy.asarray()"),
        (lambda x: x * x[0].item(), ".item()"),
    ],
)
def test_reading_a_traced_value_is_a_clear_error(body, asked_by) -> None:
    jitted = kenaz.jit(body)
    with pytest.raises(ConcretizationError) as info:
        jitted(X)
    message = str(info.value)
    assert "<lambda>" in message and asked_by in message
    assert "test_jit.py:" in message  # the line that asked
    assert "static_argnums" in message and "kenaz.numpy.where" in message
    assert "do not jit" in message


def test_the_error_names_the_function() -> None:
    def relu_by_hand(x):
        if x > 0:
            return x
        return x * 0.0

    with pytest.raises(ConcretizationError, match="'relu_by_hand'"):
        kenaz.jit(relu_by_hand)(1.0)
    # the fixes work
    assert float(kenaz.jit(lambda x: knp.where(x > 0, x, x * 0.0))(1.0)) == 1.0
    assert float(kenaz.jit(relu_by_hand, static_argnums=0)(-1.0)) == -0.0
    with pytest.raises(ConcretizationError):
        kenaz.make_program(relu_by_hand)(1.0)


def test_an_escaped_tracer_raises() -> None:
    leaked = []

    @kenaz.jit
    def leak(x):
        leaked.append(x * 2.0)
        return x

    leak(X)
    with pytest.raises(EscapedTracerError):
        float(leaked[0][0])


def test_unhashable_static_argument() -> None:
    jitted = kenaz.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        jitted(X, [1, 2])


# -- scale and threads ------------------------------------------------------------------------
@pytest.mark.slow
def test_ten_thousand_ops_trace_and_compile_quickly() -> None:
    import time

    def chain(x):
        for _ in range(2500):
            x = knp.sin(x) * 1.01 + 0.1
        return knp.sum(x)  # 7,500 forward ops

    jitted = kenaz.jit(kenaz.grad(chain))
    x = knp.linspace(-1.0, 1.0, 16)
    start = time.process_time()
    program = jitted.program(x)
    elapsed = time.process_time() - start
    assert program.primitive_count() >= 10_000
    assert elapsed < 2.0, f"trace + compile of {program.primitive_count()} ops took {elapsed:.2f} s"
    close(jitted(x), kenaz.grad(chain)(x))


def test_eight_threads_share_one_jitted_function() -> None:
    jitted = kenaz.jit(kenaz.grad(lambda x: knp.sum(knp.sin(x) * x)))
    inputs = [knp.linspace(-1.0, 1.0, 5) * (i + 1) for i in range(8)]
    expected = [np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()) for x in inputs]
    results: list[Any] = [None] * 8
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(50):
            results[i] = jitted(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, e in zip(results, expected, strict=True):
        np.testing.assert_allclose(r.numpy(), e, rtol=1e-12)
    assert jitted.cache_info().traces == 1
    assert jitted.cache_info().hits == 8 * 50 - 1


# -- the purity check: nothing that changes between calls is frozen ------------------------------
def test_a_function_drawing_from_numpy_random_gives_fresh_draws_after_one_warning() -> None:
    def noisy(x):
        return x + knp.asarray(np.random.normal(size=3))

    jitted = kenaz.jit(noisy)
    x = knp.zeros(3)
    np.random.seed(0)
    with pytest.warns(RuntimeWarning, match="not pure") as caught:
        outs = [jitted(x).numpy() for _ in range(6)]
    assert len(caught) == 1  # once, not once per call
    message = str(caught[0].message)
    assert "operand 1 of add" in message  # the first constant that changed
    assert f"{__file__}:" in message and "(in noisy)" in message  # the user's line
    np.random.seed(0)
    expected = [np.random.normal(size=3) for _ in range(6)]  # one draw per call, as eagerly
    for out, draws in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(out, draws)
    assert jitted.impure is not None
    # Under grad too: the eager function draws afresh.
    grads = [kenaz.grad(lambda x: knp.sum(jitted(x) ** 2))(x).numpy() for _ in range(2)]
    assert not np.array_equal(grads[0], grads[1])


def test_a_pure_function_is_traced_exactly_twice_per_signature() -> None:
    runs = []

    def pure(x, c):
        runs.append(1)  # a Python side effect: counts the traces
        return knp.sum(knp.sin(x) * c + CONSTANT) ** 2

    jitted = kenaz.jit(pure)
    with warnings_as_errors():
        for i in range(10):
            close(jitted(X + i, 2.0), pure(X + i, 2.0))
    assert len(runs) == 2 + 10  # two traces, then only the ten eager reference calls
    assert jitted.cache_info() == CacheInfo(traces=1, hits=9, size=1, checks=1)
    ones = knp.ones(3, dtype=np.float32)
    jitted(ones, 2.0)  # a new signature: checked at its own second call
    jitted(ones, 3.0)
    jitted(ones, 4.0)
    assert jitted.cache_info().checks == 2 and jitted.impure is None
    # jit(grad(...)): the backward pass's constants are the same at every trace too.
    stepped = kenaz.jit(kenaz.grad(pure))
    with warnings_as_errors():
        for i in range(3):
            close(stepped(X + i, 2.0), kenaz.grad(pure)(X + i, 2.0))
    assert stepped.impure is None and stepped.cache_info().checks == 1


CONSTANT = np.linspace(0.0, 1.0, 3)


@contextlib.contextmanager
def warnings_as_errors() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_the_check_names_a_changed_global_and_can_be_turned_off() -> None:
    scale = {"now": 1.0}

    def scaled(x):
        return x * scale["now"]

    jitted = kenaz.jit(scaled)
    x = knp.ones(3)
    close(jitted(x), x)
    scale["now"] = 2.0
    with pytest.warns(RuntimeWarning, match=r"the constant 1\.0, operand 1 of mul, became 2\.0"):
        close(jitted(x), 2.0 * x)
    scale["now"] = 3.0
    close(jitted(x), 3.0 * x)  # eagerly: the value it has now

    frozen = kenaz.jit(scaled, check_purity=False)
    runs = frozen(x)
    scale["now"] = 4.0
    close(frozen(x), runs)  # frozen on purpose: traced once, never compared
    assert frozen.cache_info().checks == 0 and frozen.impure is None


def test_fit_with_numpy_random_augmentation_matches_jit_false() -> None:
    from kenaz import nn, optim, train

    x = np.linspace(-1, 1, 40)
    y = 2 * x - 1

    def augmented(params, x, y):
        noisy = x + 0.1 * np.random.normal(size=np.shape(x))  # augmentation inside the loss
        return nn.mse(params["a"] * noisy + params["b"], y)

    curves = []
    for use_jit in (False, True):
        np.random.seed(3)
        expected = pytest.warns(RuntimeWarning, match="not pure")
        with expected if use_jit else contextlib.nullcontext():
            result = train.fit(augmented, {"a": 0.0, "b": 0.0}, optim.sgd(0.1), (x, y),
                               epochs=3, batch_size=16, progress=False, jit=use_jit)
        curves.append(result.history["step_loss"])
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-12)


def test_a_dropped_jitted_function_is_freed_without_the_cyclic_collector() -> None:
    # A compiled signature holds no reference cycle (its tiers hold their Staged weakly,
    # the generated function is not in its own globals): `jit(f)(x)` in a loop frees
    # each program at once, and the collector has nothing of it to find.
    import gc
    import weakref

    x = knp.ones(3)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        jitted = kenaz.jit(kenaz.grad(lambda x: knp.sum(knp.sin(x) * x)))
        for _ in range(6):  # traced, checked, interpreted, then generated code
            jitted(x)
        staged = weakref.ref(jitted._entry((x,), {}).staged)
        del jitted
        assert staged() is None
    finally:
        if enabled:
            gc.enable()


def _noted(fun: Any) -> Any:
    fun.note = "copied to the jitted function"
    return fun


@pytest.mark.parametrize(
    "make",
    [
        lambda: kenaz.vmap(knp.sin),  # a function whose __dict__ holds __wrapped__ alone
        lambda: kenaz.jacrev(knp.sin),
        lambda: kenaz.grad(lambda x: knp.sum(x * x)),
        lambda: _noted(kenaz.vmap(knp.sin)),  # more in its __dict__: the general path
    ],
)
def test_a_wrapping_function_is_copied_as_update_wrapper_copies_it(make, monkeypatch) -> None:
    # jit stores a wrapping function's names itself (not through functools.update_wrapper):
    # the same attributes, values and order as the general path gives.
    import kenaz.compiler.api as api

    fun = make()
    fast = vars(kenaz.jit(fun))
    monkeypatch.setattr(api, "_plain_dict", lambda names: False)
    general = vars(kenaz.jit(fun))
    strip = {"_cache", "_lock", "_hits"}  # fresh objects per jitted function
    assert [k for k in fast] == [k for k in general]
    assert {k: v for k, v in fast.items() if k not in strip} == {
        k: v for k, v in general.items() if k not in strip
    }
    assert fast["__wrapped__"] is fun
