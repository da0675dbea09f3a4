"""Fusion: chains of elementwise ops compiled into one loop each, with numba.

With the optional extra ``kenaz[jit]`` (numba), :func:`fuse` rewrites an
optimized program: each run of elementwise equations on arrays of one shape
and one floating dtype becomes one *fused* equation, whose implementation is
a numba function that loops once over the elements and computes the whole
run per element, in registers. A sum of one of the run's values accumulates
in the same loop. Values the rest of the program reads are the fused
equation's outputs; the others never exist as arrays.

What is fused: ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``power`` by a
constant exponent, the unary math ufuncs in :data:`UNARY` (``sin``, ``exp``,
``tanh``...) and the slope ops that state a ``formula``, on float32 or
float64, where every operand is an array of the run's shape or one that
broadcasts to it, a 0-d value or a number; and ``sum`` of a run's value.
Arithmetic is IEEE's in both (numba compiles without fast-math, so no
contraction into FMA): a fused run of it gives NumPy's result to the last bit.
The transcendental functions are LLVM's (the platform's libm), NumPy may use
its own SIMD versions: they agree to a few units in the last place. A fused sum
adds in loop order, which is NumPy's over axis 0 and not over the last axis
(NumPy sums pairwise there): the two differ by at most ``n * eps *
sum(|terms|)`` (``tests/test_fusion.py`` tests both bounds).

No kernel returns an array (numba boxes each for about 2.5 µs, more than a
short loop costs): see :class:`_Layout`. A program on 0-d values fuses whole
(up to :data:`MAX_SCALAR_OPS`), into one function over numbers: one dispatch
per call.

Without numba nothing here runs: :func:`available` is ``False`` and ``jit``
keeps its NumPy code. Kernels are cached by their source text, so programs
with the same runs (the steps of a loop) compile each kernel once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..effects import Op
from .codegen import ufunc_of
from .diagonal_products import scale_instead_of_diagonal_products
from .program import Const, Equation, Program, Var
from .slope_formulas import UNARY, slope_formula

__all__ = ["available", "fuse", "MAX_OPS", "MAX_INPUTS", "MAX_SCALAR_OPS"]

# A run is cut after this many ops (LLVM's compile time grows faster than the function:
# minutes for 400 ops) or when it would read more inputs than this (each is a dispatcher
# argument). Short runs also repeat: a loop's steps give one source, compiled once.
MAX_OPS = 24
MAX_INPUTS = 16
# A run of 0-d values is straight-line code (no loop), which numba compiles in time about
# linear in its length (10-25 ms per op, mostly numba's typing): whole small programs fit in
# one such function, one dispatch per call (W2: 246 ops, one call of 3.5 against 11 of 129 µs).
MAX_SCALAR_OPS = 512
# float32 runs longer than this leave the transcendental functions to NumPy: its SIMD
# float32 tanh, sin, exp... are about 4x faster per element than libm's (tanh on 65,536
# float32: 0.48 against 1.9 ms here); on float64 both are about as fast.
MAX_FLOAT32_CALLS = 256

_BINARY = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/"}
# Unary ufuncs numba compiles on scalars; the name is NumPy's, called as np.<name> in numba.
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
    stated = slope_formula(impl)  # a slope op's g * f'(r) (kenaz.ops.elementwise)
    if ufunc is None and stated is None:
        return None
    out = eq.outputs[0]
    if out.shape != shape or out.dtype != dtype:
        return None
    for a in eq.inputs:
        if type(a) is Var:
            if a.weak is None and (a.dtype != dtype or not _broadcasts(a.shape, shape)):
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


def _scalar_constant(value: Any, dtype: np.dtype) -> bool:
    if type(value) in (int, float):
        return True
    return isinstance(value, np.generic) and value.dtype == dtype


def _array_constant(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return type(value) is np.ndarray and value.dtype == dtype and _broadcasts(value.shape, shape)


def _broadcasts(operand: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether an operand of shape ``operand`` broadcasts to ``shape`` without growing it."""
    if len(operand) > len(shape):
        return False
    return all(n in (1, m) for n, m in zip(operand[::-1], shape[::-1], strict=False))


def _shape_of(atom: Var | Const) -> tuple[int, ...]:
    return atom.shape if type(atom) is Var else np.shape(atom.value)


