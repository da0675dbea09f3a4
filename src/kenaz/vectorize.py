"""Batching: ``vmap``.

Inside ``vmap(f)`` the user's function sees *per-example* tensors. Each one is
a :class:`BatchedTensor`, a view that holds the batched tensor of the next
level out and the position of its batch axis. ``BatchHandler`` intercepts
every op that has such a view among its arguments and applies the op's
batching rule (``Op(..., batch=rule)``), which performs the op once over the
whole batch, one level out. An op without a rule runs once per example, with a
one-time warning.

A batched view has no single value: ``bool``, ``float``, ``.numpy()`` or an
``if`` on it raise :class:`~kenaz.errors.ConcretizationError`, whose message
names the general fallback, ``vmap(f, method="loop")``. When ``vmap`` returns,
its handler is marked dead, so a view that escaped (say, into a global) raises
:class:`~kenaz.errors.EscapedTracerError` when used, instead of giving a wrong
number.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np
import optree

from . import tree
from .checks import (
    argument_name,
    axes_prefix,
    batched_value_error,
    check_vmap_arguments,
    float0,
    out_axis,
    output_name,
    per_example_shape_error,
)
from .convert import as_tensor, perform_stacked
from .effects import Handler, Op, handler, perform_args, run_in
from .errors import ShapeError
from .ops import batching, indexing
from .ops import shape as shape_ops
from .tensor import Tensor, holds_tensor
from .transform import fresh_identity, wraps
from .tree import LEAF_TYPES, NAMESPACE

__all__ = ["vmap", "vmap_call", "BatchedTensor", "BatchHandler"]

_new = object.__new__
_elementwise = batching.elementwise  # the rule whose common cases `BatchHandler.handle` inlines


class BatchedTensor(Tensor):
    """The per-example view of a batched tensor inside ``vmap`` (internal).

    ``shape``, ``ndim``, ``size`` and ``dtype`` are those of one example.
    ``_batched`` is the whole batch (a tensor of the next level out) and
    ``_batch_axis`` the position of the batch axis in it; ``_batcher`` is the
    :class:`BatchHandler` the view belongs to.
    """

    __slots__ = ("_batched", "_batch_axis", "_batcher", "_example_shape")

    @property
    def _value(self) -> Any:  # shadows Tensor's slot: every unwrap of a view raises
        batcher = self._batcher
        raise batched_value_error(self.shape, self.dtype, batcher.axis_size, batcher.alive)

    @property
    def shape(self) -> tuple[int, ...]:
        example_shape = self._example_shape
        if example_shape is None:  # computed on first use: many views are never asked
            axis = self._batch_axis
            if axis == 0:  # (the usual place: one slice)
                example_shape = self._batched.shape[1:]
            else:
                batched_shape = self._batched.shape
                example_shape = batched_shape[:axis] + batched_shape[axis + 1 :]
            self._example_shape = example_shape
        return example_shape

    if not TYPE_CHECKING:  # (type checkers read Tensor's declaration)
        # In C: rules and handlers read it for nearly every op
        dtype = property(attrgetter("_batched.dtype"), doc="The dtype (the batch's).")

    @property
    def ndim(self) -> int:
        return self._batched.ndim - 1

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        state = "inside vmap" if self._batcher.alive else "escaped from a finished vmap"
        return (
            f"BatchedTensor(shape={self.shape}, dtype={self.dtype}, "
            f"batch_size={self._batcher.axis_size}, {state})"
        )


tree.register_leaf_type(BatchedTensor)  # a batched output, as any tensor, is a leaf


class BatchHandler(Handler):
    """Runs each op on whole batches through the op's batching rule.

    A view belongs to this handler when ``view._batcher is handler`` (the
    handler object is the views' key, where the tape handlers use an integer
    ``level``). ``alive`` becomes False when the ``vmap`` call returns.
    """

    # An op none of whose arguments is a view of this handler's is handed on unchanged
    passes_plain_tensors = True

    def __init__(self, axis_size: int) -> None:
        self.axis_size = axis_size
        self.alive = True

    def view(self, batched: Any, batch_axis: int | None) -> Any:
        """The per-example view of ``batched`` (``batched`` itself if ``batch_axis`` is None)."""
        if batch_axis is None:
            return batched
        view = _new(BatchedTensor)
        view._batched = batched
        view._batch_axis = batch_axis
        view._batcher = self
        view._example_shape = None
        view._trace = None
        return view

    def views(self, values: Sequence[Any], axes: Sequence[int | None]) -> list[Any]:
        """Views of ``values`` batched along ``axes`` (``None``: not batched), each with a
        fresh identity (:func:`kenaz.transform.fresh_identity`)."""
        return [v if a is None else self.view(fresh_identity(v), a) for v, a in zip(values, axes)]

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        # Replace our views by their batches. Unary and binary ops (nearly all) are
        # unrolled: a loop, and the lists it fills, cost a tenth of this handler's time.
        rule = op.batch
        out_axis = -1  # no layout found yet
        arity = len(args)
        if arity == 2:
            x, y = args
            if type(x) is BatchedTensor and x._batcher is self:
                bx = x._batch_axis
                x = x._batched
                if type(y) is BatchedTensor and y._batcher is self:
                    by = y._batch_axis
                    y = y._batched
                elif (type(y) is list or type(y) is tuple) and holds_tensor(y):
                    return perform_stacked(self, op, args, params)  # kenaz.convert's one rule
                else:
                    by = None
            elif type(y) is BatchedTensor and y._batcher is self:
                if (type(x) is list or type(x) is tuple) and holds_tensor(x):
                    return perform_stacked(self, op, args, params)
                bx = None
                by = y._batch_axis
                y = y._batched
            elif ((type(x) is list or type(x) is tuple) and holds_tensor(x)) or (
                (type(y) is list or type(y) is tuple) and holds_tensor(y)
            ):
                return perform_stacked(self, op, args, params)
            else:  # nothing here is batched by this vmap
                return perform_args(op, args, params)
            if rule is _elementwise:
                # `batching.elementwise`'s cases that need no moves, inlined: most ops of
                # a vmapped function are these. A binary op keeps the layout when the batch
                # axes line up, or when the unbatched operand broadcasts from the right
                # past the batched one's batch axis.
                if bx == by:
                    if x.ndim == y.ndim:
                        out_axis = bx
                elif by is None:  # (a Python number has no dimensions: `x * 2.0`)
                    if type(y) is float or type(y) is int:
                        out_axis = bx
                    elif isinstance(y, Tensor) and y.ndim < x.ndim - bx:
                        out_axis = bx
                elif bx is None:
                    if type(x) is float or type(x) is int:
                        out_axis = by
                    elif isinstance(x, Tensor) and x.ndim < y.ndim - by:
                        out_axis = by
            # A tuple to perform the op on as it is; lists for a rule, as rules take them
            if out_axis >= 0:
                values = (x, y)
            else:
                values, batch_axes = [x, y], [bx, by]
        elif arity == 1:
            x = args[0]
            if type(x) is BatchedTensor and x._batcher is self:
                if rule is _elementwise:  # a unary op keeps the layout, wherever the axis is
                    out_axis = x._batch_axis
                    values = (x._batched,)
                else:
                    values, batch_axes = [x._batched], [x._batch_axis]
            elif (type(x) is list or type(x) is tuple) and holds_tensor(x):
                return perform_stacked(self, op, args, params)
            else:
                return perform_args(op, args, params)
        else:  # one pass over the arguments
            batch_axes: list[int | None] | None = None
            i = 0
            for a in args:  # (no `enumerate`: its tuple per argument costs more than a count)
                if type(a) is BatchedTensor and a._batcher is self:
                    if batch_axes is None:  # the first view: copy the arguments once
                        values = list(args)
                        batch_axes = [None] * arity
                    values[i] = a._batched
                    batch_axes[i] = a._batch_axis
                elif (type(a) is list or type(a) is tuple) and holds_tensor(a):
                    return perform_stacked(self, op, args, params)  # kenaz.convert's one rule
                i += 1
            if batch_axes is None:  # nothing here is batched by this vmap
                return perform_args(op, args, params)
        try:
            if out_axis >= 0:
                out = perform_args(op, values, params)
            elif params:
                out, out_axis = (rule or _per_example_loop)(op, values, batch_axes, **params)
            else:  # (no empty `**params`: it would build a dict)
                out, out_axis = (rule or _per_example_loop)(op, values, batch_axes)
        except ShapeError as error:  # NumPy saw batched shapes; the user wrote per-example ones
            raise per_example_shape_error(op.name, args, error) from None
        if op.multiple_results:
            return self._views_of(out, out_axis)
        if out_axis is None:
            return out
        view = _new(BatchedTensor)  # `self.view`, inlined: this runs once per op
        view._batched = out
        view._batch_axis = out_axis
        view._batcher = self
        view._example_shape = None
        view._trace = None
        return view

    def _views_of(self, outs: Sequence[Any], axes: Sequence[int | None]) -> tuple[Any, ...]:
        """The views of a multiple-result op's outputs. (A method of its own: a generator
        in ``handle`` would make ``self`` a cell, allocated at every op.)"""
        return tuple(self.view(o, a) for o, a in zip(outs, axes, strict=True))

    def handle_call(self, call: Any, args: tuple, params: dict) -> Any:
        """A call: its batching rule (as for any op), or, without one, its function
        under this handler when one of its arguments is batched here."""
        if call.batch is None and any(
            type(a) is BatchedTensor and a._batcher is self for a in args
        ):
            return self.run_call(call, args, params)
        return self.handle(call, args, params)


# -- the fallback for ops without a batching rule ----------------------------------------
_warned: set[str] = set()
fallback_count = 0  # how many ops ran through the fallback (read by kenaz.testing.batching)


def _per_example_loop(op: Op, args: list, batch_axes: list, **params: Any) -> Any:
    """Batching by running ``op`` once per example and stacking the results."""
    global fallback_count
    fallback_count += 1
    if op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(
            f"kenaz.vmap: op {op.name!r} has no batching rule, so it runs once per example "
            "(slow); give it one with Op(..., batch=rule)",
            stacklevel=4,
        )
    size = next(a.shape[ax] for a, ax in zip(args, batch_axes, strict=True) if ax is not None)
    results = [op(*_example(args, batch_axes, i), **params) for i in range(size)]
    if op.multiple_results:
        columns = zip(*results, strict=True)
        return tuple(shape_ops.stack(list(c)) for c in columns), (0,) * len(results[0])
    return shape_ops.stack(results), 0


def _example(args: Sequence[Any], batch_axes: Sequence[int | None], index: int) -> list[Any]:
    return [
        a if ax is None else take_example(a, ax, index)
        for a, ax in zip(args, batch_axes, strict=True)
    ]


def take_example(x: Any, batch_axis: int, index: int) -> Tensor:
    """Example ``index`` of ``x`` along ``batch_axis``."""
    return indexing.getitem(x, (slice(None),) * batch_axis + (index,))


# -- batching a call's functions (for their batching rules) ---------------------------------
def vmap_flat(
    fn: Callable[..., Sequence[Any]], values: Sequence[Any], axes: Sequence[int | None], size: int
) -> list[tuple[Any, int | None]]:
    """Run ``fn`` on per-example views of ``values``; each output's batch and batch axis.

    Like ``vmap`` with the output axes left where the ops put them (``None``
    for an output that does not depend on the batch). Calls' batching rules
    use it to batch the functions they carry.
    """
    batcher = BatchHandler(size)
    views = batcher.views(values, axes)
    try:
        with handler(batcher):
            outs = fn(*views)
        return [
            (o._batched, o._batch_axis)
            if type(o) is BatchedTensor and o._batcher is batcher
            else (o, None)
            for o in outs
        ]
    finally:
        batcher.alive = False


def batch_first(value: Any, axis: int | None, size: int) -> Tensor:
    """``value`` with its batch axis at 0 (broadcast when it has none)."""
    value = value if isinstance(value, Tensor) else as_tensor(value)
    if axis is None:
        expanded = shape_ops.expand_dims(value, 0)
        return shape_ops.broadcast_to(expanded, (size,) + value.shape)
    return shape_ops.moveaxis(value, axis, 0) if axis != 0 else value


def batched_function(fn: Callable[..., Sequence[Any]], axes: Sequence[int | None], size: int):
    """``fn`` of flat leaves, batched over ``axes``: every output with its batch axis first."""

    def batched(*leaves: Any) -> tuple[Tensor, ...]:
        return tuple(batch_first(o, a, size) for o, a in vmap_flat(fn, leaves, axes, size))

    return batched


# -- vmap ----------------------------------------------------------------------------------
P = ParamSpec("P")
Out = TypeVar("Out")  # a batch of outputs has the output's type (a tensor, a tuple of them...)


def vmap(
    f: Callable[P, Out],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    method: str = "vectorize",
) -> Callable[P, Out]:
    """Vectorize ``f`` over a batch axis of its inputs.

    ``vmap(f)(xs)`` computes ``stack([f(x) for x in xs])``, but (by default)
    runs every op once over the whole batch through its batching rule.

    Parameters
    ----------
    f : callable
        Function of pytrees of tensors, written for one example.
    in_axes : int, None or pytree, optional
        Which axis of each positional argument is the batch axis (negative
        counts from the end); ``None`` for an argument that is shared by all
        examples. A tuple gives one entry per argument, and each entry may be
        a pytree prefix of that argument. Keyword arguments are batched on
        axis 0.
    out_axes : int, None or pytree, optional
        Where the batch axis goes in each output; ``None`` for an output that
        does not depend on the batched inputs.
    axis_size : int, optional
        The batch size; required only when no input is batched.
    method : {"vectorize", "loop"}, optional
        ``"loop"`` runs ``f`` once per example and stacks the results: slow,
        but any Python code works, including control flow on values.

    Returns
    -------
    callable
        The batched function.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import vmap, grad
    >>> xs = knp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> vmap(lambda x: x @ x)(xs)
    Tensor([ 5., 25., 61.])
    >>> vmap(grad(lambda x: knp.sum(x**3)))(xs)
    Tensor([[  3.,  12.],
            [ 27.,  48.],
            [ 75., 108.]])
    >>> vmap(lambda x, y: x * y, in_axes=(0, None))(xs, knp.array([10.0, 100.0]))
    Tensor([[ 10., 200.],
            [ 30., 400.],
            [ 50., 600.]])
    """
    in_axes = check_vmap_arguments(in_axes, out_axes, axis_size, method)

    def batched_f(*args: P.args, **kwargs: P.kwargs) -> Out:
        return vmap_call(f, args, kwargs, in_axes, out_axes, axis_size, method)

    return wraps(f, batched_f)


def vmap_call(f: Callable, args: tuple, kwargs: dict, in_axes: Any = 0, out_axes: Any = 0,
              axis_size: int | None = None, method: str = "vectorize") -> Any:  # fmt: skip
    """``vmap(f, in_axes, out_axes, axis_size, method)(*args, **kwargs)``, its arguments
    already checked: for a transformation that batches a new function per call (jacrev)."""
    if method == "vectorize" and not kwargs:
        simple = _simple_inputs(args, in_axes, axis_size)
        if simple is not None:  # tensors and tuples of leaves, int axes: no pytree work
            return _run_simple(f, args, *simple, out_axes)
    inputs = _Inputs(args, kwargs, in_axes)
    size = inputs.batch_size(axis_size)
    if method == "loop":
        return _run_per_example(f, inputs, size, out_axes)
    return _run_vectorized(f, inputs, size, out_axes)


def _simple_inputs(args: tuple, in_axes: Any, axis_size: int | None) -> tuple | None:
    """The batch axis of each argument and the batch size, for the common call that needs
    no pytree broadcasting: every batched argument a tensor with an int axis in range, the
    others tensors, numbers or tuples of them, and the sizes agreeing (with ``axis_size``
    too). None for anything else: :class:`_Inputs` then takes it, and finds any error.

    What it gives is what :class:`_Inputs` would: a tuple of leaves passed with axis None is
    rebuilt there as an equal tuple, and a batched tensor's axis taken modulo its rank."""
    count = len(args)
    if type(in_axes) is tuple:
        if len(in_axes) != count:
            return None
    elif in_axes is not None and type(in_axes) is not int:
        return None
    axes: list[int | None] = []
    size = None
    entries = in_axes if type(in_axes) is tuple else (in_axes,) * count
    for arg, entry in zip(args, entries):
        if entry is None:
            if type(arg) not in LEAF_TYPES:
                if type(arg) is not tuple:
                    return None
                for item in arg:
                    if type(item) not in LEAF_TYPES:
                        return None
            axes.append(None)
        elif type(entry) is int and isinstance(arg, Tensor):
            ndim = arg.ndim
            if not -ndim <= entry < ndim:
                return None
            axis = entry % ndim
            n = arg.shape[axis]
            if size is not None and n != size:
                return None
            size = n
            axes.append(axis)
        else:
            return None
    if size is None or (axis_size is not None and axis_size != size):
        return None
    return axes, size


