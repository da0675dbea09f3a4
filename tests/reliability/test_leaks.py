"""No leaks: repeated transformations keep memory flat, and no tape, handler or
tensor outlives the transformation that made it.

The weakref tests run with the cyclic garbage collector off: everything must be
freed by reference counting, the moment the last user reference goes, as the
design promises. ``KENAZ_LEAK_CALLS`` (default 6,000) sets the number of grad
calls of the memory test.
"""

from __future__ import annotations

import gc
import io
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, Op, Tensor, handler, perform
from kenaz.effects import current_handlers

from ._support import env_int, init_mlp, mlp_data, mlp_loss

LEAK_CALLS = env_int("KENAZ_LEAK_CALLS", 6_000)
# Growth allowed per traced call: under a float's 24 bytes. The unchanged loop grows by about
# 2 KB over 2,700 calls (the samples' own ints, 32 bytes each, among it).
LEAK_BYTES_PER_CALL = 7


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Turn the cyclic garbage collector off for the block: only reference counting frees."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class WatchOutputs(Handler):
    """Keeps a weak reference to every tensor an op returns, and to every handler it sees
    installed outside it (the transformations' handlers, which own the tapes)."""

    def __init__(self) -> None:
        self.tensors: list[weakref.ref[Tensor]] = []
        self.handlers: list[weakref.ref[Handler]] = []

    def handle(self, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        for h in current_handlers():
            if not any(ref() is h for ref in self.handlers):
                self.handlers.append(weakref.ref(h))
        out = perform(op, *args, **params)
        for o in out if isinstance(out, tuple) else (out,):
            self.tensors.append(weakref.ref(o))
        return out

    def alive(self) -> list[Any]:
        return [r() for r in self.tensors + self.handlers if r() is not None]


def watched(f: Callable[..., Any], watcher: WatchOutputs) -> Callable[..., Any]:
    """``f`` with ``watcher`` installed innermost, so it sees the user's intermediates."""

    def inner(*args: Any) -> Any:
        with handler(watcher):
            return f(*args)

    return inner


def body(x: Any) -> Any:
    """Intermediates of many kinds: residuals of exp/sin/matmul, shape ops, indexing."""
    h = knp.exp(x) @ np.ones((3, 3)) + knp.sin(x)
    h = knp.concatenate([h, h[::-1] * 2.0]).reshape(2, 3)
    return knp.sum(knp.tanh(h) ** 2) + knp.max(h)


X = np.array([0.1, -0.4, 0.8])

# (name, run): run(f) applies a transformation to f at X and returns what the user keeps.
TRANSFORMS: list[tuple[str, Callable[[Callable[..., Any]], Any]]] = [
    ("grad", lambda f: kenaz.grad(f)(X)),
    ("value_and_grad", lambda f: kenaz.value_and_grad(f)(X)),
    ("grad(grad)", lambda f: kenaz.grad(lambda x: knp.sum(kenaz.grad(f)(x)))(X)),
    ("jvp", lambda f: kenaz.jvp(f, (X,), (np.ones(3),))),
    ("vjp+pullback", lambda f: kenaz.vjp(f, X)[1](1.0)),
    ("linearize+f_jvp", lambda f: kenaz.linearize(f, X)[1](np.ones(3))),
    ("debug", lambda f: kenaz.debug(f, file=io.StringIO())(X)),
    ("vmap", lambda f: kenaz.vmap(f)(np.stack([X, 2 * X]))),
    ("vmap(grad)", lambda f: kenaz.vmap(kenaz.grad(f))(np.stack([X, 2 * X]))),
    ("jacrev", lambda f: kenaz.jacrev(f)(X)),
    ("jacfwd", lambda f: kenaz.jacfwd(f)(X)),
    ("hessian", lambda f: kenaz.hessian(f)(X)),
    ("vmap(loop)", lambda f: kenaz.vmap(f, method="loop")(np.stack([X, 2 * X]))),
    ("grad(checkpoint)", lambda f: kenaz.grad(kenaz.checkpoint(f))(X)),
    ("grad+no_grad", lambda f: kenaz.grad(lambda x: f(x) + _no_grad_part(x))(X)),
    ("graph(grad)", lambda f: kenaz.graph(kenaz.grad(f))(X)),
]


def _no_grad_part(x: Any) -> Any:
    with kenaz.no_grad():
        return knp.sum(knp.sin(x))


@pytest.mark.parametrize("name, run", TRANSFORMS, ids=[name for name, _ in TRANSFORMS])
def test_nothing_outlives_the_transformation(name: str, run: Callable) -> None:
    """After the transformation returns, every tensor the user's function produced and
    every handler that was installed around it is dead (weak references cleared), except
    the results the user holds; and after those are dropped too, everything is dead."""
    watcher = WatchOutputs()
    with no_cyclic_gc():
        result = run(watched(body, watcher))
        kept = {id(leaf) for leaf in kenaz.tree.leaves(result)}
        alive = [obj for obj in watcher.alive() if id(obj) not in kept]
        assert alive == [], f"{name}: alive after return: {alive}"
        assert watcher.tensors, "the watcher saw no ops"
        del result, alive
        assert watcher.alive() == [], f"{name}: alive after dropping the result"


def test_intermediates_nothing_needs_die_during_the_transformation() -> None:
    """Inside grad, an intermediate no backward rule keeps (the input of ``add``) dies as
    soon as the user's code drops it, while one a rule needs (the output of ``exp``)
    lives until the backward pass is done."""
    refs: dict[str, weakref.ref[Tensor]] = {}
    with no_cyclic_gc():

        def f(x: Any) -> Any:
            unused_later = x + 1.0
            refs["add"] = weakref.ref(unused_later)
            y = unused_later + 2.0  # add keeps no residual
            del unused_later
            assert refs["add"]() is None, "an intermediate no rule needs was kept alive"
            e = knp.exp(y)
            refs["exp"] = weakref.ref(e)
            out = knp.sum(e)
            del e
            assert refs["exp"]() is not None, "exp's output is its vjp residual"
            return out

        gradient = kenaz.grad(f)(X)
        np.testing.assert_allclose(np.asarray(gradient), np.exp(X + 3.0))
        assert refs["exp"]() is None


def test_pullback_owns_the_tape() -> None:
    """The residuals and the reverse handler live exactly as long as the pullback: calling
    it twice works, and dropping it frees them (no cycle keeps them)."""
    watcher = WatchOutputs()
    with no_cyclic_gc():
        out, pullback = kenaz.vjp(watched(body, watcher), X)
        first = pullback(1.0)
        assert watcher.alive(), "the tape (residuals, handler) must live with the pullback"
        np.testing.assert_array_equal(np.asarray(pullback(1.0)[0]), np.asarray(first[0]))
        del out, first
        still = watcher.alive()
        assert any(isinstance(h, Handler) for h in still)
        del pullback, still
        assert watcher.alive() == []


def test_linearized_function_owns_its_record() -> None:
    """``linearize``'s jvp function keeps the residuals until it is dropped."""
    watcher = WatchOutputs()
    with no_cyclic_gc():
        out, f_jvp = kenaz.linearize(watched(body, watcher), X)
        assert watcher.alive()
        f_jvp(np.ones(3))
        del out, f_jvp
        assert watcher.alive() == []


def test_failed_transformation_frees_its_tape() -> None:
    """A grad whose function raises half-way frees everything once the exception is gone."""
    watcher = WatchOutputs()

    def failing(x: Any) -> Any:
        y = body(x)
        raise RuntimeError(f"failed after computing {y.shape}")

    with no_cyclic_gc():
        with pytest.raises(RuntimeError, match="failed after"):
            kenaz.grad(watched(failing, watcher))(X)
        # pytest.raises keeps the traceback (and its frames) in the ExceptionInfo; the
        # frames hold the handler and tensors until that is dropped.
        gc.collect()
        assert watcher.alive() == []


@pytest.mark.slow  # 6,000 grads, half of them under tracemalloc: 8-17 s
def test_thousands_of_grads_of_an_mlp_keep_memory_flat() -> None:
    """LEAK_CALLS calls of grad of a one-hidden-layer MLP loss: the first half untraced, to
    fill the interpreter's free lists and caches; over the second half, under tracemalloc,
    traced memory sampled every tenth stays within LEAK_BYTES_PER_CALL bytes per call of its
    first sample (no growth), and the gradient is the same at the end as at the start.

    Tracing only the second half keeps the test's sensitivity (a leak of a float per call is
    found) at a fifth of the time of tracing them all: a tracemalloc started early counts the
    free lists filling up, about 120 KB over the first 1,500 calls, as growth."""
    params, (x, y) = init_mlp(sizes=(4, 16, 1)), mlp_data()
    grad_loss = kenaz.grad(mlp_loss)
    first = grad_loss(params, x, y)
    for _ in range(LEAK_CALLS // 2):
        grad_loss(params, x, y)
    traced = LEAK_CALLS - LEAK_CALLS // 2
    step = max(traced // 10, 1)
    samples = []
    tracemalloc.start()
    try:
        for i in range(traced):
            grad_loss(params, x, y)
            if i % step == step - 1:
                samples.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    growth = [s - samples[0] for s in samples]
    limit = LEAK_BYTES_PER_CALL * step * (len(samples) - 1)
    assert max(growth) < limit, f"traced memory grew by more than {limit} bytes: {growth}"
    last = grad_loss(params, x, y)
    for a, b in zip(kenaz.tree.leaves(first), kenaz.tree.leaves(last), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