def _broadcast_operand(atom: Var | Const, shape: tuple[int, ...]) -> bool:
    """An array operand a loop of ``shape`` reads along fewer dimensions than it has."""
    operand = _shape_of(atom)
    return operand != () and operand != shape


class _Run:
    """Equations being fused: all of one shape and dtype, in program order."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape = shape
        self.dtype = dtype
        self.equations: list[Equation] = []
        self.formulas: list[str] = []
        self.defined: set[int] = set()
        self.inputs: dict[Any, Var | Const] = {}
        self.sums: list[Equation] = []  # sums of the run's values, accumulated in its loop

    def accepts(self, eq: Equation) -> bool:
        if len(self.equations) >= (MAX_SCALAR_OPS if self.shape == () else MAX_OPS):
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
    """An operand the kernel reads (not computed in the run, not a literal number)."""
    if type(atom) is Var:
        return atom.id not in defined
    return type(atom.value) is np.ndarray


def _input_key(atom: Var | Const) -> Any:
    return ("v", atom.id) if type(atom) is Var else ("c", id(atom.value))


def _runs(equations: Sequence[Equation]) -> list[Equation | _Run]:
    """The equations in the order the fused program runs them, runs of two or more
    fusible equations gathered into a :class:`_Run` each."""
    items: list[Equation | _Run] = []
    run: _Run | None = None

    def close() -> None:
        nonlocal run
        if run is not None:
            items.extend([run] if _worth_a_kernel(run) else run.equations)
        run = None

    for eq in equations:
        formula = None
        if eq.outputs and eq.outputs[0].dtype in _FLOATS and not eq.multiple:
            out = eq.outputs[0]
            formula = _formula(eq, out.shape, out.dtype)
            if (
                formula is not None
                and "np." in formula
                and out.dtype == np.float32
                and math.prod(out.shape) > MAX_FLOAT32_CALLS
            ):
                formula = None  # NumPy's SIMD float32 tanh, exp... are 4x faster than libm's
        if formula is not None:
            out = eq.outputs[0]
            if run is not None and (run.shape, run.dtype) == (out.shape, out.dtype):
                if run.accepts(eq):
                    run.add(eq, formula)
                    continue
            close()
            run = _Run(out.shape, out.dtype)
            run.add(eq, formula)
            continue
        if run is not None and _sums_a_value_of(eq, run):
            run.sums.append(eq)  # its output has another shape: nothing after it in the run
            close()
            continue
        # Not fusible: it runs before the open run when it reads nothing the run defines
        # (the run is computed where its last equation was, once closed).
        if run is not None and any(type(a) is Var and a.id in run.defined for a in eq.inputs):
            close()
        items.append(eq)
    close()
    return items


def _worth_a_kernel(run: _Run) -> bool:
    """Two or more equations; or one arithmetic op that broadcasts an array operand, which
    a loop nest computes faster than NumPy's (an outer product: NumPy runs its inner loop,
    as long as the last axis, once per element of the others; 790 against 530 µs on W4's)."""
    if len(run.equations) + len(run.sums) >= 2:
        return True
    (eq,) = run.equations
    return "np." not in run.formulas[0] and any(_broadcast_operand(a, run.shape) for a in eq.inputs)


def _sums_a_value_of(eq: Equation, run: _Run) -> bool:
    """Whether ``eq`` sums (``np.add.reduce``) a value ``run`` computes, into its dtype."""
    if eq.op.numpy_impl != np.add.reduce or run.shape == () or 0 in run.shape:
        return False
    source = eq.inputs[0]
    axis, keepdims = eq.params.get("axis"), eq.params.get("keepdims")
    return (
        type(source) is Var
        and source.id in run.defined
        and eq.outputs[0].dtype == run.dtype
        and type(axis) is tuple
        and type(keepdims) is bool
        and set(eq.params) == {"axis", "keepdims"}
    )


def fuse(program: Program) -> tuple[Program, int]:
    """``program`` with its runs of elementwise equations fused; and how many rewrites that
    took (runs fused, and products by a diagonal matrix turned into scalings first, see
    :mod:`kenaz.compiler.diagonal_products`).

    ``program`` must be flat (optimized: no call equations). Needs numba.
    """
    program, scalings = scale_instead_of_diagonal_products(program)
    items = _runs(program.equations)
    runs = [item for item in items if type(item) is _Run]
    if not runs:
        return program, scalings
    layout = _Layout(items, program)
    result = [item if type(item) is Equation else layout.equation(item) for item in items]
    fused = program.with_equations(result)
    return fused, len(runs) + scalings


