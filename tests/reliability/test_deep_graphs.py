"""Deep graphs: reverse mode walks its tape iteratively, so a gradient through a
million scalar ops completes without ``RecursionError``; its memory grows linearly
with the number of ops and is released when the transformation returns.

``KENAZ_DEEP_OPS`` (default 1,000,000) sets the depth of the big test;
``KENAZ_DEEP_MEMORY_OPS`` (default 10,000) the smallest of the three depths at
which memory is measured (the others are 2x and 4x).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

from ._support import env_int

DEEP_OPS = env_int("KENAZ_DEEP_OPS", 1_000_000)
MEMORY_OPS = env_int("KENAZ_DEEP_MEMORY_OPS", 10_000)

SCALE, SHIFT = 1.0 + 1e-7, 1e-7


def chain(x: Any, ops: int) -> Any:
    """``ops`` scalar ops alternating ``y * SCALE`` and ``y + SHIFT``; dy/dx = SCALE**(ops/2)."""
    y = x
    for _ in range(ops // 2):
        y = y * SCALE
        y = y + SHIFT
    return y


@contextmanager
def tracing() -> Iterator[None]:
    """Trace allocations with the cyclic garbage collector off (so memory must come back
    by reference counting alone), after a warm-up run."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        _warm_up()
        yield
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()


@contextmanager
def measured() -> Iterator[dict[str, int]]:
    """The peak and the retained traced memory of the block, in bytes (inside ``tracing``).

    No ``gc.collect()`` here: a full collection empties the free lists that the warm-up
    filled, and their refilling would count as retained memory."""
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result: dict[str, int] = {}
    yield result
    current, peak = tracemalloc.get_traced_memory()
    result["peak"] = peak - base
    result["retained"] = current - base


@pytest.mark.slow
def test_gradient_through_a_million_scalar_ops() -> None:
    """grad through DEEP_OPS scalar ops (default one million) is correct and raises no
    RecursionError (a recursive walk would need DEEP_OPS frames; the limit is ~1000)."""
    start = time.perf_counter()
    value, gradient = kenaz.value_and_grad(chain)(np.float64(1.0), DEEP_OPS)
    seconds = time.perf_counter() - start
    steps = DEEP_OPS // 2
    expected_gradient = SCALE**steps
    expected_value = SCALE**steps + SHIFT * (SCALE**steps - 1) / (SCALE - 1)
    assert float(gradient) == pytest.approx(expected_gradient, rel=1e-9)
    assert float(value) == pytest.approx(expected_value, rel=1e-9)
    print(f"\ngrad through {DEEP_OPS} ops: {seconds:.1f} s, {1e6 * seconds / DEEP_OPS:.1f} us/op")


def _warm_up(ops: int = 5_000) -> None:
    """Run each transformation once while tracing, at a size that fills CPython's free
    lists (2,000 tuples of each length, kept allocated after use), so that what they keep
    is not counted as retained by the measured block."""
    kenaz.grad(chain)(1.0, ops)
    kenaz.jvp(lambda x: chain(x, ops), (1.0,), (1.0,))
    out, pullback = kenaz.vjp(lambda x: chain(x, ops), 1.0)
    pullback(1.0)


@pytest.mark.slow  # 70,000 ops under tracemalloc: 6-13 s
def test_reverse_mode_memory_grows_linearly_and_is_released() -> None:
    """Peak memory of grad at n, 2n and 4n ops is the same number of bytes per op
    (within 15%), and after grad returns at most a few kilobytes remain, without the
    cyclic garbage collector's help."""
    per_op = []
    with tracing():
        for ops in (MEMORY_OPS, 2 * MEMORY_OPS, 4 * MEMORY_OPS):
            with measured() as memory:
                gradient = kenaz.grad(chain)(1.0, ops)
                del gradient
            per_op.append(memory["peak"] / ops)
            assert memory["retained"] < 16_384, (ops, memory)
    assert max(per_op) / min(per_op) < 1.15, per_op
    print(f"\nreverse mode: {[round(b) for b in per_op]} bytes per op at peak")


