"""Changing Tensors in place: ``x[idx] = v``, ``x[idx] += v``, ``x += v``.

A Tensor that no running transformation tracks is changed in place, as a
NumPy array is (views share memory as NumPy's do). Inside a transformation,
assigning into a tracked Tensor, or assigning a tracked value into an
untracked one, raises: the derivative could not follow it. An in-place
operator on a tracked Tensor rebinds the name instead (``x = x + v``), as in
JAX and HIPS autograd.

A tape may keep, for its backward pass, a Tensor that is later changed in
place. The check costs nothing while nobody mutates: each tape joins
``kenaz.transform.live_tapes`` once (not per op), and every in-place change notes,
on each live tape, how far that tape had got and which memory was written. Only a tape
that saw such a note inspects, before its backward pass, what its entries keep: each
op states which of its inputs (and its output) its derivative rules read
(``Op.saves``), and the tape keeps those values with each entry. It raises if an
entry recorded before the change keeps memory the change wrote, naming the op
(PyTorch's "version counter" error). Nothing here reads a function's closure.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .effects import Handler, Op, current_handlers, handlers_installed, perform_args
from .rule_tables import kept_by
from .tensor import Tensor
from .transform import live_tapes

__all__ = [
    "assign",
    "update_in_place",
    "note_mutation",
    "check_saved",
    "is_tracked",
    "refuse_tracked",
    "in_place_target",
    "plain",
    "ReadsRecorder",
    "stated_saves",
]

# Past this many notes on one tape, notes are merged per underlying buffer (conservative:
# the whole buffer counts as written), so a long-lived pullback cannot grow without bound.
_MAX_NOTES = 256


def note_mutation(region: Any) -> None:
    """Record that the memory of ``region`` (an ndarray) was just written."""
    if not isinstance(region, np.ndarray):
        return
    for ref in tuple(live_tapes):  # a copy: a tape may die (and leave the set) meanwhile
        owner = ref()
        if owner is not None:
            notes = vars(owner).setdefault("mutations", [])
            notes.append((owner.node_count, region))
            if len(notes) > _MAX_NOTES:
                notes[:] = _merged(notes)


def _merged(notes: list[tuple[int, np.ndarray]]) -> list[tuple[int, np.ndarray]]:
    """One note per buffer: its earliest node count, and the whole buffer as written."""
    earliest: dict[int, tuple[int, np.ndarray]] = {}
    for count, region in notes:
        root = region
        while isinstance(root.base, np.ndarray):
            root = root.base
        previous = earliest.get(id(root))
        if previous is None or count < previous[0]:
            earliest[id(root)] = (count, root)
    return list(earliest.values())


# -- who is tracked -------------------------------------------------------------------
def is_tracked(x: Any) -> bool:
    """Whether ``x`` (or a Tensor inside a list, tuple or dict ``x``) is tracked by a
    running transformation: it has a record of a running handler's level, or is a
    ``vmap`` view. Records of finished transformations (an ``aux`` output, a tensor
    kept from an earlier ``grad``) do not count."""
    running = {h.level for h in current_handlers() if hasattr(h, "level")}
    return _tracked(x, running)


def _tracked(x: Any, running: set[int]) -> bool:
    if isinstance(x, Tensor):
        if type(x) is not Tensor:  # a vmap view, or a jit tracer
            return True
        return bool(x._trace) and not running.isdisjoint(x._trace)
    if isinstance(x, (list, tuple)):
        return any(_tracked(item, running) for item in x)
    if isinstance(x, dict):
        return any(_tracked(item, running) for item in x.values())
    return False


def transformation_running() -> bool:
    return bool(handlers_installed())


def refuse_tracked(name: str, args: tuple, kwargs: dict) -> None:
    """Raise naming ``numpy.<name>`` if a transformation runs and an argument is tracked."""
    if handlers_installed() and (is_tracked(args) or is_tracked(kwargs)):
        raise TypeError(
            f"kenaz: numpy.{name} has no derivative in kenaz, and it was given a Tensor that "
            "a running transformation tracks: its derivative would be silently dropped. "
            "Pass `kenaz.numpy.stop_gradient(x)` if no derivative is needed, or compose the "
            "computation from kenaz.numpy functions."
        )


def plain(x: Any) -> Any:
    """Tensors (also inside lists, tuples and dicts) as their NumPy values."""
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, (list, tuple)):
        return type(x)(plain(item) for item in x) if type(x) in (list, tuple) else x
    if isinstance(x, dict):
        return {key: plain(item) for key, item in x.items()}
    return x


# -- x[idx] = v -----------------------------------------------------------------------
def assign(tensor: Tensor, index: Any, value: Any) -> None:
    """``tensor[index] = value``, in place (``Tensor.__setitem__``)."""
    if handlers_installed():
        if is_tracked(tensor):
            raise TypeError(
                f"kenaz: cannot assign into a Tensor (shape {tensor.shape}) that a running "
                "transformation tracks: its derivative cannot follow an in-place change. "
                "Use the functional update `x = x.at[index].set(value)` (or `.add(value)` for "
                "`x[index] += value`) instead of `x[index] = value`"
            )
        if is_tracked(value):
            raise TypeError(
                f"kenaz: cannot assign a Tensor that a running transformation tracks into an "
                f"untracked Tensor (shape {tensor.shape}): its derivative would be silently "
                "dropped. Build the result functionally: `x = x.at[index].set(value)`, or "
                "kenaz.numpy.stack / where"
            )
    array = tensor._value
    index = _plain_index(index)
    value = value._value if isinstance(value, Tensor) else plain(value)
    try:
        array[index] = value
    except (TypeError, ValueError):
        _writable(tensor, "assign into")  # raises the clearer error, if that was the cause
        raise
    if live_tapes:  # some tape may be alive: say which memory changed
        note_mutation(_region(array, index))


def _plain_index(index: Any) -> Any:
    if type(index) is int or type(index) is slice:  # the commonest, first
        return index
    return plain(index)


def in_place_target(tensor: Tensor, name: str) -> np.ndarray:
    """The memory of ``tensor`` for a NumPy function that writes into it (``numpy.<name>``),
    after the same checks as ``x[idx] = v``; the change is noted for the tapes."""
    if handlers_installed() and is_tracked(tensor):
        raise TypeError(
            f"kenaz: numpy.{name} would change a Tensor (shape {tensor.shape}) that a running "
            "transformation tracks in place; its derivative cannot follow. Use a functional "
            "form (`x = x.at[index].set(value)`, kenaz.numpy.where)"
        )
    array = _writable(tensor, f"write into (numpy.{name})")
    note_mutation(array)
    return array


def _writable(tensor: Tensor, what: str) -> np.ndarray:
    array = tensor._value
    if not isinstance(array, np.ndarray):
        raise TypeError(
            f"kenaz: cannot {what} this 0-d Tensor: it holds a NumPy scalar "
            f"({type(array).__name__}), which is immutable as in NumPy; make a mutable "
            "copy first with `x = x.copy()` (or kenaz.numpy.array(x))"
        )
    if not array.flags.writeable:
        raise ValueError(
            f"kenaz: cannot {what} this Tensor (shape {tensor.shape}): its memory is "
            "read-only (a view NumPy made read-only, e.g. by broadcast_to); make a copy "
            "first with `x = x.copy()`"
        )
    return array


def _region(array: np.ndarray, index: Any) -> np.ndarray:
    """The memory an assignment at ``index`` wrote: that view for a basic index (ints,
    slices, ``...``, ``None``), else (an advanced index) the whole array."""
    parts = index if type(index) is tuple else (index,)
    basic = all(
        part is None
        or part is Ellipsis
        or isinstance(part, (np.integer, slice))
        or (isinstance(part, int) and not isinstance(part, bool))  # True is an advanced index
        for part in parts
    )
    if not basic:
        return array
    view = array[index]
    return view if isinstance(view, np.ndarray) else array


# -- out= ----------------------------------------------------------------------------------
def write_out(out: Any, result: Tensor, name: str, casting: str = "same_kind") -> Any:
    """NumPy's ``out=``: ``result`` written into ``out`` (a Tensor, an ndarray, or a tuple
    holding one), which is returned. A Tensor follows ``x[...] = v``'s rules (refused if a
    transformation tracks either); a NumPy array cannot receive a tracked result."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{name}: out must hold one array, got {len(out)}")
        out = out[0]
    if not np.can_cast(result.dtype, out.dtype, casting=casting):
        raise TypeError(
            f"{name}: cannot cast the output from {result.dtype} to {out.dtype} with casting "
            f"rule {casting!r}"
        )
    if isinstance(out, Tensor):
        assign(out, Ellipsis, result)
        return out
    if is_tracked(result):
        raise TypeError(
            f"{name}: out= a NumPy array would drop the derivative of a tensor a "
            "transformation tracks; use the returned value"
        )
    np.copyto(out, np.asarray(result._value), casting=casting)
    return out