def _run_simple(f: Callable, args: tuple, axes: list, size: int, out_axes: Any) -> Any:
    """:func:`_run_vectorized` for the arguments :func:`_simple_inputs` took."""
    batcher = BatchHandler(size)
    views = []
    for a, axis in zip(args, axes):  # (a loop: a comprehension would make `batcher` a cell)
        views.append(a if axis is None else batcher.view(fresh_identity(a), axis))
    try:
        result = run_in("vmap", f, views, batcher)
        if type(out_axes) is int and out_axes == 0:  # the default: batch axes first
            if type(result) is BatchedTensor:
                if result._batcher is batcher and result._batch_axis == 0:
                    return result._batched  # one output, batched along axis 0: no move
            elif type(result) is tuple:  # a tuple of them (grad's of a tuple of parameters)
                outs = []
                for leaf in result:
                    if type(leaf) is not BatchedTensor or leaf._batcher is not batcher:
                        break
                    if leaf._batch_axis != 0:
                        break
                    outs.append(leaf._batched)
                else:
                    return tuple(outs)  # what `_unbatch_outputs` gives them, without moves
        return _unbatch_outputs(result, batcher, out_axes)
    finally:
        batcher.alive = False


class _Inputs:
    """The flattened arguments of a vmapped call and the batch axis of each leaf.

    Each positional argument (and keyword argument) is flattened on its own,
    so that the common ``in_axes`` (an int, None, or a tuple of them) needs
    no pytree broadcasting; paths for error messages are found only on error.
    """

    def __init__(self, args: tuple, kwargs: dict, in_axes: Any) -> None:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"kenaz.vmap: in_axes has {len(in_axes)} entries but the function was called "
                f"with {len(args)} positional argument{'s' if len(args) != 1 else ''}; give one "
                "entry per argument, or a single int/None for all of them"
            )
        entries = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        self.args, self.kwargs = args, kwargs
        self.leaves: list[Any] = []
        self.axes: list[int | None] = []
        # (key, treedef or None for a lone tensor, first leaf, end)
        self.parts: list[tuple[Any, optree.PyTreeSpec | None, int, int]] = []
        for position, (arg, entry) in enumerate(zip(args, entries, strict=True)):
            self._add(position, arg, entry)
        for name, value in kwargs.items():
            self._add(name, value, 0)

    def _add(self, key: Any, value: Any, entry: Any) -> None:
        if isinstance(value, Tensor):  # the common case: a single leaf, no pytree to flatten
            leaves, treedef = [value], None
        else:
            leaves, treedef = tree.flatten(value, none_is_leaf=True)
        if entry is None or isinstance(entry, (int, np.integer)):
            axes = [entry] * len(leaves)
        else:
            axes = axes_prefix(entry, value, f"in_axes entry for {argument_name(key)}")
        start = len(self.leaves)
        self.leaves.extend(leaves)
        self.parts.append((key, treedef, start, len(self.leaves)))
        if entry is None:  # a shared argument
            self.axes.extend(axes)
            return
        for index, (leaf, axis) in enumerate(zip(leaves, axes, strict=True)):
            axis = None if leaf is None else self._normalize(axis, leaf, start + index)
            if axis is not None and not isinstance(leaf, Tensor):  # the one way in (convert)
                self.leaves[start + index] = as_tensor(leaf)
            self.axes.append(axis)

    def _normalize(self, axis: int | None, leaf: Any, index: int) -> int | None:
        if axis is None:
            return None
        ndim = leaf.ndim if isinstance(leaf, Tensor) else np.ndim(leaf)
        if not -ndim <= axis < ndim:
            raise ValueError(
                f"kenaz.vmap: in_axes asks for axis {axis} of {self.describe(index)}, which has "
                f"shape {_shape_of(leaf)}; the axis must be in [{-ndim}, {ndim}) (use None for "
                "an argument that is not batched)"
            )
        return int(axis) % ndim

    def describe(self, index: int) -> str:
        """Where leaf ``index`` is in the arguments, e.g. ``argument 0['w']`` (for errors)."""
        for key, _, start, stop in self.parts:
            if start <= index < stop:
                value = self.args[key] if isinstance(key, int) else self.kwargs[key]
                paths = optree.tree_paths(value, none_is_leaf=True, namespace=NAMESPACE)
                return argument_name(key) + "".join(f"[{k!r}]" for k in paths[index - start])
        return "an argument"

    def batch_size(self, axis_size: int | None) -> int:
        size = None
        for leaf, axis in zip(self.leaves, self.axes, strict=True):
            if axis is not None:
                n = leaf.shape[axis]  # a tensor: `_add` converted each batched leaf
                if size is not None and n != size:
                    raise ValueError(self._sizes_error())
                size = n
        if size is None:
            if axis_size is None:
                raise ValueError(
                    "kenaz.vmap: no argument is batched (all in_axes are None, or there are no "
                    "arguments), so the batch size is unknown; pass axis_size="
                )
            return int(axis_size)
        if axis_size is not None and axis_size != size:
            raise ValueError(
                f"kenaz.vmap: axis_size={axis_size} but the batched arguments have size {size}"
            )
        return size

    def _sizes_error(self) -> str:
        listing = ", ".join(
            f"{self.describe(i)}: {_shape_of(leaf)[axis]}"
            for i, (leaf, axis) in enumerate(zip(self.leaves, self.axes, strict=True))
            if axis is not None
        )
        return (
            f"kenaz.vmap: the batched arguments have different sizes along their batch axes "
            f"({listing}); they must all be equal"
        )

    def rebuild(self, leaves: Sequence[Any]) -> tuple[tuple, dict]:
        values = [
            leaves[a] if td is None else tree.unflatten(td, leaves[a:b])
            for _, td, a, b in self.parts
        ]
        count = len(self.args)
        return tuple(values[:count]), dict(zip(self.kwargs, values[count:], strict=True))


