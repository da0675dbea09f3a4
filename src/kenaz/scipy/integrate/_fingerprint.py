"""Compiled right-hand sides shared between solves whose traced programs are the same.

Each solve traces its right-hand side (that is how the tensors it reads are
found, and it sees the values closed over *now*), but compiling the trace
(optimizing it, generating and compiling Python) costs more than the trace.
Two traces with the same fingerprint are the same program, so the second
solve reuses the first one's compiled function. The fingerprint holds every
op, parameter, variable and constant: a constant by value when small, else by
identity (the cache keeps the program, so an identity cannot be reused by
another array while its entry lives).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ...effects import Op

_SMALL = 64  # constants up to this many entries are compared by value
_ENTRIES = 256

_cache: OrderedDict[Any, tuple[Any, Callable]] = OrderedDict()
_lock = threading.Lock()


class _Unhashable(Exception):
    pass


def _value_key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.size <= _SMALL:
            return ("array", value.shape, value.dtype.str, value.tobytes())
        return ("large array", id(value))
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, slice):  # unhashable before Python 3.12
        return ("slice", _value_key(value.start), _value_key(value.stop), _value_key(value.step))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_value_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _value_key(v)) for k, v in sorted(value.items(), key=str)))
    try:
        hash(value)
    except TypeError:
        raise _Unhashable from None
    return (type(value), value)


def value_key(value: Any) -> Any:
    """A hashable key of ``value`` (small arrays by value), or ``None`` if it has none."""
    try:
        return _value_key(value)
    except _Unhashable:
        return None


def _atom_key(atom: Any) -> Any:
    if hasattr(atom, "id"):  # a Var
        return ("v", atom.id, atom.shape, atom.dtype, atom.weak)
    return ("c", _value_key(atom.value))


def _equations_key(equations: list) -> tuple:
    return tuple(
        (
            id(eq.op),
            tuple(_atom_key(a) for a in eq.inputs),
            _value_key(eq.params),
            tuple(v.id for v in eq.outputs),
            eq.multiple,
            None if eq.body is None else _equations_key(eq.body),
        )
        for eq in equations
    )


def fingerprint(program: Any) -> Any:
    """A hashable key equal for two programs only if they compute the same thing
    (``None`` when a parameter cannot be keyed)."""
    try:
        return (
            tuple(_atom_key(v) for v in program.inputs),
            tuple(_atom_key(v) for v, _ in program.captured),
            _equations_key(program.equations),
            tuple(
                _atom_key(o) if hasattr(o, "value") or hasattr(o, "id") else repr(o)
                for o in program.outputs
            ),
        )
    except _Unhashable:
        return None


def shared(key: Any) -> Callable | None:
    """The compiled function stored under ``key`` by :func:`share`, if any."""
    with _lock:
        found = _cache.get(("shared", key))
        if found is None:
            return None
        _cache.move_to_end(("shared", key))
        return found[1]


def share(key: Any, compiled: Callable, origin: Any) -> None:
    """Keep ``compiled`` under ``key`` (a program's fingerprint and how it was derived),
    with ``origin``, that program (so that the ids in its fingerprint stay taken)."""
    with _lock:
        _cache[("shared", key)] = (origin, compiled)
        if len(_cache) > _ENTRIES:
            _cache.popitem(last=False)


def compiled_program(
    program: Any, compile_it: Callable[[Any], Callable], key: Any = None
) -> Callable:
    """The compiled function of ``program``: a cached one for the same fingerprint (``key``,
    if already computed), else ``compile_it(program)`` (and cached)."""
    key = fingerprint(program) if key is None else key
    if key is None:
        return compile_it(program)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found[1]
    compiled = compile_it(program)
    with _lock:
        _cache[key] = (program, compiled)
        if len(_cache) > _ENTRIES:
            _cache.popitem(last=False)
    return compiled


# -- one rewrite for right-hand sides: a stack of scalars ---------------------------------------
def _stack_scalars_impl(*xs: Any) -> np.ndarray:
    return np.array(xs, dtype=np.float64)


def fuse_scalar_stacks(program: Any, program_module: Any) -> Any:
    """``program`` with each ``concatenate`` of float64 scalars made 1-d by ``expand_dims``
    (what ``stack([dx, dy])`` traces to, the usual last line of a right-hand side) done by
    one ``numpy.array`` call: a tenth of the time, and a solver calls it at every step.

    The program is only compiled, never replayed under a transformation, so the fused op
    needs no rules; the ``expand_dims`` left unused are removed as dead code.
    """
    global _STACK_SCALARS
    if _STACK_SCALARS is None:
        _STACK_SCALARS = Op("stack_scalars", _stack_scalars_impl)
    equations = list(program_module.iterate_primitives(program.equations))
    scalar_of: dict[int, Any] = {}  # id of a (1,) var made by expand_dims -> its scalar var
    fused = []
    for eq in equations:
        name = eq.op.name
        if name == "expand_dims" and eq.params.get("axis") == (0,):
            (source,) = eq.inputs[:1]
            if hasattr(source, "id") and source.shape == () and source.dtype == np.float64:
                scalar_of[eq.outputs[0].id] = source
        elif name == "concatenate" and eq.params.get("axis") == 0 and len(eq.inputs) > 1:
            sources = [scalar_of.get(a.id) if hasattr(a, "id") else None for a in eq.inputs]
            if all(s is not None for s in sources) and eq.outputs[0].dtype == np.float64:
                eq = program_module.Equation(_STACK_SCALARS, sources, {}, eq.outputs, False)
        fused.append(eq)
    return program_module.Program(
        program.name,
        program.inputs,
        program.captured,
        fused,
        program.outputs,
        program.in_tree,
        program.out_tree,
    )


_STACK_SCALARS: Any = None
