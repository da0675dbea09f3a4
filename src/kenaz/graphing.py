"""``graph(f)(*args)``: a picture of the ops one call performs.

A recording handler, installed outermost, sees every op that reaches it:
the forward pass, and, when ``f`` is a transformed function such as
``grad(g)``, the backward pass too (transformations perform their
backward arithmetic outward, and mark it with a ``": backward"`` scope). Each
tensor it has seen carries a record at the recorder's level naming the node
that produced it, so edges follow the data.

The result renders to Graphviz DOT text with no dependency, and to SVG or
PNG with the optional ``graphviz`` package (``pip install kenaz[graph]``) or
the ``dot`` program.
"""

from __future__ import annotations

import functools
import inspect
import shutil
import subprocess
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import tree
from .effects import Handler, Op, current_scopes, fresh_level, handler, perform_args, read_scopes
from .ops.elementwise import alias
from .tensor import Tensor
from .type_names import type_name

__all__ = ["graph", "Graph", "GraphNode"]

_HIDDEN_PARAMS = {"spec", "call"}


@dataclass
class GraphNode:
    """One node: an op, an input, a constant or an output."""

    id: int
    kind: str  # "op", "input", "constant" or "output"
    label: str
    phase: str = "forward"  # "forward" or "backward" (ops only)
    detail: str = ""  # shapes and dtypes


