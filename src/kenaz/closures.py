"""Closure conversion by running: the tensors a call's function reads without being given them.

A call with rules of its own (``custom_vjp``, ``custom_jvp``, ``checkpoint``,
``fixed_point``) runs its function where the transformations around it do not
see the function's ops, so a tensor the function reads by any Python route
(a closure, a bound method's ``self.w``, a ``functools.partial``, a default
argument, a global) would lose its derivative. Reading ``__closure__`` can
never find them all; running the function can:

1. :func:`find_closed_over` runs the function once, with its arguments given
   fresh identities, under a :class:`ClosureFinder`. The finder evaluates every
   op on plain values (no transformation sees this run) and notes each input
   that a running transformation tracks and that was not made inside the run:
   that tensor is closed over.
2. The call lifts each one into an extra input of its op (after the
   arguments' leaves), so every transformation sees it as an argument.
3. Whenever the function or one of its rules runs, :class:`Substitute`
   replaces each closed-over tensor, by identity, with the lifted input it
   stands for (a fresh identity of a ``vjp``, a ``vmap`` view, ...): its
   derivative then flows exactly like an argument's, to any order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .effects import Handler, Op, current_handlers, no_handlers, perform_args
from .tensor import Tensor, _make

__all__ = ["ClosureFinder", "Substitute", "find_closed_over", "stand_in_value"]


def stand_in_value(x: Tensor) -> Any:
    """A concrete backend value for ``x`` with its shape and dtype.

    A plain tensor's own value; for a ``vmap`` view, its first example (the
    discovery run needs values of the right shape, not the batch's); for a
    ``jit`` tracer, the value it is traced with.
    """
    if type(x) is Tensor:
        return x._value
    batched = getattr(x, "_batched", None)
    if batched is not None:  # a vmap view: example 0 of its batch, along its batch axis
        return stand_in_value(batched)[(slice(None),) * x._batch_axis + (0,)]
    concrete = getattr(x, "_concrete", None)
    if concrete is not None:  # a jit tracer
        return concrete
    return x._value  # any other view raises its own error here


class ClosureFinder(Handler):
    """Runs a function on plain values, noting the tracked tensors it was not given.

    ``made_inside`` holds the identities of the function's arguments and of
    every op output of the run; the objects themselves are kept in ``_alive``
    so that no identity is reused while the run lasts.
    """

    def __init__(self, arguments: Sequence[Any]) -> None:
        # The levels of the transformations running now: a record of a finished one
        # (an aux output, a tensor kept from an earlier grad) makes no tensor tracked.
        self.running = {h.level for h in current_handlers() if hasattr(h, "level")}
        self.made_inside = {id(a) for a in arguments}
        self._alive: list[Any] = list(arguments)
        self.captured: list[Tensor] = []

    def is_tracked(self, x: Tensor) -> bool:
        """Tracked by a running transformation: a record of one, or a view or tracer."""
        if type(x) is not Tensor:
            return True
        trace = x._trace
        return bool(trace) and not self.running.isdisjoint(trace)

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        plain_args = tuple(self._plain(a) for a in args)
        with no_handlers():  # no transformation sees the discovery run
            out = perform_args(op, plain_args, params)
        for o in out if isinstance(out, tuple) else (out,):
            self.made_inside.add(id(o))
            self._alive.append(o)
        return out

    def _plain(self, a: Any) -> Any:
        """``a`` with each tensor noted (captured if closed over) and as a plain value."""
        if isinstance(a, Tensor):
            if id(a) not in self.made_inside and self.is_tracked(a):
                self.captured.append(a)
                self.made_inside.add(id(a))
            return a if type(a) is Tensor else _make(stand_in_value(a))
        if type(a) is list or type(a) is tuple:
            return type(a)(self._plain(item) for item in a)
        return a


def find_closed_over(run: Callable[[list[Any]], Any], leaves: Sequence[Any]) -> list[Tensor]:
    """The tracked tensors ``run(leaves)`` reads without being given them, in order of use.

    The leaves are given fresh identities (plain tensors of their values), so
    that a tensor that is both an argument and read through a closure counts
    as closed over too: the two uses have derivatives of their own.
    """
    fresh = [_make(stand_in_value(x)) if isinstance(x, Tensor) else x for x in leaves]
    finder = ClosureFinder(fresh)
    with finder:
        run(fresh)
    return finder.captured


class Substitute(Handler):
    """Replaces closed-over tensors, by identity, with the inputs lifted for them."""

    def __init__(self, replacements: dict[int, Tensor]) -> None:
        self.replacements = replacements

    def replace(self, a: Any) -> Any:
        if isinstance(a, Tensor):
            return self.replacements.get(id(a), a)
        if type(a) is list or type(a) is tuple:
            return type(a)(self.replace(item) for item in a)
        return a

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        return perform_args(op, tuple(self.replace(a) for a in args), params)
