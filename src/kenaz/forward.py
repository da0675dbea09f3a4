"""Forward mode: ``jvp`` and ``linearize``.

The handler keeps a tangent per tracked tensor (in the tensor's per-level
record). For each op with a tracked input it performs the primal op outward,
then the op's jvp rules (also outward), summing the contributions of the
tracked arguments. An untracked argument has a symbolic zero tangent: its
rule is never run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from . import tree
from .call import Call, ClosureGuard, fresh_outputs
from .checks import flatten_pair
from .convert import perform_stacked
from .effects import Handler, Op, fresh_level, handler, perform_args
from .mutation import check_saved
from .reverse import SEQUENCES, transposed_vjp_rules
from .tensor import NestedTensorsArgument, Tensor, holds_tensor, tracked_records
from .transform import (
    TapeHandler,
    distinct,
    fresh_identity,
    no_context,
    placed,
    run_watched,
    set_record,
    zero_derivative,
)

__all__ = ["jvp", "linearize", "push_forward"]

Out = TypeVar("Out")  # the output's type: its tangent has the same structure
Aux = TypeVar("Aux")


def op_tangent(op: Op, tangents: list[tuple[int, Any]], out: Tensor, args: tuple, params: dict):
    """The output tangent of ``op`` given ``(position, tangent)`` of its tracked arguments.

    ``None`` when no rule applies (the others' tangents are symbolic zeros).
    """
    rules = op.jvp
    if rules is None:  # only a vjp rule: its pullback, transposed (or an error without one)
        rules = transposed_vjp_rules(op)
    total = None
    for i, t in tangents:
        rule = rules[i]
        if rule is not None:
            # no `**params` when empty: it would build a dict per rule; and for a binary or
            # unary op the arguments spelled out, a call CPython runs inline (no `*`)
            if params:
                contribution = rule(t, out, *args, **params)
            elif len(args) == 2:
                contribution = rule(t, out, args[0], args[1])
            elif len(args) == 1:
                contribution = rule(t, out, args[0])
            else:
                contribution = rule(t, out, *args)
            if total is None:
                total = contribution
            elif op.multiple_results:
                total = tuple(_add_optional(a, b) for a, b in zip(total, contribution))
            else:
                total = total + contribution
    return total


def _add_optional(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def _has_float_output(op: Op, out: Any) -> bool:
    if op.multiple_results:
        return any(o.dtype.kind in "fc" for o in out)
    return out.dtype.kind in "fc"


def _set_records(op: Op, out: Any, level: int, records: Any) -> None:
    """Store the tangent(s) or node(s) of ``out`` at ``level`` (tuples: one per output)."""
    # `type(...) is`: an isinstance failing on a Tensor calls its `__class__` property
    if type(out) is tuple:
        for o, r in zip(out, records or ()):
            if r is not None and o.dtype.kind in "fc":
                set_record(o, level, r)
    else:
        set_record(out, level, records)


class ForwardHandler(Handler):
    """Carries a tangent alongside every tensor that depends on the inputs."""

    differentiates = True  # kenaz.convert refuses to turn its tensors into arrays

    def __init__(self) -> None:
        self.level = fresh_level()

    def watch(self, x: Tensor, tangent: Tensor) -> Tensor:
        """A fresh identity for ``x`` (:func:`kenaz.transform.fresh_identity`) whose tangent
        at this level is ``tangent``."""
        watched = fresh_identity(x)
        set_record(watched, self.level, tangent)
        return watched

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        if op.forward is not None:  # a joint rule: outputs and tangents together
            return self.handle_joint(op, args, params)
        if not op.differentiable:
            return perform_args(op, args, params)
        # `tracked_records(op.name, args, level)`, inlined as in ReverseHandler.handle: the
        # (position, tangent) pairs of the tracked arguments.
        level = self.level
        tangents = []
        position = 0
        for a in args:
            if isinstance(a, Tensor):
                trace = a._trace
                if trace:
                    tangent = trace.get(level)
                    if tangent is not None:
                        tangents.append((position, tangent))
            elif isinstance(a, SEQUENCES) and holds_tensor(a):
                return perform_stacked(self, op, args, params)  # kenaz.convert's one rule
            position += 1
        out = perform_args(op, args, params)  # after the scan: a list must be stacked first
        if not tangents:
            return out
        if op.multiple_results:  # a tuple of tangents, one per float output
            if _has_float_output(op, out):
                _set_records(op, out, level, op_tangent(op, tangents, out, args, params))
            return out
        if out.dtype.kind not in "fc":
            return out  # integer and boolean outputs carry no tangent
        tangent = op_tangent(op, tangents, out, args, params)
        if tangent is not None:  # `set_record(out, level, tangent)`, inlined
            if out._trace is None:
                out._trace = {level: tangent}
            else:
                out._trace[level] = tangent
        return out

    def handle_joint(self, op: Op, args: tuple, params: dict, guard: Handler | None = None):
        """An op's joint forward rule, run one level out (under ``guard``, for a call's).

        The rule gets ``None`` for the tangent of each untracked argument.
        """
        level = self.level
        tracked = tracked_records(op.name, args, level)
        if not tracked:
            return perform_args(op, args, params)  # outer handlers see the op
        with handler(guard) if guard is not None else no_context:
            out, tangent = op.forward(args, placed(tracked, len(args)), **params)
        if not op.multiple_results:  # one output: handled as a tuple of one
            out, tangent = (out,), (tangent,)
        outs = tuple(fresh_outputs(out, level, args))
        _set_records(op, outs, level, tangent)
        return outs if op.multiple_results else outs[0]

    def handle_call(self, call: Call, args: tuple, params: dict) -> Any:
        """A call: its forward rule (under a :class:`~kenaz.call.ClosureGuard`), or its
        function under this handler when it has none."""
        if call.forward is None:
            return self.run_call(call, args, params)
        guard = ClosureGuard(self.level, args, f"the forward rule of {call.name}")
        return self.handle_joint(call, args, params, guard)


@overload
def jvp(
    f: Callable[..., Out],
    primals: Any,
    tangents: Any,
    has_aux: Literal[False] = False,
    allow_int: bool = False,
) -> tuple[Out, Out]: ...
@overload
def jvp(
    f: Callable[..., tuple[Out, Aux]],
    primals: Any,
    tangents: Any,
    has_aux: Literal[True],
    allow_int: bool = False,
) -> tuple[Out, Out, Aux]: ...
def jvp(
    f: Callable[..., Any],
    primals: Any,
    tangents: Any,
    has_aux: bool = False,
    allow_int: bool = False,
) -> Any:
    """Evaluate ``f`` at ``primals`` and its Jacobian-vector product with ``tangents``.

    Parameters
    ----------
    f : callable
        Function of ``len(primals)`` pytree arguments.
    primals, tangents : tuple or list
        The arguments, and tangents of the same structure and shapes.
    has_aux : bool, optional
        ``f`` returns ``(output, aux)``; ``aux`` is returned as is.
    allow_int : bool, optional
        Accept integer and boolean primals, held constant (their tangents are
        ignored: pass ``numpy.zeros(shape, kenaz.float0)``, as in JAX).
        Without it they are refused, as by ``grad``.

    Returns
    -------
    out, tangent_out[, aux]
        The tangent of an integer or boolean output is a ``kenaz.float0``
        array (it has no derivative; arithmetic refuses it).

    Examples
    --------
    >>> from kenaz import jvp
    >>> jvp(lambda x: x**2 + 3 * x + 2, (5.0,), (1.0,))
    (Tensor(42.), Tensor(13.))
    """
    p_flat, t_flat, p_tree = flatten_pair(primals, tangents, "jvp", allow_int)
    out_flat, out_tree, tangents_out, aux = push_forward(f, p_flat, p_tree, t_flat, has_aux)
    out = tree.unflatten(out_tree, out_flat)
    tangent_out = tree.unflatten(out_tree, tangents_out)
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def push_forward(f: Callable, p_flat: list, p_tree: Any, t_flat: list, has_aux: bool) -> tuple:
    """:func:`jvp` on the checked leaves of the primals (of structure ``p_tree``) and of the
    tangents: the output leaves, their structure, their tangents and ``aux``."""
    fwd = ForwardHandler()
    watched = [fwd.watch(p, t) if p.dtype.kind in "fc" else p for p, t in zip(p_flat, t_flat)]
    out_flat, out_tree, tangents, aux = run_watched(fwd, f, watched, p_tree, "jvp", has_aux)
    tangents_out = [zero_derivative(o) if t is None else t for o, t in zip(out_flat, tangents)]
    return out_flat, out_tree, distinct(tangents_out) if len(out_flat) > 1 else tangents_out, aux


class LinearizeHandler(TapeHandler):
    """Records, for each op that depends on the inputs, what its jvp rules need."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[tuple[Op, tuple, dict, Tensor, list[tuple[int, int]], Any]] = []

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        if not op.differentiable:
            return perform_args(op, args, params)
        try:  # before performing: a list holding tensors must be stacked first
            parents = tracked_records(op.name, args, self.level)
        except NestedTensorsArgument:
            return perform_stacked(self, op, args, params)  # kenaz.convert's one rule
        out = perform_args(op, args, params)  # an op with a joint rule too: it runs in `f_jvp`
        if not _has_float_output(op, out):
            return out
        if parents:
            self.record(op, args, params, out, parents)
        return out

    def handle_call(self, call: Call, args: tuple, params: dict) -> Any:
        """A call: the primal now and its forward rule in ``f_jvp``, or (without one) its
        function under this handler."""
        if call.forward is None:
            return self.run_call(call, args, params)
        level = self.level
        parents = tracked_records(call.name, args, level)
        if not parents:
            return perform_args(call, args, params)
        out = tuple(fresh_outputs(perform_args(call, args, params), level, args))
        if _has_float_output(call, out):
            self.record(call, args, params, out, parents)
        return out

    def record(self, op: Op, args: tuple, params: dict, out: Any, parents: list) -> None:
        """Keep what ``op``'s jvp rules need to map the tangents of ``parents`` to ``out``'s.

        ``parents`` pairs each tracked argument's position with its node number.
        """
        if op.multiple_results:  # (a loop: a generator would make `self` a cell, per op)
            nodes = []
            for o in out:
                nodes.append(self.track(o))
            node: Any = tuple(nodes)
        else:
            node = self.track(out)
        self.entries.append((op, args, params, out, parents, node))


