"""Small right-hand sides compiled to straight-line code on Python floats.

A solver calls its right-hand side at every step on a state of a few entries.
NumPy's cost there is per call, not per entry (about a microsecond per ufunc
call, more for indexing, reshaping and padding), so the generated NumPy code
of a small program (:mod:`kenaz.compiler.codegen`) spends nearly all its time
in call overhead. This module compiles such a program *entry by entry*: every
variable is an array of symbols, one per entry, and running each equation's
own implementation on those arrays (NumPy's object dtype calls the symbols'
arithmetic) writes one line of Python per scalar operation::

    def compiled(x0, x1, x2):
        y0, y1 = x0.tolist()
        s0 = x1 * y0
        ...
        return (array([s0, s3]),)

Data movement (indexing, reshapes, transposes, padding, concatenation) costs
nothing at run time: it only rearranges symbols. Products with an exact zero
and sums with one vanish (so a sparse Jacobian costs its nonzeros only), and
operations on constants are folded with NumPy's float64 arithmetic.

Python's ``math`` raises where NumPy returns ``inf`` or ``nan`` (a division by
zero, ``log(0)``, an overflow): the compiled function then runs the program's
NumPy code for that call instead, so results keep NumPy's semantics. A program
with an op that is not arithmetic or data movement on float64 (a comparison,
an integer, a random draw), or too large to pay, is not compiled here
(:func:`scalar_code` returns ``None``).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["scalar_code"]

MAX_ENTRIES = 512  # entries of any one variable
MAX_LINES = 6000  # lines of generated code (CPython compiles ~10 µs per line)


class _GiveUp(Exception):
    """The program is not compiled entry by entry (a reason for the developer)."""


def _literal(value: float) -> str:
    if math.isfinite(value):
        text = repr(float(value))
        return f"({text})" if text.startswith("-") else text
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "(-inf)")


class _Writer:
    """The lines of the function being generated, and fresh names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def assign(self, expression: str) -> Sym:
        if len(self.lines) >= MAX_LINES:
            raise _GiveUp("too many operations")
        name = f"s{self.count}"
        self.count += 1
        self.lines.append(f"    {name} = {expression}")
        return Sym(self, name, None)


class Sym:
    """One scalar of the program: a name in the generated code, or a known constant.

    NumPy's object arrays of these run an op's implementation symbolically: its
    arithmetic writes code; anything else (a comparison, a conversion to a
    number) raises, and the program is not compiled here.
    """

    __slots__ = ("writer", "name", "value")

    def __init__(self, writer: _Writer, name: str | None, value: float | None) -> None:
        self.writer, self.name, self.value = writer, name, value

    def __repr__(self) -> str:
        return self.name if self.name is not None else _literal(self.value)  # type: ignore[arg-type]

    # -- arithmetic -------------------------------------------------------------------------
    def _other(self, other: Any) -> Sym:
        if isinstance(other, Sym):
            return other
        if isinstance(other, (bool, int, float, np.integer, np.floating)):
            return Sym(self.writer, None, float(other))
        raise _GiveUp(f"an operand of type {type(other).__name__}")

    def __add__(self, other: Any) -> Sym:
        return _binary("+", np.add, self, self._other(other))

    def __radd__(self, other: Any) -> Sym:
        return _binary("+", np.add, self._other(other), self)

    def __sub__(self, other: Any) -> Sym:
        return _binary("-", np.subtract, self, self._other(other))

    def __rsub__(self, other: Any) -> Sym:
        return _binary("-", np.subtract, self._other(other), self)

    def __mul__(self, other: Any) -> Sym:
        return _binary("*", np.multiply, self, self._other(other))

    def __rmul__(self, other: Any) -> Sym:
        return _binary("*", np.multiply, self._other(other), self)

    def __truediv__(self, other: Any) -> Sym:
        return _binary("/", np.true_divide, self, self._other(other))

    def __rtruediv__(self, other: Any) -> Sym:
        return _binary("/", np.true_divide, self._other(other), self)

    def __pow__(self, other: Any) -> Sym:
        return _power(self, self._other(other))

    def __rpow__(self, other: Any) -> Sym:
        return _power(self._other(other), self)

    def __neg__(self) -> Sym:
        if self.value is not None:
            return Sym(self.writer, None, -self.value)
        return self.writer.assign(f"-{self.name}")

    def __pos__(self) -> Sym:
        return self

    def __abs__(self) -> Sym:
        return _unary("abs", np.absolute, self)

    def __bool__(self) -> bool:
        raise _GiveUp("a truth value")

    def __float__(self) -> float:
        raise _GiveUp("a conversion to float")

    def _compare(self, other: Any) -> bool:
        raise _GiveUp("a comparison")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _compare  # type: ignore[assignment]
    __hash__ = object.__hash__


def _fold(ufunc: np.ufunc, *values: float) -> float:
    with np.errstate(all="ignore"):
        return float(ufunc(*[np.float64(v) for v in values]))