# -- where each value of a run lives --------------------------------------------------------------
class _Layout:
    """Where the values runs compute live, so that no kernel returns an array (numba boxes
    each returned array for about 2.5 µs: more than a 16-element loop of two dozen ops).

    A value only other array runs of its shape and dtype read is a row of a workspace,
    a 2-D array of one row per live value, allocated once per call; rows are reused once
    their value is dead (a linear scan). A value anything else reads (an unfused
    equation, the program's outputs) *escapes*: the run's wrapper allocates its array and
    the kernel writes into it. Each run that uses a workspace takes its latest version
    and returns it (``ws`` is a new variable each time), which orders the runs.
    """

    def __init__(self, items: list[Equation | _Run], program: Program) -> None:
        self.next_id = 1 + max(
            [v.id for v in program.inputs]
            + [v.id for v, _ in program.captured]
            + [o.id for eq in program.equations for o in eq.outputs]
        )
        last: dict[int, int] = {}  # variable -> the index of its last reader
        escapes: set[int] = set()  # variables something else than an array run reads
        self.outputs: dict[int, list[Var]] = {}  # run -> the values read after it
        for index, item in enumerate(items):
            atoms = item.inputs.values() if type(item) is _Run else item.inputs
            array_run = type(item) is _Run and item.shape != ()
            for a in atoms:
                if type(a) is Var:
                    last[a.id] = index
                    # A row holds a value of its run's shape: a run that broadcasts it, or
                    # anything but an array run, reads it from an array of its own.
                    if not array_run or a.shape != item.shape:
                        escapes.add(a.id)
        for o in program.outputs:
            if type(o) is Var:
                last[o.id] = len(items)
                escapes.add(o.id)
        for index, item in enumerate(items):
            if type(item) is _Run:
                self.outputs[index] = [
                    eq.outputs[0]
                    for eq in item.equations
                    if last.get(eq.outputs[0].id, index) > index
                ]
        # The linear scan: rows per (shape, dtype), freed after their value's last reader.
        self.rows: dict[int, int] = {}  # variable -> its row
        self.height: dict[tuple, int] = {}  # (shape, dtype) -> rows of its workspace
        free: dict[tuple, list[int]] = {}
        self.index = {id(item): index for index, item in enumerate(items)}
        for index, item in enumerate(items):
            if type(item) is not _Run or item.shape == ():
                continue
            group = (item.shape, item.dtype)
            rows = free.setdefault(group, [])
            for a in item.inputs.values():
                # Freed before this run's outputs take rows: each loop iteration loads all
                # its operands before it stores a result, so a row may be read and rewritten.
                if type(a) is Var and a.id in self.rows and last[a.id] == index:
                    rows.append(self.rows[a.id])
            rows.sort(reverse=True)
            for var in self.outputs[index]:
                if var.id in escapes:
                    continue
                if rows:
                    self.rows[var.id] = rows.pop()
                else:
                    self.rows[var.id] = self.height.get(group, 0)
                    self.height[group] = self.rows[var.id] + 1
        self.workspace: dict[tuple, Var] = {}  # (shape, dtype) -> its latest version

    def equation(self, run: _Run) -> Equation:
        """The equation computing ``run`` with one kernel call."""
        outputs = self.outputs[self.index[id(run)]]
        inputs = list(run.inputs.values())
        if run.shape == ():
            kernel = _compiled(_scalar_source(run, inputs, outputs))
            wrapper = _scalar_wrapper(len(outputs))(kernel, run.dtype.type)
            return Equation(_op(run, wrapper, len(outputs)), inputs, {}, outputs, len(outputs) > 1)
        row_inputs = [a for a in inputs if type(a) is Var and a.id in self.rows]
        row_outputs = [v for v in outputs if v.id in self.rows]
        external_inputs = [a for a in inputs if not (type(a) is Var and a.id in self.rows)]
        external_outputs = [v for v in outputs if v.id not in self.rows]
        external_outputs += [eq.outputs[0] for eq in run.sums]
        source = _array_source(run, row_inputs, row_outputs, external_inputs, external_outputs)
        kernel = _compiled(source)
        group = (run.shape, run.dtype)
        uses_rows = bool(row_inputs or row_outputs)
        takes = uses_rows and group in self.workspace
        wrapper = _array_wrapper(takes, uses_rows, len(external_inputs), len(external_outputs))
        shapes = tuple(v.shape for v in external_outputs)
        rows = np.array([self.rows[a.id] for a in [*row_inputs, *row_outputs]], dtype=np.intp)
        size = int(np.prod(run.shape))
        shape = (self.height.get(group, 0), size)
        run_function = wrapper(kernel, rows, shape, shapes, run.dtype, np.empty)
        eq_inputs: list[Var | Const] = list(external_inputs)
        eq_outputs = list(external_outputs)
        if uses_rows:
            if takes:
                eq_inputs.insert(0, self.workspace[group])
            self.workspace[group] = Var(self.next_id, shape, run.dtype)
            self.next_id += 1
            eq_outputs.insert(0, self.workspace[group])
        count = len(eq_outputs)
        return Equation(_op(run, run_function, count), eq_inputs, {}, eq_outputs, count > 1)


