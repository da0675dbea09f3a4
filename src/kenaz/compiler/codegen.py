"""Compile a program into one generated Python function on NumPy values.

The function calls each equation's NumPy implementation directly, in order:
no Tensor, no handler, no tape. ``print(source)`` shows it. Three choices make
it fast and lean:

- Ops that are NumPy ufuncs (``sin``, ``add``...) call the ufunc itself, and
  the arithmetic ones use Python's operator (``a * b``) when an operand is
  known to be a NumPy value, which is what the op's implementation does too
  (NumPy's scalar arithmetic is ten times faster than a ufunc call on 0-d values).
- Variables share local names once dead (a linear scan over last uses), so an
  intermediate is freed as soon as eager code would free it.
- An elementwise ufunc whose operand is an intermediate array used only there
  writes its result into that operand's buffer (``out=``), saving an allocation.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .program import Const, Equation, Program, Var

__all__ = ["compile_program", "generate_source"]

_OPERATOR_SYMBOLS = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.pow: "**",
}


def ufunc_of(impl: Callable) -> np.ufunc | None:
    """The ufunc an op's implementation computes: the impl itself, or the one it states in
    its ``ufunc`` field (``kenaz.ops.elementwise._by_operator`` sets it)."""
    if isinstance(impl, np.ufunc):
        return impl
    found = getattr(impl, "ufunc", None)
    return found if isinstance(found, np.ufunc) else None


def operator_of(impl: Callable) -> str | None:
    """The Python operator symbol a ``_by_operator`` implementation states it uses, if any."""
    if isinstance(impl, np.ufunc) or ufunc_of(impl) is None:
        return None
    return _OPERATOR_SYMBOLS.get(getattr(impl, "operator", None))  # type: ignore[call-overload]


def _is_numpy_operand(atom: Any) -> bool:
    """Known to be a NumPy array or scalar at run time (so that ``a * b`` is the ufunc)."""
    if type(atom) is Var:
        return atom.weak is None
    return isinstance(atom.value, (np.ndarray, np.generic))


def _plain_operand(atom: Any) -> bool:
    """A NumPy value or a Python int or float: operands that mix in operators as in ufuncs."""
    if _is_numpy_operand(atom):
        return True
    if type(atom) is Var:
        return atom.weak in (int, float)
    return type(atom.value) in (int, float)


class _Namespace:
    """The generated function's globals: implementations and constants, each given a name."""

    def __init__(self) -> None:
        # No builtins but __import__: C code called from the generated function (numba's
        # dispatcher, kenaz.compiler.fusion) imports through the calling frame's builtins.
        self.values: dict[str, Any] = {"__builtins__": {"__import__": __import__}}
        self._names: dict[int, str] = {}
        self._bases: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def name(self, value: Any, hint: str) -> str:
        found = self._names.get(id(value))
        if found is not None:
            return found
        base = self._bases.get(hint)
        if base is None:
            base = "".join(c if c.isalnum() else "_" for c in hint) or "k"
            if base[0].isdigit():
                base = "_" + base
            self._bases[hint] = base
        count = self._counts.get(base, 0)
        self._counts[base] = count + 1
        name = f"{base}_{count}" if count else base
        while name in self.values:  # a hint that looks like another's numbered name
            count += 1
            name = f"{base}_{count}"
        self.values[name] = value
        self._names[id(value)] = name
        return name

    def literal(self, value: Any, hint: str) -> str:
        """Source text for ``value``: a literal for simple Python values, else a global name."""
        if value is None or type(value) is bool:
            return repr(value)
        if type(value) is int:
            return repr(value)
        if type(value) is float and math.isfinite(value):
            return repr(value)
        if type(value) is str:
            return repr(value)
        if type(value) is tuple and all(type(v) is int for v in value):
            return repr(value)
        return self.name(value, hint)


def _uses(equations: list[Equation], outputs: list[Any]) -> tuple[dict[int, int], dict[int, int]]:
    """For each variable: the index of the last equation reading it, and its number of reads."""
    last: dict[int, int] = {}
    count: dict[int, int] = {}
    for index, eq in enumerate(equations):
        for a in eq.inputs:
            if type(a) is Var:
                last[a.id] = index
                count[a.id] = count.get(a.id, 0) + 1
    for o in outputs:
        if type(o) is Var:
            last[o.id] = len(equations)
            count[o.id] = count.get(o.id, 0) + 1
    return last, count