# -- numpy.put and friends: in place, and followed by the derivatives ---------------------
def write_functional(tensor: Tensor, result: Tensor, name: str) -> None:
    """``numpy.<name>`` on ``tensor`` under a transformation: ``result`` (the functional
    update, computed with kenaz ops) is written into ``tensor``'s memory, as NumPy does,
    and ``tensor`` takes over ``result``'s derivative records, so that later uses of it see
    the new values *and* carry their derivative (as if the name were rebound to
    ``x.at[index].set(values)``). A pullback that saved the old memory is caught before the
    backward pass, as for any in-place change.
    """
    where = f"kenaz.numpy.{name}"
    if type(tensor) is not Tensor:  # a vmap view or a jit tracer: no memory of its own
        raise TypeError(
            f"{where}: cannot write into a Tensor that vmap or jit traces; pass "
            "inplace=False and use the returned value"
        )
    array = _writable(tensor, f"write into ({where})")
    if result._trace and array.base is not None:
        raise TypeError(
            f"{where}: this Tensor's memory is a view of another array, whose derivative could "
            "not follow the change; pass inplace=False and use the returned value"
        )
    array[...] = result._value
    note_mutation(array)
    tensor._trace = dict(result._trace) if result._trace else None


# -- x += v ---------------------------------------------------------------------------
def update_in_place(tensor: Tensor, op: Op, ufunc: Callable, other: Any) -> Tensor:
    """``tensor <op>= other``: in place when nothing involved is tracked, else ``tensor <op> other``
    (a new Tensor, and the name is rebound).

    In place means NumPy's own in-place operation on the memory (its casting
    rules and errors included). A NumPy scalar (a 0-d result of a reduction)
    cannot change, so the name is rebound, as for NumPy scalars.
    """
    array = tensor._value if type(tensor) is Tensor else None
    if type(array) is not np.ndarray or (
        handlers_installed() and (is_tracked(tensor) or is_tracked(other))
    ):
        return perform_args(op, (tensor, other), {})
    try:
        ufunc(array, other._value if isinstance(other, Tensor) else plain(other), out=array)
    except ValueError:
        if array.flags.writeable:
            raise
        return perform_args(op, (tensor, other), {})  # read-only memory: rebind the name
    if live_tapes:
        note_mutation(array)
    return tensor


