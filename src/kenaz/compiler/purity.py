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

import functools
import sys
from collections.abc import Callable, Sequence
from types import FunctionType, MethodType
from typing import Any

import numpy as np

from .. import tree
from ..backend import is_backend_array, namespace
from ..call import CallFunction, CallInfo
from ..effects import Handler, Op
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
            if type(leaf) is Tracer and leaf._tracing is self.trace:
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


_PARTS = 10_000  # how many parts of two objects made anew by each trace are compared at most


def _same(a: Any, b: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    """Whether two constants or parameters are the same value (NaN equals NaN).

    An object each trace makes anew (a call's :class:`~kenaz.call.CallInfo`, a
    ``custom_vjp`` made inside the function, a lambda) is the same if it is made of
    the same parts: the same code, and closure cells, fields and arguments that are
    the same in turn (a tracer the same variable of its trace). ``seen`` holds the
    pairs compared so far: one met again is taken as the same (a cycle, or shared).
    Past :data:`_PARTS` pairs, or for an object with no known parts, only identity
    counts: a difference there makes the function impure, never a stale value.
    """
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
    if seen is None:
        seen = set()
    pair = (id(a), id(b))
    if pair in seen:
        return True
    if len(seen) >= _PARTS:
        return False
    seen.add(pair)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], seen) for k in a)
    if isinstance(a, Tensor):
        return _same_tensor(a, b, seen)
    if isinstance(a, (CallInfo, CallFunction)):
        return _same_fields(a, b, seen)
    if isinstance(a, Handler) and type(a).__module__.startswith("kenaz."):
        # A transformation run inside the function (the tape a pullback closes over): what
        # it holds came from the ops of its trace, which the programs compare.
        return True
    if isinstance(a, FunctionType):  # a function made anew at each trace (a lambda)
        return (
            a.__code__ is b.__code__
            and _same(a.__defaults__, b.__defaults__, seen)
            and _same(a.__kwdefaults__, b.__kwdefaults__, seen)
            and _same_cells(a.__closure__, b.__closure__, seen)
        )
    if isinstance(a, MethodType):
        return a.__func__ is b.__func__ and _same(a.__self__, b.__self__, seen)
    if isinstance(a, functools.partial):
        return (
            _same(a.func, b.func, seen)
            and _same(a.args, b.args, seen)
            and _same(a.keywords, b.keywords, seen)
        )
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object without a usable ==: only identity counts
        return False


def _same_tensor(a: Tensor, b: Tensor, seen: set) -> bool:
    """A tracer of each trace: the same variable; plain tensors: the same value."""
    if type(a) is Tracer:
        return _atoms_equal(a._var, b._var)  # type: ignore[attr-defined]
    if type(a) is Tensor:
        return _same(a._value, b._value, seen)
    return False  # a view or a tracked tensor of a transformation: only identity counts


def _same_cells(a: tuple | None, b: tuple | None, seen: set) -> bool:
    if a is None or b is None:
        return a is b
    if len(a) != len(b):
        return False
    return all(_same(_contents(x), _contents(y), seen) for x, y in zip(a, b, strict=True))


_EMPTY = object()  # an empty cell's contents (a name bound later): the same as another's


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


# A call's derived op and the function's metadata follow from the fields compared.
_SKIPPED_FIELDS = frozenset({"op", "discovered", "__wrapped__", "__doc__", "__annotations__"})


def _same_fields(a: Any, b: Any, seen: set) -> bool:
    """Two calls' infos, or two custom functions made by each trace: field by field."""
    fields = [
        name
        for name in (*getattr(type(a), "__slots__", ()), *getattr(a, "__dict__", ()))
        if name not in _SKIPPED_FIELDS
    ]
    for name in fields:
        missing = object()
        if not _same(getattr(a, name, missing), getattr(b, name, missing), seen):
            return False
    return getattr(b, "__dict__", {}).keys() == getattr(a, "__dict__", {}).keys()


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