def _op(run: _Run, function: Callable, outputs: int) -> Op:
    return Op(
        f"fused{len(run.equations)}", function, differentiable=False, multiple_results=outputs > 1
    )


# -- one run: its kernel ------------------------------------------------------------------------
def _operands(run: _Run, dt: str, names: dict[Any, str]) -> list[str]:
    """The body of ``run``'s kernel, one assignment ``t<k> = ...`` per equation.

    Temporaries are numbered within the run, so that runs computing the same thing (the
    steps of a loop) have the same source and share one compiled kernel.
    """
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

    body = []
    for eq, formula in zip(run.equations, run.formulas, strict=True):
        text = formula.format(*[operand(a) for a in eq.inputs]).replace("C(", f"np.{dt}(")
        local[eq.outputs[0].id] = f"t{len(local)}"
        body.append(f"{local[eq.outputs[0].id]} = {text}")
    names.update({("t", k): v for k, v in local.items()})
    return body


def _dtype_name(dtype: np.dtype) -> str:
    return "float64" if dtype == np.float64 else "float32"


def _scalar_source(run: _Run, inputs: Sequence[Var | Const], outputs: Sequence[Var]) -> str:
    """The numba function of a 0-d ``run``: numbers in, its ``outputs`` as numbers out."""
    dt = _dtype_name(run.dtype)
    names: dict[Any, str] = {}
    arguments, header = [], []
    for k, atom in enumerate(inputs):
        arguments.append(f"a{k}")
        header.append(f"    s{k} = np.{dt}(_item(a{k}))")
        names[_input_key(atom)] = f"s{k}"
    body = _operands(run, dt, names)
    results = [names[("t", o.id)] for o in outputs]
    lines = [f"def kernel({', '.join(arguments)}):", f"    ONE = np.{dt}(1.0)", *header]
    lines += [f"    {line}" for line in body]
    lines.append(f"    return {', '.join(results)}")
    return "\n".join(lines) + "\n"


