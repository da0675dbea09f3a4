"""Programs: the ops of one run of a function, recorded as a flat list of equations.

``make_program(f)(*args)`` runs ``f`` once under a *tracing handler*. Every
input becomes a :class:`Tracer`, a tensor that knows its shape and dtype (and,
privately, the value it was traced with) but refuses to give its value to
Python. Each op performed on tracers is run on those values and recorded as an
:class:`Equation` (primitive, inputs, params, outputs) over typed
:class:`Var` s; an op on constants only is simply computed (constant folding
at trace time). Transformations inside ``f`` are traced through: they perform
their ops outward, so the program of ``grad(f)`` holds the forward and the
backward primitives.

A call (a :class:`~kenaz.call.Call` op: ``custom_jvp``, ``custom_vjp``,
``checkpoint``, an inner ``jit``) is recorded as one *call* equation holding
the equations of the function it runs: compiled code runs those, and
:func:`replay` under a transformation performs the call itself, so the
transformation applies the call's own rules.

What tracing means for the user (as in JAX):

- Reading the value of a traced input (``bool``, ``float``, ``int``, an ``if``
  on it, ``.numpy()``, using it as a shape) raises
  :class:`~kenaz.errors.ConcretizationError` naming the function, the line
  and the fixes: ``static_argnums``, ``kenaz.numpy.where``, or not tracing.
- Python side effects (``print``, appending to a list, drawing from NumPy's
  global random generator) happen once, while tracing, not when the
  program runs.
- Tensors and arrays the function closes over become constants of the
  program, with the value they had when it was traced.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import tree
from ..backend import is_backend_array, numpy_dtype
from ..effects import Handler, Op, handler, no_handlers, perform_args
from ..errors import ConcretizationError, EscapedTracerError, explain_backend_error
from ..graphing import Graph, GraphNode
from ..ops.elementwise import alias
from ..tensor import Tensor, _make, holds_tensor
from ..transform import gc_paused
from ..type_names import type_name
from ..vectorize import BatchedTensor

__all__ = [
    "Var",
    "Const",
    "Equation",
    "Program",
    "Tracer",
    "TracingHandler",
    "make_program",
    "trace",
    "replay",
]

_new = object.__new__
# The kenaz package (this module sits in kenaz/compiler/): frames in it are not the user's.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


# -- the program's pieces --------------------------------------------------------------------
class Var:
    """A typed variable of a program: the value of an input or of an equation's output.

    ``weak`` is the Python type (``float``, ``int``...) of an input passed as a
    Python number, which keeps NumPy's weak-scalar promotion; ``None`` for arrays.
    """

    __slots__ = ("id", "shape", "dtype", "weak")

    def __init__(self, id: int, shape: tuple[int, ...], dtype: np.dtype, weak: type | None = None):
        self.id = id
        self.shape = shape
        self.dtype = dtype
        self.weak = weak

    @property
    def type_name(self) -> str:
        """``float64[3,4]``: the dtype and the shape (``float`` for a weak scalar)."""
        if self.weak is not None:
            return self.weak.__name__
        return type_name(self.dtype, self.shape)

    def __repr__(self) -> str:
        return f"v{self.id}"


class Const:
    """A constant operand: an array or number baked into the program, or a non-tensor
    argument of an op (an index, a slice, an axis)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        value = self.value
        if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) > 0:
            return f"const:{type_name(value.dtype, value.shape)}"
        if isinstance(value, np.generic):
            return repr(value.item())
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."


class Equation:
    """``outputs = op(*inputs, **params)``.

    ``inputs`` are :class:`Var` or :class:`Const`; ``multiple`` says the op
    returns a tuple. A *call* equation (a :class:`~kenaz.call.Call` op:
    ``custom_jvp``, ``custom_vjp``, ``checkpoint``, an inner ``jit``) has a
    ``body``, the equations of the function it runs, which define its outputs.
    """

    __slots__ = ("op", "inputs", "params", "outputs", "multiple", "body", "closes_over")

    def __init__(
        self,
        op: Op,
        inputs: list[Var | Const],
        params: dict[str, Any],
        outputs: list[Var],
        multiple: bool,
        body: list[Equation] | None = None,
    ) -> None:
        self.op = op
        self.inputs = inputs
        self.params = params
        self.outputs = outputs
        self.multiple = multiple
        self.body = body
        self.closes_over = False

    def format(self, indent: str = "  ") -> list[str]:
        """The equation as text lines (a call shows its body below it)."""
        outs = ", ".join(f"{v}:{v.type_name}" for v in self.outputs)
        args = [repr(a) for a in self.inputs]
        if self.body is None:
            args += [f"{k}={_short(v)}" for k, v in self.params.items()]
        lines = [f"{indent}{outs} = {self.op.name}({', '.join(args)})"]
        if self.body is not None:
            lines[0] += " {"
            for eq in self.body:
                lines.extend(eq.format(indent + "    "))
            lines.append(f"{indent}}}")
        return lines


