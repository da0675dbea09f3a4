"""Optimizations on a program's equations, each a small pass that returns a new list.

``jit`` runs them in this order: :func:`inline_calls` (the bodies of custom
calls become ordinary equations), :func:`forward_identities` (``alias`` and
``stop_gradient`` copy nothing at run time), :func:`common_subexpressions`
and :func:`dead_code`. Constant folding happens earlier, while tracing: an op
none of whose operands is traced is simply computed, and its result is a
constant of the program.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..ops.elementwise import alias, stop_gradient
from .interpreter import live_plan
from .program import Const, Equation, Program, Var, iterate_primitives

__all__ = [
    "optimize",
    "inline_calls",
    "forward_identities",
    "common_subexpressions",
    "dead_code",
]

# Ops whose implementation returns its argument unchanged.
IDENTITY_OPS = frozenset({alias, stop_gradient})


def optimize(program: Program, plan: bool = True) -> Program:
    """``program`` with every pass applied (the program itself is not changed).

    Two walks over the equations: forward, the calls inlined, identities dropped and
    common subexpressions merged (:func:`common_subexpressions` on
    :func:`iterate_primitives`); backward, dead code dropped. With ``plan`` (the
    default), that backward walk also makes the interpreter's plan (``plan`` of the
    result: :func:`~kenaz.compiler.interpreter.live_plan`), which the first call then
    runs at once; else it notes where each variable is read for the last time
    (``last_reads`` of the result: :func:`dead_code`).
    """
    substitutions: dict[int, Var | Const] = {}
    equations: Sequence[Equation] = program.equations
    if program.calls is not False:  # (a trace says whether it recorded one)
        for eq in equations:  # (the calls' bodies spliced in only if there is a call)
            if eq.body is not None:
                equations = list(iterate_primitives(equations))
                break
    if not (program.distinct and program.calls is False):
        # (A trace that found no repeat and no identity op leaves nothing to merge.)
        equations = common_subexpressions(equations, substitutions, identities=True)
    outputs = program.outputs
    if substitutions:
        outputs = _substituted(outputs, substitutions)
    if plan:
        captured = program.captured
        inputs = [*program.inputs, *[v for v, _ in captured]] if captured else program.inputs
        equations, made = live_plan(equations, inputs, outputs)
        optimized = program.with_equations(equations, outputs)
        optimized.plan = made
        return optimized
    last_reads: dict[int, int] = {}
    equations = dead_code(equations, outputs, last_reads)
    optimized = program.with_equations(equations, outputs)
    optimized.last_reads = last_reads
    return optimized


def inline_calls(equations: Sequence[Equation]) -> list[Equation]:
    """The primitive equations, the bodies of custom calls spliced in."""
    return list(iterate_primitives(equations))


def _substitute(atom: Any, substitutions: dict[int, Var | Const]) -> Any:
    if type(atom) is Var:
        return substitutions.get(atom.id, atom)
    return atom


def _substituted(atoms: Sequence[Any], substitutions: dict[int, Var | Const]) -> list[Any]:
    # (A function: a comprehension in a pass would make `substitutions` a cell of the pass.)
    return [_substitute(a, substitutions) for a in atoms]


def _rewrite(eq: Equation, substitutions: dict[int, Var | Const]) -> Equation:
    if not substitutions:
        return eq
    for a in eq.inputs:  # a loop, not any(<generator>): this runs for every equation
        if type(a) is Var and a.id in substitutions:
            inputs = [_substitute(a, substitutions) for a in eq.inputs]
            return Equation(eq.op, inputs, eq.params, eq.outputs, eq.multiple)
    return eq


def forward_identities(
    equations: Sequence[Equation], substitutions: dict[int, Var | Const]
) -> list[Equation]:
    """Drop identity ops, recording ``output -> input`` in ``substitutions``."""
    kept = []
    for eq in equations:
        eq = _rewrite(eq, substitutions)
        if eq.op in IDENTITY_OPS and not eq.params and len(eq.inputs) == 1:
            substitutions[eq.outputs[0].id] = eq.inputs[0]
        else:
            kept.append(eq)
    return kept


_NUMBERS = frozenset({int, float, bool, complex, str, type(None)})  # constants keyed by value


def _constant_key(value: Any) -> Any:
    """A constant operand's part of a key: a number (or string, ``None``) by its type and
    value, anything else (an array) by identity, as a negative int (a variable's is its id,
    never negative)."""
    return (type(value), value) if type(value) in _NUMBERS else ~id(value)


def common_subexpressions(
    equations: Iterable[Equation],
    substitutions: dict[int, Var | Const],
    identities: bool = False,
) -> list[Equation]:
    """Compute each (op, operands, params) once; later repeats reuse the first's outputs.

    With ``identities``, also drop identity ops (:func:`forward_identities`, in the same pass).
    Equations are looked up by their op and operands first; the parameters are keyed (sorted,
    which costs more than the rest) only when two equations meet there, and an equation
    whose parameters cannot be hashed is never merged.
    """
    seen: dict[Any, Equation] = {}  # (op, operand keys...) -> the first equation so keyed
    with_params: dict[Any, Equation] = {}  # ((op, operands...), parameters) -> the first
    promoted: set[Any] = set()  # keys in `seen` whose first equation is in `with_params` too
    kept = []
    numbers = _NUMBERS
    for eq in equations:
        op = eq.op
        inputs = eq.inputs
        params = eq.params
        if identities and op in IDENTITY_OPS and not params and len(inputs) == 1:
            substitutions[eq.outputs[0].id] = _substitute(inputs[0], substitutions)
            continue
        if substitutions:
            for a in inputs:  # a loop, not any(<generator>): this runs for every equation
                if type(a) is Var and a.id in substitutions:
                    inputs = _substituted(inputs, substitutions)
                    eq = Equation(op, inputs, params, eq.outputs, eq.multiple)
                    break
        # The key: the op, then per operand a variable's id or `_constant_key` (inlined for
        # one and two operands, the common arities: this runs per equation).
        count = len(inputs)
        if count == 1:
            a = inputs[0]
            if type(a) is Var:
                key: Any = (op, a.id)
            else:
                value = a.value
                key = (op, (type(value), value) if type(value) in numbers else ~id(value))
        elif count == 2:
            a, b = inputs
            if type(a) is Var:
                first_key: Any = a.id
            else:
                value = a.value
                first_key = (type(value), value) if type(value) in numbers else ~id(value)
            if type(b) is Var:
                key = (op, first_key, b.id)
            else:
                value = b.value
                second = (type(value), value) if type(value) in numbers else ~id(value)
                key = (op, first_key, second)
        else:
            key = (op, *[a.id if type(a) is Var else _constant_key(a.value) for a in inputs])
        first = seen.get(key)
        if first is None:
            seen[key] = eq
            kept.append(eq)
            continue
        if params or first.params:  # the same op and operands: the parameters decide
            try:
                full = (key, tuple(sorted(params.items())))
                hash(full)
            except TypeError:  # unhashable parameters (an array): never merged
                kept.append(eq)
                continue
            if key not in promoted:
                promoted.add(key)
                try:
                    with_params[(key, tuple(sorted(first.params.items())))] = first
                except TypeError:
                    pass
            first = with_params.get(full)
            if first is None:
                with_params[full] = eq
                kept.append(eq)
                continue
        for mine, theirs in zip(eq.outputs, first.outputs, strict=True):
            substitutions[mine.id] = theirs
    return kept


def dead_code(
    equations: Sequence[Equation],
    outputs: Sequence[Any],
    last_reads: dict[int, int] | None = None,
) -> list[Equation]:
    """Only the equations that some output depends on (ops are pure).

    ``last_reads``, if given, is filled with the index (in the result) of the last
    equation reading each variable; ``len(result)`` for the outputs'.
    """
    # Variable -> how many kept equations follow its last read (found first, walking
    # backward); -1 for the outputs'. Its keys are the live variables.
    reads: dict[int, int] = {}
    for o in outputs:  # (a loop: a comprehension is a call of its own)
        if type(o) is Var:
            reads[o.id] = -1
    kept: list[Equation] = []
    for eq in reversed(equations):
        if eq.multiple:
            for v in eq.outputs:
                if v.id in reads:
                    break
            else:
                continue  # no output is used
        elif eq.outputs[0].id not in reads:
            continue
        after = len(kept)
        kept.append(eq)
        for a in eq.inputs:
            if type(a) is Var and a.id not in reads:
                reads[a.id] = after
    kept.reverse()
    if last_reads is not None:
        end = len(kept)
        last = end - 1
        for vid, after in reads.items():
            last_reads[vid] = end if after < 0 else last - after
    return kept
