"""Effects and handlers: the mechanism every transformation is built on.

Every tensor operation *performs an effect*: ``perform(op, *args, **params)``.
With no handler installed the op runs straight on NumPy. Otherwise the
innermost handler's ``handle`` (``handle_call`` for a call: an op that runs a
function) is called with the stack set to the handlers outside it, so whatever
the handler performs (the primal op, tangent or cotangent arithmetic) goes one
level out. That "deep handler" rule is the whole composition story:
``grad(grad(f))``, ``vmap(grad(f))``, ``debug(grad(f))`` need no special cases.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import types
import weakref
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from numpy import ndarray  # globals: `np.ndarray` is a slow read (module __getattr__)

from .backend import NUMPY_TYPES, ArrayLikeArgument, numpy_array_like
from .errors import explain_backend_error
from .rule_tables import each_argument, rule_table, saves_table
from .tensor import Tensor, _make

__all__ = [
    "Op",
    "Handler",
    "perform",
    "perform_args",
    "handler",
    "no_handlers",
    "handlers_installed",
    "current_handlers",
    "fresh_level",
    "run_in",
    "enter_phase",
    "leave_phase",
    "read_scopes",
    "each_argument",
    "identity",
    "plain_ops_recorded",
]

# The handler stack, in a ContextVar so threads and asyncio tasks never see each
# other's handlers. It is a linked list of immutable pairs: None when empty, else
# `(stack outside, innermost handler)`, so that handing an op to the innermost
# handler with the stack set to the ones outside it is one unpacking, with no
# tuple to build for every op. None rather than `()`: the eager paths' test
# `stack is not None` is one opcode, where the truth of a tuple is a C call (about 40
# machine instructions less per op).
Stack = tuple | None  # None or (Stack, Handler)
_handlers: ContextVar[Stack] = ContextVar("kenaz_handlers", default=None)

installed_stack = _handlers.get
"""The handler stack now (None when no handler is installed), read in one call: for the
eager fast paths that test for handlers themselves (:mod:`kenaz.operators`)."""
set_stack = _handlers.set
"""Set the handler stack (returns a token for :data:`reset_stack`): for the fast paths that
hand an op to the innermost handler themselves, as ``perform_args`` does, without its frame."""
reset_stack = _handlers.reset
"""Restore the handler stack that :data:`set_stack` replaced."""

_levels = itertools.count(1)
_new_object = object.__new__


# `fresh_level()` returns a new, never reused, level number for a handler's tensor
# records: the counter's own `__next__`, called in C (every transformation call takes one).
fresh_level: Callable[[], int] = _levels.__next__


class _StatedSignature:
    """``Op.__signature__``: the signature an op's ``keywords`` hook states (NumPy's, for a
    ufunc), else None, as on the class itself (``inspect`` then reads ``__call__``)."""

    def __get__(self, op: Any, owner: Any = None) -> Any:
        return None if op is None else getattr(op.keywords, "signature", None)


class Op:
    """A primitive operation: a name, a NumPy implementation and its rules.

    Parameters
    ----------
    name : str
        Name shown in errors and by ``debug``.
    impl : callable
        The implementation: ``impl(*arrays, **params)`` on the arrays of any
        backend kenaz runs on (NumPy, and Array API libraries: see
        ``kenaz.backend``).
    numpy_impl : callable or None, optional
        A faster implementation for NumPy values only (arrays, NumPy scalars,
        Python numbers), such as the bare ufunc ``np.sin``; with no handler it
        runs instead of ``impl`` when the op's one array argument is one
        (``jit``'s compiled code uses it for every op). It must equal ``impl``
        there. Defaults to ``impl.numpy_impl`` when the
        implementation names one (``kenaz.ops.elementwise.neutral_unary``'s
        do), else None: ``impl`` serves every backend.
    jvp : sequence of callables, ``each_argument(rule)`` or None, optional
        One entry per positional argument: ``rule(tangent, ans, *args, **params)``
        returns that argument's contribution to the output tangent. ``None``
        marks an argument with zero derivative (indices, conditions).
    vjp : sequence of callables, ``each_argument(rule)`` or None, optional
        One entry per positional argument: ``maker(ans, *args, **params)`` is
        called during the forward pass and returns ``pullback(cotangent)``.
        Python closures keep only the names they use, so a maker chooses its
        residuals by what it references. A maker whose argument passes through
        unchanged returns :func:`identity`, which the backward pass skips.
        Either table may be omitted: the other is transposed into it (a jvp
        rule is linear in the tangent, a pullback in the cotangent), to any
        order of derivative.
    saves : sequence of tuples of ints, ``each_argument(rule)`` or None, optional
        What each argument's derivative rule reads, so what its pullback
        keeps: one tuple per positional argument, of argument positions
        (``-1`` for the output ``ans``, ``slice(k, None)`` for arguments ``k``
        on, as a variadic op's index arrays); ``()`` (or a missing entry) for
        nothing. ``mul``'s is ``[(1,), (0,)]``, ``exp``'s ``[(-1,)]``,
        ``add``'s ``[]``. The tape keeps these with each entry, so that an
        in-place change to one of them before the backward pass is caught
        (:mod:`kenaz.mutation`). None (the default) means the rule may read
        the output and every argument.
    batch : callable or None, optional
        ``rule(op, args, axes, **params) -> (out, out_axis)`` for ``vmap``:
        ``args`` are the batched values one level out and ``axes[i]`` is the
        batch axis of ``args[i]`` or ``None``.
    differentiable : bool, optional
        ``False`` for ops whose output never carries a derivative
        (comparisons, ``argmax``, ``floor``): transformations treat the
        output as a constant.
    multiple_results : bool, optional
        ``impl`` returns a tuple of arrays and the op a tuple of tensors
        (``eigh``, ``svd``). Then ``ans`` in the rules is that tuple, a jvp
        rule returns a tuple of tangents (``None`` for an output without
        one) and a pullback receives a tuple of cotangents (zeros filled in).
    forward : callable or None, optional
        A *joint* forward-mode rule, used instead of ``jvp`` (and without
        running ``impl`` first): ``forward(primals, tangents, **params) ->
        (out, tangent_out)``. ``tangents`` has one entry per argument,
        ``None`` for an argument without a tangent; ``tangent_out`` is shaped
        like ``out`` (a tuple for multiple results, ``None`` entries allowed).
    reverse : callable or None, optional
        A *joint* reverse-mode rule, used instead of ``vjp`` (and without
        running ``impl`` first): ``reverse(args, **params) -> (out,
        pullback)``, where ``pullback(cotangent)`` returns one cotangent per
        argument (``None`` for zero). It receives what a ``vjp`` pullback
        receives: a tensor, or for multiple results a tuple.

    Notes
    -----
    A *call* (an op that runs a user's function: ``custom_jvp``,
    ``custom_vjp``, ``checkpoint``, ``jit``) is an ``Op`` of the subclass
    :class:`kenaz.call.Call`: ``perform`` hands it to a handler's
    :meth:`Handler.handle_call` instead of :meth:`Handler.handle`.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz import Op, grad
    >>> cube = Op("cube", lambda x: x**3,
    ...           jvp=[lambda t, ans, x: 3 * x * x * t],
    ...           vjp=[lambda ans, x: lambda g: 3 * x * x * g])
    >>> float(grad(cube)(2.0))
    12.0
    """

    __slots__ = (
        "name",
        "impl",
        "numpy_impl",
        "jvp",
        "vjp",
        "batch",
        "differentiable",
        "multiple_results",
        "forward",
        "reverse",
        "is_call",
        "saves",
        "keywords",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        *,
        numpy_impl: Callable[..., Any] | None = None,
        jvp: Sequence[Callable[..., Any] | None] | None = None,
        vjp: Sequence[Callable[..., Any] | None] | None = None,
        batch: Callable[..., Any] | None = None,
        differentiable: bool = True,
        multiple_results: bool = False,
        forward: Callable[..., Any] | None = None,
        reverse: Callable[..., Any] | None = None,
        saves: Sequence[Sequence[int | slice]] | each_argument | None = None,
    ) -> None:
        self.name = name
        self.impl = impl
        self.numpy_impl = numpy_impl or getattr(impl, "numpy_impl", None)
        self.jvp = rule_table(jvp)
        self.vjp = rule_table(vjp)
        self.batch = batch
        self.differentiable = differentiable
        self.multiple_results = multiple_results
        self.forward = forward
        self.reverse = reverse
        # True for a `kenaz.call.Call`, which `perform` hands to `Handler.handle_call`. A
        # slot, not a class attribute: CPython 3.11 reads a slot in a few instructions, a
        # class attribute through an instance in many (no specialization).
        self.is_call = False
        self.saves = saves_table(saves)
        # For an op that stands for a NumPy ufunc, ``keywords(op, args, params)`` runs the
        # calls that pass parameters (NumPy's ``out=``, ``where=``, ``dtype=``...) or more
        # arguments than its ``nin`` inputs (outputs given positionally): set by
        # kenaz.numpy (numpy/_ufunc_keywords.py). None for every other op.
        self.keywords: Callable[[Op, tuple, Mapping[str, Any]], Any] | None = None

    # What `inspect.signature` shows: NumPy's, for an op whose ufunc keywords hook states it.
    __signature__ = _StatedSignature()

    def __call__(self, *args: Any, **params: Any) -> Tensor:
        """Perform the op (replaced by ``perform`` itself below, to save a call)."""
        return perform_args(self, args, params)

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def identity(g: Any) -> Any:
    """The pullback (or tangent map) of an argument that passes through unchanged.

    Rules return this very function, rather than ``lambda g: g``, so that the
    backward pass can skip the call (``add``, ``alias``...).
    """
    return g


def perform_args(op: Op, args: tuple, params: Mapping[str, Any]) -> Any:
    """``perform(op, *args, **params)`` for arguments already in a tuple and a dict.

    A handler passes on the op it handles with this (``perform_args(op, args,
    params)``), and the tensor operators call it: unpacking and repacking the
    arguments at every level would cost a tenth of a transformation's time
    per op. With no handler this is the hot path of eager code: a
    context-variable read, an unwrap, NumPy, a wrap.
    """
    # This is also the body of `perform` (below): one body, two signatures.
    stack = _handlers.get()
    if stack is not None:
        keywords = op.keywords  # a ufunc's keywords (`out=`, also positional): see Op
        if keywords is not None and (params or len(args) != keywords.nin):
            return keywords(op, args, params)
        outside, innermost = stack
        token = _handlers.set(outside)
        try:
            if op.is_call:  # the one place that tells a call from a primitive
                return innermost.handle_call(op, args, params)
            return innermost.handle(op, args, params)
        finally:
            _handlers.reset(token)
    # Eager: unwrap, run NumPy, wrap. Binary calls without parameters and unary
    # ones are unrolled because a list comprehension, or an empty `**params`,
    # costs a large part of NumPy's own time on small arrays. Unwrapping a
    # batched view that escaped its vmap raises here, through its `_value`
    # property: no wrong number can come out.
    try:  # free until it raises
        arity = len(args)
        if arity == 2 and not params:
            x, y = args
            # No `numpy_impl` here: the arithmetic's `impl` tests its operands itself
            # (`kenaz.ops.elementwise._by_operator`), and a test more would cost it 1 %.
            value = op.impl(
                x._value if isinstance(x, Tensor) else x, y._value if isinstance(y, Tensor) else y
            )
        elif arity == 1:  # unary: elementwise math, and shape ops and reductions
            x = args[0]
            x = x._value if isinstance(x, Tensor) else x
            run = op.numpy_impl  # NumPy's own function where the op has one (`np.sin`)
            if run is None or (type(x) is not ndarray and type(x) not in NUMPY_TYPES):
                run = op.impl
            if not params:
                value = run(x)
            elif op.keywords is None:
                value = run(x, **params)
            else:  # a ufunc's keywords (`out=`...), tested only when there are parameters
                return op.keywords(op, args, params)
        elif op.keywords is None:
            value = op.impl(*[a._value if isinstance(a, Tensor) else a for a in args], **params)
        else:  # a ufunc's keywords, or its outputs given positionally (`add(x, y, out)`)
            return op.keywords(op, args, params)
    except ArrayLikeArgument:  # a pandas/xarray/memoryview argument: as NumPy converts it
        args = tuple(numpy_array_like(a) for a in args)
        params = {name: numpy_array_like(v) for name, v in params.items()}
        return perform_args(op, args, params)
    except ValueError as error:
        raise explain_backend_error(op.name, args, error) from None
    except TypeError:  # `sin(x, out)` took the binary branch: its `out` is positional
        if op.keywords is None or params or len(args) == op.keywords.nin:
            raise
        return op.keywords(op, args, params)
    if op.multiple_results:
        return tuple(_make(v) for v in value)
    out = _new_object(Tensor)  # `_make`, inlined: a call costs as much as the allocation
    out._value = value
    out._trace = None
    return out


def _with_variadic_arguments(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``function(op, args, params)`` as ``function(op, *args, **params)``: the same code.

    Python lays out the locals of ``f(op, *args, **params)`` exactly as those
    of ``f(op, args, params)``; only the code object's argument count and
    flags differ. So ``perform`` is ``perform_args``' own code with the
    arguments collected by the interpreter, with no wrapper frame (a wrapper
    cost 2-3% of grad's time per op and 6% of an eager ``knp.sin(x)``).
    """
    code = function.__code__
    flags = code.co_flags | inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
    code = code.replace(co_argcount=1, co_flags=flags, co_name=name, co_qualname=name)
    variadic = types.FunctionType(code, function.__globals__, name)
    variadic.__module__ = function.__module__
    return variadic


perform = _with_variadic_arguments(perform_args, "perform")
perform.__doc__ = """Perform ``op`` on ``args``: the effect every tensor operation raises.

With no handler installed this runs ``op.impl`` on the arguments' values
(``op.numpy_impl``, where the op has one, on NumPy values).
Otherwise the innermost handler handles it, with the stack set to the
handlers outside it. Same as ``perform_args(op, args, params)`` (and the
same code: see ``_with_variadic_arguments``).
"""

# Calling an op performs it.
Op.__call__ = perform  # type: ignore[method-assign]


class Handler:
    """Base class of effect handlers: transformations, and the user's own.

    A subclass overrides :meth:`handle`, and :meth:`handle_call` if calls
    (``custom_vjp``, ``checkpoint``, ``jit``...) need more than being one op.
    Inside either, the handler itself is not installed, so ``perform`` sends
    ops to the next handler out. A handler is its own context manager and
    decorator (``with h: ...``, ``@h``); :class:`handler` installs one too
    and costs less, for code that installs handlers per call.

    Examples
    --------
    An op counter:

    >>> from collections import Counter
    >>> import kenaz.numpy as knp
    >>> from kenaz import Handler, perform
    >>> class CountOps(Handler):
    ...     def __init__(self):
    ...         self.counts = Counter()
    ...     def handle(self, op, args, params):
    ...         self.counts[op.name] += 1
    ...         return perform(op, *args, **params)
    >>> counter = CountOps()
    >>> with counter:
    ...     y = knp.sin(knp.ones(3)) * 2.0
    >>> counter.counts["sin"], counter.counts["mul"]
    (1, 1)
    """

    #: True for a handler whose tracked tensors carry derivatives (grad, jvp,
    #: linearize): turning one of them into a plain NumPy array would silently
    #: drop its derivative, so ``kenaz.convert`` refuses it. A handler needs a
    #: ``level`` (its key in tensors' records) to set this.
    differentiates: bool = False

    #: True for a handler that hands on, unchanged, every op none of whose arguments
    #: is its own (``vmap``'s, whose own are its batched views): an op on plain tensors
    #: passes through it as if it were not installed, so a transformation inside it may
    #: give a plain tensor its fresh identity without performing the alias through it
    #: (:func:`kenaz.transform.fresh_identity`).
    passes_plain_tensors: bool = False

    def handle(self, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        """Handle one op. The default forwards it unchanged to the next handler out."""
        return perform_args(op, args, params)

    def handle_call(self, call: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        """Handle one call (a :class:`kenaz.call.Call`: an op that runs a function).

        The default treats the call as one op, given to :meth:`handle`: a
        handler that forwards it lets the transformations outside apply the
        call's own rules (a ``custom_vjp``'s ``bwd``). A transformation for
        which the call has no rule runs its function under itself instead,
        with :meth:`run_call`.
        """
        return self.handle(call, args, params)

    def run_call(self, call: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        """Run ``call``'s function under this handler, as if the call were not there."""
        token = _handlers.set((_handlers.get(), self))
        try:
            return call.run(args, params)
        finally:
            _handlers.reset(token)

    # -- a handler is its own context manager and decorator (Pyro's Messenger) -------------
    def __enter__(self) -> Any:
        tokens = self.__dict__.setdefault("_installed_tokens", [])  # nested `with h:` too
        tokens.append(_handlers.set((_handlers.get(), self)))
        return self

    def __exit__(self, *exc_info: Any) -> None:
        _handlers.reset(self.__dict__["_installed_tokens"].pop())

    def __call__(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Use the handler as a decorator: ``function`` runs with it installed."""

        @functools.wraps(function)
        def with_handler(*args: Any, **kwargs: Any) -> Any:
            token = _handlers.set((_handlers.get(), self))
            try:
                return function(*args, **kwargs)
            finally:
                _handlers.reset(token)

        return with_handler


class handler:  # noqa: N801 - a context manager, named and used like a function
    """Install ``h`` as the innermost handler for the ``with`` block.

    The previous stack is restored on exit, also when the block raises.
    (A class rather than ``@contextmanager``: every transformation call enters
    a few of these, and a generator-based one costs three times as much.)
    """

    __slots__ = ("_handler", "_token")

    def __init__(self, h: Handler) -> None:
        self._handler = h

    def __enter__(self) -> Handler:
        self._token = _handlers.set((_handlers.get(), self._handler))
        return self._handler

    def __exit__(self, *exc_info: Any) -> None:
        _handlers.reset(self._token)


class no_handlers:  # noqa: N801 - a context manager, named and used like a function
    """Run the block with no handler installed (ops run straight on the backend).

    For code that must see plain values whatever transformation is running
    (a call's eager implementation, an ODE solver's inner loop, a trace that
    must record the function alone); the stack comes back on exit.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _handlers.set(None)

    def __exit__(self, *exc_info: Any) -> None:
        _handlers.reset(self._token)


class outside_innermost:  # noqa: N801 - a context manager, named and used like a function
    """Run the block with the handlers outside the innermost one: what that handler's own
    ``handle`` runs under, for code that does its work before the op reaches it (a
    checkpoint's forward pass, run one level out of the ``grad`` it is in, before its op
    is performed: :mod:`kenaz.rematerialize`). The stack comes back on exit.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        stack = _handlers.get()
        self._token = _handlers.set(None if stack is None else stack[0])

    def __exit__(self, *exc_info: Any) -> None:
        _handlers.reset(self._token)


#: ``handlers_installed()`` is true when at least one handler is installed: the
#: test for "is a transformation running?" on paths that run for every op, at the
#: cost of one context-variable read (it returns the stack itself, which is None
#: and so false when none is installed; :func:`current_handlers` lists them).
handlers_installed: Callable[[], Any] = _handlers.get


# Which transformations are running (e.g. ("grad", "grad: backward")), for `debug`: noted
# only while a handler that shows them lives (weak references in `_scope_readers`), which
# saves every phase two context-variable round trips. A reader shows only the phases
# entered after it was made (from its `base_depth` on), and those are noted.
_scopes: ContextVar[tuple[str, ...]] = ContextVar("kenaz_scopes", default=())
_scope_readers: set[weakref.ref] = set()


def read_scopes(reader: Handler) -> tuple[str, ...]:
    """Note the phases while ``reader`` (``debug``'s handler) lives; the running ones."""
    _scope_readers.add(weakref.ref(reader, _scope_readers.discard))
    return _scopes.get()


class scope:  # noqa: N801 - a context manager, named and used like a function
    """Mark a phase of a transformation (its forward pass, its backward pass) for ``debug``."""

    __slots__ = ("_name", "_token")

    def __init__(self, name: str) -> None:
        self._name = name

    def __enter__(self) -> None:
        self._token = _scopes.set((*_scopes.get(), self._name)) if _scope_readers else None

    def __exit__(self, *exc_info: Any) -> None:
        if self._token is not None:
            _scopes.reset(self._token)


def enter_phase(name: str) -> Any:
    """Enter the phase ``name`` (what :class:`scope` does, without its object, for a
    transformation that opens one per call): a token for :func:`leave_phase`, None when
    no ``debug`` handler reads the phases (nothing to note)."""
    return _scopes.set((*_scopes.get(), name)) if _scope_readers else None


def leave_phase(token: Any) -> None:
    """Leave the phase that :func:`enter_phase` entered (its ``token``; None: nothing)."""
    if token is not None:
        _scopes.reset(token)


def run_in(
    phase: str, function: Callable[..., Any], args: Sequence[Any], h: Handler | None = None
) -> Any:
    """``function(*args)`` in the phase ``phase`` of a transformation (what ``debug``
    shows), with ``h`` installed innermost if given: :class:`scope` and :class:`handler`
    in one frame, for a transformation running the user's function or its backward pass."""
    phase_token = _scopes.set((*_scopes.get(), phase)) if _scope_readers else None
    token = None if h is None else _handlers.set((_handlers.get(), h))
    try:
        return function(*args)
    finally:
        if token is not None:
            _handlers.reset(token)
        if phase_token is not None:
            _scopes.reset(phase_token)


def plain_ops_recorded() -> bool:
    """Whether an op on plain tensors, performed now, would reach a handler that sees it:
    one not marked :attr:`Handler.passes_plain_tensors` (which hands such ops on). Then a
    transformation must perform the alias that gives a plain tensor its fresh identity;
    otherwise the alias's result is the tensor's value wrapped anew."""
    stack = _handlers.get()
    while stack is not None:
        stack, h = stack
        if not h.passes_plain_tensors:
            return True
    return False


def current_scopes() -> tuple[str, ...]:
    """The running transformation phases, outermost first (see :func:`read_scopes`)."""
    return _scopes.get()


def current_handlers() -> tuple[Handler, ...]:
    """Return the installed handlers, innermost last (empty outside transformations)."""
    found = []
    stack = _handlers.get()
    while stack:
        stack, h = stack
        found.append(h)
    return tuple(reversed(found))