class Program:
    """A flat list of equations over typed variables, with pytree inputs and outputs.

    Attributes
    ----------
    name : str
        The traced function's name.
    inputs : list of Var
        One per traced leaf of the arguments (static arguments are not inputs).
    captured : list of (Var, Tensor)
        Tensors the function closes over that an outer transformation tracks
        (or that have no single value, such as a ``vmap`` view): they stay
        variables so that the transformation still sees them.
    equations : list of Equation
    outputs : list
        One per leaf of the result: a :class:`Var`, a :class:`Const`, or a
        non-tensor leaf kept as it is.
    in_tree, out_tree
        The structures of the traced arguments and of the result.

    ``str(program)`` prints one equation per line, and :meth:`graph` draws it.
    """

    def __init__(
        self,
        name: str,
        inputs: list[Var],
        captured: list[tuple[Var, Tensor]],
        equations: list[Equation],
        outputs: list[Any],
        in_tree: Any,
        out_tree: Any,
    ) -> None:
        self.name = name
        self.inputs = inputs
        self.captured = captured
        self.equations = equations
        self.outputs = outputs
        self.in_tree = in_tree
        self.out_tree = out_tree

    def with_captured_as_inputs(self) -> tuple[Program, list[Tensor]]:
        """This program with its captured tensors as trailing inputs, and those tensors.

        The result is a function of its inputs alone (no structures: replay it on
        leaves), which rules can differentiate, batch and compile again.
        """
        inputs = [*self.inputs, *[v for v, _ in self.captured]]
        closed = Program(self.name, inputs, [], self.equations, self.outputs, None, None)
        return closed, [x for _, x in self.captured]

    def primitive_count(self) -> int:
        """The number of primitive equations, those inside calls included."""
        return sum(1 for _ in iterate_primitives(self.equations))

    def __len__(self) -> int:
        return len(self.equations)

    def __str__(self) -> str:
        head = ", ".join(f"{v}:{v.type_name}" for v in self.inputs)
        if self.captured:
            head += " | captured " + ", ".join(f"{v}:{v.type_name}" for v, _ in self.captured)
        lines = [f"program {self.name}({head}) {{"]
        for eq in self.equations:
            lines.extend(eq.format())
        outs = ", ".join(
            repr(o) if isinstance(o, (Var, Const)) else _short(o) for o in self.outputs
        )
        lines.append(f"  return ({outs})")
        lines.append("}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Program {self.name}: {len(self.inputs)} inputs, {len(self.equations)} equations>"

    def graph(self) -> Any:
        """The program as a :class:`kenaz.graphing.Graph` (``.to_dot()``, ``.render(path)``)."""
        drawing = Graph(name=self.name)
        producer: dict[int, int] = {}

        def node(kind: str, label: str, detail: str = "") -> int:
            drawing.nodes.append(GraphNode(len(drawing.nodes), kind, label, detail=detail))
            return len(drawing.nodes) - 1

        for i, v in enumerate(self.inputs):
            producer[v.id] = node("input", f"input {i}", v.type_name)
        for v, _ in self.captured:
            producer[v.id] = node("constant", f"captured {v}", v.type_name)
        for eq in iterate_primitives(self.equations):
            target = node("op", eq.op.name, ", ".join(v.type_name for v in eq.outputs))
            for position, a in enumerate(eq.inputs):
                if isinstance(a, Var) and a.id in producer:
                    drawing.edges.append((producer[a.id], target, str(position)))
            for v in eq.outputs:
                producer[v.id] = target
        for i, out in enumerate(self.outputs):
            target = node("output", f"output {i}")
            if isinstance(out, Var) and out.id in producer:
                drawing.edges.append((producer[out.id], target, ""))
        return drawing


def iterate_primitives(equations: Sequence[Equation]):
    """The primitive equations in execution order, the bodies of calls spliced in."""
    for eq in equations:
        if eq.body is None:
            yield eq
        else:
            yield from iterate_primitives(eq.body)


def _short(value: Any) -> str:
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return str(np.dtype(value))
    return repr(Const(value))


# -- tracers ---------------------------------------------------------------------------------
class Tracer(Tensor):
    """A tensor being traced: shape and dtype known, value not available to Python.

    ``_concrete`` is the value it was traced with (ops run on it, so tracing
    is one ordinary run of the function), ``_var`` its program variable and
    ``_tracing`` the handler that owns it.
    """

    __slots__ = ("_concrete", "_var", "_tracing")

    @property
    def _value(self) -> Any:  # shadows Tensor's slot: every unwrap of a tracer raises
        raise self._tracing.value_error(self, sys._getframe(1))

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.shape

    @property
    def dtype(self) -> np.dtype:
        return self._var.dtype

    @property
    def ndim(self) -> int:
        return len(self._var.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._var.shape))

    def __repr__(self) -> str:
        state = "being traced" if self._tracing.alive else "escaped from a finished trace"
        return f"Tracer({self._var}:{self._var.type_name}, {state} in {self._tracing.name!r})"


