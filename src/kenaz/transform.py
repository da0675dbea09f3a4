"""What every transformation shares: the base of the tape handlers, distinct
results, forgetting a finished level's records, and pausing the garbage
collector while a tape is alive. (What they check of their arguments is in
:mod:`kenaz.checks`.)"""

from __future__ import annotations

import contextlib
import functools
import gc
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import tree
from .backend import full_like
from .checks import check_inputs, derivative_leaf, float0_zeros, input_leaves, split_aux
from .effects import Handler, Op, fresh_level, handlers_installed, plain_ops_recorded, run_in
from .ops.elementwise import alias, copy
from .tensor import Tensor, _make

# The tape handlers alive, by weak references that leave the set when their handler dies
# (no Python code runs either way): kenaz.mutation notes in-place changes on each.
live_tapes: set[weakref.ref] = set()


class TapeHandler(Handler):
    """The base of the handlers that number the tensors they track (reverse, linearize).

    Each instance is one *level*: ``self.level`` is its key in every tensor's
    record (``tensor._trace[level]``, the tensor's node number there), never
    reused. It counts its nodes, and notes in-place changes of Tensors made
    while it lives (``self.mutations``, see :mod:`kenaz.mutation`), so the
    replay of what it recorded can refuse a changed input.
    """

    mutations: list | tuple = ()  # (node count, memory written): see kenaz.mutation
    differentiates = True  # kenaz.convert refuses to turn its tensors into arrays

    def __init__(self) -> None:
        self.level = fresh_level()
        self.node_count = 0
        self.tape: list = []  # what the level records of each op, in execution order
        live_tapes.add(weakref.ref(self, live_tapes.discard))  # see `live_tapes`

    def watch(self, x: Tensor) -> Tensor:
        """Give ``x`` a fresh identity (:func:`fresh_identity`) that this level tracks."""
        watched = fresh_identity(x)
        self.track(watched)
        return watched

    def run(self, f: Callable, primals: tuple, allow_int: bool, where: str,
            positions: Any = None, phase: str | None = None, *options: bool) -> tuple:  # fmt: skip
        """Run ``f`` on the arguments ``primals``, their float and complex leaves watched
        (:meth:`watch`; the others held constant). Input errors name ``where`` and the
        arguments by their ``positions``; then :func:`run_watched` in ``phase`` (default
        ``where``), with its ``options`` ``has_aux`` and ``pause_gc``. Returns the leaves as
        tensors, their structure, each one's node (None for a constant), then what
        ``run_watched`` returns."""
        leaves, in_tree = tree.flatten(primals)
        for x in leaves:  # before any op: a leaf to convert (the one way in checks them all),
            if not isinstance(x, Tensor):  # or an integer one to refuse, naming its argument
                leaves = input_leaves(leaves, primals, allow_int, where, positions)
                break
            if not allow_int and x.dtype.kind not in "fc":
                check_inputs(list(zip(positions or range(len(primals)), primals)), False, where)
        watched, nodes = [], []
        level, node = self.level, self.node_count
        # `fresh_identity`'s two tests, once: is a handler outside, and does one see plain ops
        outer = handlers_installed() is not None
        seen = outer and plain_ops_recorded()
        for x in leaves:  # `watch`, inlined: this runs for every input leaf
            if x.dtype.kind in "fc":
                if seen or (outer and type(x) is not Tensor):  # `fresh_identity`
                    x = alias(x)
                else:
                    x = _make(x._value)
                set_record(x, level, node)
                nodes.append(node)
                node += 1
            else:
                nodes.append(None)
            watched.append(x)
        self.node_count = node
        outputs = run_watched(self, f, watched, in_tree, phase or where, *options)
        return (leaves, in_tree, nodes, *outputs)

    def track(self, out: Tensor) -> int:
        """Give ``out`` a new node number at this level (no entry recorded) and return it."""
        node = self.node_count
        self.node_count = node + 1
        set_record(out, self.level, node)
        return node


def fresh_identity(x: Tensor) -> Tensor:
    """``x`` under a new identity, for a transformation to record its facts on: an alias
    performed outward, or where no handler would see it (none installed, or for a plain
    tensor only ``vmap``'s: :func:`kenaz.effects.plain_ops_recorded`) the alias's result."""
    if handlers_installed() is None or (type(x) is Tensor and not plain_ops_recorded()):
        return _make(x._value)
    return alias(x)


def set_record(x: Tensor, level: int, record: Any) -> None:
    """Store ``x``'s record at ``level`` (a tape node, a tangent)."""
    if x._trace is None:
        x._trace = {level: record}
    else:
        x._trace[level] = record


def placed(pairs: Iterable[tuple[int, Any]], count: int) -> tuple:
    """The ``(position, value)`` ``pairs`` as a tuple of ``count`` entries, None elsewhere."""
    full: list[Any] = [None] * count
    for i, value in pairs:
        full[i] = value
    return tuple(full)


no_context = contextlib.nullcontext()  # `with a if condition else no_context:`
LONE_LEAF = tree.flatten(0)[1]  # the structure of a lone leaf (a tensor output)


def zero_derivative(x: Tensor) -> Any:
    """The derivative reaching an input or output that nothing tracked connects: zeros,
    a float0 array for an integer one (:data:`kenaz.checks.float0`)."""
    return zeros_like(x) if x.dtype.kind in "fc" else float0_zeros(x.shape)


