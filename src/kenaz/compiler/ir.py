"""A program's pieces: typed variables, constants, equations, and the program itself.

:mod:`kenaz.compiler.program` records them while tracing; the passes, the
interpreter, the code generator and the purity check read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..effects import Op
from ..graphing import Graph, GraphNode
from ..tensor import Tensor
from ..type_names import type_name

__all__ = ["Var", "Const", "Equation", "Program", "iterate_primitives"]


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
    last_reads : dict or None
        Set by :func:`kenaz.compiler.passes.optimize`: the index of the equation
        reading each variable last (``len(equations)`` for an output's), which
        the interpreter allocates its slots by. ``None``: not computed.
    plan : tuple or None
        Set by :func:`kenaz.compiler.passes.optimize`: the interpreter's plan of
        these equations (:func:`kenaz.compiler.interpreter.live_plan`), made in the
        walk that dropped the dead code. ``None``: :func:`~kenaz.compiler.interpreter.interpret`
        makes it.
    calls : bool or None
        Whether some equation is a call (has a ``body``): set by
        :func:`~kenaz.compiler.program.trace`, so that ``optimize`` need not look for
        one. ``None``: not known.
    distinct : bool or None
        ``True`` if no two equations apply the same op to the same operands and none is
        an identity op, as :func:`~kenaz.compiler.program.trace` notes while recording:
        :func:`~kenaz.compiler.passes.common_subexpressions` would find nothing to merge.
        ``False`` or ``None``: it may.

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
        self.last_reads: dict[int, int] | None = None
        self.plan: tuple | None = None
        self.calls: bool | None = None
        self.distinct: bool | None = None

    def with_equations(
        self, equations: list[Equation], outputs: list[Any] | None = None
    ) -> Program:
        """This program with other equations (a pass's result), and other outputs if given."""
        outputs = self.outputs if outputs is None else outputs
        return Program(
            self.name, self.inputs, self.captured, equations, outputs, self.in_tree, self.out_tree
        )

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