def _binary(symbol: str, ufunc: np.ufunc, a: Sym, b: Sym) -> Sym:
    writer = a.writer
    if a.value is not None and b.value is not None:
        return Sym(writer, None, _fold(ufunc, a.value, b.value))
    # x + 0, x - 0, x * 1, x / 1 are x; x * 0 is 0 (the sparsity of Jacobians: NumPy would
    # give nan for an infinite x, a state the solver has already failed on).
    if symbol == "+":
        if a.value == 0.0:
            return b
        if b.value == 0.0:
            return a
    elif symbol == "-":
        if b.value == 0.0:
            return a
        if a.value == 0.0:
            return -b
    elif symbol == "*":
        for x, y in ((a, b), (b, a)):
            if x.value == 0.0:
                return Sym(writer, None, 0.0)
            if x.value == 1.0:
                return y
            if x.value == -1.0:
                return -y
    elif symbol == "/" and b.value == 1.0:
        return a
    return writer.assign(f"{a!r} {symbol} {b!r}")


def _power(a: Sym, b: Sym) -> Sym:
    if a.value is not None and b.value is not None:
        return Sym(a.writer, None, _fold(np.power, a.value, b.value))
    if b.value is not None:
        if b.value == 1.0:
            return a
        if b.value == 2.0:
            return a.writer.assign(f"{a!r} * {a!r}")
        if math.isfinite(b.value) and b.value == int(b.value):
            return a.writer.assign(f"{a!r} ** {_literal(b.value)}")
    # math.pow raises (and NumPy's code runs) where Python's ** would give a complex.
    return a.writer.assign(f"pow_({a!r}, {b!r})")


_MATH = {
    np.exp: "exp", np.expm1: "expm1", np.log: "log", np.log1p: "log1p", np.sqrt: "sqrt",
    np.sin: "sin", np.cos: "cos", np.tan: "tan", np.tanh: "tanh", np.sinh: "sinh",
    np.cosh: "cosh", np.arctan: "atan", np.arcsin: "asin", np.arccos: "acos",
    np.arcsinh: "asinh", np.arccosh: "acosh", np.arctanh: "atanh", np.absolute: "abs",
}  # fmt: skip


def _unary(name: str, ufunc: np.ufunc, a: Sym) -> Sym:
    if a.value is not None:
        return Sym(a.writer, None, _fold(ufunc, a.value))
    return a.writer.assign(f"{name}({a.name})")


def _maximum(a: Sym, b: Sym, ufunc: np.ufunc, keep: str) -> Sym:
    if a.value is not None and b.value is not None:
        return Sym(a.writer, None, _fold(ufunc, a.value, b.value))
    # NumPy's: a nan in either operand is the result.
    return a.writer.assign(f"{a!r} if {a!r} {keep} {b!r} or {a!r} != {a!r} else {b!r}")


_ELEMENTWISE = {
    np.add, np.subtract, np.multiply, np.true_divide, np.power, np.negative, np.positive,
    np.square, np.reciprocal, np.maximum, np.minimum, *_MATH,
}  # fmt: skip


def _elementwise(ufunc: np.ufunc, operands: list[np.ndarray]) -> np.ndarray:
    """``ufunc`` entry by entry on symbol arrays, broadcast as NumPy broadcasts."""
    arrays = np.broadcast_arrays(*operands)
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    out = np.empty(int(np.prod(shape)), dtype=object)
    for i in range(out.shape[0]):
        args = [f[i] for f in flat]
        if ufunc is np.add:
            out[i] = args[0] + args[1]
        elif ufunc is np.subtract:
            out[i] = args[0] - args[1]
        elif ufunc is np.multiply:
            out[i] = args[0] * args[1]
        elif ufunc is np.true_divide:
            out[i] = args[0] / args[1]
        elif ufunc is np.power:
            out[i] = _power(args[0], args[1])
        elif ufunc is np.negative:
            out[i] = -args[0]
        elif ufunc is np.positive:
            out[i] = args[0]
        elif ufunc is np.square:
            out[i] = _power(args[0], args[0]._other(2.0))
        elif ufunc is np.reciprocal:
            out[i] = args[0]._other(1.0) / args[0]
        elif ufunc is np.maximum:
            out[i] = _maximum(args[0], args[1], ufunc, ">")
        elif ufunc is np.minimum:
            out[i] = _maximum(args[0], args[1], ufunc, "<")
        elif ufunc in _MATH:
            out[i] = _unary(_MATH[ufunc], ufunc, args[0])
        else:
            raise _GiveUp(f"the ufunc {ufunc.__name__}")
    return out.reshape(shape)


def _symbols(writer: _Writer, value: Any) -> np.ndarray:
    """``value`` (an implementation's result) as an object array of symbols."""
    array = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if array.dtype != object:
        if array.dtype.kind not in "biuf":
            raise _GiveUp(f"a result of dtype {array.dtype}")
        array = array.astype(object)
    out = np.empty(array.shape, dtype=object)
    flat, target = array.reshape(-1), out.reshape(-1)
    for i in range(flat.shape[0]):
        x = flat[i]
        target[i] = x if isinstance(x, Sym) else Sym(writer, None, float(x))
    return out