def run_watched(
    h: Handler,
    f: Callable,
    watched: list,
    in_tree: Any,
    where: str,
    has_aux: bool = False,
    pause_gc: bool = False,
) -> tuple[list, Any, list, Any]:
    """Run ``f`` on the ``watched`` input leaves (of structure ``in_tree``) under ``h``
    (and :class:`gc_paused`, with ``pause_gc``).

    Returns the output leaves as tensors, the outputs' structure, each output's
    record at ``h``'s level (None if untracked; the level is then forgotten on
    them: :func:`forget_level`) and ``aux`` (with ``has_aux``; else None).
    """
    args = tree.unflatten(in_tree, watched)
    if pause_gc:
        with gc_pause:
            result = run_in(where, f, args, h)
    else:  # (no `no_context`: its two calls are a tenth of a small function's entry)
        result = run_in(where, f, args, h)
    aux = None
    if has_aux:
        result, aux = split_aux(result, where)
    level = h.level
    if isinstance(result, Tensor):  # one output, the common case: its record, forgotten
        trace = result._trace
        return [result], LONE_LEAF, [trace.pop(level, None) if trace else None], aux
    out_flat, out_tree = tree.flatten(result)
    records = []
    i = 0
    for o in out_flat:  # (loops, not comprehensions: each of those is a frame)
        if not isinstance(o, Tensor):
            out_flat[i] = o = derivative_leaf(o, where)
        records.append(o._trace.get(level) if isinstance(o, Tensor) and o._trace else None)
        i += 1
    # The level is forgotten after all records were read: an output may stand twice.
    for o in out_flat:
        if isinstance(o, Tensor) and o._trace:  # (not a float0 leaf)
            o._trace.pop(level, None)
    return out_flat, out_tree, records, aux


__all__ = [
    "TapeHandler",
    "live_tapes",
    "fresh_identity",
    "set_record",
    "placed",
    "no_context",
    "zero_derivative",
    "run_watched",
    "distinct",
    "zeros_like",
    "wraps",
    "forget_level",
    "gc_paused",
    "gc_pause",
    "pause_gc",
    "resume_gc",
]


_FunctionType = type(run_in)
# What `functools.wraps` copies on the Pythons whose list `wraps` below unrolls (3.10, 3.11;
# 3.12 adds `__type_params__`, and then `functools` does the copying).
_UNROLLED = functools.WRAPPER_ASSIGNMENTS == (
    "__module__", "__name__", "__qualname__", "__doc__", "__annotations__"
) and functools.WRAPPER_UPDATES == ("__dict__",)  # fmt: skip


def wraps(wrapped: Callable, wrapper: Callable) -> Callable:
    """``functools.wraps(wrapped)(wrapper)``: the same attributes, copied in a fifth of the
    time for a Python function (``functools`` reads each one through ``getattr``, in a
    ``try``). Transformations make a wrapper per call of ``grad``, ``vmap``... and
    ``grad(f)(x)`` in a loop is common, so this is part of every such call."""
    if type(wrapped) is _FunctionType and _UNROLLED:
        wrapper.__module__ = wrapped.__module__
        wrapper.__name__ = wrapped.__name__
        wrapper.__qualname__ = wrapped.__qualname__
        wrapper.__doc__ = wrapped.__doc__
        wrapper.__annotations__ = wrapped.__annotations__
        attributes = wrapped.__dict__
        if attributes:
            wrapper.__dict__.update(attributes)
        wrapper.__wrapped__ = wrapped
        return wrapper
    if type(wrapped) is Op and _UNROLLED:  # `vmap(knp.sin)`: an op has only the first and
        wrapper.__module__ = wrapped.__module__  # the fourth (its class's), and no __dict__:
        wrapper.__doc__ = wrapped.__doc__  # functools' misses cost an exception each
        wrapper.__wrapped__ = wrapped
        return wrapper
    return functools.update_wrapper(wrapper, wrapped)


def zeros_like(x: Tensor) -> Tensor:
    """Zeros shaped and typed like ``x``, on ``x``'s backend."""
    return _make(full_like(x, x.shape, 0, x.dtype))


def distinct(leaves: list[Any]) -> list[Any]:
    """``leaves`` with each tensor that stands there more than once copied after its first place.

    A pass-through rule (``add``'s pullback, ``x + 1``'s tangent) hands the very
    same tensor to several inputs or outputs. Tensors can be changed in place
    outside transformations, so results handed to the user must not share one
    object: ``gx *= 0.5`` would silently change ``gy`` too.
    """
    seen: set[int] = set()
    for i, leaf in enumerate(leaves):
        if id(leaf) in seen:
            leaves[i] = copy(leaf)  # an op: an outer transformation differentiates it
        seen.add(id(leaf))
    return leaves


def forget_level(outputs: Sequence[Tensor], level: int) -> None:
    """Drop ``level``'s records from the outputs leaving a transformation.

    Called after all of them were read: the same tensor may be returned twice.
    """
    for o in outputs:
        if o._trace:
            o._trace.pop(level, None)


_gc_lock = threading.Lock()
_gc_pauses = 0  # how many reverse passes are running, in all threads
_gc_was_enabled = False


class gc_paused:  # noqa: N801 - a context manager, named and used like a function
    """Pause Python's cyclic garbage collector while a reverse pass runs.

    A tape keeps many small objects alive (tensors, closures, entries), so the
    collector's passes traverse an ever larger heap and find nothing: kenaz's
    tapes hold no reference cycles, reference counting frees them. Measured
    (benchmarks/breakdown.py): 12% of grad's time at 3,000 ops, about 45% at
    100,000. The pause is process-wide, hence counted across threads; the
    collector's previous state comes back when the last pass ends.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _gc_pauses, _gc_was_enabled
        with _gc_lock:
            if _gc_pauses == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_pauses += 1

    def __exit__(self, *exc_info: Any) -> None:
        global _gc_pauses
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


gc_pause = gc_paused()  # one instance serves every pause (its state is the module's)
pause_gc = gc_pause.__enter__  # `with gc_pause:` in two calls, for a try/finally of its own
resume_gc = gc_pause.__exit__
