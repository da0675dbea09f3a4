"""The first tier: a program run by a small loop over its equations, ready at once.

Generating a program's Python source and compiling it costs CPython about 10 µs
per line, more than tracing the op did. A signature called a few times never
earns that back, so a staged program starts here: :func:`interpret` turns the
optimized program into a list of steps ``(implementation, argument slots,
parameters, result slots)`` over one list of values, in microseconds, and runs
them with a loop. Each step calls the same implementation eager code calls,
so the results are the eager ones. Slots are reused once a value is dead (the
linear scan of :mod:`kenaz.compiler.codegen`), so intermediates are freed as
eager code frees them. :func:`~kenaz.compiler.passes.optimize` makes that plan in the
same backward walk that drops dead code (:func:`live_plan`), so the first call finds it
made. :mod:`kenaz.compiler.tiers` moves a hot signature on to
generated code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .program import Equation, Program, Var

__all__ = ["interpret", "last_reads", "live_plan", "Plan"]

# A plan: the environment's initial values by slot (constants filled in, the scratch slot
# last), the steps ``(implementation, argument slots, parameters or None, result slot,
# result slots or None)``, and per output ``(True, slot)`` or ``(False, value)``.
Plan = tuple[list[Any], list[tuple], list[tuple[bool, Any]]]


def last_reads(program: Program) -> dict[int, int]:
    """The index of the equation reading each variable last (``len(equations)`` for the
    outputs'): ``program.last_reads`` when :func:`~kenaz.compiler.passes.optimize` noted it."""
    found = program.last_reads
    if found is not None:
        return found
    last: dict[int, int] = {}
    for index, eq in enumerate(program.equations):
        for a in eq.inputs:
            if type(a) is Var:
                last[a.id] = index
    end = len(program.equations)
    for o in program.outputs:
        if type(o) is Var:
            last[o.id] = end
    return last


def live_plan(
    equations: Sequence[Equation], inputs: Sequence[Var], outputs: Sequence[Any]
) -> tuple[list[Equation], Plan]:
    """The equations some output depends on, and the plan :func:`interpret` runs them by,
    found in one backward walk (dead code elimination and slot allocation at once).

    Walking backward, a variable is live from its last read (met first) to the equation
    defining it: its slot is taken at that read (a free one, else a new one) and freed at
    the definition, for the variables read before it. This is the forward linear scan of
    :func:`interpret` run in reverse: the same values share a slot (an equation's result may
    take the slot of an operand it reads last), and an equation none of whose results is
    live is dropped. The plan calls NumPy's implementations (``numpy_impl``), as
    :func:`interpret` does on NumPy values. ``inputs``: the program's inputs, then its
    captured variables (the first slots, never reused).
    """
    slots: dict[int, int] = {}  # live variable -> its slot (the inputs' are pinned)
    for position, var in enumerate(inputs):
        slots[var.id] = position
    count = len(inputs)
    constants: list[tuple[int, Any]] = []  # (slot, value), filled in the template
    refs: list[tuple[bool, Any]] = []
    for o in outputs:
        if type(o) is Var:
            slot = slots.get(o.id)
            if slot is None:
                slot = slots[o.id] = count
                count += 1
            refs.append((True, slot))
        else:
            refs.append((False, getattr(o, "value", o)))
    free: list[int] = []
    kept: list[Equation] = []
    steps: list[tuple] = []
    get = slots.get  # (bound once: these run per equation and operand)
    pop = slots.pop
    keep = kept.append
    step = steps.append
    for eq in reversed(equations):
        if eq.multiple:
            found = []  # (a loop: a comprehension would make `pop` a cell, read per equation)
            for v in eq.outputs:
                slot = pop(v.id, -1)  # -1: the scratch slot
                found.append(slot)
                if slot >= 0:
                    free.append(slot)
            if max(found) < 0:
                continue  # no result is live
            writes: tuple | None = tuple(found)
            write = spare = -1
        else:  # one result, the common case
            write = pop(eq.outputs[0].id, -1)
            if write < 0:
                continue  # dead
            writes = None
            # The slot freed here: the first operand needing one takes it (as `free.append`
            # then `free.pop` would, cheaper).
            spare = write
        keep(eq)
        reads = []  # (a list: the interpreter only indexes it)
        for a in eq.inputs:
            if type(a) is Var:
                slot = get(a.id)
                if slot is None:  # its last read: live from here back to its definition
                    if spare >= 0:
                        slot = spare
                        spare = -1
                    elif free:
                        slot = free.pop()
                    else:
                        slot = count
                        count += 1
                    slots[a.id] = slot
                reads.append(slot)
            else:  # a constant: a slot of its own, filled in the template
                constants.append((count, a.value))
                reads.append(count)
                count += 1
        if spare >= 0:
            free.append(spare)
        op = eq.op
        step((op.numpy_impl or op.impl, reads, eq.params or None, write, writes))
    kept.reverse()
    steps.reverse()
    template: list[Any] = [None] * (count + 1)  # the last slot is the scratch slot (-1)
    for slot, value in constants:
        template[slot] = value
    return kept, (template, steps, refs)


def interpret(program: Program, neutral: bool = False) -> Callable[..., tuple]:
    """A function of the input values (then the captured ones) running ``program``'s
    equations in order; it returns the tuple of the output values."""
    captured = program.captured
    plan = program.plan
    if plan is not None and not neutral:  # made by `optimize` (`live_plan`)
        template, steps, outputs = plan
    else:
        template, steps, outputs = _plan(program, neutral)
    extra = tuple([tensor._value for _, tensor in captured]) if captured else ()
    arity = len(program.inputs)

    def interpreted(*values: Any) -> tuple:
        env = template.copy()
        env[:arity] = values
        if extra:
            env[arity : arity + len(extra)] = extra
        for impl, reads, params, write, writes in steps:
            if params is None and len(reads) == 2:  # (no list for the common arities)
                result = impl(env[reads[0]], env[reads[1]])
            elif params is None and len(reads) == 1:
                result = impl(env[reads[0]])
            else:
                args = [env[i] for i in reads]
                result = impl(*args, **params) if params else impl(*args)
            if writes is None:
                env[write] = result
            else:
                for slot, value in zip(writes, result, strict=True):
                    env[slot] = value
        return tuple([env[ref] if is_slot else ref for is_slot, ref in outputs])

    return interpreted


def _plan(program: Program, neutral: bool) -> Plan:
    """The plan of ``program``'s equations, as they are, by a forward linear scan."""
    last = program.last_reads
    if last is None:
        last = last_reads(program)
    captured = program.captured
    inputs = [*program.inputs, *[v for v, _ in captured]] if captured else program.inputs
    slots: dict[int, int] = {}
    for position, var in enumerate(inputs):
        slots[var.id] = position
    pinned = count = len(inputs)  # slots below `pinned` hold the inputs: never reused
    # The environment's initial values by slot, constants filled in (grown as slots are made).
    template: list[Any] = [None] * count
    free: list[int] = []
    is_free: set[int] = set()  # `free` as a set: a list's `in` would make this quadratic
    steps = []

    def take_slot(vid: int) -> int:
        """The slot an output ``vid`` is written to: a freed one, a new one, or -1 (the
        scratch slot) if it is never read."""
        nonlocal count
        if vid not in last:
            return -1
        if free:
            slot = free.pop()
            is_free.discard(slot)
        else:
            slot, count = count, count + 1
            template.append(None)
        slots[vid] = slot
        return slot

    for index, eq in enumerate(program.equations):
        reads = []
        for a in eq.inputs:
            if type(a) is Var:
                vid = a.id
                slot = slots[vid]
                reads.append(slot)
                # Read here for the last time: the slot is free for the outputs on.
                if last[vid] == index and slot >= pinned and slot not in is_free:
                    free.append(slot)
                    is_free.add(slot)
            else:  # a constant: a slot of its own, filled in the template
                reads.append(count)
                template.append(a.value)
                count += 1
        writes: tuple | None = None
        if eq.multiple:
            writes = tuple([take_slot(var.id) for var in eq.outputs])
            write = -1
        else:  # one result, the common case: no tuple
            write = take_slot(eq.outputs[0].id)
        op = eq.op
        impl = op.impl if neutral else op.numpy_impl or op.impl
        steps.append((impl, tuple(reads), eq.params or None, write, writes))
    template.append(None)  # the last slot is the scratch slot (-1)
    outputs = []
    for o in program.outputs:
        outputs.append((True, slots[o.id]) if type(o) is Var else (False, getattr(o, "value", o)))
    return template, steps, outputs