# -- compiling a program ---------------------------------------------------------------------
_lock = threading.Lock()
declined: dict[str, str] = {}  # program name -> why it was not compiled here (for developers)


def scalar_code(program: Any, fallback: Callable[..., tuple]) -> Callable[..., tuple] | None:
    """``program`` (optimized, no captured tensors) compiled entry by entry, or ``None``.

    ``fallback`` (the program's NumPy code) runs any call on which Python's arithmetic
    raises where NumPy's would not.
    """
    from ...compiler.codegen import ufunc_of  # the compiler's own reading of an op's impl

    if program.captured:
        return None
    with _lock:
        try:
            source = _generate(program, ufunc_of)
        except (_GiveUp, TypeError, ValueError, AttributeError, IndexError) as error:
            # _GiveUp, or an implementation that does not run on symbols.
            declined[program.name] = f"{type(error).__name__}: {error}"
            return None
    namespace: dict[str, Any] = {
        "array": np.array, "float": float, "inf": math.inf, "nan": math.nan,
        "pow_": math.pow, "abs": abs,
    }  # fmt: skip
    for name in set(_MATH.values()) - {"abs"}:
        namespace[name] = getattr(math, name)
    exec(compile(source, f"<kenaz.ode scalar {program.name}>", "exec"), namespace)  # noqa: S102
    scalar = namespace["compiled"]

    def compiled(*values: Any) -> tuple:
        try:
            return scalar(*values)
        except (ArithmeticError, ValueError):  # NumPy gives inf or nan there: its code runs
            return fallback(*values)

    compiled.source = source  # type: ignore[attr-defined]
    return compiled


def _generate(program: Any, ufunc_of: Callable) -> str:
    writer = _Writer()
    env: dict[int, np.ndarray] = {}
    header = []
    for k, var in enumerate(program.inputs):
        if np.dtype(var.dtype) != np.float64 or int(np.prod(var.shape)) > MAX_ENTRIES:
            raise _GiveUp(f"an input of {var.dtype} {var.shape}")
        size = int(np.prod(var.shape))
        names = [f"x{k}_{i}" for i in range(size)]
        if var.shape == ():
            header.append(f"    {names[0]} = float(x{k})")
        elif size:
            unpacked = ", ".join(names) + ("," if size == 1 else "")
            header.append(f"    {unpacked} = x{k}.ravel().tolist()")
        symbols = np.empty(size, dtype=object)
        for i, name in enumerate(names):
            symbols[i] = Sym(writer, name, None)
        env[var.id] = symbols.reshape(var.shape)
    for eq in program.equations:
        if eq.body is not None or eq.multiple:
            raise _GiveUp(f"the op {eq.op.name}")
        for var in eq.outputs:
            if np.dtype(var.dtype) != np.float64 or int(np.prod(var.shape)) > MAX_ENTRIES:
                raise _GiveUp(f"{eq.op.name} gives {var.dtype} {var.shape}")
        operands = []
        for atom in eq.inputs:
            if type(atom).__name__ == "Var":
                operands.append(env[atom.id])
            elif isinstance(atom.value, np.ndarray) and atom.value.dtype.kind == "f":
                # A float constant array as symbols too: an implementation may write symbols
                # into it (scatter_add's np.add.at into its zeros).
                operands.append(_symbols(writer, atom.value))
            else:
                operands.append(atom.value)
        impl = eq.op.numpy_impl or eq.op.impl
        ufunc = ufunc_of(impl)
        try:
            if ufunc in _ELEMENTWISE and not eq.params:
                result = _elementwise(ufunc, [_symbols(writer, x) for x in operands])
            else:
                with np.errstate(all="ignore"):
                    result = impl(*operands, **eq.params)
                result = _symbols(writer, result)
        except (_GiveUp, TypeError, ValueError, AttributeError, IndexError) as error:
            raise _GiveUp(f"{eq.op.name}: {error}") from None
        if result.shape != tuple(eq.outputs[0].shape):
            raise _GiveUp(f"{eq.op.name} gave shape {result.shape}")
        env[eq.outputs[0].id] = result
    returns = []
    for out in program.outputs:
        if type(out).__name__ == "Var":
            symbols = env[out.id]
        elif hasattr(out, "value"):
            symbols = _symbols(writer, out.value)
        else:
            raise _GiveUp("a non-tensor output")
        entries = ", ".join(repr(s) for s in symbols.reshape(-1))
        if symbols.shape == ():
            returns.append(f"array({entries})")
        elif symbols.ndim == 1:
            returns.append(f"array([{entries}])")
        else:
            returns.append(f"array([{entries}]).reshape({symbols.shape!r})")
    lines = [f"def compiled({', '.join(f'x{k}' for k in range(len(program.inputs)))}):"]
    lines += header + writer.lines
    lines.append(f"    return ({', '.join(returns)},)")
    return "\n".join(lines) + "\n"
