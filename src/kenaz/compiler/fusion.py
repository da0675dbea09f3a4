"""Fusion: chains of elementwise ops compiled into one loop each, with numba.

With the optional extra ``kenaz[jit]`` (numba), :func:`fuse` rewrites an
optimized program: each run of elementwise equations on arrays of one shape
and one floating dtype becomes one *fused* equation, whose implementation is
a numba function that loops once over the elements and computes the whole
run per element, in registers. Values the rest of the program reads are the
fused equation's outputs; the others never exist as arrays.

What is fused: ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``power`` by a
constant exponent, and the unary math ufuncs in :data:`UNARY` (``sin``,
``exp``, ``tanh``...), on float32 or float64, where every operand is an array
of the run's shape, a 0-d value or a number. Arithmetic is IEEE's in both
(numba compiles without fast-math, so no contraction into FMA): a fused run
of it gives NumPy's result to the last bit. The transcendental functions are
LLVM's (the platform's libm), NumPy may use its own SIMD versions: they agree
to a few units in the last place (``tests/test_fusion.py`` tests the bound).

Without numba nothing here runs: :func:`available` is ``False`` and ``jit``
keeps its NumPy code. Kernels are cached by their source text, so programs
with the same runs (the steps of a loop) compile each kernel once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..effects import Op
from .codegen import ufunc_of
from .program import Const, Equation, Program, Var

__all__ = ["available", "fuse", "MAX_OPS", "MAX_INPUTS"]

# A run is cut after this many ops (LLVM's compile time grows faster than the function:
# minutes for 400 ops) or when it would read more inputs than this (each is a dispatcher
# argument). Short runs also repeat: a loop's steps give one source, compiled once.
MAX_OPS = 24
MAX_INPUTS = 16

_BINARY = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}
# Unary ufuncs numba compiles on scalars; the name is NumPy's, called as np.<name> in numba.
UNARY = frozenset(
    getattr(np, name)
    for name in (
        "negative", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
        "tanh", "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log1p", "sqrt",
        "square", "absolute",
    )
)  # fmt: skip
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))

_numba: Any = None
_state = {"checked": False}
_kernels: dict[str, Callable] = {}
_lock = threading.Lock()


def available() -> bool:
    """Whether numba can be imported (``pip install 'kenaz[jit]'``); imported on first ask.

    ``KENAZ_JIT_FUSE=0`` in the environment turns fusion off (to compare, or to
    avoid numba's compile time).
    """
    global _numba
    if not _state["checked"]:
        _state["checked"] = True
        if os.environ.get("KENAZ_JIT_FUSE") == "0":
            return False
        try:
            import numba
        except ImportError:
            _numba = None
        else:
            _numba = numba
    return _numba is not None


# -- choosing the runs ---------------------------------------------------------------------------
def _formula(eq: Equation, shape: tuple[int, ...], dtype: np.dtype) -> str | None:
    """A template of the scalar formula of ``eq`` (operands ``{0}``, ``{1}``), or ``None``
    when ``eq`` is not fusible into a run of this shape and dtype."""
    if eq.body is not None or eq.multiple or eq.params:
        return None
    impl = eq.op.numpy_impl or eq.op.impl
    ufunc = ufunc_of(impl)
    stated = _slope_formula(impl)  # a slope op's g * f'(r) (kenaz.ops.elementwise)
    if ufunc is None and stated is None:
        return None
    out = eq.outputs[0]
    if out.shape != shape or out.dtype != dtype:
        return None
    for a in eq.inputs:
        if type(a) is Var:
            if a.weak is None and (a.dtype != dtype or a.shape not in (shape, ())):
                return None
            if a.weak not in (None, int, float):
                return None
        elif not _scalar_constant(a.value, dtype) and not _array_constant(a.value, shape, dtype):
            return None
    if stated is not None and len(eq.inputs) == 2:
        return stated
    if ufunc in _BINARY and len(eq.inputs) == 2:
        return "({0} " + _BINARY[ufunc] + " {1})"
    if ufunc is np.power and len(eq.inputs) == 2:
        exponent = eq.inputs[1]
        if type(exponent) is not Const or not _scalar_constant(exponent.value, dtype):
            return None
        # NumPy's own fast paths for these exponents (square, sqrt, reciprocal), so that the
        # fused loop computes the same operations.
        value = float(exponent.value)
        if value == 2.0:
            return "({0} * {0})"
        if value == 0.5:
            return "np.sqrt({0})"
        if value == -1.0:
            return "(ONE / {0})"
        if value == 1.0:
            return "({0})"
        return "({0} ** {1})"
    if ufunc in UNARY and len(eq.inputs) == 1:
        if ufunc is np.square:
            return "({0} * {0})"
        if ufunc is np.negative:
            return "(-{0})"
        return f"np.{ufunc.__name__}({{0}})"
    return None


# -- a slope op's formula, from its one definition --------------------------------------------
class _Symbol:
    """A scalar in a formula: arithmetic on it writes the operation's text, parenthesized,
    so the text computes the same operations in the same order as the Python expression."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _binary(self, other: Any, operator: str, reflected: bool = False) -> _Symbol:
        if isinstance(other, _Symbol):
            right = other.text
        elif type(other) in (int, float):  # a Python number: weak, of the operands' dtype
            right = f"C({other!r})"
        else:
            raise TypeError(f"not a scalar formula: {other!r}")
        left, right = (right, self.text) if reflected else (self.text, right)
        return _Symbol(f"({left} {operator} {right})")

    def __add__(self, other: Any) -> _Symbol:
        return self._binary(other, "+")

    def __radd__(self, other: Any) -> _Symbol:
        return self._binary(other, "+", reflected=True)

    def __sub__(self, other: Any) -> _Symbol:
        return self._binary(other, "-")

    def __rsub__(self, other: Any) -> _Symbol:
        return self._binary(other, "-", reflected=True)

    def __mul__(self, other: Any) -> _Symbol:
        return self._binary(other, "*")

    def __rmul__(self, other: Any) -> _Symbol:
        return self._binary(other, "*", reflected=True)

    def __truediv__(self, other: Any) -> _Symbol:
        return self._binary(other, "/")

    def __rtruediv__(self, other: Any) -> _Symbol:
        return self._binary(other, "/", reflected=True)

    def __neg__(self) -> _Symbol:
        return _Symbol(f"(-{self.text})")


class _SymbolNamespace:
    """The ``xp`` a slope formula is written in, on symbols: ``xp.cos(r)`` is
    ``np.cos(...)``, for the unary functions numba compiles (:data:`UNARY`)."""

    def __getattr__(self, name: str) -> Callable[[_Symbol], _Symbol]:
        if getattr(np, name, None) not in UNARY:
            raise AttributeError(f"{name} is not fused")
        return lambda x: _Symbol(f"np.{name}({x.text})")


_slope_formulas: dict[Callable, str | None] = {}


def _slope_formula(impl: Callable) -> str | None:
    """The template (operands ``{0}``: g and ``{1}``: r) of a slope op's ``slope_times``,
    written by calling it on symbols; ``None`` for other ops, or a formula that is not
    plain arithmetic and :data:`UNARY` functions (it is then not fused)."""
    slope_times = getattr(impl, "slope_times", None)
    if slope_times is None:
        return None
    if slope_times not in _slope_formulas:
        try:
            text = slope_times(_SymbolNamespace(), _Symbol("{0}"), _Symbol("{1}")).text
        except (TypeError, AttributeError):
            text = None
        _slope_formulas[slope_times] = text
    return _slope_formulas[slope_times]


def _scalar_constant(value: Any, dtype: np.dtype) -> bool:
    if type(value) in (int, float):
        return True
    return isinstance(value, np.generic) and value.dtype == dtype


def _array_constant(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return type(value) is np.ndarray and value.dtype == dtype and value.shape in (shape, ())


class _Run:
    """Equations being fused: all of one shape and dtype, in program order."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype
        self.equations: list[Equation] = []
        self.formulas: list[str] = []
        self.defined: set[int] = set()
        self.inputs: dict[Any, Var | Const] = {}

    def accepts(self, eq: Equation, formula: str) -> bool:
        if len(self.equations) >= MAX_OPS:
            return False
        new = {_input_key(a) for a in eq.inputs if _is_kernel_input(a, self.defined)}
        return len(self.inputs) + len(new - self.inputs.keys()) <= MAX_INPUTS

    def add(self, eq: Equation, formula: str) -> None:
        for a in eq.inputs:
            if _is_kernel_input(a, self.defined):
                self.inputs.setdefault(_input_key(a), a)
        self.equations.append(eq)
        self.formulas.append(formula)
        self.defined.add(eq.outputs[0].id)


def _is_kernel_input(atom: Var | Const, defined: set[int]) -> bool:
    """An operand the kernel takes as an argument (not computed in the run, not a literal)."""
    if type(atom) is Var:
        return atom.id not in defined
    return type(atom.value) is np.ndarray


def _input_key(atom: Var | Const) -> Any:
    return ("v", atom.id) if type(atom) is Var else ("c", id(atom.value))


def fuse(program: Program) -> tuple[Program, int]:
    """``program`` with its runs of elementwise equations fused; and how many runs it fused.

    ``program`` must be flat (optimized: no call equations). Needs numba.
    """
    equations = program.equations
    readers: dict[int, int] = {}  # variable -> how many equations (or outputs) read it
    for eq in equations:
        for a in eq.inputs:
            if type(a) is Var:
                readers[a.id] = readers.get(a.id, 0) + 1
    for o in program.outputs:
        if type(o) is Var:
            readers[o.id] = readers.get(o.id, 0) + 1
    result: list[Equation] = []
    fused = 0
    run: _Run | None = None

    def close() -> None:
        nonlocal run, fused
        if run is None:
            return
        if len(run.equations) < 2:
            result.extend(run.equations)
        else:
            result.append(_fused_equation(run, readers))
            fused += 1
        run = None

    for eq in equations:
        formula = None
        if eq.outputs and eq.outputs[0].dtype in _FLOATS and not eq.multiple:
            out = eq.outputs[0]
            formula = _formula(eq, out.shape, out.dtype)
        if formula is not None:
            out = eq.outputs[0]
            if run is not None and (run.shape, run.dtype) == (out.shape, out.dtype):
                if run.accepts(eq, formula):
                    run.add(eq, formula)
                    continue
            close()
            run = _Run(out.shape, out.dtype)
            run.add(eq, formula)
            continue
        # Not fusible: it runs before the open run when it reads nothing the run defines
        # (the run is computed where its last equation was, once closed).
        if run is not None and any(type(a) is Var and a.id in run.defined for a in eq.inputs):
            close()
        result.append(eq)
    close()
    if not fused:
        return program, 0
    return (
        Program(
            program.name,
            program.inputs,
            program.captured,
            result,
            program.outputs,
            program.in_tree,
            program.out_tree,
        ),
        fused,
    )


# -- one run: its kernel -------------------------------------------------------------------------
def _fused_equation(run: _Run, readers: dict[int, int]) -> Equation:
    """The equation computing ``run`` with one kernel call."""
    read_inside: dict[int, int] = {}
    for eq in run.equations:
        for a in eq.inputs:
            if type(a) is Var:
                read_inside[a.id] = read_inside.get(a.id, 0) + 1
    outputs = [
        eq.outputs[0]
        for eq in run.equations
        if readers.get(eq.outputs[0].id, 0) > read_inside.get(eq.outputs[0].id, 0)
    ]
    inputs = list(run.inputs.values())
    source = _kernel_source(run, inputs, outputs)
    kernel = _compiled(source)
    name = f"fused{len(run.equations)}"
    multiple = len(outputs) > 1
    if run.shape == () and multiple:
        count = len(outputs)
        # numba returns an array of the outputs: NumPy scalars, as unfused 0-d ops give.
        raw = kernel
        kernel = lambda *values: tuple(raw(*values)[:count])  # noqa: E731
    elif run.shape == ():
        raw = kernel
        kernel = lambda *values: raw(*values)[0]  # noqa: E731
    op = Op(name, kernel, differentiable=False, multiple_results=multiple)
    return Equation(op, inputs, {}, outputs, multiple)


def _kernel_source(run: _Run, inputs: Sequence[Var | Const], outputs: Sequence[Var]) -> str:
    """The numba kernel of ``run``: its arguments are ``inputs``, it returns ``outputs``."""
    dt = "float64" if run.dtype == np.float64 else "float32"
    size = int(np.prod(run.shape))
    names: dict[Any, str] = {}
    header, loads, body = [], [], []
    arguments = []
    for k, atom in enumerate(inputs):
        argument = f"a{k}"
        arguments.append(argument)
        shape = atom.shape if type(atom) is Var else atom.value.shape
        scalar = shape == () or run.shape == ()
        if scalar:
            header.append(f"    s{k} = np.{dt}(_item({argument}))")
            names[_input_key(atom)] = f"s{k}"
        else:
            header.append(f"    f{k} = np.ascontiguousarray({argument}).reshape({size})")
            loads.append(f"        e{k} = f{k}[i]")
            names[_input_key(atom)] = f"e{k}"

    # Temporaries are numbered within the run, so that runs computing the same thing (the
    # steps of a loop) have the same source and share one compiled kernel.
    local: dict[int, str] = {}

    def operand(atom: Var | Const) -> str:
        if type(atom) is Var and atom.id in run.defined:
            return local[atom.id]
        if _is_kernel_input(atom, run.defined):
            return names[_input_key(atom)]
        # A number: of the run's dtype, as NumPy casts a weak scalar.
        value = float(atom.value)
        text = repr(value) if np.isfinite(value) else ("np.nan" if value != value else "np.inf")
        return f"np.{dt}({'-' if value == -np.inf else ''}{text})"

    for eq, formula in zip(run.equations, run.formulas, strict=True):
        text = formula.format(*[operand(a) for a in eq.inputs]).replace("C(", f"np.{dt}(")
        local[eq.outputs[0].id] = f"t{len(local)}"
        body.append(f"{local[eq.outputs[0].id]} = {text}")
    lines = [f"def kernel({', '.join(arguments)}):", f"    ONE = np.{dt}(1.0)", *header]
    if run.shape == ():
        lines += [f"    {line}" for line in body]
        lines.append(f"    out = np.empty({len(outputs)}, np.{dt})")
        lines += [f"    out[{j}] = {local[o.id]}" for j, o in enumerate(outputs)]
        lines.append("    return out")
    else:
        lines += [f"    o{j} = np.empty({size}, np.{dt})" for j in range(len(outputs))]
        lines.append(f"    for i in range({size}):")
        lines += loads
        lines += [f"        {line}" for line in body]
        lines += [f"        o{j}[i] = {local[o.id]}" for j, o in enumerate(outputs)]
        results = [f"o{j}.reshape({run.shape!r})" for j in range(len(outputs))]
        lines.append(f"    return {', '.join(results)}")
    return "\n".join(lines) + "\n"


def _compiled(source: str) -> Callable:
    """The numba function of a kernel's source, compiled once per source text."""
    found = _kernels.get(source)
    if found is not None:
        return found
    with _lock:
        found = _kernels.get(source)
        if found is None:
            namespace = {"np": np, "_item": _item_function()}
            exec(compile(source, "<kenaz fused kernel>", "exec"), namespace)  # noqa: S102
            found = _kernels[source] = _numba.njit(nogil=True)(namespace["kernel"])
    return found


_ITEM: list[Callable] = []


def _item_function() -> Callable:
    """``_item(x)``: a 0-d array's element, or ``x`` itself (a number), inside numba."""
    if _ITEM:
        return _ITEM[0]
    from numba import types
    from numba.extending import overload

    def _item(x):  # pragma: no cover - replaced by its overload inside numba
        return x

    @overload(_item)
    def _item_overload(x):
        if isinstance(x, types.Array):
            return lambda x: x[()]
        return lambda x: x

    _ITEM.append(_item)
    return _item