def linearize(
    f: Callable[..., Out], *primals: Any, allow_int: bool = False
) -> tuple[Out, Callable[..., Out]]:
    """Evaluate ``f(*primals)`` once and return its linearization.

    Parameters
    ----------
    f : callable
        Function of ``len(primals)`` pytree arguments.
    *primals
        The point.
    allow_int : bool, optional
        Accept integer and boolean primals, held constant, as :func:`jvp` does.

    Returns
    -------
    out, f_jvp
        ``f_jvp(*tangents)`` evaluates the Jacobian-vector product at the
        primals from the recorded residuals, without running ``f`` again
        (float0 tangents for integer outputs, as :func:`jvp`).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import linearize
    >>> out, f_jvp = linearize(knp.sin, 0.0)
    >>> f_jvp(2.0)
    Tensor(2.)
    """
    lin = LinearizeHandler()
    _, _, in_nodes, out_flat, out_tree, out_nodes, _ = lin.run(f, primals, allow_int, "linearize")
    entries = lin.entries

    def f_jvp(*tangents: Any) -> Any:
        _, t_flat, _ = flatten_pair(tuple(primals), tangents, "linearize", allow_int)
        if lin.mutations:  # a Tensor changed in place since the linearization
            check_saved(entries, lin.mutations, "linearization")
        known: dict[int, Tensor] = {n: t for n, t in zip(in_nodes, t_flat) if n is not None}
        for op, args, params, out, parents, node in entries:
            arg_tangents = [(i, known[p]) for i, p in parents if p in known]
            if arg_tangents:
                if op.forward is not None:  # a joint rule: the primal again, with the tangents
                    _, tangent = op.forward(args, placed(arg_tangents, len(args)), **params)
                else:
                    tangent = op_tangent(op, arg_tangents, out, args, params)
                if tangent is None:
                    continue
                # Integer and boolean outputs carry no tangent, whatever a rule gave
                # (as ForwardHandler: a staged call's rule returns one for each output).
                if op.multiple_results:
                    known.update(
                        (n, t)
                        for n, t, o in zip(node, tangent, out)
                        if t is not None and o.dtype.kind in "fc"
                    )
                elif out.dtype.kind in "fc":
                    known[node] = tangent
        tangents_out = [
            known[n] if n is not None and n in known else zero_derivative(o)
            for n, o in zip(out_nodes, out_flat)
        ]
        return tree.unflatten(out_tree, tangents_out)

    return tree.unflatten(out_tree, out_flat), f_jvp
