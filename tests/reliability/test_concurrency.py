"""Threads and asyncio tasks: transformations running concurrently never see each
other's handlers, and give exactly the single-threaded results.

The handler stack lives in a ``ContextVar``; these tests are what makes that
claim checkable. ``KENAZ_STRESS_SECONDS`` (default 3) sets how long the thread
stress test runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Tensor, handler
from kenaz.effects import current_handlers
from kenaz.reverse import ReverseHandler

from ._support import (
    Boom,
    CountOps,
    RaiseAtOp,
    env_float,
    init_mlp,
    mlp_data,
    mlp_loss,
    trees_equal,
)

THREADS = 8
STRESS_SECONDS = env_float("KENAZ_STRESS_SECONDS", 3.0)

PARAMS = init_mlp()
X, Y = mlp_data()
W = np.random.default_rng(2).normal(size=(3, 3))


# -- the workload: one job per transformation, each deterministic --------------------------
def job_grad_mlp() -> Any:
    return kenaz.grad(mlp_loss)(PARAMS, X, Y)


def job_grad_grad() -> Any:
    f = lambda x: knp.sin(x) * x**2 + knp.exp(-x)
    return [kenaz.grad(kenaz.grad(f))(t) for t in (0.3, 1.7, -2.0)]


def job_jvp() -> Any:
    f = lambda x: knp.cumsum(knp.tanh(x @ W), axis=0).T
    return kenaz.jvp(f, (np.eye(3) + 0.5,), (np.ones((3, 3)),))


def job_vjp() -> Any:
    f = lambda x: (knp.sum(x**3, axis=1), knp.max(x, axis=0))
    out, pullback = kenaz.vjp(f, W)
    return out, pullback((np.arange(3.0), np.ones(3)))


def job_linearize() -> Any:
    out, f_jvp = kenaz.linearize(lambda x: knp.log1p(x * x) @ W, np.linspace(-1, 1, 3))
    return out, f_jvp(np.ones(3)), f_jvp(np.arange(3.0))


def job_value_and_grad_aux() -> Any:
    def f(a, b):
        loss = knp.sum(knp.sqrt(a * a + 1.0) * b)
        return loss, {"norm": knp.sum(a * a)}

    return kenaz.value_and_grad(f, argnums=(0, 1), has_aux=True)(W, W.T)


def job_hvp() -> Any:
    f = lambda x: knp.sum(knp.sin(x) * knp.roll(x, 1))
    return kenaz.jvp(kenaz.grad(f), (np.arange(4.0),), (np.ones(4),))


def job_count_ops() -> Any:
    counter = CountOps()
    with handler(counter):
        kenaz.grad(lambda x: knp.sum(knp.tanh(x) * x))(np.ones(5))
    return sorted(counter.counts.items())


def job_vmap() -> Any:
    per_example = kenaz.vmap(kenaz.grad(mlp_loss), in_axes=(None, 0, 0))
    return per_example(PARAMS, X[:, None, :], Y[:, None])


@kenaz.custom_vjp
def _clipped_identity(x: Any) -> Any:
    return x


_clipped_identity.defvjp(lambda x: (x, None), lambda _, g: (knp.clip(g, -0.5, 0.5),))


def job_custom_rules_and_checkpoint() -> Any:
    """custom_vjp, checkpoint (which re-runs the function in the backward pass) and
    no_grad, each installing handlers of their own, under grad and hessian."""

    def f(x: Any) -> Any:
        block = kenaz.checkpoint(lambda v: knp.sin(v) * knp.exp(v / 4.0))
        with kenaz.no_grad():
            scale = knp.sum(x * x)
        return knp.sum(block(_clipped_identity(x) * 3.0)) * scale

    return kenaz.grad(f)(np.linspace(-1.0, 1.0, 4)), kenaz.hessian(f)(np.linspace(-1.0, 1.0, 3))


JOBS: list[Callable[[], Any]] = [
    job_grad_mlp,
    job_grad_grad,
    job_jvp,
    job_vjp,
    job_linearize,
    job_value_and_grad_aux,
    job_hvp,
    job_count_ops,
    job_vmap,
    job_custom_rules_and_checkpoint,
]


def test_jobs_are_deterministic_single_threaded() -> None:
    """Running each job twice gives bitwise-equal results (the premise of the thread test)."""
    for job in JOBS:
        assert trees_equal(job(), job()), job.__name__


def test_threads_equal_single_threaded() -> None:
    """8 threads run every job, each thread in a different order, for a few seconds
    with a tiny switch interval: every result equals the single-threaded one and no
    thread ever sees a handler outside a transformation."""
    reference = {job.__name__: job() for job in JOBS}
    failures: list[str] = []
    rounds = [0] * THREADS
    # The clock starts once every thread runs (starting 8 threads on a loaded machine, or
    # next to another pytest worker, can take a while), and each thread runs at least one
    # round whatever the clock says: a slow machine means fewer rounds, never none.
    deadline = [0.0]
    start = threading.Barrier(
        THREADS, action=lambda: deadline.__setitem__(0, time.monotonic() + STRESS_SECONDS)
    )

    def worker(index: int) -> None:
        order = JOBS[index % len(JOBS) :] + JOBS[: index % len(JOBS)]
        start.wait()
        try:
            while rounds[index] == 0 or time.monotonic() < deadline[0]:
                for job in order:
                    result = job()
                    if not trees_equal(result, reference[job.__name__]):
                        failures.append(f"thread {index}: {job.__name__} differs")
                    if current_handlers():
                        failures.append(f"thread {index}: handlers left {current_handlers()}")
                rounds[index] += 1
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(f"thread {index}: {type(error).__name__}: {error}")

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old_interval)
    assert not failures, failures[:10]
    assert min(rounds) >= 1, f"some thread never finished a round: {rounds}"
    print(f"\n{THREADS} threads x {len(JOBS)} jobs: rounds per thread {rounds}")


def test_handler_in_one_thread_does_not_see_another_threads_ops() -> None:
    """Thread A holds a counting handler open while thread B computes (eagerly and
    under grad): A counts exactly its own ops, and B sees an empty stack."""
    counter = CountOps()
    installed, b_done = threading.Event(), threading.Event()
    seen_in_b: list[tuple[Any, ...]] = []
    errors: list[BaseException] = []

    def thread_a() -> None:
        try:
            with handler(counter):
                installed.set()
                knp.sin(knp.ones(3))
                assert b_done.wait(10)
                knp.cos(knp.ones(3))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    def thread_b() -> None:
        try:
            assert installed.wait(10)
            seen_in_b.append(current_handlers())
            for _ in range(50):
                knp.exp(knp.ones(3)) * 2.0
            kenaz.grad(lambda x: knp.sum(knp.tanh(x)))(np.ones(3))
            seen_in_b.append(current_handlers())
        except BaseException as error:  # noqa: BLE001
            errors.append(error)
        finally:
            b_done.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert seen_in_b == [(), ()]
    assert dict(counter.counts) == {"sin": 1, "cos": 1}


def test_new_threads_start_without_the_callers_handlers() -> None:
    """A thread started inside ``with handler(h)`` does not inherit ``h``: its ops are its own."""
    counter = CountOps()
    inside: list[tuple[Any, ...]] = []

    def work() -> None:
        inside.append(current_handlers())
        knp.sin(knp.ones(2))

    with handler(counter):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert inside == [()]
    assert counter.total == 0


# -- asyncio --------------------------------------------------------------------------------
async def async_value_and_grad(
    f: Callable[[Tensor], Awaitable[Tensor]], x: Any
) -> tuple[Tensor, Tensor]:
    """``value_and_grad`` of an *async* scalar function: the tape stays installed across
    its awaits, while other tasks run. (Uses the reverse handler directly: the public
    ``grad`` takes synchronous functions.)"""
    rev = ReverseHandler()
    watched = rev.watch(Tensor(np.asarray(x, dtype=float)))
    with handler(rev):
        out = await f(watched)
    seed = {out._trace[rev.level]: Tensor(np.ones((), out.dtype))}
    (gradient,) = rev.backward(seed, [watched._trace[rev.level]])
    return out, gradient


async def poly_with_awaits(x: Tensor) -> Tensor:
    """x**3 + sin(x), with awaits between its ops so that other tasks interleave."""
    cube = x * x
    await asyncio.sleep(0)
    cube = cube * x
    await asyncio.sleep(0)
    return cube + knp.sin(x)


def test_asyncio_tasks_interleaving_transformations() -> None:
    """64 tasks run transformations that await in the middle (an async grad, a vjp whose
    pullback is called after awaits, a counting handler held across awaits), interleaved by
    the event loop: every result is the expected one and every task's counter counts
    exactly its own ops."""

    async def grad_task(i: int) -> tuple[float, float]:
        x = 0.1 * i
        value, gradient = await async_value_and_grad(poly_with_awaits, x)
        assert current_handlers() == ()
        return float(value), float(gradient)

    async def vjp_task(i: int) -> np.ndarray:
        out, pullback = kenaz.vjp(lambda v: knp.tanh(v) * i, np.arange(3.0))
        await asyncio.sleep(0)  # other tasks run between the forward and backward passes
        await asyncio.sleep(0)
        return np.asarray(pullback(np.ones(3))[0])

    async def counting_task(i: int) -> dict[str, int]:
        counter = CountOps()
        with handler(counter):
            for _ in range(i % 5 + 1):
                knp.sin(knp.ones(2))
                await asyncio.sleep(0)
                kenaz.grad(lambda v: knp.sum(v * v))(np.ones(2))
                await asyncio.sleep(0)
        return dict(counter.counts)

    async def main() -> list[Any]:
        tasks = []
        for i in range(64):
            kind = (grad_task, vjp_task, counting_task)[i % 3]
            tasks.append(asyncio.create_task(kind(i)))
        return await asyncio.gather(*tasks)

    results = asyncio.run(main())
    for i, result in enumerate(results):
        if i % 3 == 0:
            x = 0.1 * i
            assert result[0] == pytest.approx(x**3 + np.sin(x), rel=1e-12)
            assert result[1] == pytest.approx(3 * x**2 + np.cos(x), rel=1e-12)
        elif i % 3 == 1:
            np.testing.assert_allclose(result, i * (1 - np.tanh(np.arange(3.0)) ** 2), rtol=1e-12)
        else:
            single = kenaz.grad(lambda v: knp.sum(v * v))
            reference = CountOps()
            with handler(reference):
                knp.sin(knp.ones(2))
                single(np.ones(2))
            expected = {name: n * (i % 5 + 1) for name, n in reference.counts.items()}
            assert result == expected, (i, result, expected)


def test_cancelled_task_mid_transformation_leaves_no_handler() -> None:
    """Cancelling tasks while their tape is installed (at an await) unwinds their handler;
    the surviving tasks and the loop afterwards see clean stacks and correct gradients."""

    async def slow(x: Tensor) -> Tensor:
        y = x * x
        await asyncio.sleep(10)
        return y

    async def main() -> tuple[list[Any], tuple[Any, ...], float]:
        doomed = [asyncio.create_task(async_value_and_grad(slow, 1.0)) for _ in range(10)]
        survivors = [
            asyncio.create_task(async_value_and_grad(poly_with_awaits, 2.0)) for _ in range(10)
        ]
        await asyncio.sleep(0.01)
        for task in doomed:
            task.cancel()
        outcomes = await asyncio.gather(*doomed, *survivors, return_exceptions=True)
        after = current_handlers()
        _, gradient = await async_value_and_grad(poly_with_awaits, 2.0)
        return outcomes, after, float(gradient)

    outcomes, after, gradient = asyncio.run(main())
    assert all(isinstance(o, asyncio.CancelledError) for o in outcomes[:10])
    for _value, grad_value in outcomes[10:]:
        assert float(grad_value) == pytest.approx(12 + np.cos(2.0))
    assert after == ()
    assert gradient == pytest.approx(12 + np.cos(2.0))


def test_threads_failing_mid_transformation_do_not_disturb_the_others() -> None:
    """8 threads run grad(vmap(grad)) for a second; the odd threads make every second call
    fail at a random op (inside the user's function or in a backward pass). The even
    threads always get the reference result, every thread ends with an empty stack, and
    the cyclic GC (paused process-wide during reverse passes) is enabled again at the end."""
    import random

    def f(x: Any) -> Any:
        return knp.sum(kenaz.vmap(kenaz.grad(lambda v: knp.sum(knp.tanh(v) * v)))(x) ** 2)

    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    reference = np.asarray(kenaz.grad(f)(x))
    counter = CountOps()
    with handler(counter):
        kenaz.grad(f)(x)
    failures: list[str] = []
    raised = [0] * THREADS
    # The second starts once every thread runs: on a loaded machine, starting 8 threads
    # can itself take most of a second, and the last ones would then never run a call.
    deadline = [0.0]
    start = threading.Barrier(
        THREADS, action=lambda: deadline.__setitem__(0, time.monotonic() + min(STRESS_SECONDS, 1))
    )

    def worker(index: int) -> None:
        rng = random.Random(index)
        call = 0
        start.wait()
        # At least two calls (a failing one and a plain one for the odd threads), however
        # little CPU time this thread gets before the deadline.
        while call < 2 or time.monotonic() < deadline[0]:
            call += 1
            if index % 2 and call % 2:
                with contextlib.suppress(Boom):
                    with handler(RaiseAtOp(rng.randrange(counter.total))):
                        kenaz.grad(f)(x)
                    failures.append(f"thread {index}: no exception")
                raised[index] += 1
            else:
                result = np.asarray(kenaz.grad(f)(x))
                if not np.array_equal(result, reference):
                    failures.append(f"thread {index}: wrong result")
            if current_handlers():
                failures.append(f"thread {index}: handlers left {current_handlers()}")

    gc_enabled = gc.isenabled()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:10]
    assert all(raised[i] > 0 for i in range(1, THREADS, 2)), raised
    assert gc.isenabled() == gc_enabled
