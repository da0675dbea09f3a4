"""How each built-in transformation handles a custom call (see ``kenaz.custom``).

- reverse mode, ``custom_vjp``: run ``fwd`` one level out, record one tape
  entry whose pullback calls ``bwd``;
- reverse mode, ``custom_jvp``: the primal runs one level out; the pullback is
  the transpose of the rule's (linear) tangent map, computed by reverse mode
  through the rule;
- forward mode, ``custom_jvp``: call the rule one level out;
- forward mode, ``custom_vjp``: differentiate the original function (JAX
  refuses this case);
- linearize: per-argument pieces of the jvp rule, or the original function.

A rule runs with the handler stack set to the handlers outside the
transformation, so the user's functions are seen, differentiated or batched
by those, exactly like a primitive's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import tree
from .custom import CallInfo, CustomCall, dispatch, register_rule, run_with_stack, zeros_for
from .effects import Handler, Op, _handlers, handler, perform_args
from .forward import ForwardHandler, LinearizeHandler
from .ops.elementwise import alias, astype
from .reverse import ReverseHandler, vjp
from .tensor import Tensor

__all__ = ["ClosureGuard", "record_on_tape", "fresh_outputs", "nodes_at", "cotangent_leaves"]


# -- helpers shared by the rules --------------------------------------------------------------
def nodes_at(leaves: Sequence[Any], level: int) -> list[Any]:
    """Each leaf's record at ``level`` (tape node or tangent), ``None`` when it has none."""
    return [
        x._trace.get(level) if isinstance(x, Tensor) and x._trace is not None else None
        for x in leaves
    ]


def _set_trace(x: Tensor, level: int, record: Any) -> None:
    if x._trace is None:
        x._trace = {level: record}
    else:
        x._trace[level] = record


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


