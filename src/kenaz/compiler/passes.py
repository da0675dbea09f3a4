"""Optimizations on a program's equations, each a small pass that returns a new list.

``jit`` runs them in this order: :func:`inline_calls` (the bodies of custom
calls become ordinary equations), :func:`forward_identities` (``alias`` and
``stop_gradient`` copy nothing at run time), :func:`common_subexpressions`
and :func:`dead_code`. Constant folding happens earlier, while tracing: an op
none of whose operands is traced is simply computed, and its result is a
constant of the program.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops.elementwise import alias, stop_gradient
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


def optimize(program: Program) -> Program:
    """``program`` with every pass applied (the program itself is not changed)."""
    equations = inline_calls(program.equations)
    substitutions: dict[int, Var | Const] = {}
    equations = common_subexpressions(equations, substitutions, identities=True)
    outputs = [_substitute(o, substitutions) for o in program.outputs]
    equations = dead_code(equations, outputs)
    return program.with_equations(equations, outputs)


def inline_calls(equations: Sequence[Equation]) -> list[Equation]:
    """The primitive equations, the bodies of custom calls spliced in."""
    return list(iterate_primitives(equations))


def _substitute(atom: Any, substitutions: dict[int, Var | Const]) -> Any:
    if type(atom) is Var:
        return substitutions.get(atom.id, atom)
    return atom


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


def _atom_key(atom: Var | Const) -> Any:
    if type(atom) is Var:
        return atom.id
    value = atom.value
    if type(value) in (int, float, bool, complex, str, type(None)):
        return ("c", type(value), value)
    return ("o", id(value))


def common_subexpressions(
    equations: Sequence[Equation],
    substitutions: dict[int, Var | Const],
    identities: bool = False,
) -> list[Equation]:
    """Compute each (op, operands, params) once; later repeats reuse the first's outputs.

    With ``identities``, also drop identity ops (:func:`forward_identities`, in the same pass).
    """
    seen: dict[Any, Equation] = {}
    kept = []
    for eq in equations:
        eq = _rewrite(eq, substitutions)
        if identities and eq.op in IDENTITY_OPS and not eq.params and len(eq.inputs) == 1:
            substitutions[eq.outputs[0].id] = eq.inputs[0]
            continue
        params = eq.params
        try:
            key = (
                eq.op,
                tuple([_atom_key(a) for a in eq.inputs]),
                tuple(sorted(params.items())) if params else (),
            )
            hash(key)
        except TypeError:  # unhashable params (an array): never merged
            kept.append(eq)
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = eq
            kept.append(eq)
        else:
            for mine, theirs in zip(eq.outputs, first.outputs, strict=True):
                substitutions[mine.id] = theirs
    return kept


def dead_code(equations: Sequence[Equation], outputs: Sequence[Any]) -> list[Equation]:
    """Only the equations that some output depends on (ops are pure)."""
    live = {o.id for o in outputs if type(o) is Var}
    kept = []
    for eq in reversed(equations):
        for v in eq.outputs:
            if v.id in live:
                break
        else:
            continue  # no output is used
        kept.append(eq)
        for a in eq.inputs:
            if type(a) is Var:
                live.add(a.id)
    kept.reverse()
    return kept