def generate_source(
    program: Program, in_place: bool = True, neutral: bool = False
) -> tuple[str, dict[str, Any]]:
    """The source of the compiled function of ``program`` (already optimized) and its globals.

    The function takes the input values, then the captured values, and returns
    the tuple of the output values. ``neutral``: the inputs are another library's
    arrays (array-api-strict, Dask, CuPy): every equation calls its op's own
    implementation, which runs in the array's namespace, not NumPy's ufuncs.
    """
    in_place = in_place and not neutral
    equations = program.equations
    namespace = _Namespace()
    last, count = _uses(equations, program.outputs)
    names: dict[int, str] = {}
    parameters = []
    for i, var in enumerate(program.inputs):
        names[var.id] = f"x{i}"
        parameters.append(f"x{i}")
    for i, (var, _) in enumerate(program.captured):
        names[var.id] = f"captured{i}"
        parameters.append(f"captured{i}")
    pinned = set(names.values())  # inputs are never overwritten
    fresh: set[int] = set()  # variables holding an array the program allocated itself
    free: list[str] = []  # names of dead variables, to reuse
    is_free: set[str] = set()
    slots = 0
    lines = [f"def compiled({', '.join(parameters)}):"]

    def operand(atom: Var | Const) -> str:
        if type(atom) is Var:
            return names[atom.id]
        return namespace.literal(atom.value, "const")

    kinds: dict[Any, tuple[np.ufunc | None, str | None]] = {}  # impl -> (ufunc, operator)
    for index, eq in enumerate(equations):
        args = [operand(a) for a in eq.inputs]
        # Compiled code runs on NumPy values (or, neutral, in the arrays' own namespace).
        impl = eq.op.impl if neutral else eq.op.numpy_impl or eq.op.impl
        kind = kinds.get(impl)
        if kind is None:
            kind = kinds[impl] = (None, None) if neutral else (ufunc_of(impl), operator_of(impl))
        ufunc, symbol = kind
        target = None
        if in_place and ufunc is not None and not eq.params and not eq.multiple:
            out = eq.outputs[0]
            for a in eq.inputs:
                if (
                    type(a) is Var
                    and a.id in fresh
                    and count[a.id] == 1
                    and a.shape == out.shape
                    and a.dtype == out.dtype
                    and out.shape != ()
                ):
                    target = names[a.id]
                    break
        # Free the names of operands read here for the last time (before naming the outputs:
        # `v = f(v)` is fine in Python).
        for a in eq.inputs:
            if type(a) is Var and last.get(a.id) == index:
                name = names[a.id]
                if name not in pinned and name not in is_free and name != target:
                    free.append(name)
                    is_free.add(name)
        outputs = []
        for var in eq.outputs:
            if var.id not in last:  # never read (an unused result of a multi-output op)
                outputs.append("_")
                continue
            if target is not None:  # the operand's buffer, which dies here
                name = target
            elif free:
                name = free.pop()
                is_free.discard(name)
            else:
                name = f"v{slots}"
                slots += 1
            names[var.id] = name
            outputs.append(name)
        if target is not None:
            call = f"{namespace.name(ufunc, ufunc.__name__)}({', '.join(args)}, out={target})"
        elif ufunc is not None and not eq.params:
            if (
                symbol is not None
                and len(args) == 2
                and all(_plain_operand(a) for a in eq.inputs)
                and any(_is_numpy_operand(a) for a in eq.inputs)
            ):
                call = f"{args[0]} {symbol} {args[1]}"
            else:
                call = f"{namespace.name(ufunc, ufunc.__name__)}({', '.join(args)})"
        else:
            impl = namespace.name(impl, f"{eq.op.name}_impl")
            params = [f"{k}={namespace.literal(v, k)}" for k, v in eq.params.items()]
            call = f"{impl}({', '.join(args + params)})"
        if eq.multiple:
            lines.append(f"    {', '.join(outputs)}{',' if len(outputs) == 1 else ''} = {call}")
        else:
            lines.append(f"    {outputs[0]} = {call}")
        if ufunc is not None and not eq.multiple and eq.outputs[0].shape != ():
            fresh.add(eq.outputs[0].id)
    results = [operand(o) if isinstance(o, (Var, Const)) else "None" for o in program.outputs]
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    return "\n".join(lines) + "\n", namespace.values


def compile_program(
    program: Program, in_place: bool = True, neutral: bool = False
) -> Callable[..., tuple]:
    """The compiled function of ``program`` (see :func:`generate_source`).

    Captured tensors are read now and baked in as constants.
    """
    source, namespace = generate_source(program, in_place, neutral)
    code = compile(source, f"<kenaz.jit {program.name}>", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated source
    # Out of its own globals: a function there would be a reference cycle, left to the
    # cyclic collector once the program is dropped (the code never calls itself by name).
    compiled = namespace.pop("compiled")
    compiled.source = source
    if program.captured:
        values = tuple(tensor._value for _, tensor in program.captured)
        bound = compiled

        def compiled(*inputs: Any) -> tuple:
            return bound(*inputs, *values)

        compiled.source = source
    return compiled