class ClosureGuard(Handler):
    """Watches the ops of a rule for tensors tracked at ``level`` that are not its arguments.

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


def guarded(fn: Callable[[], Any], level: int, allowed: Sequence[Any], what: str) -> Any:
    """Call ``fn()`` (a user's rule) with a :class:`ClosureGuard` for ``level`` installed."""
    with handler(ClosureGuard(level, allowed, what)):
        return fn()


def check_closures(call: CallInfo, level: int) -> None:
    """Raise if the custom function or its rules close over a tensor tracked at ``level``.

    When no argument is tracked, the rules are not run at this level, so the
    guard above never sees their ops; a look at the functions' closures (one
    level deep: tensors, and tensors in lists, tuples and dicts) catches the
    common mistake, ``custom_vjp(lambda x: x * w)`` with ``w`` differentiated.
    """
    function = call.function
    rules = [function.fun, getattr(function, "jvp_rule", None), getattr(function, "fwd", None)]
    for rule in rules:
        for cell in getattr(rule, "__closure__", None) or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            nested = isinstance(contents, (list, tuple, dict))
            values = tree.leaves(contents) if nested else [contents]
            for value in values:
                if isinstance(value, Tensor) and value._trace is not None and level in value._trace:
                    raise ValueError(
                        f"kenaz: {function.kind} function {function.__name__!r} closes over a "
                        "tensor that is being differentiated; its derivative would be lost. "
                        "Pass it to the custom function as a differentiable argument."
                    )


class SharedPullback:
    """One call of a joint backward function, shared by the per-input pullbacks of a tape entry.

    The tape calls one pullback per tracked input with the same cotangent;
    the joint function runs once and each input takes its part. The result is
    dropped once every consumer has taken its part.
    """

    __slots__ = ("backward", "consumers", "remaining", "cotangent", "result")

    def __init__(self, backward: Callable[[Any], list[Any]], consumers: int) -> None:
        self.backward = backward
        self.consumers = consumers
        self.remaining = 0
        self.cotangent: Any = None
        self.result: list[Any] | None = None

    def part(self, index: int) -> Callable[[Any], Any]:
        return lambda g: self._take(g)[index]

    def _take(self, g: Any) -> list[Any]:
        if self.result is None or self.cotangent is not g:
            self.cotangent, self.result, self.remaining = g, self.backward(g), self.consumers
        result = self.result
        self.remaining -= 1
        if self.remaining <= 0:
            self.cotangent = self.result = None
        return result


def record_on_tape(
    rev: ReverseHandler,
    outs: Sequence[Tensor],
    parents: Sequence[Any],
    backward: Callable[[tuple[Tensor, ...]], list[Any]],
) -> None:
    """Append one entry to ``rev``'s tape: ``outs`` computed from ``parents`` (nodes or None).

    ``backward(cotangents)`` receives one cotangent per output (zeros for
    unused ones) and returns one per parent.
    """
    if not any(o.dtype.kind in "fc" for o in outs):
        return  # integer and boolean outputs carry no gradient
    shared = SharedPullback(backward, sum(p is not None for p in parents))
    rev.record(outs, [(p, shared.part(i)) for i, p in enumerate(parents) if p is not None])


def _metas(leaves: Sequence[Any]) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Shapes and dtypes of ``leaves``: all a pullback keeps of inputs it does not need."""
    return [
        (x.shape, x.dtype) if isinstance(x, Tensor) else (np.shape(x), np.asarray(x).dtype)
        for x in leaves
    ]


def _conform(value: Any, meta: tuple, what: str) -> Tensor:
    """``value`` as a tensor of the shape and dtype in ``meta`` (None: zeros)."""
    shape, dtype = meta
    if value is None:
        return Tensor(np.zeros(shape, dtype))
    value = value if isinstance(value, Tensor) else Tensor(value)
    if value.shape != shape:
        raise ValueError(f"kenaz: {what} has shape {value.shape}, expected {shape}")
    if value.dtype != dtype and dtype.kind in "fc":
        value = astype(value, dtype)
    return value


def cotangent_leaves(cts: Any, call: CallInfo, metas: Sequence[tuple], what: str) -> list[Tensor]:
    """Flatten ``bwd``'s result (one cotangent per differentiable argument) to per-leaf tensors."""
    diff_args = call.diff_args(list(range(len(metas))))  # the argument structure, leaves numbered
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
    return [_conform(v, m, f"a cotangent returned by {what}") for v, m in zip(leaves, metas)]


def tangent_leaves(t_out: Any, call: CallInfo, metas: Sequence[tuple], what: str) -> list[Tensor]:
    """Flatten a jvp rule's output tangent to per-output-leaf tensors."""
    if t_out is None:
        return [_conform(None, m, what) for m in metas]
    t_leaves, t_tree = tree.flatten(t_out)
    if len(t_leaves) != len(metas):
        raise TypeError(
            f"kenaz: {what} returned a tangent of structure {t_tree}, but the output has "
            f"structure {call.out_tree}"
        )
    return [_conform(t, m, f"a tangent returned by {what}") for t, m in zip(t_leaves, metas)]


def _call_jvp_rule(call: CallInfo, primal_leaves, tangent_leaves_, level, allowed) -> tuple:
    function = call.function
    what = f"the jvp rule of {function.__name__!r}"

    def run():
        return function.jvp_rule(
            *call.nondiff_values(), call.diff_args(primal_leaves), call.diff_args(tangent_leaves_)
        )

    result = run() if level is None else guarded(run, level, allowed, what)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"kenaz.custom_jvp: {what} must return a pair (out, tangent_out)")
    return result[0], result[1]


def inline(transformation: Handler, op: CustomCall, leaves: list, call: CallInfo) -> list[Tensor]:
    """Run the original function under ``transformation`` (its rule is not used here)."""
    stack = (_handlers.get(), transformation)
    return run_with_stack(stack, lambda: call.run_primal(leaves))


# -- reverse mode ------------------------------------------------------------------------------
@register_rule(ReverseHandler, "custom_vjp")
def _reverse_custom_vjp(rev: ReverseHandler, op: CustomCall, leaves: list, call: CallInfo):
    parents = nodes_at(leaves, rev.level)
    if all(p is None for p in parents):
        check_closures(call, rev.level)
        return dispatch(op, leaves, call)
    function = call.function
    name = function.__name__
    args = call.arguments(leaves)
    result = guarded(lambda: function.fwd(*args), rev.level, leaves, f"the fwd rule of {name!r}")
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"kenaz.custom_vjp: the fwd rule of {name!r} must return (out, residuals)")
    out, residuals = result
    outs = fresh_outputs(call.outputs(out, "the fwd rule"), rev.level, leaves)
    nondiff, out_tree, metas = call.nondiff_values(), call.out_tree, _metas(leaves)

    def backward(g: tuple[Tensor, ...]) -> list[Tensor]:
        cts = function.bwd(*nondiff, residuals, tree.unflatten(out_tree, list(g)))
        return cotangent_leaves(cts, call, metas, f"the bwd rule of {name!r}")

    record_on_tape(rev, outs, parents, backward)
    return outs