def _shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tensor) else np.shape(x)


def _run_vectorized(f: Callable, inputs: _Inputs, size: int, out_axes: Any) -> Any:
    batcher = BatchHandler(size)
    args, kwargs = inputs.rebuild(batcher.views(inputs.leaves, inputs.axes))
    try:
        function = functools.partial(f, **kwargs) if kwargs else f
        result = run_in("vmap", function, args, batcher)
        return _unbatch_outputs(result, batcher, out_axes)
    finally:
        batcher.alive = False


def _output_axes(result: Any, out_axes: Any) -> tuple[list, list, optree.PyTreeSpec]:
    """Flatten ``result`` (``None`` leaves included) with the out axis of each leaf."""
    leaves, treedef = tree.flatten(result, none_is_leaf=True)
    if out_axes is None or isinstance(out_axes, (int, np.integer)):
        return leaves, [out_axes] * len(leaves), treedef
    return leaves, axes_prefix(out_axes, result, "out_axes"), treedef


def _unbatch_outputs(result: Any, batcher: BatchHandler, out_axes: Any) -> Any:
    leaves, axes, treedef = _output_axes(result, out_axes)
    outs = []
    for index, (leaf, axis) in enumerate(zip(leaves, axes, strict=True)):
        if leaf is None:
            outs.append(None)
        elif type(leaf) is BatchedTensor and leaf._batcher is batcher:
            if axis is None:
                raise ValueError(
                    f"kenaz.vmap: out_axes is None for output {output_name(result, index)}, "
                    "but that output depends on the batched inputs; give it a batch axis (e.g. 0)"
                )
            batched, source = leaf._batched, leaf._batch_axis
            if axis != source or source != 0:  # (axis 0 to axis 0, the usual: no move)
                destination = out_axis(axis, batched.ndim, result, index)
                batched = batching.move_axis(batched, source, destination)
            outs.append(batched)
        else:
            outs.append(_broadcast_unbatched(leaf, axis, batcher.axis_size, result, index))
    return tree.unflatten(treedef, outs)