def _array_source(
    run: _Run,
    row_inputs: Sequence[Var],
    row_outputs: Sequence[Var],
    external_inputs: Sequence[Var | Const],
    external_outputs: Sequence[Var],
) -> str:
    """The numba loop of ``run``: ``kernel([ws, rows,] inputs..., outputs...)``.

    Rows of the workspace ``ws`` are numbered by ``rows`` (the inputs', then the
    outputs'), an argument: runs that differ only in their rows share the kernel.
    One flat loop over the elements; a loop nest, one loop per axis, when an
    operand broadcasts (read once per iteration of the innermost loop along which
    it varies).
    """
    dt = _dtype_name(run.dtype)
    size = math.prod(run.shape)
    full = tuple(range(len(run.shape)))
    nest = any(_broadcast_operand(a, run.shape) for a in external_inputs)
    nest = nest or any(eq.params["axis"] != full for eq in run.sums)
    depth = len(run.shape) if nest else 1
    inner = "    " * (depth + 1)
    names: dict[Any, str] = {}
    arguments = ["ws", "rows"] if row_inputs or row_outputs else []
    header, loads, stores = [], [], []
    hoisted: dict[int, list[str]] = {}  # loop depth -> loads of broadcast operands there
    for k in range(len(row_inputs) + len(row_outputs)):
        header.append(f"    r{k} = rows[{k}]")
    for k, var in enumerate(row_inputs):
        loads.append(f"{inner}w{k} = ws[r{k}, i]")
        names[_input_key(var)] = f"w{k}"
    for k, atom in enumerate(external_inputs):
        arguments.append(f"a{k}")
        shape = _shape_of(atom)
        if shape == ():
            header.append(f"    s{k} = np.{dt}(_item(a{k}))")
            names[_input_key(atom)] = f"s{k}"
        elif shape == run.shape:
            header.append(f"    f{k} = np.ascontiguousarray(a{k}).reshape({size})")
            loads.append(f"{inner}e{k} = f{k}[i]")
            names[_input_key(atom)] = f"e{k}"
        else:  # broadcast: indexed by the loops of the axes it has
            padded = (1,) * (len(run.shape) - len(shape)) + tuple(shape)
            header.append(f"    f{k} = np.ascontiguousarray(a{k}).reshape({padded!r})")
            index = ", ".join(f"i{d}" if n != 1 else "0" for d, n in enumerate(padded))
            level = max((d + 1 for d, n in enumerate(padded) if n != 1), default=0)
            hoisted.setdefault(level, []).append(f"e{k} = f{k}[{index}]")
            names[_input_key(atom)] = f"e{k}"
    body = _operands(run, dt, names)
    for k, var in enumerate(row_outputs):
        stores.append(f"{inner}ws[r{len(row_inputs) + k}, i] = {names[('t', var.id)]}")
    sums = {eq.outputs[0].id: eq for eq in run.sums}
    footer = []
    for k, var in enumerate(external_outputs):
        arguments.append(f"o{k}")
        eq = sums.get(var.id)
        if eq is None:
            header.append(f"    g{k} = o{k}.reshape({size})")
            stores.append(f"{inner}g{k}[i] = {names[('t', var.id)]}")
            continue
        # A sum, accumulated in loop order from -0.0 (the identity of +, also for -0.0).
        value = names[("t", eq.inputs[0].id)]
        if eq.params["axis"] == full:  # in a register
            header.append(f"    acc{k} = np.{dt}(-0.0)")
            stores.append(f"{inner}acc{k} += {value}")
            footer.append(f"    o{k}.reshape(1)[0] = acc{k}")
            continue
        kept = tuple(1 if d in eq.params["axis"] else n for d, n in enumerate(run.shape))
        index = ", ".join("0" if d in eq.params["axis"] else f"i{d}" for d in full)
        header.append(f"    g{k} = o{k}.reshape({kept!r})")
        header.append(f"    g{k}[...] = np.{dt}(-0.0)")
        stores.append(f"{inner}g{k}[{index}] += {value}")
    lines = [f"def kernel({', '.join(arguments)}):", f"    ONE = np.{dt}(1.0)", *header]
    if nest:
        lines += [f"    {line}" for line in hoisted.get(0, [])]
        lines.append("    i = 0")
        for d, n in enumerate(run.shape):
            indent = "    " * (d + 1)
            lines.append(f"{indent}for i{d} in range({n}):")
            lines += [f"{indent}    {line}" for line in hoisted.get(d + 1, [])]
    else:
        lines.append(f"    for i in range({size}):")
    lines += loads  # every load before any store: a row may be read and rewritten
    lines += [f"{inner}{line}" for line in body]
    lines += stores
    if nest:
        lines.append(f"{inner}i += 1")
    lines += footer
    return "\n".join(lines) + "\n"


# -- the Python side of a kernel call ------------------------------------------------------------
_WRAPPERS: dict[tuple, Callable] = {}


def _wrapper(key: tuple, source: str) -> Callable:
    """The factory ``source`` defines (``make``), built once per ``key``: one wrapper per
    kind of run (how many inputs and outputs), bound to each kernel by a closure."""
    found = _WRAPPERS.get(key)
    if found is None:
        namespace: dict[str, Any] = {}
        exec(compile(source, "<kenaz fused wrapper>", "exec"), namespace)  # noqa: S102
        found = _WRAPPERS[key] = namespace["make"]
    return found


