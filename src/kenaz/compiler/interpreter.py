"""The first tier: a program run by a small loop over its equations, ready at once.

Generating a program's Python source and compiling it costs CPython about 10 µs
per line, more than tracing the op did. A signature called a few times never
earns that back, so a staged program starts here: :func:`interpret` turns the
optimized program into a list of steps ``(implementation, argument slots,
parameters, result slots)`` over one list of values, in microseconds, and runs
them with a loop. Each step calls the same implementation eager code calls,
so the results are the eager ones. Slots are reused once a value is dead (the
linear scan of :mod:`kenaz.compiler.codegen`), so intermediates are freed as
eager code frees them. :mod:`kenaz.compiler.tiers` moves a hot signature on to
generated code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .program import Program, Var

__all__ = ["interpret"]


def interpret(program: Program, neutral: bool = False) -> Callable[..., tuple]:
    """A function of the input values (then the captured ones) running ``program``'s
    equations in order; it returns the tuple of the output values."""
    equations = program.equations
    last: dict[int, int] = {}
    for index, eq in enumerate(equations):
        for a in eq.inputs:
            if type(a) is Var:
                last[a.id] = index
    for o in program.outputs:
        if type(o) is Var:
            last[o.id] = len(equations)
    slots: dict[int, int] = {}
    constants: list[Any] = []
    inputs = list(program.inputs) + [v for v, _ in program.captured]
    for position, var in enumerate(inputs):
        slots[var.id] = position
    count = len(inputs)
    free: list[int] = []
    is_free: set[int] = set()  # `free` as a set: a list's `in` would make this quadratic

    pinned = set(range(len(inputs)))
    steps = []
    for index, eq in enumerate(equations):
        reads = []
        for a in eq.inputs:
            if type(a) is Var:
                reads.append(slots[a.id])
            else:  # a constant: a slot of its own, filled in the template
                constants.append((count, a.value))
                reads.append(count)
                count += 1
        for a in eq.inputs:  # operands read here for the last time free their slots
            if type(a) is Var and last[a.id] == index:
                slot = slots[a.id]
                if slot not in pinned and slot not in is_free:
                    free.append(slot)
                    is_free.add(slot)
        writes = []
        for var in eq.outputs:
            if var.id not in last:
                writes.append(-1)  # never read: a scratch slot
                continue
            if free:
                slot = free.pop()
                is_free.discard(slot)
            else:
                slot, count = count, count + 1
            slots[var.id] = slot
            writes.append(slot)
        impl = eq.op.impl if neutral else eq.op.numpy_impl or eq.op.impl
        steps.append((impl, tuple(reads), eq.params or None, writes[0] if not eq.multiple else None,
                      tuple(writes) if eq.multiple else None))  # fmt: skip
    size = count + 1  # the last slot is the scratch slot (-1)
    outputs = [
        (True, slots[o.id]) if type(o) is Var else (False, getattr(o, "value", o))
        for o in program.outputs
    ]
    template = [None] * size
    for slot, value in constants:
        template[slot] = value
    extra = tuple(tensor._value for _, tensor in program.captured)
    arity = len(program.inputs)

    def interpreted(*values: Any) -> tuple:
        env = template.copy()
        env[:arity] = values
        if extra:
            env[arity : arity + len(extra)] = extra
        for impl, reads, params, write, writes in steps:
            args = [env[i] for i in reads]
            result = impl(*args, **params) if params else impl(*args)
            if writes is None:
                env[write] = result
            else:
                for slot, value in zip(writes, result, strict=True):
                    env[slot] = value
        return tuple([env[ref] if is_slot else ref for is_slot, ref in outputs])

    return interpreted
