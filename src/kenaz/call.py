"""Calls: ops that run a user's function (``custom_jvp``, ``custom_vjp``, ``checkpoint``, ``jit``).

A call is an :class:`~kenaz.effects.Op` like any primitive: performing it is
one effect, which ``debug`` or a user's handler sees as one op and forwards.
What makes it a call is ``call.run``: the function it stands for. ``perform``
hands a call to the handler's ``handle_call`` (never ``handle``): each
transformation handles it through the call's *joint* rule when it has one
(``Call(forward=..., reverse=..., batch=...)``) and otherwise runs the function
under itself (``Handler.run_call``), as if the call were not there. So a new
kind of call (``jit``) is one :class:`Call` with the rules it overrides, and no
transformation changes.

This module also holds what calls of Python functions share: binding a
function's arguments to the flat tensor leaves the op takes
(:class:`CallInfo`), the decorator base class (:class:`CallFunction`), and
the checks that a rule neither reads a tracked tensor its function does not
(:class:`ClosureGuard`) nor returns an input as an output
(:func:`fresh_outputs`).

**Closed-over tensors: the contract of a call's rules.** Before a
:class:`CallFunction` performs its op, it runs the function once to find the
tracked tensors it reads without being given them (:func:`find_closed_over`) and
appends them to the op's arguments: the op's arguments are the *declared*
leaves (``call.n_declared`` of them, the function's differentiable arguments)
followed by one *lifted* leaf per closed-over tensor (``call.captured``, in the
same order). So every joint rule receives the lifted leaves as arguments:

- ``reverse(args, call=...)``: its pullback returns one cotangent per argument,
  lifted ones included (``None`` for zero);
- ``forward(args, tangents, call=...)``: ``tangents`` has an entry (or
  ``None``) for every argument, lifted ones included;
- ``batch(op, values, axes, call=...)``: lifted leaves are batched like any.

A rule that runs the user's code on some leaves does so through
``call.run_primal(leaves)`` or under ``call.substituting(leaves)``, which put
each lifted leaf in place of the tensor it stands for. A user's hand-written
rule covers the declared arguments only; :mod:`kenaz.lifted` differentiates
the function itself with respect to the lifted ones (what ``custom_vjp``,
``custom_jvp`` and ``checkpoint`` do, and what ``odeint`` can adopt). How the
closed-over tensors are found is below (:func:`find_closed_over`).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import tree
from .backend import namespace_of, numpy_dtype, zeros_on
from .convert import leaf_tensor
from .effects import (
    Handler,
    Op,
    current_handlers,
    handler,
    installed_stack,
    no_handlers,
    perform_args,
)
from .ops.elementwise import alias, astype
from .tensor import Tensor, _make

__all__ = [
    "Call",
    "CallInfo",
    "CallFunction",
    "ClosureFinder",
    "ClosureGuard",
    "Discovery",
    "Substitute",
    "discover",
    "find_closed_over",
    "fresh_outputs",
    "run_call",
]


class Call(Op):
    """An op that runs a function: one effect, whatever the function does inside.

    Parameters
    ----------
    name : str
        Shown by ``debug`` and in errors, e.g. ``custom_vjp[f]``.
    run : callable
        ``run(args, params) -> tuple of tensors``: run the function on the
        current handler stack. A transformation without a joint rule for the
        call installs itself and calls this (the default rule); with no
        handler at all, the op's implementation calls it on plain tensors.
    forward, reverse, batch : callable or None, optional
        Joint rules, as for :class:`~kenaz.effects.Op`. ``args`` are the
        op's arguments and ``params`` its parameters (for the calls built
        here, ``call=CallInfo``).
    impl : callable, optional
        The implementation on plain values when no handler is installed
        (default: run the function on them). A composite with a fast backend
        implementation (``cumprod``) gives NumPy's here.
    multiple_results : bool, optional
        ``run`` returns a tuple of tensors (the default: the leaves of the
        function's output), or one tensor.

    """

    __slots__ = ("run",)

    def __init__(
        self,
        name: str,
        run: Callable[[tuple, dict], tuple],
        *,
        forward: Callable[..., Any] | None = None,
        reverse: Callable[..., Any] | None = None,
        batch: Callable[..., Any] | None = None,
        impl: Callable[..., Any] | None = None,
        multiple_results: bool = True,
    ) -> None:
        super().__init__(
            name,
            self._run_eagerly if impl is None else impl,
            forward=forward,
            reverse=reverse,
            batch=batch,
            multiple_results=multiple_results,
        )
        self.is_call = True  # `perform` hands it to `Handler.handle_call`
        self.run = run

    def _run_eagerly(self, *values: Any, **params: Any) -> tuple[Any, ...]:
        """Backend implementation: run the function on plain values, with no handlers."""
        with no_handlers():
            outs = self.run(tuple(Tensor(v) for v in values), params)
        return tuple(o._value for o in outs)


class CallInfo:
    """One call of a Python function as a :class:`Call` op: everything besides the tensor leaves.

    ``nondiff`` maps positions to the non-differentiable arguments,
    ``in_tree`` is the structure of the differentiable ones (``n_declared``
    leaves), ``captured`` the closed-over tensors lifted into the op's
    trailing arguments (see the module doc), and ``out_tree`` the output's
    structure, known once the function or a rule has run.
    """

    __slots__ = (
        "function",
        "nondiff",
        "in_tree",
        "nargs",
        "n_declared",
        "captured",
        "out_tree",
        "discovered",
    )

    def __init__(
        self, function: Any, nondiff: dict[int, Any], in_tree: Any, nargs: int, n_declared: int
    ) -> None:
        self.function = function
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.nargs = nargs
        self.n_declared = n_declared
        self.captured: list[Tensor] = []
        self.out_tree: Any = None
        # The discovery run's result, while the op is performed, for a rule that may use it
        # as the primal (checkpoint's): see CallFunction.keeps_discovery.
        self.discovered: Discovery | None = None

    def diff_args(self, leaves: Sequence[Any]) -> tuple[Any, ...]:
        """The differentiable arguments rebuilt from (the declared part of) ``leaves``."""
        return tree.unflatten(self.in_tree, list(leaves[: self.n_declared]))

    def arguments(self, leaves: Sequence[Any]) -> list[Any]:
        """All positional arguments, in order, with the non-differentiable ones put back."""
        diff = iter(self.diff_args(leaves))
        return [self.nondiff[i] if i in self.nondiff else next(diff) for i in range(self.nargs)]

    def nondiff_values(self) -> list[Any]:
        return [self.nondiff[i] for i in sorted(self.nondiff)]

    def outputs(self, out: Any, where: str) -> list[Tensor]:
        """Flatten a function's or rule's output, remembering (and checking) its structure."""
        leaves, out_tree = tree.flatten(out)
        if self.out_tree is None:
            self.out_tree = out_tree
        elif out_tree != self.out_tree:
            raise TypeError(
                f"kenaz.{self.function.kind}: {where} of {self.function.__name__!r} returned "
                f"structure {out_tree}, but the function returns {self.out_tree}"
            )
        return [leaf_tensor(leaf, self.function.kind) for leaf in leaves]

    def substituting(self, leaves: Sequence[Any]) -> Any:
        """A context in which each closed-over tensor reads as its lifted leaf in ``leaves``.

        No handler at all when nothing was lifted, or when every lifted leaf
        is the very tensor it stands for.
        """
        lifted = leaves[self.n_declared :]
        replacements = {id(c): x for c, x in zip(self.captured, lifted) if c is not x}
        return handler(Substitute(replacements)) if replacements else _no_context

    def run_primal(self, leaves: Sequence[Any]) -> list[Tensor]:
        """Run the original function on the current handler stack; its output leaves."""
        with self.substituting(leaves) as substitute:
            out = self.outputs(self.function.fun(*self.arguments(leaves)), "the function")
        if substitute is not None:  # a closed-over tensor returned as it is
            out = [substitute.replace(o) for o in out]
        return out

    def __repr__(self) -> str:
        nondiff = ", ".join(f"{i}={v!r}" for i, v in sorted(self.nondiff.items()))
        lifted = f" lifting {len(self.captured)}" if self.captured else ""
        return f"<{self.function.__name__}{f' nondiff {nondiff}' if nondiff else ''}{lifted}>"


class _NoContext:
    """``contextlib.nullcontext()`` that enters as ``None``, without its per-use cost."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: Any) -> None:
        return None


_no_context = _NoContext()


def run_call(args: tuple, params: dict) -> tuple[Tensor, ...]:
    """``Call.run`` for the calls of :class:`CallFunction`: the function on the current stack."""
    return tuple(params["call"].run_primal(args))


class CallFunction:
    """A Python function performed as one :class:`Call` op under transformations.

    The base of ``custom_jvp``, ``custom_vjp`` and ``checkpoint``: it binds
    the arguments (``nondiff_argnums`` apart), flattens the differentiable
    ones to tensor leaves, and performs ``self.op`` on them. A subclass sets
    ``kind`` and builds ``self.op`` with its rules in :meth:`make_op`.
    """

    kind = ""
    #: Keep the discovery run's output in ``call.discovered`` while the op is performed,
    #: for a rule that can use it as the primal (checkpoint's reverse rule).
    keeps_discovery = False

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        self.__name__ = getattr(fun, "__name__", type(fun).__name__)
        try:
            self.signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):  # builtins without a signature
            self.signature = None
        # Only then are arguments bound by name (the common case skips it).
        self.has_defaults = self.signature is not None and any(
            p.default is not p.empty for p in self.signature.parameters.values()
        )
        self.op = self.make_op(f"{self.kind}[{self.__name__}]")

    def make_op(self, name: str) -> Call:
        """The op performed for each call (a subclass adds its rules)."""
        return Call(name, run_call)

    def rename(self, name: str) -> None:
        """Call the function ``name`` (and its op ``kind[name]``), e.g. ``vmap(f)``."""
        self.__name__ = name
        self.op.name = f"{self.kind}[{name}]"

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        if self.signature is None or (not kwargs and not self.has_defaults):
            return args
        bound = self.signature.bind(*args, **kwargs)
        if bound.kwargs:  # passed keyword-only (those left at their defaults are not passed)
            raise TypeError(
                f"kenaz.{self.kind}: {self.__name__!r} takes keyword-only arguments "
                f"{sorted(bound.kwargs)}; custom functions take positional arguments only"
            )
        bound.apply_defaults()
        return bound.args

    def _check_ready(self) -> None:
        """Raise if a rule is missing (called when a transformation meets the function)."""

    def transparent_here(self) -> bool:
        """Whether every handler now installed would run the function under itself.

        False unless a subclass knows it (then the call is no op at all: the
        function just runs, each handler sees its ops, closed-over tensors
        included, and no discovery run is needed).
        """
        return False

    def discover(self, call: CallInfo, leaves: list[Any]) -> Discovery:
        """Run the function once to find the tracked tensors it closes over (its output is
        kept only if :attr:`keeps_discovery`)."""
        return discover(
            lambda fresh: self.fun(*call.arguments(fresh)), leaves, self.keeps_discovery
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._positional(args, kwargs)
        stack = installed_stack()
        if not stack or _sees_through_calls(stack) or self.transparent_here():
            # No transformation, an enclosing call's discovery run, which sees every op
            # the function performs (a call of it would only run the function twice more,
            # to discover and then on plain values), or only handlers that would run the
            # function under themselves: just run the function.
            return self.fun(*args)
        self._check_ready()
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise ValueError(
                    f"kenaz.{self.kind}: nondiff_argnums={self.nondiff_argnums} names argument "
                    f"{i}, but {self.__name__!r} was called with {len(args)} arguments"
                )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree.flatten(diff)
        call = CallInfo(self, nondiff, in_tree, len(args), len(leaves))
        # Closure conversion: the tracked tensors the function reads become op inputs.
        found = self.discover(call, leaves)
        call.captured = found.captured
        if self.keeps_discovery:
            call.discovered = found
        del found  # the output it may hold is call.discovered's, only while the op runs
        try:
            out_leaves = perform_args(self.op, (*leaves, *call.captured), {"call": call})
        finally:
            call.discovered = None  # the outputs it holds are the rule's to keep, or no one's
        return tree.unflatten(call.out_tree, list(out_leaves))

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Used as a method: bind like a function would.
        return self if instance is None else functools.partial(self, instance)


def _sees_through_calls(stack: tuple) -> bool:
    """Whether the innermost handler of ``stack`` is a discovery run (:class:`ClosureFinder`,
    or one with ``sees_through_calls`` and no handler outside it), so that a call performed
    now would end up running its function on plain values, out of the run's sight."""
    outside, innermost = stack
    return type(innermost) is ClosureFinder or (
        not outside and getattr(innermost, "sees_through_calls", False)
    )


# -- closure conversion by running -------------------------------------------------------
# A call with rules of its own runs its function where the transformations around it do
# not see the function's ops, so a tensor it reads by any Python route (a closure, a bound
# method's `self.w`, a partial, a default argument, a global) would lose its derivative.
# Reading `__closure__` can never find them all; running the function can:
# 1. `find_closed_over` runs it once, its arguments given fresh identities, under a
#    `ClosureFinder`, which evaluates every op on plain values (no transformation sees
#    this run) and notes each input that a running transformation tracks and that was not
#    made inside the run: that tensor is closed over.
# 2. The call lifts each one into an extra input of its op (after the arguments' leaves),
#    so every transformation sees it as an argument.
# 3. Whenever the function or one of its rules runs, `Substitute` replaces each
#    closed-over tensor, by identity, with the lifted input that stands for it (a fresh
#    identity of a `vjp`, a `vmap` view...): its derivative flows like an argument's.
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
    """Runs a function on plain values, noting the tensors it was not given.

    ``captured`` are those a running transformation tracks (closed over),
    ``read`` the others (constants). ``made_inside`` holds the identities of
    the function's arguments, of every op output of the run and of the
    tensors noted; the objects themselves are kept in ``_alive`` (or in those
    lists) so that no identity is reused while the run lasts.
    """

    def __init__(self, arguments: Sequence[Any]) -> None:
        # The levels of the transformations running now: a record of a finished one
        # (an aux output, a tensor kept from an earlier grad) makes no tensor tracked.
        handlers = current_handlers()
        self.running = {h.level for h in handlers if hasattr(h, "level")}
        # An enclosing call's substitutions, innermost first: an op of the function passes
        # them on its way out, so a tensor one replaces is read as its replacement there.
        self.substitutions = [h.replacements for h in reversed(handlers) if type(h) is Substitute]
        self.made_inside = {id(a) for a in arguments}
        self._alive: list[Any] = list(arguments)
        self.captured: list[Tensor] = []
        self.read: list[Tensor] = []

    def is_tracked(self, x: Tensor) -> bool:
        """Tracked by a running transformation: a record of one, or a view or tracer; or
        replaced by such a tensor on the way out (an enclosing call's lifted leaf)."""
        for replacements in self.substitutions:
            x = replacements.get(id(x), x)
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
            if id(a) not in self.made_inside:  # noted once (no handler tracks more meanwhile)
                self.made_inside.add(id(a))
                (self.captured if self.is_tracked(a) else self.read).append(a)
            return a if type(a) is Tensor else _make(stand_in_value(a))
        if type(a) is list or type(a) is tuple:
            return type(a)(self._plain(item) for item in a)
        return a


class Discovery:
    """What one discovery run of a function found (:func:`discover`).

    Attributes
    ----------
    captured : list of Tensor
        The tracked tensors it read without being given them, in order of use.
    read : list of Tensor
        The other tensors it read without being given them (constants).
    inputs : sequence
        The leaves it ran on (before they were given fresh identities).
    output : any
        What the function returned (None unless asked for).
    on_stack : tuple or None
        The handler stack ``output`` was computed on: ``()`` for a run on plain
        values that were the very values of its inputs (no leaf and no
        closed-over tensor a ``vmap`` view or a ``jit`` tracer, whose stand-ins
        are an example or a tracing value); None when ``output`` is no primal.
    """

    __slots__ = ("captured", "read", "inputs", "output", "on_stack")

    def __init__(
        self,
        captured: list[Tensor],
        read: list[Tensor],
        inputs: Sequence[Any],
        output: Any,
        on_stack: tuple | None,
    ) -> None:
        self.captured = captured
        self.read = read
        self.inputs = inputs
        self.output = output
        self.on_stack = on_stack

    def ran_on(self, args: Sequence[Any]) -> bool:
        """Whether ``args`` are, one by one, the inputs it ran on and then the captured tensors."""
        expected = (*self.inputs, *self.captured)
        return len(args) == len(expected) and all(a is b for a, b in zip(args, expected))


def discover(
    run: Callable[[list[Any]], Any], leaves: Sequence[Any], keep_output: bool = False
) -> Discovery:
    """Run ``run(leaves)`` once on plain values, noting the tensors it reads without being
    given them.

    The leaves are given fresh identities (plain tensors of their values), so
    that a tensor that is both an argument and read through a closure counts
    as closed over too: the two uses have derivatives of their own. The
    run's output is kept only if ``keep_output`` (else ``output`` is None).
    """
    fresh = [_make(stand_in_value(x)) if isinstance(x, Tensor) else x for x in leaves]
    finder = ClosureFinder(fresh)
    with finder:
        output = run(fresh)
    exact = all(
        type(x) is Tensor or not isinstance(x, Tensor) for x in (*leaves, *finder.captured)
    )
    return Discovery(
        finder.captured,
        finder.read,
        leaves,
        output if keep_output else None,
        () if keep_output and exact else None,
    )


def find_closed_over(run: Callable[[list[Any]], Any], leaves: Sequence[Any]) -> list[Tensor]:
    """The tracked tensors ``run(leaves)`` reads without being given them, in order of use
    (:func:`discover`'s ``captured``)."""
    return discover(run, leaves).captured


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


# -- what the transformations' call paths share ------------------------------------------
class ClosureGuard(Handler):
    """Watches a call's rule for tensors tracked at ``level`` that are not the call's inputs.

    The call lifted every tensor its function closes over, so such a tensor
    is one only the *rule* reads (a ``fwd`` or ``bwd`` reading a tensor the
    function does not): lifting it is impossible, since no input of the call
    stands for it, and the transformation at ``level`` does not see the
    rule's ops. That is an error, never a silent zero.
    """

    def __init__(self, level: int, allowed: Sequence[Any], what: str) -> None:
        self.guarded_level = level
        self.allowed = {id(x) for x in allowed if isinstance(x, Tensor)}
        self.what = what

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        level = self.guarded_level
        for a in args:
            if (
                isinstance(a, Tensor)
                and a._trace is not None
                and level in a._trace
                and id(a) not in self.allowed
            ):
                raise ValueError(
                    f"kenaz: {self.what} reads a tensor (shape {a.shape}, dtype {a.dtype}, "
                    f"in op {op.name!r} at {user_line()}) that is being differentiated, but its "
                    "function never reads it, so it cannot be lifted into an input of the "
                    "call and its derivative would be lost. Read it in the function as well, "
                    "or pass it to the function as an argument."
                )
        return perform_args(op, args, params)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_line() -> str:
    """``file:line`` of the innermost frame outside kenaz (the user's code), for errors."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return "an unknown place" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def fresh_outputs(outs: Sequence[Tensor], level: int, inputs: Sequence[Any]) -> list[Tensor]:
    """Outputs with identities of their own at ``level``.

    A rule may return one of its inputs (an identity function), a tensor it
    closed over, or one tensor twice; recording such a tensor would overwrite
    its existing record, so it is aliased (one level out) first.
    """
    taken = {id(x) for x in inputs}
    fresh = []
    for o in outs:
        if id(o) in taken or (o._trace is not None and level in o._trace):
            o = alias(o)
        taken.add(id(o))
        fresh.append(o)
    return fresh


# -- converting what users' rules return ---------------------------------------------------
def metas(leaves: Sequence[Any]) -> list[tuple[tuple[int, ...], np.dtype, Any]]:
    """Shapes, dtypes and backends (``None`` for NumPy) of ``leaves``: all a pullback keeps
    of inputs it does not need."""
    return [_meta(x) for x in leaves]


def _meta(x: Any) -> tuple[tuple[int, ...], np.dtype, Any]:
    if isinstance(x, Tensor):
        return x.shape, x.dtype, namespace_of(x)
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # a backend's array: no conversion
        return tuple(x.shape), numpy_dtype(x.dtype), namespace_of(x)
    return np.shape(x), np.asarray(x).dtype, None


def conform(value: Any, meta: tuple, what: str) -> Tensor:
    """``value`` as a tensor of the shape and dtype in ``meta`` (None: zeros, on the backend
    ``meta`` names, if it names one)."""
    shape, dtype = meta[0], meta[1]
    if value is None:
        return Tensor(zeros_on(meta[2] if len(meta) > 2 else None, shape, dtype))
    value = value if isinstance(value, Tensor) else Tensor(value)
    if value.shape != shape:
        raise ValueError(f"kenaz: {what} has shape {value.shape}, expected {shape}")
    if value.dtype != dtype and dtype.kind in "fc":
        value = astype(value, dtype)
    return value


def zeros_for(leaf: Any) -> Tensor:
    """A zero tangent or cotangent for ``leaf`` (same shape and dtype)."""
    shape, dtype, xp = _meta(leaf)
    return Tensor(zeros_on(xp, shape, dtype))


def cotangent_leaves(cts: Any, call: CallInfo, leaf_metas: Sequence[tuple], what: str) -> list:
    """Flatten ``bwd``'s result (one cotangent per differentiable argument) to per-leaf tensors."""
    diff_args = call.diff_args(list(range(len(leaf_metas))))  # the structure, leaves numbered
    if not isinstance(cts, (tuple, list)) or len(cts) != len(diff_args):
        raise TypeError(
            f"kenaz: {what} must return a tuple with one cotangent per differentiable argument "
            f"({len(diff_args)}), got {type(cts).__name__}"
            + (f" of length {len(cts)}" if isinstance(cts, (tuple, list)) else "")
        )
    leaves: list[Any] = []
    for arg, ct in zip(diff_args, cts):
        positions = tree.leaves(arg)
        if ct is None:
            leaves.extend(None for _ in positions)
            continue
        ct_leaves, ct_tree = tree.flatten(ct)
        if len(ct_leaves) != len(positions):
            raise TypeError(
                f"kenaz: {what} returned a cotangent of structure {ct_tree} for an argument of "
                f"structure {tree.structure(arg)}"
            )
        leaves.extend(ct_leaves)
    return [conform(v, m, f"a cotangent returned by {what}") for v, m in zip(leaves, leaf_metas)]


def tangent_leaves(t_out: Any, call: CallInfo, leaf_metas: Sequence[tuple], what: str) -> list:
    """Flatten a jvp rule's output tangent to per-output-leaf tensors."""
    if t_out is None:
        return [conform(None, m, what) for m in leaf_metas]
    t_leaves, t_tree = tree.flatten(t_out)
    if len(t_leaves) != len(leaf_metas):
        raise TypeError(
            f"kenaz: {what} returned a tangent of structure {t_tree}, but the output has "
            f"structure {call.out_tree}"
        )
    return [conform(t, m, f"a tangent returned by {what}") for t, m in zip(t_leaves, leaf_metas)]