@pytest.mark.slow  # under tracemalloc: 3-6 s
def test_forward_mode_memory_does_not_grow_with_depth() -> None:
    """jvp keeps no tape: its peak memory at 4n ops is the same as at n ops (a few KB)."""
    peaks = []
    with tracing():
        for ops in (MEMORY_OPS, 4 * MEMORY_OPS):
            with measured() as memory:
                out, tangent = kenaz.jvp(lambda x, n=ops: chain(x, n), (1.0,), (1.0,))
                del out, tangent
            peaks.append(memory["peak"])
            assert memory["retained"] < 16_384, memory
    assert max(peaks) < 64_000, peaks


@pytest.mark.slow  # under tracemalloc: 3-6 s
def test_pullback_holds_the_tape_until_dropped() -> None:
    """A vjp pullback keeps its tape (memory linear in depth) exactly as long as it lives:
    it can be called twice with equal results, and dropping it frees the tape."""
    ops = 2 * MEMORY_OPS
    with tracing(), measured() as memory:
        out, pullback = kenaz.vjp(lambda x: chain(x, ops), 1.0)
        held = tracemalloc.get_traced_memory()[0]
        (first,) = pullback(1.0)
        (second,) = pullback(1.0)
        assert float(first) == float(second) == pytest.approx(SCALE ** (ops // 2), rel=1e-9)
        del out, pullback, first, second
    assert held > 100 * ops, f"the tape should be held: {held} bytes for {ops} ops"
    assert memory["retained"] < 16_384, memory


@pytest.mark.parametrize(
    "name, transform",
    [
        ("grad(grad)", lambda f: kenaz.grad(kenaz.grad(f))),
        ("jvp(grad)", lambda f: lambda x: kenaz.jvp(kenaz.grad(f), (x,), (1.0,))[1]),
        ("grad(jvp)", lambda f: kenaz.grad(lambda x: kenaz.jvp(f, (x,), (1.0,))[1])),
    ],
)
def test_second_order_through_a_deep_chain(name: str, transform: Callable) -> None:
    """Second derivatives through 20,000 ops (the outer level records the inner backward
    pass, a tape three times as long) are correct: f = chain(x)**2, f'' = 2 * SCALE**ops."""
    ops = 20_000
    f = lambda x: (chain(x, ops) - chain(0.0, ops)) ** 2
    second = transform(f)(np.float64(0.5))
    assert float(second) == pytest.approx(2 * SCALE**ops, rel=1e-9), name


def test_deep_graph_of_vector_ops_under_vmap_of_grad() -> None:
    """vmap(grad) of a 10,000-op chain on a batch of 16: one tape, batched ops, correct."""
    ops = 10_000
    xs = np.linspace(-1.0, 1.0, 16)
    grads = kenaz.vmap(kenaz.grad(lambda x: chain(x, ops) * knp.sin(x)))(xs)
    a = SCALE ** (ops // 2)
    b = SHIFT * (a - 1) / (SCALE - 1)
    expected = a * np.sin(xs) + (a * xs + b) * np.cos(xs)
    np.testing.assert_allclose(np.asarray(grads), expected, rtol=1e-9)


def test_deeply_nested_transformations() -> None:
    """24 alternating levels of jvp, vmap and grad around exp(x) * x (whose n-th
    derivative is exp(x) * (x + n)) give the 16th derivative exactly, with no
    RecursionError; and a grad under 400 pass-through user handlers is unchanged.
    (Nested differentiation costs grow exponentially with depth, as in any AD system
    without Taylor mode: 40 levels take seconds, so the test stops at 24.)"""
    f: Callable[[Any], Any] = lambda x: knp.exp(x) * x  # noqa: E731
    derivatives = 0
    for level in range(1, 25):
        kind = level % 3
        if kind == 0:
            f = kenaz.grad(f)
        elif kind == 1:
            f = (lambda inner: lambda x: kenaz.jvp(inner, (x,), (1.0,))[1])(f)
        else:
            f = (lambda inner: lambda x: knp.sum(kenaz.vmap(inner)(knp.stack([x, x]))) / 2)(f)
        derivatives += kind != 2
    assert derivatives == 16
    assert float(f(np.float64(0.5))) == pytest.approx(np.exp(0.5) * (0.5 + 16), rel=1e-12)

    with ExitStack() as stack:
        for _ in range(400):
            stack.enter_context(kenaz.handler(kenaz.Handler()))
        gradient = kenaz.grad(lambda x: knp.sum(knp.sin(x) * x))(np.ones(3))
    np.testing.assert_allclose(np.asarray(gradient), np.cos(1.0) + np.sin(1.0), rtol=1e-15)