def _broadcast_unbatched(leaf: Any, axis: int | None, size: int, result: Any, index: int) -> Any:
    """An output that does not depend on the batch: repeated ``size`` times along ``axis``."""
    if _is_float0(leaf):
        return _float0_stacked(leaf, axis, size, result, index)
    if not isinstance(leaf, Tensor):
        try:
            leaf = as_tensor(leaf)
        except TypeError:
            raise TypeError(
                f"kenaz.vmap: the function must return tensors, arrays or numbers (or pytrees "
                f"of them), got {type(leaf).__name__} at output {output_name(result, index)}"
            ) from None
    if axis is None:
        return leaf
    destination = out_axis(axis, leaf.ndim + 1, result, index)
    expanded = shape_ops.expand_dims(leaf, destination)
    target = expanded.shape[:destination] + (size,) + expanded.shape[destination + 1 :]
    return shape_ops.broadcast_to(expanded, target)


def _is_float0(leaf: Any) -> bool:
    return type(leaf) is np.ndarray and leaf.dtype == float0


def _float0_stacked(leaf: np.ndarray, axis: int | None, size: int, result: Any, index: int) -> Any:
    """A float0 output (the tangent of an integer result, as ``jvp`` gives it), batched.

    It holds no data, so its batched form is a float0 array with the batch axis inserted,
    as JAX returns it; it cannot become a Tensor, which arithmetic would accept.
    """
    if axis is None:
        return leaf
    destination = out_axis(axis, leaf.ndim + 1, result, index)
    shape = leaf.shape[:destination] + (size,) + leaf.shape[destination:]
    return np.zeros(shape, float0)