# -- what a recomputation reads ------------------------------------------------------------
class ReadsRecorder(Handler):
    """Passes every op on unchanged, noting the tensors the ops read that the run was not
    given and did not make (a layer's weights a checkpointed function closes over).

    A rule that runs a function again in its pullback (``checkpoint``) states these as
    what it keeps (``pullback.keeps``), so that an in-place change to them before the
    backward pass is caught: found by watching the ops, never in the function's closure.
    """

    def __init__(self, given: Sequence[Any]) -> None:
        self.known = {id(a) for a in given}
        self._alive: list[Any] = list(given)  # so that no identity is reused meanwhile
        self.read: list[Tensor] = []

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        self._note(args)
        out = perform_args(op, args, params)
        for o in out if isinstance(out, tuple) else (out,):
            self.known.add(id(o))
            self._alive.append(o)
        return out

    def _note(self, values: Any) -> None:
        for a in values:
            if isinstance(a, Tensor):
                if id(a) not in self.known:
                    self.known.add(id(a))
                    self._alive.append(a)
                    self._found(a)
            elif type(a) is list or type(a) is tuple:
                self._note(a)

    def _found(self, tensor: Tensor) -> None:
        """Note ``tensor``: read by the run, neither given to it nor made in it."""
        self.read.append(tensor)


