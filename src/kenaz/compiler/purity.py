"""The purity check of ``jit``: trace a second time and compare the two programs.

A program bakes in whatever the function computed from things other than its
inputs: a draw from ``numpy.random``, a global that changed, ``time.time()``.
Reusing it would silently freeze that value. So on the second call of each
signature ``jit`` traces once more (:class:`CheckingTracer` notes where each
constant entered the program) and :func:`first_difference` compares the two
programs, constants included. A difference is reported with the first
constant (or op) that changed and the user's ``file:line`` that made it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import tree
from ..backend import is_backend_array, namespace
from ..effects import Op
from ..tensor import Tensor
from .program import Const, Equation, Program, Tracer, TracingHandler, Var
from .traced_errors import user_frame

__all__ = ["CheckingTracer", "first_difference"]


class CheckingTracer(TracingHandler):
    """A tracing handler that also records, for each equation with a constant operand,
    the user's ``file:line`` that performed it (so that a changed constant can be named).

    Only the check trace pays for the frame walk; an ordinary trace does not.
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.where: dict[int, str] = {}
        self._result: Any = None
        self._returned = False

    def watching(self, fun: Callable) -> Callable:
        """``fun``, keeping its result: :meth:`results` computes its tensors' values."""

        def watched(*args: Any, **kwargs: Any) -> Any:
            result = fun(*args, **kwargs)
            self._result, self._returned = result, True
            return result

        return watched

    def results(self) -> list[Any] | None:
        """The values of the watched function's tensor results (a check that passes returns
        them instead of running the program again): the trace's own ops, run now on its
        inputs' values. ``None`` if a result has no value here (a view, another trace's)."""
        if not self._returned:
            return None
        tensors = [leaf for leaf in tree.leaves(self._result) if isinstance(leaf, Tensor)]
        targets = []
        for leaf in tensors:
            if type(leaf) is Tracer and leaf._tracing is self:
                targets.append(leaf._var)
            elif type(leaf) is not Tensor or leaf._trace:
                return None
        self._compute(targets)
        return [self.value(t._var) if type(t) is Tracer else t._value for t in tensors]

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        equations = self.equations
        count = len(equations)
        result = super().handle(op, args, params)
        # A call swaps self.equations while it records its body: the list we saw is the one
        # that received this op's equation.
        if len(equations) > count:
            eq = equations[-1]
            if any(type(a) is Const for a in eq.inputs) or eq.body is not None:
                self.where[id(eq)] = user_frame(sys._getframe(1))
        return result


def first_difference(
    first: Program, second: Program, where: dict[int, str] | None = None
) -> str | None:
    """``None`` if the two programs are the same, constants included; else a description
    of the first difference (with the ``file:line`` recorded in ``where`` for ``second``)."""
    where = where or {}
    found = _equations_differ(first.equations, second.equations, where)
    if found is not None:
        return found
    if len(first.inputs) != len(second.inputs) or len(first.captured) != len(second.captured):
        return "the number of traced inputs changed"
    for a, b in zip(first.outputs, second.outputs, strict=False):
        same = _atoms_equal(a, b) if isinstance(a, (Var, Const)) else _same(a, b)
        if not same:
            return f"the returned value {_describe(a)} became {_describe(b)}"
    if len(first.outputs) != len(second.outputs) or first.out_tree != second.out_tree:
        return "the structure of the result changed"
    return None


def _equations_differ(
    first: Sequence[Equation], second: Sequence[Equation], where: dict[int, str]
) -> str | None:
    for a, b in zip(first, second, strict=False):
        at = where.get(id(b), "")
        if a.op.name != b.op.name or len(a.inputs) != len(b.inputs):
            return f"the op {a.op.name} became {b.op.name}{at}"
        for position, (x, y) in enumerate(zip(a.inputs, b.inputs, strict=True)):
            if not _atoms_equal(x, y):
                return (
                    f"the constant {_describe(x)}, operand {position} of {a.op.name}, "
                    f"became {_describe(y)}{at}"
                )
        if a.params.keys() != b.params.keys():
            return f"the parameters of {a.op.name} changed{at}"
        for key, value in a.params.items():
            if not _same(value, b.params[key]):
                return (
                    f"the parameter {key}={_describe(value)} of {a.op.name} became "
                    f"{_describe(b.params[key])}{at}"
                )
        if [(v.id, v.shape, v.dtype) for v in a.outputs] != [
            (v.id, v.shape, v.dtype) for v in b.outputs
        ]:
            return f"the outputs of {a.op.name} changed{at}"
        if (a.body is None) != (b.body is None):
            return f"the op {a.op.name} changed kind{at}"
        if a.body is not None:
            found = _equations_differ(a.body, b.body, where)  # type: ignore[arg-type]
            if found is not None:
                return found
    if len(first) != len(second):
        return f"the program had {len(first)} equations, now {len(second)}"
    return None


def _atoms_equal(a: Var | Const, b: Var | Const) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is Var:
        return (a.id, a.shape, a.dtype, a.weak) == (b.id, b.shape, b.dtype, b.weak)  # type: ignore[union-attr]
    return _same(a.value, b.value)  # type: ignore[union-attr]


def _same(a: Any, b: Any) -> bool:
    """Whether two constants or parameters are the same value (NaN equals NaN)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if is_backend_array(a):  # another library's array: compared in its namespace
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            return False
        return bool(namespace(a).all(a == b))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    code = getattr(a, "__code__", None)
    if code is not None:  # a function made anew at each trace (a lambda): the same code
        return code is getattr(b, "__code__", None)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object without a usable ==: only identity counts
        return False


def _describe(value: Any) -> str:
    if isinstance(value, Const):
        value = value.value
    if isinstance(value, Var):
        return f"{value}:{value.type_name}"
    if isinstance(value, np.ndarray) and value.size > 4:
        text = np.array2string(value.ravel()[:4], precision=4, separator=", ")
        return f"{value.dtype}{list(value.shape)} starting {text[:-1]}, ...]"
    text = repr(value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value)
    return text if len(text) <= 60 else text[:57] + "..."