# -- method="loop" -----------------------------------------------------------------------
def _run_per_example(f: Callable, inputs: _Inputs, size: int, out_axes: Any) -> Any:
    results = []
    for i in range(size):
        args, kwargs = inputs.rebuild(_example(inputs.leaves, inputs.axes, i))
        results.append(f(*args, **kwargs))
    if not results:
        raise ValueError("kenaz.vmap: method='loop' needs a batch of at least one example")
    first_leaves, axes, treedef = _output_axes(results[0], out_axes)
    columns: list[list[Any]] = [[] for _ in first_leaves]
    for result in results:
        leaves, result_treedef = optree.tree_flatten(result, none_is_leaf=True, namespace=NAMESPACE)
        if result_treedef != treedef:
            raise ValueError(
                f"kenaz.vmap: with method='loop' every example must return the same structure; "
                f"got {treedef} and {result_treedef}"
            )
        for column, leaf in zip(columns, leaves, strict=True):
            column.append(leaf)
    outs = [
        _stack_column(column, axis, results[0], index)
        for index, (column, axis) in enumerate(zip(columns, axes, strict=True))
    ]
    return tree.unflatten(treedef, outs)


def _stack_column(column: list, axis: int | None, result: Any, index: int) -> Any:
    if column[0] is None:
        return None
    if axis is None:
        return column[0]
    if _is_float0(column[0]):
        return _float0_stacked(column[0], axis, len(column), result, index)
    tensors = [leaf if isinstance(leaf, Tensor) else as_tensor(leaf) for leaf in column]
    destination = out_axis(axis, tensors[0].ndim + 1, result, index)
    return shape_ops.stack(tensors, axis=destination)