# What each way of asking for a value is called in the error.
_ASKED_BY = {
    "__bool__": "bool() (an `if`, `while`, `and`, `or` or `not` on it)",
    "__float__": "float()",
    "__int__": "int()",
    "__complex__": "complex()",
    "__index__": "its use as an int (an index, a shape, a range)",
    "numpy": ".numpy()",
    "__array__": "numpy.asarray() (a NumPy function called on it)",
    "item": ".item()",
    "tolist": ".tolist()",
    "_plain_argument": "its use as a shape or a fill value",
}


def example_value(x: Tensor) -> Any:
    """A concrete value with the shape and dtype of ``x`` (its own when it has one).

    A ``vmap`` view gives its first example; a tracer the value it was traced with.
    """
    if type(x) is Tracer:
        return x._concrete
    if type(x) is BatchedTensor:
        batched = example_value(x._batched)
        if np.shape(batched)[x._batch_axis] > 0:
            return np.take(batched, 0, axis=x._batch_axis)
        return np.zeros(x.shape, x.dtype)
    return x._value


class TracingHandler(Handler):
    """Records every op performed on its tracers as an equation (see the module doc)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.alive = True
        self.equations: list[Equation] = []
        self.inputs: list[Var] = []
        self.captured: list[tuple[Var, Tensor]] = []
        self._captured_ids: dict[int, Tracer] = {}
        self._count = 0

    # -- variables and tracers -------------------------------------------------------------
    def new_var(self, value: Any, weak: type | None = None) -> Var:
        if type(value) is np.ndarray or isinstance(value, np.generic):
            var = Var(self._count, value.shape, value.dtype, weak)  # the common case, fast
        elif is_backend_array(value):  # another library's array: traced on it, as it is
            var = Var(self._count, tuple(value.shape), numpy_dtype(value.dtype), weak)
        else:
            var = Var(self._count, tuple(np.shape(value)), np.result_type(value), weak)
        self._count += 1
        return var

    def tracer(self, var: Var, value: Any) -> Tracer:
        t = _new(Tracer)
        t._concrete = value
        t._var = var
        t._tracing = self
        t._trace = None
        return t

    def input(self, value: Any) -> Any:
        """A tracer for an input leaf (a Tensor, an array or a Python number)."""
        weak = None
        if isinstance(value, Tensor):
            value = example_value(value)
        elif type(value) in (bool, int, float, complex):
            weak = type(value)
        elif not is_backend_array(value):
            value = np.asarray(value)
        var = self.new_var(value, weak)
        self.inputs.append(var)
        return self.tracer(var, value)

    def capture(self, x: Tensor) -> Tracer:
        """The tracer standing for a closed-over tensor that must stay a variable."""
        found = self._captured_ids.get(id(x))
        if found is None:
            value = example_value(x)
            var = self.new_var(value)
            self.captured.append((var, x))
            found = self._captured_ids[id(x)] = self.tracer(var, value)
        return found

    # -- recording -------------------------------------------------------------------------
    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        inputs: list[Var | Const] = []
        values: list[Any] = []
        traced = False
        for a in args:
            if isinstance(a, Tensor):
                if type(a) is not Tracer or a._tracing is not self:
                    if not _must_capture(a):  # a plain constant
                        inputs.append(Const(a._value))
                        values.append(a._value)
                        continue
                    a = self.capture(a)
                inputs.append(a._var)
                values.append(a._concrete)
                traced = True
            else:
                if isinstance(a, (list, tuple)) and holds_tensor(a):
                    raise TypeError(
                        f"kenaz.{op.name}: got a {type(a).__name__} of Tensors where an array "
                        "was expected; while tracing pass a single Tensor (kenaz.numpy.stack "
                        "or kenaz.numpy.array)"
                    )
                inputs.append(Const(a))
                values.append(a)
        if not traced:  # constant folding: nothing here depends on the inputs
            return perform_args(op, args, params)
        for key, value in params.items():
            if isinstance(value, Tensor):
                raise TypeError(
                    f"kenaz.{op.name}: parameter {key!r} is a Tensor; while tracing, parameters "
                    "must be static Python values"
                )
        try:
            result = op.impl(*values, **params)
        except ValueError as error:
            raise explain_backend_error(op.name, args, error) from None
        if op.multiple_results:
            outs = [self.tracer(self.new_var(r), r) for r in result]
            self.equations.append(Equation(op, inputs, params, [o._var for o in outs], True))
            return tuple(outs)
        out = self.tracer(self.new_var(result), result)
        self.equations.append(Equation(op, inputs, params, [out._var], False))
        return out

    def handle_call(self, op: Any, args: tuple, params: dict) -> Any:
        """A call: one equation whose body holds the equations of the function it runs.

        A call with an implementation of its own (``cumprod``, a ``custom_root``'s
        solve) is recorded as a primitive instead.
        """
        if not _runs_a_function(op):
            return self.handle(op, args, params)
        if not any(_is_traced(x, self) for x in args):
            return perform_args(op, args, params)  # constants only: fold (the stack is outside us)
        outer, self.equations = self.equations, []
        try:
            with handler(self):
                outs = op.run(args, params)
                if not op.multiple_results:
                    outs = (outs,)
                body = self.equations
                defined = {v.id for eq in iterate_primitives(body) for v in eq.outputs}
                results = []
                for o in outs:  # every output must be defined by the body: pass-throughs aliased
                    if not (type(o) is Tracer and o._tracing is self and o._var.id in defined):
                        o = self.alias_of(o)
                        defined.add(o._var.id)
                    results.append(o)
        finally:
            self.equations = outer
        inputs = [self._atom(x) for x in args]
        outputs = [o._var for o in results]
        eq = Equation(op, inputs, params, outputs, op.multiple_results, body=body)
        known = {v.id for v in inputs if isinstance(v, Var)} | defined | {o.id for o in outputs}
        eq.closes_over = any(
            isinstance(a, Var) and a.id not in known
            for inner in iterate_primitives(body)
            for a in inner.inputs
        )
        self.equations.append(eq)
        return tuple(results) if op.multiple_results else results[0]

    def alias_of(self, x: Any) -> Tracer:
        """A new variable equal to ``x`` (an input, a capture or a constant), by an ``alias``."""
        atom = self._atom(x)
        value = atom.value if type(atom) is Const else self._concrete_of(x)
        out = self.tracer(self.new_var(value), value)
        self.equations.append(Equation(alias, [atom], {}, [out._var], False))
        return out

    def _concrete_of(self, x: Any) -> Any:
        if type(x) is Tracer and x._tracing is self:
            return x._concrete
        return self.capture(x)._concrete

    def _atom(self, x: Any) -> Var | Const:
        if type(x) is Tracer and x._tracing is self:
            return x._var
        if isinstance(x, Tensor):
            return self.capture(x)._var if _must_capture(x) else Const(x._value)
        return Const(x)

    # -- errors ------------------------------------------------------------------------------
    def value_error(self, tracer: Tracer, frame: Any) -> Exception:
        """The error for asking ``tracer`` for a concrete value (``frame`` asked)."""
        what = f"a traced tensor ({tracer._var.type_name})"
        if not self.alive:
            return EscapedTracerError(
                f"kenaz.jit: {what} of {self.name!r} was used after its trace finished, e.g. "
                "because it was stored in a global variable or a closure; return it from the "
                "function instead"
            )
        asked_by = _asked_by(frame)
        where = _user_frame(frame)
        return ConcretizationError(
            f"kenaz.jit: {self.name!r} asked for the concrete value of {what} through "
            f"{asked_by}{where}. While a function is traced its inputs stand for every value "
            "of their shape and dtype, so Python cannot branch on them or read them. Fixes: "
            "make that argument static (kenaz.jit(f, static_argnums=...) or static_argnames), "
            "express the choice with kenaz.numpy.where, or do not jit this function."
        )


def _runs_a_function(op: Op) -> bool:
    """Whether a call op's implementation runs its function (``custom_vjp``, ``checkpoint``,
    ``jit``): then a trace records the function's ops. A call with an implementation of its
    own (``cumprod``: NumPy's, its function only for derivatives) is traced as a primitive."""
    owner = getattr(op.impl, "__self__", None)
    return owner is op or getattr(owner, "inline_when_traced", False)


def _is_traced(x: Any, tracing: TracingHandler) -> bool:
    if type(x) is Tracer and x._tracing is tracing:
        return True
    return isinstance(x, Tensor) and _must_capture(x)


def _must_capture(x: Tensor) -> bool:
    """A closed-over tensor stays a variable when some transformation may track it, or when
    it has no single value (a vmap view, another trace's tracer)."""
    return type(x) is not Tensor or bool(x._trace)


def _asked_by(frame: Any) -> str:
    """How the value was asked for: the innermost kenaz frame that names it (``__bool__``...)."""
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        found = _ASKED_BY.get(frame.f_code.co_name)
        if found is not None:
            return found
        frame = frame.f_back
    return "reading its value"


def _user_frame(frame: Any) -> str:
    """`` at file.py:12 in loss``: the innermost frame outside kenaz and NumPy."""
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith((_PACKAGE_DIR, _NUMPY_DIR)):
            return f" at {frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"
        frame = frame.f_back
    return ""


# -- tracing -------------------------------------------------------------------------------
def trace(
    f: Callable,
    args: tuple,
    kwargs: dict,
    static: dict[Any, Any] | None = None,
    name: str = "",
    tracing: TracingHandler | None = None,
) -> Program:
    """Trace ``f(*args, **kwargs)`` into a :class:`Program`.

    Every argument leaf is traced except the positions or names in ``static``
    (whose values are passed as they are), and leaves that are neither tensors,
    arrays nor numbers (``None``, strings, callables), which are kept as they are.
    The trace runs with no other handler installed, so the program is the
    function alone, whatever transformation it is called under. ``tracing``
    is a fresh handler to record with (jit's purity check passes one that
    notes where constants come from).
    """
    static = static or {}
    if tracing is None:
        tracing = TracingHandler(name or getattr(f, "__name__", type(f).__name__))
    leaves, in_tree = tree.flatten(dynamic_arguments(args, kwargs, static))
    traced_leaves = [tracing.input(x) if is_traceable(x) else x for x in leaves]
    traced_args, traced_kwargs = tree.unflatten(in_tree, traced_leaves)
    call_args = list(traced_args)
    for i in sorted(k for k in static if isinstance(k, int)):
        call_args.insert(i, static[i])
    call_kwargs = {**traced_kwargs, **{k: v for k, v in static.items() if isinstance(k, str)}}
    try:
        # The tracing handler alone: the program is the function's, whatever runs around it.
        # (A trace allocates many small objects and frees none: see gc_paused.)
        with no_handlers(), handler(tracing), gc_paused():
            result = f(*call_args, **call_kwargs)
            out_leaves, out_tree = tree.flatten(result)
            outputs = [tracing._atom(o) if isinstance(o, Tensor) else o for o in out_leaves]
    finally:
        tracing.alive = False
    return Program(
        tracing.name,
        tracing.inputs,
        tracing.captured,
        tracing.equations,
        outputs,
        in_tree,
        out_tree,
    )


def is_traceable(x: Any) -> bool:
    """Whether an argument leaf becomes a traced input (tensors, arrays of any backend, numbers)."""
    if isinstance(x, (Tensor, np.ndarray, np.generic)) or type(x) in (bool, int, float, complex):
        return True
    return is_backend_array(x)


def static_argument_names(
    static_argnums: int | Sequence[int], static_argnames: str | Sequence[str]
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """``static_argnums`` and ``static_argnames`` as tuples (a lone int or name is one).

    Parameters
    ----------
    static_argnums : int or sequence of int
        Positions of the static arguments.
    static_argnames : str or sequence of str
        Names of the static keyword arguments.

    Returns
    -------
    tuple
        ``(nums, names)``, both tuples.
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    return nums, names


def dynamic_arguments(args: tuple, kwargs: dict, static: dict[Any, Any]) -> tuple[tuple, dict]:
    """``(args, kwargs)`` without the static ones (``static``'s keys: positions and names).

    What is left is traced: :func:`trace` flattens it into the program's inputs,
    and ``jit`` into the leaves its cache key and compiled program read.

    Parameters
    ----------
    args, kwargs : tuple, dict
        A call's arguments.
    static : dict
        The static arguments, by position (normalized, as :func:`static_arguments`
        gives them) or by name.

    Returns
    -------
    tuple
        ``(dynamic_args, dynamic_kwargs)``.
    """
    return (
        tuple(a for i, a in enumerate(args) if i not in static),
        {k: v for k, v in kwargs.items() if k not in static},
    )


def static_arguments(
    args: tuple, kwargs: dict, static_argnums: Sequence[int], static_argnames: Sequence[str]
) -> dict[Any, Any]:
    """The static arguments of a call, by position (normalized) or name."""
    static: dict[Any, Any] = {}
    for i in static_argnums:
        position = i + len(args) if i < 0 else i
        if 0 <= position < len(args):
            static[position] = args[position]
    for name in static_argnames:
        if name in kwargs:
            static[name] = kwargs[name]
    return static


def make_program(
    f: Callable, static_argnums: int | Sequence[int] = (), static_argnames: Sequence[str] = ()
) -> Callable[..., Program]:
    """``make_program(f)(*args)``: the :class:`Program` of one run of ``f`` on ``args``.

    Parameters
    ----------
    f : callable
        A function of pytrees of tensors, arrays and numbers. Transformations
        inside it are traced through.
    static_argnums, static_argnames : optional
        Arguments passed as they are instead of traced (Python values that
        control flow or shapes depend on).

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> print(kenaz.make_program(lambda x: knp.sin(x) * 2.0)(knp.ones(3)))
    program <lambda>(v0:float64[3]) {
      v1:float64[3] = sin(v0)
      v2:float64[3] = mul(v1, 2.0)
      return (v2)
    }
    """
    nums, names = static_argument_names(static_argnums, static_argnames)

    @functools.wraps(f)
    def program_of(*args: Any, **kwargs: Any) -> Program:
        return trace(f, args, kwargs, static_arguments(args, kwargs, nums, names))

    return program_of


# -- replay: running a program on tensors, through perform ---------------------------------
def replay(program: Program, leaves: Sequence[Any]) -> list[Any]:
    """Run ``program`` on the traced input leaves by performing each equation's op.

    Every installed transformation sees the ops (and the custom calls, whose
    rules it applies), so this is how a traced function runs under ``grad``,
    ``vmap``, ``jvp`` or ``debug``. Returns the output leaves.
    """
    env: dict[int, Any] = {}
    for var, x in zip(program.inputs, leaves, strict=True):
        env[var.id] = x
    for var, x in program.captured:
        env[var.id] = x
    _run_equations(program.equations, env, program.name)
    return [_read(o, env) if isinstance(o, (Var, Const)) else o for o in program.outputs]


def _read(atom: Var | Const, env: dict[int, Any]) -> Any:
    return atom.value if type(atom) is Const else env[atom.id]


def _run_equations(equations: Sequence[Equation], env: dict[int, Any], name: str) -> None:
    for eq in equations:
        args = [_read(a, env) for a in eq.inputs]
        if eq.body is not None:
            if eq.closes_over:
                raise NotImplementedError(
                    f"kenaz.jit: {name!r} calls {eq.op.name}, whose function closes over a "
                    "tensor traced outside it; under a transformation kenaz cannot rerun that "
                    "call with its rule. Pass that tensor as an argument of the custom function."
                )
        outs = perform_args(eq.op, tuple(args), eq.params)
        if not eq.multiple:
            outs = (outs,)
        for var, value in zip(eq.outputs, outs, strict=True):
            env[var.id] = value


def wrap_outputs(program: Program, values: Sequence[Any]) -> Any:
    """The function's result from its output leaves' values (arrays become Tensors)."""
    leaves = [
        _as_output(v) if isinstance(o, (Var, Const)) else o
        for o, v in zip(program.outputs, values, strict=True)
    ]
    return tree.unflatten(program.out_tree, leaves)


def _as_output(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return _make(value)
    return Tensor(value)  # a Python number passed straight through