@dataclass
class Graph:
    """The ops of one call, as nodes and edges; renders to DOT, SVG and PNG.

    Attributes
    ----------
    nodes : list of GraphNode
    edges : list of (source id, target id, label)
    result : Any
        What the function returned.
    """

    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[int, int, str]] = field(default_factory=list)
    result: Any = None
    name: str = "kenaz"

    def ops(self, phase: str | None = None) -> list[GraphNode]:
        """The op nodes, in execution order (only those of ``phase`` if given)."""
        return [n for n in self.nodes if n.kind == "op" and phase in (None, n.phase)]

    def to_dot(self) -> str:
        """The graph in Graphviz's DOT language."""
        lines = [
            f"digraph {_quote(self.name)} {{",
            "  rankdir=TB;",
            '  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled", '
            'fillcolor="#ffffff"];',
            '  edge [fontname="Helvetica", fontsize=8, color="#555555"];',
        ]
        by_kind: dict[str, list[GraphNode]] = {}
        for node in self.nodes:
            key = node.phase if node.kind == "op" else node.kind
            by_kind.setdefault(key, []).append(node)
        for node in by_kind.get("input", []) + by_kind.get("constant", []):
            lines.append("  " + _node_statement(node))
        for phase, color in (("forward", "#e8f0fe"), ("backward", "#fdeee8")):
            members = by_kind.get(phase, [])
            if not members:
                continue
            lines.append(f"  subgraph cluster_{phase} {{")
            lines.append(f'    label="{phase} pass"; style="filled"; color="{color}";')
            lines.extend("    " + _node_statement(node) for node in members)
            lines.append("  }")
        for node in by_kind.get("output", []):
            lines.append("  " + _node_statement(node))
        for source, target, label in self.edges:
            attributes = f' [label="{label}"]' if label else ""
            lines.append(f"  n{source} -> n{target}{attributes};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    @property
    def source(self) -> str:
        """The DOT text (as ``graphviz.Source.source``)."""
        return self.to_dot()

    def pipe(self, format: str = "svg") -> bytes:  # noqa: A002 - graphviz's name
        """Render with Graphviz and return the bytes (``format``: svg, png, pdf, ...)."""
        try:
            import graphviz
        except ImportError:
            graphviz = None
        if graphviz is not None:
            try:
                return graphviz.Source(self.to_dot()).pipe(format=format)
            except graphviz.ExecutableNotFound:
                pass
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError(
                "kenaz.graph: rendering needs Graphviz's `dot` program (e.g. `apt-get install "
                "graphviz` or `brew install graphviz`); `.to_dot()` works without it"
            )
        done = subprocess.run(
            [dot, f"-T{format}"], input=self.to_dot().encode(), capture_output=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"kenaz.graph: dot failed: {done.stderr.decode().strip()}")
        return done.stdout

    def render(self, path: str | Path, format: str | None = None) -> Path:  # noqa: A002
        """Write the picture to ``path``; the format defaults to its suffix (``.png``, ``.svg``)."""
        path = Path(path)
        format = format or path.suffix.lstrip(".") or "svg"
        path.write_bytes(self.pipe(format))
        return path

    def _repr_svg_(self) -> str | None:  # Jupyter shows the picture when it can
        try:
            return self.pipe("svg").decode()
        except RuntimeError:
            return None

    def __repr__(self) -> str:
        forward, backward = len(self.ops("forward")), len(self.ops("backward"))
        return f"Graph({forward} forward ops, {backward} backward ops)"


_STYLE = {
    "input": 'fillcolor="#c6dbef"',
    "constant": 'fillcolor="#eeeeee", style="rounded,filled,dashed"',
    "output": 'fillcolor="#c7e9c0", shape=ellipse',
    "op": "",
}


def _node_statement(node: GraphNode) -> str:
    label = node.label + (f"\\n{node.detail}" if node.detail else "")
    style = _STYLE[node.kind]
    return f'n{node.id} [label="{_escape(label)}"{", " + style if style else ""}];'


def _escape(text: str) -> str:
    return text.replace('"', '\\"')


def _quote(text: str) -> str:
    return '"' + _escape(text) + '"'


def _describe(x: Any) -> str:
    if isinstance(x, tuple):
        return ", ".join(_describe(v) for v in x)
    if isinstance(x, Tensor):
        return type_name(x.dtype, x.shape)
    return type(x).__name__


def _short(value: Any) -> str:
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return f"{value:.4g}" if isinstance(value, float) else repr(value)
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


class GraphRecorder(Handler):
    """Records each op it sees as a node, with edges from the nodes that made its arguments."""

    def __init__(self, collapse: Collection[str] = ("alias",)) -> None:
        self.level = fresh_level()
        self.collapse = set(collapse)
        self.graph = Graph()
        self.base_depth = len(read_scopes(self))
        self.marked: list[Tensor] = []  # tensors not made here that got a record, to clean up

    def _new_node(self, kind: str, label: str, phase: str = "forward", detail: str = "") -> int:
        node = GraphNode(len(self.graph.nodes), kind, label, phase, detail)
        self.graph.nodes.append(node)
        return node.id

    def _mark(self, x: Tensor, record: Any) -> None:
        if x._trace is None:
            x._trace = {self.level: record}
        else:
            x._trace[self.level] = record

    def input(self, x: Tensor, name: str) -> Tensor:
        """A fresh identity for an argument of the recorded function, as an input node."""
        watched = alias(x)
        self._mark(watched, (self._new_node("input", name, detail=_describe(x)), None))
        return watched

    def _source(self, x: Tensor) -> tuple[int, int | None]:
        record = x._trace.get(self.level) if x._trace is not None else None
        if record is None:  # made outside the function: a constant
            label = _short(x.item()) if x.size == 1 and type(x) is Tensor else "constant"
            record = (self._new_node("constant", label, detail=_describe(x)), None)
            self._mark(x, record)
            self.marked.append(x)
        return record

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        out = perform_args(op, args, params)
        if op.name in self.collapse and isinstance(args[0], Tensor):
            self._mark(out, self._source(args[0]))  # plumbing: the output is its input
            return out
        scopes = current_scopes()[self.base_depth :]
        phase = "backward" if any(s.endswith(": backward") for s in scopes) else "forward"
        extras = [_short(a) for a in args if not isinstance(a, Tensor)]
        extras += [
            f"{k}={_short(v)}"
            for k, v in params.items()
            if k not in _HIDDEN_PARAMS and v is not None and v is not False
        ]
        label = op.name + (f" ({', '.join(extras)})" if extras else "")
        node = self._new_node("op", label, phase, _describe(out))
        for position, a in enumerate(args):
            if isinstance(a, Tensor):
                source, index = self._source(a)
                edge_label = "" if index is None else f"[{index}]"
                if len(args) > 1 and op.name in _ORDERED:
                    edge_label = edge_label or str(position)
                self.graph.edges.append((source, node, edge_label))
        if op.multiple_results:
            for index, o in enumerate(out):
                self._mark(o, (node, index))
        else:
            self._mark(out, (node, None))
        return out

    def finish(self, result: Any) -> Graph:
        """Add output nodes for ``result``'s leaves and drop the records left on tensors."""
        for index, leaf in enumerate(tree.leaves(result)):
            if not isinstance(leaf, Tensor):
                continue
            source, which = self._source(leaf)
            node = self._new_node("output", f"output {index}", detail=_describe(leaf))
            self.graph.edges.append((source, node, "" if which is None else f"[{which}]"))
            self.marked.append(leaf)
        self.forget()
        self.graph.result = result
        return self.graph

    def forget(self) -> None:
        """Drop this recorder's records from tensors that outlive the call (constants, outputs)."""
        for x in self.marked:
            if x._trace is not None:
                x._trace.pop(self.level, None)
        self.marked.clear()


# Ops whose argument order matters enough to label the edges.
_ORDERED = {"sub", "div", "pow", "matmul", "einsum", "where", "atan2", "remainder"}


def graph(
    f: Callable, *, name: str | None = None, collapse: Collection[str] = ("alias",)
) -> Callable[..., Graph]:
    """Record the ops of one call of ``f`` as a graph.

    ``graph(f)(*args)`` runs ``f(*args)`` once and returns a :class:`Graph`
    of the ops performed: inputs, constants, ops and outputs, with the
    forward and backward passes in separate boxes when ``f`` is a
    transformed function (``grad(loss)``). ``Graph.to_dot()`` gives Graphviz
    text; ``Graph.render("g.png")`` and ``Graph.pipe("svg")`` draw it with
    the optional ``graphviz`` package or the ``dot`` program.

    Parameters
    ----------
    f : callable
        The function to record, transformed or not.
    name : str, optional
        The graph's name in the DOT text (``f``'s name by default).
    collapse : collection of str, optional
        Ops drawn as a plain edge, not a node: by default ``alias``, with
        which transformations give their inputs fresh identities.

    Returns
    -------
    callable
        ``recorded(*args, **kwargs) -> Graph``; ``Graph.result`` holds
        ``f``'s return value.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> g = kenaz.graph(kenaz.grad(lambda x: knp.sum(knp.sin(x) * x)))(knp.ones(3))
    >>> len(g.ops("backward")) > 0
    True
    >>> [n.label for n in g.ops("forward")]
    ['sin', 'mul', 'sum (axis=(0,))']
    >>> print(g.to_dot().splitlines()[0])
    digraph "<lambda>" {
    """

    try:
        parameter_names = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        parameter_names = []

    @functools.wraps(f)
    def recorded(*args: Any, **kwargs: Any) -> Graph:
        recorder = GraphRecorder(collapse)
        recorder.graph.name = name or getattr(f, "__name__", "kenaz")
        inputs = []
        for position, arg in enumerate(args):
            arg_name = parameter_names[position] if position < len(parameter_names) else None
            arg_name = arg_name or f"arg{position}"
            leaves, structure = tree.flatten(arg)
            labels = [arg_name] if len(leaves) == 1 else [
                f"{arg_name}[{i}]" for i in range(len(leaves))
            ]
            watched = [
                recorder.input(leaf if isinstance(leaf, Tensor) else Tensor(leaf), label)
                if isinstance(leaf, (Tensor, np.ndarray, float, int, complex))
                and not isinstance(leaf, bool)
                else leaf
                for leaf, label in zip(leaves, labels)
            ]
            inputs.append(tree.unflatten(structure, watched))
        try:
            with handler(recorder):
                result = f(*inputs, **kwargs)
        except BaseException:
            recorder.forget()
            raise
        return recorder.finish(result)

    return recorded
