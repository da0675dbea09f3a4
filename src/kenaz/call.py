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
the checks that a rule neither loses a derivative through a closed-over
tensor (:class:`ClosureGuard`) nor returns an input as an output
(:func:`fresh_outputs`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import tree
from .backend import namespace_of, numpy_dtype, zeros_on
from .convert import leaf_tensor
from .effects import Handler, Op, handlers_installed, no_handlers, perform_args
from .ops.elementwise import alias, astype
from .tensor import Tensor

__all__ = ["Call", "CallInfo", "CallFunction", "ClosureGuard", "fresh_outputs", "run_call"]


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
    captures : bool, optional
        The reverse rule differentiates tensors the function closes over
        (``checkpoint``): it receives ``captured=``, a list the reverse
        handler fills with them while the rule runs, and its pullback returns
        their cotangents after the arguments'. Otherwise such a tensor is an
        error (its derivative would be lost).

    """

    __slots__ = ("run", "captures")

    def __init__(
        self,
        name: str,
        run: Callable[[tuple, dict], tuple],
        *,
        forward: Callable[..., Any] | None = None,
        reverse: Callable[..., Any] | None = None,
        batch: Callable[..., Any] | None = None,
        captures: bool = False,
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
        self.captures = captures

    def _run_eagerly(self, *values: Any, **params: Any) -> tuple[Any, ...]:
        """Backend implementation: run the function on plain values, with no handlers."""
        with no_handlers():
            outs = self.run(tuple(Tensor(v) for v in values), params)
        return tuple(o._value for o in outs)

    def check_closures(self, params: dict, level: int) -> None:
        """Raise if the function closes over a tensor tracked at ``level`` (arguments untracked)."""
        call = params.get("call")
        if isinstance(call, CallInfo):
            call.check_closures(level)


class CallInfo:
    """One call of a Python function as a :class:`Call` op: everything besides the tensor leaves.

    ``nondiff`` maps positions to the non-differentiable arguments,
    ``in_tree`` is the structure of the differentiable ones, and ``out_tree``
    the output's structure, known once the function or a rule has run.
    """

    __slots__ = ("function", "nondiff", "in_tree", "nargs", "out_tree")

    def __init__(self, function: Any, nondiff: dict[int, Any], in_tree: Any, nargs: int) -> None:
        self.function = function
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.nargs = nargs
        self.out_tree: Any = None

    def diff_args(self, leaves: Sequence[Any]) -> tuple[Any, ...]:
        """The differentiable arguments rebuilt from ``leaves``."""
        return tree.unflatten(self.in_tree, list(leaves))

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

    def run_primal(self, leaves: Sequence[Any]) -> list[Tensor]:
        """Run the original function on the current handler stack; its output leaves."""
        return self.outputs(self.function.fun(*self.arguments(leaves)), "the function")

    def check_closures(self, level: int) -> None:
        """Raise if the function or its rules close over a tensor tracked at ``level``.

        When no argument is tracked, the rules are not run at this level, so no
        :class:`ClosureGuard` sees their ops; a look at the functions' closures
        (one level deep: tensors, and tensors in lists, tuples and dicts)
        catches the common mistake, ``custom_vjp(lambda x: x * w)`` with ``w``
        differentiated.
        """
        function = self.function
        for rule in function.rules():
            for cell in getattr(rule, "__closure__", None) or ():
                try:
                    contents = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                nested = isinstance(contents, (list, tuple, dict))
                for value in tree.leaves(contents) if nested else [contents]:
                    if isinstance(value, Tensor) and value._trace and level in value._trace:
                        raise ValueError(
                            f"kenaz: {function.kind} function {function.__name__!r} closes over "
                            "a tensor that is being differentiated; its derivative would be "
                            "lost. Pass it to the custom function as a differentiable argument."
                        )

    def __repr__(self) -> str:
        nondiff = ", ".join(f"{i}={v!r}" for i, v in sorted(self.nondiff.items()))
        return f"<{self.function.__name__}{f' nondiff {nondiff}' if nondiff else ''}>"


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

    def rules(self) -> list[Callable | None]:
        """The user's functions that run under transformations (for closure checks)."""
        return [self.fun]

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        if self.signature is None or (not kwargs and not self.has_defaults):
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(
                f"kenaz.{self.kind}: {self.__name__!r} takes keyword-only arguments "
                f"{sorted(bound.kwargs)}; custom functions take positional arguments only"
            )
        return bound.args

    def _check_ready(self) -> None:
        """Raise if a rule is missing (called when a transformation meets the function)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._positional(args, kwargs)
        if not handlers_installed():  # no transformation: just run the function
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
        call = CallInfo(self, nondiff, in_tree, len(args))
        out_leaves = perform_args(self.op, tuple(leaves), {"call": call})
        return tree.unflatten(call.out_tree, list(out_leaves))

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Used as a method: bind like a function would.
        return self if instance is None else functools.partial(self, instance)


# -- what the transformations' call paths share ------------------------------------------
class ClosureGuard(Handler):
    """Watches the ops of a call's rule for tensors tracked at ``level`` that are not its arguments.

    Such a tensor was closed over: the transformation at ``level`` does not
    see the rule's ops, so its derivative would silently be lost. With
    ``capture=False`` that is an error; with ``capture=True`` (checkpoint) the
    tensors are collected in ``captured`` and differentiated as extra inputs.
    """

    def __init__(self, level: int, allowed: Sequence[Any], what: str, capture: bool = False):
        self.level = level
        self.allowed = {id(x) for x in allowed if isinstance(x, Tensor)}
        self.what = what
        self.capture = capture
        self.captured: list[Tensor] = []

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        level = self.level
        for a in args:
            if (
                isinstance(a, Tensor)
                and a._trace is not None
                and level in a._trace
                and id(a) not in self.allowed
            ):
                if not self.capture:
                    raise ValueError(
                        f"kenaz: {self.what} uses a tensor that is being differentiated but is "
                        "not one of its differentiable arguments (a closed-over variable, or "
                        "an argument in nondiff_argnums?); its derivative would be lost. Pass "
                        "it to the custom function as a differentiable argument."
                    )
                self.allowed.add(id(a))
                self.captured.append(a)
        return perform_args(op, args, params)


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
