"""Effects and handlers: perform, the handler stack, deep handlers, user handlers and ops."""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, Op, Tensor, handler, perform
from kenaz.effects import current_handlers
from kenaz.ops.elementwise import sin
from kenaz.testing import check_op


class CountOps(Handler):
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def handle(self, op, args, params):
        self.counts[op.name] += 1
        return perform(op, *args, **params)


class Recorder(Handler):
    """Records the handler stack each op sees while it is handled."""

    def __init__(self) -> None:
        self.stacks: list[tuple[Handler, ...]] = []

    def handle(self, op, args, params):
        self.stacks.append(current_handlers())
        return perform(op, *args, **params)


def test_no_handler_runs_numpy_eagerly():
    out = perform(sin, np.zeros(2))
    assert isinstance(out, Tensor)
    np.testing.assert_array_equal(out, [0.0, 0.0])


def test_a_user_handler_sees_every_op():
    counter = CountOps()
    with handler(counter):
        knp.sum(knp.sin(knp.ones(3)) * 2.0 + 1.0)
    assert counter.counts == Counter({"sin": 1, "mul": 1, "add": 1, "sum": 1})


def test_a_handler_runs_with_only_the_outer_handlers_installed():
    outer, inner = Recorder(), Recorder()
    with handler(outer), handler(inner):
        knp.sin(1.0)
    assert inner.stacks == [(outer,)]
    assert outer.stacks == [()]


def test_handlers_compose_with_transformations():
    counter = CountOps()
    with handler(counter):
        kenaz.grad(lambda x: knp.sin(x) * x)(1.0)
    # The forward pass and the backward arithmetic both reach the outer counter.
    assert counter.counts["sin"] == 1
    assert counter.counts["dsin"] == 1  # g * cos(x), the backward rule of sin


def test_the_stack_is_restored_when_the_block_raises():
    with pytest.raises(RuntimeError), handler(CountOps()):
        raise RuntimeError
    assert current_handlers() == ()


def test_the_stack_is_restored_when_a_handler_raises():
    class Refuse(Handler):
        def handle(self, op, args, params):
            raise RuntimeError(op.name)

    outer = CountOps()
    with handler(outer):
        with pytest.raises(RuntimeError, match="sin"), handler(Refuse()):
            knp.sin(1.0)
        assert current_handlers() == (outer,)
    assert current_handlers() == ()


def test_threads_do_not_see_each_others_handlers():
    seen = {}
    started, release = threading.Event(), threading.Event()

    def worker():
        started.wait()
        seen["stack"] = current_handlers()
        release.set()

    thread = threading.Thread(target=worker)
    thread.start()
    with handler(CountOps()):
        started.set()
        release.wait(timeout=10)
    thread.join()
    assert seen["stack"] == ()


def test_a_user_defined_op_with_rules():
    cube = Op(
        "cube",
        lambda x: x**3,
        jvp=[lambda t, ans, x: 3 * x * x * t],
        vjp=[lambda ans, x: lambda g: 3 * x * x * g],
    )
    assert float(kenaz.grad(cube)(2.0)) == 12.0
    assert float(kenaz.grad(kenaz.grad(cube))(2.0)) == 12.0
    check_op(cube, (np.array([0.5, -1.0, 2.0]),), order=2, batching=False)


def test_an_op_without_rules_says_so():
    opaque = Op("opaque", np.sin)
    with pytest.raises(NotImplementedError, match="opaque.*vjp"):
        kenaz.grad(lambda x: opaque(x))(1.0)
    with pytest.raises(NotImplementedError, match="opaque.*jvp"):
        kenaz.jvp(lambda x: opaque(x), (1.0,), (1.0,))


def test_perform_and_perform_args_share_one_body():
    """`perform` is `perform_args`' own code with variadic arguments: one body, no wrapper frame."""
    from kenaz import effects

    assert effects.perform.__code__.co_code == effects.perform_args.__code__.co_code
    assert Op.__call__ is effects.perform
    cube = Op("cube", lambda x, scale=1.0: scale * x**3)
    assert float(effects.perform(cube, 2.0, scale=2.0)) == 16.0
    assert float(effects.perform_args(cube, (2.0,), {"scale": 2.0})) == 16.0
    assert float(cube(2.0)) == 8.0


# -- a handler is its own context manager and decorator; the public stack API ----------------
def test_a_handler_is_its_own_context_manager_and_restores_the_stack_on_error():
    counter = CountOps()
    with counter as installed:
        assert installed is counter and current_handlers() == (counter,)
        with counter:  # nested entry of the same handler
            knp.sin(1.0)
        assert current_handlers() == (counter,)
    assert current_handlers() == ()
    with pytest.raises(RuntimeError), counter:
        raise RuntimeError("inside")
    # installed twice, it saw the op twice: once itself, once as forwarded by itself
    assert current_handlers() == () and counter.counts == Counter({"sin": 2})


def test_a_handler_is_a_decorator():
    counter = CountOps()

    @counter
    def f(x):
        return knp.cos(x) * 2.0

    assert float(f(0.0)) == 2.0 and float(f(0.0)) == 2.0
    assert counter.counts == Counter({"cos": 2, "mul": 2})
    assert current_handlers() == ()
    # under a transformation, the decorated function's handler sits inside it
    assert float(kenaz.grad(f)(0.0)) == 0.0


def test_no_handlers_runs_a_block_on_the_backend_and_restores_the_stack():
    from kenaz.effects import handlers_installed, no_handlers

    counter = CountOps()
    assert not handlers_installed()
    with counter:
        assert handlers_installed()
        with no_handlers():
            assert not handlers_installed() and current_handlers() == ()
            knp.sin(1.0)
        knp.cos(1.0)
    assert counter.counts == Counter({"cos": 1})


def test_a_call_is_one_op_to_a_user_handler_and_its_rule_still_applies_outside():
    @kenaz.custom_vjp
    def double(x):
        return x * 2.0

    double.defvjp(lambda x: (x * 2.0, None), lambda _, g: (g * 10.0,))  # a rule to notice
    counter = CountOps()

    def f(x):
        with counter:
            return double(x)

    assert float(kenaz.grad(f)(1.0)) == 10.0  # grad outside the handler used the rule
    assert counter.counts == Counter({"custom_vjp[double]": 1})


def test_handle_call_is_where_a_handler_meets_calls():
    class CountCalls(Handler):
        def __init__(self):
            self.calls, self.ops = [], []

        def handle(self, op, args, params):
            self.ops.append(op.name)
            return perform(op, *args, **params)

        def handle_call(self, call, args, params):
            self.calls.append(call.name)
            return self.run_call(call, args, params)  # see inside the call

    @kenaz.checkpoint
    def g(x):
        return knp.sin(x)

    h = CountCalls()
    with h:
        g(knp.ones(2))
    assert h.calls == ["checkpoint[g]"] and h.ops == ["sin"]