@register_rule(ReverseHandler, "custom_jvp")
def _reverse_custom_jvp(rev: ReverseHandler, op: CustomCall, leaves: list, call: CallInfo):
    parents = nodes_at(leaves, rev.level)
    if all(p is None for p in parents):
        check_closures(call, rev.level)
        return dispatch(op, leaves, call)
    outs = fresh_outputs(dispatch(op, leaves, call), rev.level, leaves)
    out_metas = [(o.shape, o.dtype) for o in outs]
    level, name = rev.level, call.function.__name__

    def backward(g: tuple[Tensor, ...]) -> list[Tensor]:
        # The pullback is the transpose of the linear map t -> rule(x, t)[1]:
        # reverse mode through that map, at t = 0 (any point gives the same).
        def tangent_map(tangents: list[Any]) -> list[Tensor]:
            _, t_out = _call_jvp_rule(call, leaves, tangents, level, leaves)
            return tangent_leaves(t_out, call, out_metas, f"the jvp rule of {name!r}")

        _, pullback = vjp(tangent_map, [zeros_for(x) for x in leaves])
        return list(pullback(list(g))[0])

    record_on_tape(rev, outs, parents, backward)
    return outs


# -- forward mode ------------------------------------------------------------------------------
@register_rule(ForwardHandler, "custom_jvp")
def _forward_custom_jvp(fwd: ForwardHandler, op: CustomCall, leaves: list, call: CallInfo):
    level = fwd.level
    tangents = nodes_at(leaves, level)
    if all(t is None for t in tangents):
        check_closures(call, level)
        return dispatch(op, leaves, call)
    tangents = [zeros_for(x) if t is None else t for x, t in zip(leaves, tangents)]
    out, t_out = _call_jvp_rule(call, leaves, tangents, level, leaves)
    outs = fresh_outputs(call.outputs(out, "the jvp rule"), level, leaves)
    out_metas = [(o.shape, o.dtype) for o in outs]
    name = call.function.__name__
    for o, t in zip(outs, tangent_leaves(t_out, call, out_metas, f"the jvp rule of {name!r}")):
        if o.dtype.kind in "fc":
            _set_trace(o, level, t)
    return outs


register_rule(ForwardHandler, "custom_vjp")(inline)


# -- linearize ---------------------------------------------------------------------------------
@register_rule(LinearizeHandler, "custom_jvp")
def _linearize_custom_jvp(lin: LinearizeHandler, op: CustomCall, leaves: list, call: CallInfo):
    parents = nodes_at(leaves, lin.level)
    if all(p is None for p in parents):
        return dispatch(op, leaves, call)
    outs = fresh_outputs(dispatch(op, leaves, call), lin.level, leaves)
    if not any(o.dtype.kind in "fc" for o in outs):
        return outs
    out_metas = [(o.shape, o.dtype) for o in outs]
    name = call.function.__name__

    def contribution(index: int) -> Callable:
        # The rule is linear in the tangents, so input `index` contributes
        # rule(x, (0, .., t, .., 0)); linearize sums the contributions.
        def rule(t: Tensor, ans: Any, *args: Any) -> tuple:
            tangents = [t if j == index else zeros_for(x) for j, x in enumerate(args)]
            _, t_out = _call_jvp_rule(call, list(args), tangents, None, ())
            return tuple(tangent_leaves(t_out, call, out_metas, f"the jvp rule of {name!r}"))

        return rule

    linear = Op(
        op.name, op.impl, jvp=[contribution(i) for i in range(len(leaves))], multiple_results=True
    )
    tracked = [(i, p) for i, p in enumerate(parents) if p is not None]
    lin.record(linear, tuple(leaves), {}, tuple(outs), tracked)
    return outs


register_rule(LinearizeHandler, "custom_vjp")(inline)
