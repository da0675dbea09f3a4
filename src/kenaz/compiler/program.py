"""Programs: the ops of one run of a function, recorded as a flat list of equations.

``make_program(f)(*args)`` runs ``f`` once under a *tracing handler*. Every
input becomes a :class:`Tracer`, a tensor that knows its shape and dtype but
refuses to give its value to Python. Each op performed on tracers is recorded
as an :class:`Equation` (primitive, inputs, params, outputs) over typed
:class:`Var` s (:mod:`kenaz.compiler.ir`), by *abstract evaluation*: the
results' shapes and dtypes come from :mod:`kenaz.compiler.abstract`, and no
arithmetic runs on the arrays. An op without such a rule runs on the real
values of its operands, computed on demand from the inputs' values (see
:meth:`TracingHandler.value`). An op on constants only is simply computed
(constant folding at trace time). Transformations inside ``f`` are traced
through: they perform their ops outward, so the program of ``grad(f)`` holds
the forward and the backward primitives.

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
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import tree
from ..backend import is_backend_array, numpy_dtype
from ..effects import Handler, Op, handler, no_handlers, perform_args, reset_stack, set_stack
from ..errors import EscapedTracerError, explain_backend_error
from ..ops.elementwise import alias, stop_gradient
from ..tensor import Tensor, _make, holds_tensor
from ..transform import gc_pause
from ..vectorize import BatchedTensor
from .abstract import remember_types, rule_of, rules_seen, types_seen
from .ir import Const, Equation, Program, Var, iterate_primitives
from .traced_errors import traced_value_error

__all__ = [
    "Var",
    "Const",
    "Equation",
    "Program",
    "Trace",
    "Tracer",
    "TracingHandler",
    "make_program",
    "trace",
    "replay",
]

_new = object.__new__
_ndarray = np.ndarray
_FLOAT64 = np.dtype(float)
_WEAK_FLOAT = ((), _FLOAT64, float)  # a Python float operand's (shape, dtype, weak)
_MISSING = object()
_NUMBERS = frozenset({bool, int, float, complex})
# A trace pauses the cyclic garbage collector once it has made this many variables.
_PAUSE_GC_AT = 500


# -- tracers ---------------------------------------------------------------------------------
class Trace:
    """What a tracer knows of its trace: the handler recording it, and its name.

    ``handler`` is ``None`` once the trace has finished. A tracer can outlive its
    trace: a function a compiled program keeps (a ``custom_vjp``'s, ``fixed_point``'s,
    for its rules under a transformation) may close over one. It then keeps only
    this, not the handler with its equations and the values it computed.
    """

    __slots__ = ("handler", "name")

    def __init__(self, handler: TracingHandler, name: str) -> None:
        self.handler: TracingHandler | None = handler
        self.name = name

    def escaped(self, tracer: Tracer) -> EscapedTracerError:
        """The error for using ``tracer`` after this trace finished."""
        return EscapedTracerError(
            f"kenaz.jit: a traced tensor ({tracer._var.type_name}) of {self.name!r} was "
            "used after its trace finished, e.g. because it was stored in a global "
            "variable or a closure; return it from the function instead"
        )


class Tracer(Tensor):
    """A tensor being traced: shape and dtype known, value not available to Python.

    ``_var`` is its program variable and ``_tracing`` the :class:`Trace` it belongs
    to. ``_concrete`` (for kenaz's own use) is its real value: the one it was traced
    with for an input, else computed on demand from the inputs by running the
    ops it depends on (:meth:`TracingHandler.value`); a finished trace has none.
    ``shape``, ``dtype`` and ``ndim`` are its variable's, in slots of their own: the
    transformations a trace runs read them a few times per op (:func:`_tracer`).
    """

    __slots__ = ("_var", "_tracing", "shape", "dtype", "ndim")  # type: ignore[misc]

    @property
    def _value(self) -> Any:  # shadows Tensor's slot: every unwrap of a tracer raises
        handler = self._tracing.handler
        if handler is None:
            raise self._tracing.escaped(self)
        raise handler.value_error(self, sys._getframe(1))

    @property
    def _concrete(self) -> Any:
        handler = self._tracing.handler
        if handler is None:
            raise self._tracing.escaped(self)
        return handler.value(self._var)

    @property
    def size(self) -> int:
        return math.prod(self._var.shape)

    def __repr__(self) -> str:
        alive = self._tracing.handler is not None
        state = "being traced" if alive else "escaped from a finished trace"
        return f"Tracer({self._var}:{self._var.type_name}, {state} in {self._tracing.name!r})"


def _tracer(var: Var, trace: Trace) -> Tracer:
    """A new tracer of ``var`` in ``trace`` (TracingHandler.handle inlines it)."""
    t = _new(Tracer)
    t._var = var
    t._tracing = trace
    t._trace = None
    t.shape = shape = var.shape
    t.dtype = var.dtype
    t.ndim = len(shape)
    return t


# A tracer is a leaf: the transformations' flattening (their arguments and outputs are
# tracers while a function is traced) and the trace's own take it without optree.
tree.register_leaf_type(Tracer)


def example_value(x: Tensor) -> Any:
    """A concrete value with the shape and dtype of ``x`` (its own when it has one).

    A ``vmap`` view gives its first example; a tracer its real value (computed
    now if the trace has not needed it yet).
    """
    if type(x) is Tracer:
        return x._concrete
    if type(x) is BatchedTensor:
        batched = example_value(x._batched)
        if np.shape(batched)[x._batch_axis] > 0:
            return np.take(batched, 0, axis=x._batch_axis)
        return np.zeros(x.shape, x.dtype)
    return x._value


def _lazy(x: Tensor) -> bool:
    """Whether ``x``'s example value is better not computed before it is needed (a tracer's
    or a ``vmap`` view's over one: ops would have to run for it); its shape is at hand."""
    while type(x) is BatchedTensor:
        x = x._batched
    return type(x) is Tracer


class TracingHandler(Handler):
    """Records every op performed on its tracers as an equation (see the module doc).

    Tracing is abstract: an op is recorded with the shapes and dtypes of its
    results (:func:`kenaz.compiler.abstract.result_types`), not run. An op
    without such a rule runs on the real values of its operands, which
    :meth:`value` computes from the inputs on demand (as do ``_concrete`` reads:
    a custom rule's discovery run, a solver's steps). Inputs on another library's
    arrays trace on real values throughout, as their library promotes dtypes.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.alive = True
        self.trace = trace = _new(Trace)  # what its tracers refer to (`Trace(self, name)`)
        trace.handler = self
        trace.name = name
        self.abstract = True
        self.equations: list[Equation] = []
        self.inputs: list[Var] = []
        self.captured: list[tuple[Var, Tensor]] = []
        self._captured_ids: dict[int, Tracer] = {}
        self._count = 0
        self._values: dict[int, Any] = {}  # variable id -> real value, where known
        self._pending: dict[int, Tensor] = {}  # variable id -> the tensor whose example it is
        # Variable id -> the primitive making it, made when a value is first computed (see
        # `_producer_map`): the equations recorded so far, by list (id -> (list, how many).
        self._producers: dict[int, Equation] = {}
        self._indexed: dict[int, tuple[list[Equation], int]] = {}
        self._outer: list[list[Equation]] = []  # the lists a call's body interrupts
        self.computed = False  # whether some op ran on real values (one without a rule...)
        self.calls = False  # whether it recorded a call (an equation with a body)
        # Whether two equations may compute the same thing (common_subexpressions would
        # merge them): each one-result equation keyed by its op and operands in `_keys`,
        # where a repeat, or any other equation (an identity op, one run on real values, one
        # with several results), sets it. The parameters are not keyed: the same op on the
        # same operands with other parameters counts as a repeat (it may not be one).
        self.repeats = False
        self._keys: dict[tuple, int] = {}
        # Variables made before the cyclic collector is paused (see `_long`): `trace` sets it.
        self._pause_at = sys.maxsize
        self.paused = False  # whether it paused the collector

    # -- variables and tracers -------------------------------------------------------------
    def new_var(self, value: Any, weak: type | None = None) -> Var:
        if type(value) is np.ndarray or isinstance(value, np.generic):
            var = Var(self._count, value.shape, value.dtype, weak)  # the common case, fast
        elif is_backend_array(value):  # another library's array: traced on it, as it is
            var = Var(self._count, tuple(value.shape), numpy_dtype(value.dtype), weak)
            self.abstract = False
        else:
            var = Var(self._count, tuple(np.shape(value)), np.result_type(value), weak)
        self._count += 1
        return var

    def tracer(self, var: Var) -> Tracer:
        return _tracer(var, self.trace)

    def _known(self, value: Any, weak: type | None = None) -> Var:
        """A variable for a real value (kept for :meth:`value`)."""
        var = self.new_var(value, weak)
        self._values[var.id] = value
        return var

    def _standing_for(self, x: Tensor) -> Var:
        """A variable for a tensor with no value at hand: ``x``'s example, computed if needed."""
        if type(x) is Tracer:
            other = x._tracing.handler
            if other is not None and not other.abstract:
                self.abstract = False
        var = Var(self._count, tuple(x.shape), np.dtype(x.dtype))
        self._count += 1
        self._pending[var.id] = x
        return var

    def input(self, value: Any) -> Any:
        """A tracer for an input leaf (a Tensor, an array or a Python number)."""
        weak = None
        if type(value) is Tensor:  # the common case: its value is at hand
            value = value._value
            if type(value) is np.ndarray:  # `_known` and `tracer`, inlined: once per input
                count = self._count
                self._count = count + 1
                var = _new(Var)  # `Var(...)`, without its __init__'s call
                var.id = count
                var.shape = shape = value.shape
                var.dtype = value.dtype
                var.weak = None
                self._values[count] = value
                self.inputs.append(var)
                t = _new(Tracer)
                t._var = var
                t._tracing = self.trace
                t._trace = None
                t.shape = shape
                t.dtype = var.dtype
                t.ndim = len(shape)
                return t
        elif isinstance(value, Tensor):
            if _lazy(value):
                var = self._standing_for(value)
                self.inputs.append(var)
                return self.tracer(var)
            value = example_value(value)
        elif type(value) in (bool, int, float, complex):
            weak = type(value)
        elif not is_backend_array(value):
            value = np.asarray(value)
        var = self._known(value, weak)
        self.inputs.append(var)
        return self.tracer(var)

    def capture(self, x: Tensor) -> Tracer:
        """The tracer standing for a closed-over tensor that must stay a variable."""
        found = self._captured_ids.get(id(x))
        if found is None:
            var = self._standing_for(x) if _lazy(x) else self._known(example_value(x))
            self.captured.append((var, x))
            found = self._captured_ids[id(x)] = self.tracer(var)
        return found

    # -- real values, on demand ------------------------------------------------------------------
    def value(self, var: Var) -> Any:
        """The real value of ``var``: known, or computed now from the inputs' values by
        running the recorded ops it depends on (once: the result is kept)."""
        found = self._values.get(var.id, _MISSING)
        if found is _MISSING:
            self._compute([var])
            found = self._values[var.id]
        return found

    def _compute(self, targets: Sequence[Var]) -> None:
        """Compute the values of ``targets``: the ops they depend on, in program order,
        each intermediate freed after its last read (only the targets are kept)."""
        values, pending, producers = self._values, self._pending, self._producer_map()
        needed: dict[int, Equation] = {}  # by the id of its first output: program order
        stack = [v.id for v in targets]
        while stack:  # a walk, not recursion: a chain of a million ops is fine
            vid = stack.pop()
            if vid in values:
                continue
            tensor = pending.pop(vid, None)
            if tensor is not None:
                values[vid] = example_value(tensor)
                continue
            eq = producers[vid]
            order = eq.outputs[0].id
            if order not in needed:
                needed[order] = eq
                stack.extend(a.id for a in eq.inputs if type(a) is Var)
        reads: dict[int, int] = {}
        for eq in needed.values():
            for a in eq.inputs:
                if type(a) is Var:
                    reads[a.id] = reads.get(a.id, 0) + 1
        keep = {v.id for v in targets}
        self.computed = True
        made: set[int] = set()  # computed here: freed after their last read unless targets
        with no_handlers():  # implementations on plain values: nothing to record
            for order in sorted(needed):
                eq = needed[order]
                args = [values[a.id] if type(a) is Var else a.value for a in eq.inputs]
                result = eq.op.impl(*args, **eq.params)
                for var, r in zip(eq.outputs, result if eq.multiple else (result,), strict=True):
                    values[var.id] = r
                    made.add(var.id)
                for a in eq.inputs:
                    if type(a) is Var:
                        left = reads[a.id] = reads[a.id] - 1
                        if not left and a.id in made and a.id not in keep:
                            del values[a.id]

    def _producer_map(self) -> dict[int, Equation]:
        """Variable id -> the primitive making it, for every equation recorded so far (those
        of calls' bodies too): kept up to date here, where it is needed, rather than at every
        op. Each list of equations (the program's, the bodies being recorded) is indexed
        from where the last look stopped (a list only grows while it is recorded)."""
        producers = self._producers
        indexed = self._indexed
        for equations in (*self._outer, self.equations):
            found = indexed.get(id(equations))
            start = 0 if found is None else found[1]
            if start < len(equations):
                for eq in iterate_primitives(equations[start:]):
                    for var in eq.outputs:
                        producers[var.id] = eq
                indexed[id(equations)] = (equations, len(equations))  # (kept: its id stays)
        return producers

    def _record(self, op: Op, inputs: list[Var | Const], params: dict, outputs: list[Var]) -> None:
        self.equations.append(Equation(op, inputs, params, outputs, op.multiple_results))
        self.repeats = True  # (not keyed: see `repeats`)

    # -- recording -------------------------------------------------------------------------
    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        trace = self.trace
        types = None
        inputs: list[Var | Const]
        key = None  # the op's key in `types_seen`, if its operands make one
        same = None  # the equation's key among the trace's (see `repeats`), if it has one
        if self.abstract:
            # The common ops: one tracer of this trace (with or without parameters), or two
            # operands without parameters, each a tracer or a plain tensor constant of NumPy's
            # (one a tracer). Their result types depend on the operands' shapes and dtypes
            # (and the parameters) alone, and are remembered by those: no operand loop, no
            # rule asked (see `abstract.types_seen`).
            count = len(args)
            if count == 1:
                a = args[0]
                if type(a) is Tracer and a._tracing is trace:
                    x = a._var
                    if op is alias and not params:
                        # An alias of a tracer (a transformation giving its input a fresh
                        # identity) is a fresh tracer of the same variable (`_tracer`,
                        # inlined): the identity is the Python object's, and the program
                        # has no equation to drop later (optimize would forward it).
                        t = _new(Tracer)
                        t._var = x
                        t._tracing = trace
                        t._trace = None
                        t.shape = shape = x.shape
                        t.dtype = x.dtype
                        t.ndim = len(shape)
                        return t
                    inputs = [x]
                    same = (op, x.id)
                    if params:
                        key = (op, x.shape, x.dtype, x.weak, *params.items())
                        try:
                            types = types_seen.get(key)
                        except TypeError:  # an unhashable parameter: not remembered
                            key = None
                    else:
                        key = (op, x.shape, x.dtype, x.weak)
                        types = types_seen.get(key)
            elif count == 2 and not params:
                # Each operand's (shape, dtype, weak) as three names (a tuple displayed with
                # `*` costs a list), and its key as the pass keys it.
                a, b = args
                kind = type(a)
                if kind is Tracer and a._tracing is trace:
                    x = a._var
                    shape, dtype, weak = x.shape, x.dtype, x.weak
                    first_id = x.id
                    traced = True
                elif kind is Tensor and not a._trace and type(a._value) is _ndarray:
                    x = _new(Const)  # `Const(a._value)`, without its __init__'s call
                    x.value = value = a._value
                    shape, dtype, weak = value.shape, value.dtype, None
                    first_id = ~id(value)  # (a constant by identity, as the pass keys it)
                    traced = False
                elif kind is _ndarray:  # a closed-over NumPy array
                    x = _new(Const)
                    x.value = a
                    shape, dtype, weak = a.shape, a.dtype, None
                    first_id = ~id(a)
                    traced = False
                elif kind is float:  # `2.0 * x`: typed as a weak float variable would be
                    x = _new(Const)
                    x.value = a
                    shape, dtype, weak = _WEAK_FLOAT
                    first_id = (float, a)  # (a number by value, as the pass keys it)
                    traced = False
                elif kind is int:  # `2 * x`: typed by its value too (see `x * 2` below)
                    x = _new(Const)
                    x.value = a
                    shape, dtype, weak = int, a, None
                    first_id = (int, a)
                    traced = False
                else:
                    x = None
                kind = type(b)
                if x is None:
                    pass
                elif kind is Tracer and b._tracing is trace:
                    y = b._var
                    key = (op, shape, dtype, weak, y.shape, y.dtype, y.weak)
                    same = (op, first_id, y.id)
                elif traced and kind is Tensor and not b._trace and type(b._value) is _ndarray:
                    y = _new(Const)
                    y.value = value = b._value
                    key = (op, shape, dtype, weak, value.shape, value.dtype, None)
                    same = (op, first_id, ~id(value))
                elif traced and kind is _ndarray:
                    y = _new(Const)
                    y.value = b
                    key = (op, shape, dtype, weak, b.shape, b.dtype, None)
                    same = (op, first_id, ~id(b))
                elif traced and kind is float:  # `x * 2.0`
                    y = _new(Const)
                    y.value = b
                    key = (op, shape, dtype, weak, (), _FLOAT64, float)
                    same = (op, first_id, (float, b))
                elif traced and kind is int:  # `x * 2`: typed by its value too (NEP 50
                    y = _new(Const)  # checks that it fits the array's integer dtype)
                    y.value = b
                    key = (op, shape, dtype, weak, int, b, None)
                    same = (op, first_id, (int, b))
                if key is not None:
                    inputs = [x, y]
                    types = types_seen.get(key)
        if types is None:  # any other op: its operands told apart, its rule asked
            if op is stop_gradient:  # an identity op: the pass forwards it (and never
                same = None  # remembers its types, so it is always told here)
            if op is alias and len(args) == 1 and not params:  # (a trace on real values)
                x = args[0]
                if type(x) is Tracer and x._tracing is trace:
                    return _tracer(x._var, trace)
            inputs = []
            traced = False
            for a in args:
                kind = type(a)
                if kind is Tracer and a._tracing is trace:
                    inputs.append(a._var)
                    traced = True
                elif kind in _NUMBERS:  # `x * 2.0`: the common constant, told first
                    const = _new(Const)  # `Const(a)`, without its __init__'s call
                    const.value = a
                    inputs.append(const)
                elif kind is Tensor and not a._trace:  # a plain constant (a closed-over one)
                    const = _new(Const)
                    const.value = a._value
                    inputs.append(const)
                elif isinstance(a, Tensor):
                    if _must_capture(a):
                        inputs.append(self.capture(a)._var)
                        traced = True
                    else:  # a plain constant
                        inputs.append(Const(a._value))
                else:
                    if isinstance(a, (list, tuple)) and holds_tensor(a):
                        raise TypeError(
                            f"kenaz.{op.name}: got a {type(a).__name__} of Tensors where an "
                            "array was expected; while tracing pass a single Tensor "
                            "(kenaz.numpy.stack or kenaz.numpy.array)"
                        )
                    inputs.append(Const(a))
            if not traced:  # constant folding: nothing here depends on the inputs
                return perform_args(op, args, params)
            if params:
                for name, value in params.items():
                    if isinstance(value, Tensor):
                        raise TypeError(
                            f"kenaz.{op.name}: parameter {name!r} is a Tensor; while tracing, "
                            "parameters must be static Python values"
                        )
            if self.abstract:
                rule = rules_seen.get(op, _MISSING)
                if rule is _MISSING:
                    rule = rule_of(op)
                if rule is not None:
                    try:
                        types = rule(op, inputs, params)
                    except Exception:  # noqa: BLE001 - no rule fits: the real run says why
                        types = None
            if types is None or len(types) != 1 or op.multiple_results:
                # Run on the real values, or several results: not inlined (the run costs far
                # more than the calls).
                return self._record_others(op, inputs, params, types)
            if key is not None and same is not None:  # (`same`: not an identity op)
                remember_types(key, rule, types, len(inputs))
        # One result, the common case (and every remembered one): `Var(...)`,
        # `Equation(...)` and `_tracer`, inlined (calling a class with an __init__ costs
        # about as much as all its stores).
        shape, dtype = types[0]
        count = self._count
        self._count = count + 1
        var = _new(Var)
        var.id = count
        var.shape = shape
        var.dtype = dtype
        var.weak = None
        eq = _new(Equation)
        eq.op = op
        eq.inputs = inputs
        eq.params = params
        eq.outputs = [var]
        eq.multiple = False
        eq.body = None
        eq.closes_over = False
        self.equations.append(eq)
        if not self.repeats and (same is None or self._keys.setdefault(same, count) != count):
            self.repeats = True  # (a new key maps to this equation's first variable id)
        if count >= self._pause_at:
            self._long()
        t = _new(Tracer)
        t._var = var
        t._tracing = trace
        t._trace = None
        t.shape = shape
        t.dtype = dtype
        t.ndim = len(shape)
        return t

    def _record_others(self, op: Op, inputs: list[Var | Const], params: dict, types: Any) -> Any:
        """Record an op with several results (of ``types``), or run it on the real values
        (``types`` is None) and record it with those: :meth:`handle`'s rare paths."""
        multiple = op.multiple_results
        if types is None:  # run on the real values
            self.computed = True
            values = _real_values(self, inputs)
            try:
                result = op.impl(*values, **params)
            except ValueError as error:
                raise explain_backend_error(op.name, tuple(values), error) from None
            outputs = _known_all(self, result if multiple else (result,))
        else:
            count = self._count
            outputs = _new_vars(count, types)
            self._count = count + len(outputs)
        self.equations.append(Equation(op, inputs, params, outputs, multiple))
        self.repeats = True  # (not keyed: see `repeats`)
        if self._count >= self._pause_at:
            self._long()
        if multiple:
            return _tracers(outputs, self.trace)
        return _tracer(outputs[0], self.trace)

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
        self._outer.append(outer)
        try:
            with handler(self):
                outs = op.run(args, params)
                if not op.multiple_results:
                    outs = (outs,)
                body = self.equations
                defined = {v.id for eq in iterate_primitives(body) for v in eq.outputs}
                results = []
                for o in outs:  # every output must be defined by the body: pass-throughs aliased
                    if not (
                        type(o) is Tracer and o._tracing is self.trace and o._var.id in defined
                    ):
                        o = self.alias_of(o)
                        defined.add(o._var.id)
                    results.append(o)
        finally:
            self.equations = outer
            self._outer.pop()
        inputs = [self._atom(x) for x in args]
        outputs = [o._var for o in results]
        eq = Equation(op, inputs, params, outputs, op.multiple_results, body=body)
        self.calls = True
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
        if type(atom) is Const:
            var = self._known(atom.value)
        else:
            var = Var(self._count, atom.shape, atom.dtype)
            self._count += 1
        self._record(alias, [atom], {}, [var])
        return self.tracer(var)

    def _atom(self, x: Any) -> Var | Const:
        if type(x) is Tracer and x._tracing is self.trace:
            return x._var
        if isinstance(x, Tensor):
            return self.capture(x)._var if _must_capture(x) else Const(x._value)
        return Const(x)

    def _long(self) -> None:
        """The trace has grown long: pause the cyclic collector until it ends (``trace``
        resumes it). A long trace allocates many small objects and frees none, so the
        collector's passes find nothing (see ``gc_paused``); a short one never starts a
        pass, and pausing costs as much as tracing an op or two."""
        self._pause_at = sys.maxsize
        self.paused = True
        gc_pause.__enter__()

    # -- errors ------------------------------------------------------------------------------
    def value_error(self, tracer: Tracer, frame: Any) -> Exception:
        """The error for asking ``tracer`` for a concrete value (``frame`` asked)."""
        if not self.alive:
            return self.trace.escaped(tracer)
        # Where it was asked, found now (the frames move on); the text, when it is read.
        return traced_value_error(self.name, tracer._var, frame)


# The comprehensions of `TracingHandler.handle`'s rare paths, as functions: a comprehension
# in its body would make the names it reads cells, which every call creates and reads
# through (CPython 3.11), on the common path too.
def _real_values(tracing: TracingHandler, inputs: list[Var | Const]) -> list[Any]:
    return [tracing.value(a) if type(a) is Var else a.value for a in inputs]


def _known_all(tracing: TracingHandler, results: Sequence[Any]) -> list[Var]:
    return [tracing._known(r) for r in results]


def _new_vars(count: int, types: Sequence[tuple[tuple[int, ...], Any]]) -> list[Var]:
    return [Var(count + k, shape, dtype) for k, (shape, dtype) in enumerate(types)]


def _tracers(outputs: list[Var], trace: Trace) -> tuple[Tracer, ...]:
    return tuple([_tracer(v, trace) for v in outputs])


def _runs_a_function(op: Op) -> bool:
    """Whether a call op's implementation runs its function (``custom_vjp``, ``checkpoint``,
    ``jit``): then a trace records the function's ops. A call with an implementation of its
    own (``cumprod``: NumPy's, its function only for derivatives) is traced as a primitive."""
    owner = getattr(op.impl, "__self__", None)
    return owner is op or getattr(owner, "inline_when_traced", False)


def _is_own(x: Any, tracing: TracingHandler) -> bool:
    """Whether ``x`` is a tracer of ``tracing``'s trace."""
    return type(x) is Tracer and x._tracing is tracing.trace


def _is_traced(x: Any, tracing: TracingHandler) -> bool:
    if _is_own(x, tracing):
        return True
    return isinstance(x, Tensor) and _must_capture(x)


def _must_capture(x: Tensor) -> bool:
    """A closed-over tensor stays a variable when some transformation may track it, or when
    it has no single value (a vmap view, another trace's tracer)."""
    return type(x) is not Tensor or bool(x._trace)


# -- tracing -------------------------------------------------------------------------------
def trace(
    f: Callable,
    args: tuple,
    kwargs: dict,
    static: dict[Any, Any] | None = None,
    name: str = "",
    tracing: TracingHandler | None = None,
    flat: tuple[list, Any] | None = None,
) -> Program:
    """Trace ``f(*args, **kwargs)`` into a :class:`Program`.

    Every argument leaf is traced except the positions or names in ``static``
    (whose values are passed as they are), and leaves that are neither tensors,
    arrays nor numbers (``None``, strings, callables), which are kept as they are.
    The trace runs with no other handler installed, so the program is the
    function alone, whatever transformation it is called under. ``tracing``
    is a fresh handler to record with (jit's purity check passes one that
    notes where constants come from). ``flat``: the leaves and structure of the
    dynamic arguments, if the caller has flattened them already (``jit`` has).
    """
    static = static or {}
    if tracing is None:
        tracing = TracingHandler(name or getattr(f, "__name__", type(f).__name__))
    if flat is None:
        flat = tree.flatten(dynamic_arguments(args, kwargs, static) if static else (args, kwargs))
    leaves, in_tree = flat
    traced_leaves = []  # (loops, not comprehensions: those would make cells of their names)
    for x in leaves:
        traced_leaves.append(tracing.input(x) if type(x) is Tensor or is_traceable(x) else x)
    traced_args, traced_kwargs = tree.unflatten(in_tree, traced_leaves)
    call_args, call_kwargs = traced_args, traced_kwargs
    if static:
        call_args = list(traced_args)
        for i in sorted(k for k in static if isinstance(k, int)):
            call_args.insert(i, static[i])
        call_kwargs = {**traced_kwargs, **{k: v for k, v in static.items() if isinstance(k, str)}}
    # The tracing handler alone: the program is the function's, whatever runs around it.
    # The stack is set and restored directly, not by `no_handlers()` and `handler(...)`: a
    # trace of a few ops paid more for those two objects than for an op. The collector is
    # paused once the trace is long (`TracingHandler._long`).
    tracing._pause_at = _PAUSE_GC_AT
    token = set_stack((None, tracing))
    try:
        result = f(*call_args, **call_kwargs)
        out_leaves, out_tree = tree.flatten(result)
        this = tracing.trace
        outputs = []
        for o in out_leaves:
            if type(o) is Tracer and o._tracing is this:
                outputs.append(o._var)
            else:
                outputs.append(tracing._atom(o) if isinstance(o, Tensor) else o)
    finally:
        if tracing.paused:
            gc_pause.__exit__()
        tracing._pause_at = sys.maxsize
        reset_stack(token)
        tracing.alive = False
        tracing.trace.handler = None  # a tracer kept past the trace keeps no handler alive
    program = Program(
        tracing.name,
        tracing.inputs,
        tracing.captured,
        tracing.equations,
        outputs,
        in_tree,
        out_tree,
    )
    program.calls = tracing.calls
    program.distinct = not tracing.repeats
    return program


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