def _scalar_wrapper(count: int) -> Callable:
    """``make(kernel, cast)``: calls ``kernel`` and casts each number it returns to a NumPy
    scalar of the run's dtype (as the unfused 0-d ops give)."""
    if count == 1:
        body = "        return cast(kernel(*values))"
    else:
        casts = ", ".join(f"cast(r[{j}])" for j in range(count))
        body = f"        r = kernel(*values)\n        return {casts}"
    source = f"def make(kernel, cast):\n    def run(*values):\n{body}\n    return run\n"
    return _wrapper(("scalar", count), source)


def _array_wrapper(takes: bool, uses_rows: bool, inputs: int, outputs: int) -> Callable:
    """``make(kernel, rows, ws_shape, shapes, dtype, empty)``: allocates the escaping outputs
    (and the workspace, at its first run), calls ``kernel``, returns them."""
    parameters = (["ws"] if takes else []) + [f"a{k}" for k in range(inputs)]
    lines = ["def make(kernel, rows, ws_shape, shapes, dtype, empty):"]
    if outputs:
        lines.append(f"    {', '.join(f'shape{k}' for k in range(outputs))}, = shapes")
    lines.append(f"    def run({', '.join(parameters)}):")
    if uses_rows and not takes:
        lines.append("        ws = empty(ws_shape, dtype)")
    lines += [f"        o{k} = empty(shape{k}, dtype)" for k in range(outputs)]
    arguments = (["ws", "rows"] if uses_rows else []) + parameters[int(takes) :]
    arguments += [f"o{k}" for k in range(outputs)]
    lines.append(f"        kernel({', '.join(arguments)})")
    results = (["ws"] if uses_rows else []) + [f"o{k}" for k in range(outputs)]
    lines.append(f"        return {', '.join(results)}")
    lines.append("    return run")
    return _wrapper(("array", takes, uses_rows, inputs, outputs), "\n".join(lines) + "\n")


def _compiled(source: str) -> Callable:
    """The numba function of a kernel's source, compiled once per source text (and, with
    a cache directory, once per machine: see :func:`_kernel_function`)."""
    found = _kernels.get(source)
    if found is not None:
        return found
    with _lock:
        found = _kernels.get(source)
        if found is None:
            function, on_disk = _kernel_function(source)
            found = _numba.njit(nogil=True, cache=on_disk)(function)
            _kernels[source] = found
    return found


def _kernel_function(source: str) -> tuple[Callable, bool]:
    """The Python function ``kernel`` of ``source``; and whether it lives in a file.

    numba caches compiled code on disk only for functions defined in a file: so the
    source is written once to ``$KENAZ_CACHE_DIR/fused`` (``~/.cache/kenaz/fused`` by
    default), under a name hashed from the source and numba's version, and imported from
    there. A later process loads the machine code instead of compiling it again (W2's
    kernel: seconds of numba's typing and LLVM). ``KENAZ_CACHE_DIR=""`` keeps kernels in
    memory only; so does a directory that cannot be written.
    """
    directory = _cache_directory()
    if directory is not None:
        text = f"# kenaz fused kernel (numba {_numba.__version__})\nimport numpy as np\n\n{source}"
        name = "kernel_" + hashlib.sha256(text.encode()).hexdigest()[:24]
        path = os.path.join(directory, name + ".py")
        try:
            if not os.path.exists(path):
                temporary = f"{path}.{os.getpid()}.{threading.get_ident()}"
                with open(temporary, "w", encoding="utf-8") as file:
                    file.write(text)
                os.replace(temporary, path)  # atomic: another process reads all or nothing
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            module.__dict__["_item"] = _item_function()
            # Importable by its name: numba's cached code finds its module that way.
            sys.modules[name] = module
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            return module.kernel, True
        except OSError:
            pass
    namespace = {"np": np, "_item": _item_function()}
    exec(compile(source, "<kenaz fused kernel>", "exec"), namespace)  # noqa: S102
    return namespace["kernel"], False


_DIRECTORY: list[str | None] = []  # the cache directory, once looked up


def _cache_directory() -> str | None:
    """Where kernels' sources and numba's cache of them live (``None``: nowhere)."""
    if not _DIRECTORY:
        root = os.environ.get("KENAZ_CACHE_DIR")
        if root is None:
            root = os.path.join(os.path.expanduser("~"), ".cache", "kenaz")
        directory = os.path.join(root, "fused") if root else None
        if directory is not None:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError:
                directory = None
            if directory is not None and not os.access(directory, os.W_OK):
                directory = None
        _DIRECTORY.append(directory)
    return _DIRECTORY[0]


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