# -- the check before a backward pass ----------------------------------------------------
def check_saved(entries: list, mutations: list, where: str = "backward pass") -> None:
    """Raise if an entry recorded before a noted change keeps memory that change wrote.

    ``entries`` are tape entries ``(node, edges, op)``, each edge ``(parent, pullback,
    kept)`` with ``kept`` the values its pullback keeps, as the op states them
    (``Op.saves``; ``node`` an int, or a tuple whose first item is the tuple of output
    nodes), or linearize entries ``(op, args, params, out, parents, node)``. Runs only
    when ``mutations`` is not empty.
    """
    notes = sorted(mutations, key=lambda note: note[0])
    counts = [count for count, _ in notes]
    for entry in entries:
        node = _first_node(entry)
        later = bisect.bisect_right(counts, node)  # the changes after this entry was recorded
        if later == len(notes):
            continue
        regions = notes[later:]
        roots = {id(_root(region)) for _, region in regions}
        for op, array in _saved_arrays(entry):
            if id(_root(array)) not in roots:
                continue  # another buffer: cannot share memory with what was written
            for _, region in regions:
                if _overlaps(array, region):
                    raise RuntimeError(_saved_error(op, array, where))


def stated_saves(op: Op, index: int, ans: Any, args: tuple) -> tuple:
    """The values argument ``index``'s rule of ``op`` reads, as the op states them
    (``Op.saves``), among its output ``ans`` and its arguments ``args``."""
    kept = kept_by(op.saves, index, ans, args)
    if kept is None:
        return ()
    return kept if op.saves[index] <= -2 else (kept,)


def _first_node(entry: tuple) -> int:
    node = entry[0] if len(entry) == 3 else entry[-1]
    while isinstance(node, tuple):
        node = node[0]
    return node


def _root(array: np.ndarray) -> Any:
    """The object owning ``array``'s memory: the end of its chain of bases."""
    while array.base is not None:
        array = array.base
    return array


def _overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:  # pragma: no cover - pathological strides
        return True


def _saved_arrays(entry: tuple) -> Iterator[tuple[Op, np.ndarray]]:
    """(the op that kept it, array) for every ndarray an entry keeps for its derivative."""
    if len(entry) == 3:  # a tape entry: (node, edges, op)
        for _parent, _pullback, kept in entry[1]:
            if kept is not None:
                for array in _arrays_in(kept):
                    yield entry[2], array
        return
    op, args, _params, out, parents, _node = entry  # a linearize entry
    if op.forward is not None:  # a joint rule reruns on its inputs
        values: tuple = (out, *args)
    else:  # what the jvp rules of the tracked arguments read, as the op states it
        values = tuple(stated_saves(op, i, out, args) for i, _ in parents)
    for array in _arrays_in(values):
        yield op, array


def _arrays_in(values: Any) -> Iterator[np.ndarray]:
    """The ndarrays in ``values``: Tensors (a vmap view's batch), arrays, and tuples, lists
    and dicts of them. Only data: what a rule keeps is stated, never found in functions."""
    if isinstance(values, np.ndarray):
        yield values
    elif isinstance(values, Tensor):
        if type(values) is Tensor:
            yield from _arrays_in(values._value)
        else:  # a vmap view: its batch is a Tensor one level out
            yield from _arrays_in(getattr(values, "_batched", None))
    elif isinstance(values, (list, tuple)):
        for item in values:
            yield from _arrays_in(item)
    elif isinstance(values, dict):
        for item in values.values():
            yield from _arrays_in(item)


def _saved_error(op: Op, array: np.ndarray, where: str) -> str:
    return (
        f"kenaz: a Tensor (shape {array.shape}, dtype {array.dtype}) that {_op_name(op)} "
        f"saved for the {where} was changed in place afterwards (by `x[...] = ...`, an "
        "in-place operator such as `+=`, or a NumPy function writing into it), so the "
        "derivative would use the new values. Change a copy instead (`x = x.copy()` before "
        "changing it), or use the functional update `x = x.at[index].set(value)`"
    )


def _op_name(op: Op) -> str:
    """``the op `sin```, or for a call (``custom_vjp[f]``, ``checkpoint[f]``) the user's
    function: ``the custom rule (or checkpoint) of `f```."""
    if not op.is_call:
        return f"the op `{op.name}`"
    kind, bracket, function = op.name.partition("[")
    name = function[:-1] if bracket and function.endswith("]") else op.name
    return f"the custom rule (or checkpoint) of `{name}` ({kind})"
