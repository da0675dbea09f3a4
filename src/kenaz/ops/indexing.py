"""Indexing: ``x[index]`` (gather) and ``x.at[index].set/add/...`` (scatter).

Basic indexing (ints, slices, ``None``, ``...``: no index arrays) is its own
primitive, ``basic_index(x, index)``, with the index as its second argument:
``x[3]`` with no handler installed then costs a few Python operations more
than NumPy's own, not a general ``perform`` with parameters.

Other indices go to ``gather``. Its index is split into a static *spec* (ints,
slices, ``None``, ``...``, with a placeholder where an index array goes) and
the index arrays themselves, which are passed as arguments, so that ``vmap``
can batch them. Boolean masks become the integer arrays of their
``nonzero()``, as in NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import (
    NUMPY_TYPES,
    common,
    full_like,
    namespace,
    scatter_add,
    standard_index,
    take_flat,
)
from ..effects import Op, handlers_installed, reset_stack, set_stack
from ..tensor import Tensor
from . import batching, shape
from .elementwise import equal, where
from .linearity import linear


class _ArraySlot:
    """Placeholder in an index spec for the next index-array argument."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<array>"


ARRAY = _ArraySlot()


_BASIC_INDEX_TYPES = frozenset({int, slice, type(None), type(Ellipsis)})


def split_index(index: Any) -> tuple[tuple[Any, ...], list[Any]]:
    """Split a NumPy-style index into ``(spec, arrays)``."""
    # Fast path for basic indexing (`x[3]`, `x[2:10]`, `x[:, None]`): the spec is the index.
    if type(index) in _BASIC_INDEX_TYPES:
        return (index,), []
    if type(index) is tuple and all(type(item) in _BASIC_INDEX_TYPES for item in index):
        return index, []
    if not isinstance(index, tuple):
        index = (index,)
    spec: list[Any] = []
    arrays: list[Any] = []
    for item in index:
        # A Tensor is an index array: tested first, because an isinstance that fails on a
        # Tensor reads its `__class__` property (a Python call).
        if not isinstance(item, Tensor):
            if item is None or item is Ellipsis or isinstance(item, slice):
                spec.append(item)
                continue
            if isinstance(item, (bool, np.bool_)):
                raise TypeError(
                    "kenaz indexing: a Python bool is not a valid index; use a mask array"
                )
            if isinstance(item, (int, np.integer)):
                spec.append(int(item))
                continue
            item = np.asarray(item)
            if item.dtype == object or item.dtype.kind not in "biu":
                if item.size == 0:
                    item = item.astype(np.intp)
                else:
                    raise IndexError(
                        f"kenaz indexing: index arrays must be integer or boolean, "
                        f"got dtype {item.dtype}"
                    )
        # an index array (a Tensor, or what NumPy made of the item)
        if item.dtype == np.bool_:
            for part in np.nonzero(np.asarray(item)):
                spec.append(ARRAY)
                arrays.append(part)
            continue
        if item.dtype.kind not in "iu":
            raise IndexError(
                f"kenaz indexing: index arrays must be integer or boolean, got dtype {item.dtype}"
            )
        spec.append(ARRAY)
        arrays.append(item)
    return tuple(spec), arrays


def join_index(spec: tuple[Any, ...], arrays) -> tuple[Any, ...]:
    """Rebuild a NumPy index from ``spec`` and the NumPy values of its index arrays."""
    it = iter(arrays)
    return tuple(next(it) if item is ARRAY else item for item in spec)


def _zeros_like(x: Tensor) -> Tensor:
    return Tensor(full_like(x, x.shape, 0, x.dtype))


# -- gather ----------------------------------------------------------------------------
def _gather_impl(x, *arrays, spec):
    if type(x) not in NUMPY_TYPES:  # index arrays on x's backend, the index made standard
        xp = namespace(x)
        index = join_index(spec, arrays) if arrays else spec
        try:
            return x[standard_index(xp, x.ndim, index)]
        except IndexError:  # advanced indexing beyond the standard's: by positions
            if not arrays:
                raise
            return take_flat(xp, x, index)
    return x[join_index(spec, arrays) if arrays else spec]


def _gather_vjp(ans, x, *arrays, spec):
    x_shape, x_dtype = x.shape, x.dtype

    def pullback(g):
        zeros = Tensor(full_like(g, x_shape, 0, x_dtype))
        return _scatter["add"](zeros, g, *arrays, spec=spec)

    return pullback


# -- batching: where the axes of x[spec] go ---------------------------------------------
# With index arrays, the batched index is `x[arange(B)[:, None...], *spec]`: the
# batch positions become one more index array, so the batch axis leads the
# advanced-index axes. NumPy puts those first in the result unless the advanced
# indices (arrays and ints) of `spec` are adjacent and preceded by other axes;
# in that case (`before` > 0) the rule moves them back into place.
def _is_advanced(item: Any) -> bool:
    return item is ARRAY or type(item) is int


def _ellipsis_dims(spec: tuple[Any, ...], example_ndim: int) -> int:
    """How many axes ``...`` stands for (or the unindexed trailing axes, without one)."""
    return example_ndim - sum(1 for item in spec if item is not None and item is not Ellipsis)


def _advanced_adjacent(spec: tuple[Any, ...]) -> bool:
    """Whether the advanced indices of ``spec`` are next to each other (NumPy then keeps
    their axes in place; otherwise it puts them first)."""
    positions = [k for k, item in enumerate(spec) if _is_advanced(item)]
    return positions[-1] - positions[0] + 1 == len(positions)


def _dims_before_advanced(spec: tuple[Any, ...], example_ndim: int) -> int:
    """The number of result axes before the advanced-index axes of ``x[spec]``."""
    if not _advanced_adjacent(spec):
        return 0
    positions = [k for k, item in enumerate(spec) if _is_advanced(item)]
    ellipsis_dims = _ellipsis_dims(spec, example_ndim)
    return sum(ellipsis_dims if item is Ellipsis else 1 for item in spec[: positions[0]])


def _result_rank(spec: tuple[Any, ...], example_ndim: int, advanced_rank: int) -> int:
    """The rank of ``x[spec]`` for one example."""
    sliced = sum(1 for item in spec if item is None or isinstance(item, slice))
    return advanced_rank + sliced + _ellipsis_dims(spec, example_ndim)


def _batched_index_arrays(arrays, batch_axes, size: int) -> tuple[list[Any], int]:
    """The index arrays with a leading ``arange(size)`` one, all batch axes first."""
    pairs = list(zip(arrays, batch_axes, strict=True))
    rank = max(batching.ndim_of(a) - (b is not None) for a, b in pairs)
    positions = np.arange(size).reshape((size,) + (1,) * rank)
    moved = [batching.move_batch_to_front(a, b, rank) for a, b in pairs]
    return [positions, *moved], rank


def _swap_blocks(first: int, second: int, rest: int, offset: int) -> tuple[int, ...]:
    """The permutation that swaps a block of ``first`` axes with the ``second`` axes after it."""
    head = tuple(range(offset))
    return (
        head
        + tuple(range(offset + first, offset + first + second))
        + tuple(range(offset, offset + first))
        + tuple(range(offset + first + second, offset + first + second + rest))
    )


def _gather_batch(op, args, batch_axes, *, spec):
    size = batching.batch_size(args, batch_axes)
    x = batching.with_batch_in_front(args[0], batch_axes[0], size)
    example_ndim = x.ndim - 1
    arrays, array_axes = args[1:], batch_axes[1:]
    if all(b is None for b in array_axes):  # shared indices: a full slice over the batch axis
        out = op(x, *arrays, spec=(slice(None),) + spec)
        if not arrays or _advanced_adjacent(spec):
            return out, 0
        return out, max(batching.ndim_of(a) for a in arrays)  # advanced axes came first
    arrays, rank = _batched_index_arrays(arrays, array_axes, size)
    out = op(x, *arrays, spec=(ARRAY,) + spec)
    before = _dims_before_advanced(spec, example_ndim)
    if before:  # (B, advanced, before, after) -> (B, before, advanced, after)
        rest = out.ndim - 1 - rank - before
        out = shape.transpose(out, _swap_blocks(rank, before, rest, 1))
    return out, 0


gather = Op(
    "gather",
    _gather_impl,
    vjp=[_gather_vjp],
    batch=_gather_batch,
    saves=[(slice(1, None),)],  # the index arrays (and x's shape)
)
linear(gather)


# -- basic indexing: ints, slices, None and ... ------------------------------------------
# The index is a positional argument, not a parameter: `perform` then takes its unrolled
# two-argument path, and handlers see it as an argument without a rule (it carries no
# derivative and no batch axis, as it holds no Tensor).
def _as_spec(index: Any) -> tuple[Any, ...]:
    return index if type(index) is tuple else (index,)


def _basic_index_vjp(ans, x, index):
    x_shape, x_dtype, spec = x.shape, x.dtype, _as_spec(index)

    def pullback(g):
        zeros = Tensor(full_like(g, x_shape, 0, x_dtype))
        return _scatter["add"](zeros, g, spec=spec)

    return pullback


def _basic_index_batch(op, args, batch_axes):
    x, index = args
    x = batching.with_batch_in_front(x, batch_axes[0], batching.batch_size(args, batch_axes))
    return op(x, (slice(None),) + _as_spec(index)), 0  # basic indexing keeps the axis order


basic_index = Op(
    "basic_index",
    lambda x, index: (
        x[index] if type(x) in NUMPY_TYPES else x[standard_index(namespace(x), x.ndim, index)]
    ),
    vjp=[_basic_index_vjp, None],
    batch=_basic_index_batch,
    saves=[],  # x's shape, and the index (ints and slices, no array)
)
linear(basic_index)


def _is_basic_tuple(index: tuple[Any, ...]) -> bool:
    for item in index:
        if type(item) not in _BASIC_INDEX_TYPES:
            return False
    return True


_current_handlers = handlers_installed
_new_tensor = object.__new__


def getitem(x, index) -> Tensor:
    """``x[index]`` with NumPy's basic and advanced indexing."""
    # Basic indexing of a Tensor (bool, NumPy integers and Tensors as indices take the
    # general path). With no handler installed this is `perform(basic_index, x, index)`
    # with its eager branch inlined: the call of `perform` alone costs several times
    # NumPy's own `x[3]`. A batched view that escaped its vmap raises in `x._value`.
    index_type = type(index)
    if (
        index_type is int  # identity tests first: cheaper than the set lookup
        or index_type is slice
        or index_type in _BASIC_INDEX_TYPES
        or (index_type is tuple and _is_basic_tuple(index))
    ) and isinstance(x, Tensor):
        if _current_handlers() is not None:
            return basic_index(x, index)
        out = _new_tensor(Tensor)
        try:  # free until it raises
            out._value = x._value[index]
        except IndexError:  # another backend may want the standard's form of the index
            out._value = basic_index.impl(x._value, index)
        out._trace = None
        return out
    spec, arrays = split_index(index)
    if not arrays and isinstance(x, Tensor):  # NumPy integers as ints
        return basic_index(x, spec)
    return gather(x, *arrays, spec=spec)


def tensor_getitem(self: Tensor, index: Any) -> Tensor:
    """``x[index]`` on a Tensor (``Tensor.__getitem__``): :func:`getitem` for an ``x`` that
    is a Tensor, so without its ``isinstance`` tests (a tenth of ``x[3]``'s time)."""
    # getitem's code less those tests, and with `basic_index`'s call under a handler written
    # out (perform's first branch: two frames fewer per index under grad); a batched view
    # raises in `self._value`.
    index_type = type(index)
    if (
        index_type is int
        or index_type is slice
        or index_type in _BASIC_INDEX_TYPES
        or (index_type is tuple and _is_basic_tuple(index))
    ):
        stack = _current_handlers()
        if stack is not None:  # `basic_index(self, index)`: perform_args' first branch, no frame
            outside, innermost = stack
            token = set_stack(outside)
            try:
                return innermost.handle(basic_index, (self, index), {})
            finally:
                reset_stack(token)
        out = _new_tensor(Tensor)
        try:
            out._value = self._value[index]  # a view for slices, as NumPy's (and getitem's)
        except IndexError:
            out._value = basic_index.impl(self._value, index)
        out._trace = None
        return out
    spec, arrays = split_index(index)
    if not arrays:
        return basic_index(self, spec)
    return gather(self, *arrays, spec=spec)


# -- scatter -----------------------------------------------------------------------------
def _scatter_impl(mode: str):
    accumulate = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}

    def impl(x, values, *arrays, spec):
        if type(x) not in NUMPY_TYPES or type(values) not in NUMPY_TYPES:
            return _backend_scatter(mode, x, values, arrays, spec)
        out = np.array(x, copy=True)
        index = join_index(spec, arrays)
        values = np.asarray(values).astype(out.dtype, copy=False)
        if mode == "set":
            out[index] = values
        elif not arrays:  # basic indexing selects each element once
            out[index] = accumulate[mode](out[index], values)
        else:
            accumulate[mode].at(out, index, values)
        return out

    return impl


def _backend_scatter(mode: str, x, values, arrays, spec):
    """A scatter on another backend: ``add`` by its scatter-add (``kenaz.backend``), ``set``
    by item assignment on a copy; the other modes have no backend code yet."""
    xp, (x, values) = common((x, values))
    values = xp.astype(xp.asarray(values), x.dtype) if hasattr(values, "shape") else values
    if mode == "add":
        if not arrays:  # basic indexing names each position once
            out = xp.asarray(x, copy=True)
            index = standard_index(xp, x.ndim, spec)
            if None in index:  # the standard's setitem takes no new axes: drop them, and
                selected_shape = out[index].shape  # the unit axes they add to the values
                index = tuple(item for item in index if item is not None)
                values = xp.broadcast_to(values, selected_shape)
                values = xp.reshape(values, out[index].shape)
            out[index] = out[index] + values
            return out
        return scatter_add(xp, x, join_index(spec, arrays), values)
    if mode == "set":
        out = xp.asarray(x, copy=True)
        out[standard_index(xp, x.ndim, join_index(spec, arrays))] = values
        return out
    raise NotImplementedError(
        f"kenaz: .at[...].{mode} runs on NumPy only so far, not on {xp.__name__}"
    )


def _gathered_cotangent(values: Any, pick):
    """Pullback for ``values``: ``pick(g)`` (the cotangent at the index) summed to its shape."""
    v_shape, v_dtype = values.shape, values.dtype  # only a tracked Tensor gets a pullback

    def pullback(g):
        return shape.sum_to(pick(g), v_shape, v_dtype)

    return pullback


def _set_values_vjp(ans, x, v, *arrays, spec):
    """Pullback for the values of ``x.at[index].set(values)``.

    With duplicate positions in an index array only the update written last lands (the
    jvp rule, a scatter of the tangents, agrees), so only that one gets the cotangent:
    scattering each update's position number and reading it back tells which landed.
    """
    if not arrays:  # basic indexing names each position once
        return _gathered_cotangent(v, lambda g: gather(g, spec=spec))
    out_shape = ans.shape

    def landed_cotangent(g):
        picked = gather(g, *arrays, spec=spec)
        ids = Tensor(np.arange(picked.size, dtype=np.float64).reshape(picked.shape))
        written = _scatter["set"](Tensor(np.full(out_shape, -1.0)), ids, *arrays, spec=spec)
        return where(equal(gather(written, *arrays, spec=spec), ids), picked, 0)

    return _gathered_cotangent(v, landed_cotangent)


def _rules_set():
    jvp = [
        lambda t, ans, x, v, *a, spec: _scatter["set"](t, 0, *a, spec=spec),
        lambda t, ans, x, v, *a, spec: _scatter["set"](_zeros_like(ans), t, *a, spec=spec),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: _scatter["set"](g, 0, *a, spec=spec),
        _set_values_vjp,
    ]
    return jvp, vjp


def _rules_add():
    jvp = [
        lambda t, ans, x, v, *a, spec: t,
        lambda t, ans, x, v, *a, spec: _scatter["add"](_zeros_like(ans), t, *a, spec=spec),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: g,
        lambda ans, x, v, *a, spec: _gathered_cotangent(v, lambda g: gather(g, *a, spec=spec)),
    ]
    return jvp, vjp


def _rules_multiply():
    # Assumes each position is selected once, as JAX's rule does.
    jvp = [
        lambda t, ans, x, v, *a, spec: _scatter["multiply"](t, v, *a, spec=spec),
        lambda t, ans, x, v, *a, spec: _scatter["add"](
            _zeros_like(ans), gather(x, *a, spec=spec) * t, *a, spec=spec
        ),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: _scatter["multiply"](g, v, *a, spec=spec),
        lambda ans, x, v, *a, spec: _gathered_cotangent(
            v, lambda g: gather(g, *a, spec=spec) * gather(x, *a, spec=spec)
        ),
    ]
    return jvp, vjp


def _rules_chooser():
    # The derivative goes to whichever of x and the values ended up in the output,
    # split evenly on a tie (as `maximum` and JAX do), so `x.at[i].max(x[i])` is x.
    def hits(ans, x, v, a, spec):
        x_hits = (ans == x).astype(ans.dtype, copy=False)
        v_hits = (gather(ans, *a, spec=spec) == v).astype(ans.dtype, copy=False)
        return x_hits, v_hits, x_hits + _scatter["add"](_zeros_like(ans), v_hits, *a, spec=spec)

    def x_weight(ans, x, v, a, spec):
        x_hits, _, count = hits(ans, x, v, a, spec)
        return x_hits / count

    def v_weight(ans, x, v, a, spec):
        _, v_hits, count = hits(ans, x, v, a, spec)
        return v_hits / gather(count, *a, spec=spec)

    jvp = [
        lambda t, ans, x, v, *a, spec: t * x_weight(ans, x, v, a, spec),
        lambda t, ans, x, v, *a, spec: _scatter["add"](
            _zeros_like(ans), t * v_weight(ans, x, v, a, spec), *a, spec=spec
        ),
    ]
    vjp = [
        lambda ans, x, v, *a, spec: lambda g: g * x_weight(ans, x, v, a, spec),
        lambda ans, x, v, *a, spec: _gathered_cotangent(
            v, lambda g: gather(g, *a, spec=spec) * v_weight(ans, x, v, a, spec)
        ),
    ]
    return jvp, vjp


_RULES = {
    "set": _rules_set,
    "add": _rules_add,
    "multiply": _rules_multiply,
    "min": _rules_chooser,
    "max": _rules_chooser,
}
# What the rules of x and of the values read (kenaz.mutation): the index arrays (arguments 2
# on), and for multiply each other, for min and max the output and both.
_ARRAYS = slice(2, None)
_SAVES = {
    "set": [(_ARRAYS,), (_ARRAYS,)],
    "add": [(), (_ARRAYS,)],
    "multiply": [(1, _ARRAYS), (0, _ARRAYS)],
    "min": [(-1, 0, 1, _ARRAYS)] * 2,
    "max": [(-1, 0, 1, _ARRAYS)] * 2,
}


def _scatter_batch(op, args, batch_axes, *, spec):
    size = batching.batch_size(args, batch_axes)
    x = batching.with_batch_in_front(args[0], batch_axes[0], size)
    values, values_axis = args[1], batch_axes[1]
    example_ndim = x.ndim - 1
    if len(args) == 2:  # basic indexing: the batch axis leads x[:, spec] and the values
        rank = _result_rank(spec, example_ndim, 0)
        values = batching.move_batch_to_front(values, values_axis, rank)
        return op(x, values, spec=(slice(None),) + spec), 0
    arrays, advanced_rank = _batched_index_arrays(args[2:], batch_axes[2:], size)
    rank = _result_rank(spec, example_ndim, advanced_rank)
    values = batching.move_batch_to_front(values, values_axis, rank)
    before = _dims_before_advanced(spec, example_ndim)
    if before and batching.ndim_of(values) > 0:
        # The batched x[...] is laid out (B, advanced, before, after): lay values out alike.
        batched = values_axis is not None
        if not batched:
            values = batching.shape.reshape(values, _padded_shape(values, rank))
        rest = rank - before - advanced_rank
        values = shape.transpose(
            values, _swap_blocks(before, advanced_rank, rest, int(batched))
        )
    return op(x, values, *arrays, spec=(ARRAY,) + spec), 0


def _padded_shape(values: Any, rank: int) -> tuple[int, ...]:
    values_shape = batching.shape_of(values)
    return (1,) * (rank - len(values_shape)) + tuple(values_shape)


_scatter: dict[str, Op] = {}
for _mode, _rules in _RULES.items():
    _jvp, _vjp = _rules()
    _scatter[_mode] = Op(
        f"scatter_{_mode}",
        _scatter_impl(_mode),
        jvp=_jvp,
        vjp=_vjp,
        batch=_scatter_batch,
        saves=_SAVES[_mode],
    )


def scatter(x, index, values, mode: str) -> Tensor:
    """A copy of ``x`` with ``values`` combined into ``x[index]`` by ``mode``
    (``"set"``, ``"add"``, ``"multiply"``, ``"min"`` or ``"max"``)."""
    if mode not in _scatter:
        raise ValueError(f"kenaz scatter: unknown mode {mode!r}; use one of {sorted(_scatter)}")
    spec, arrays = split_index(index)
    return _scatter[mode](x, values, *arrays, spec=spec)


# Shape ops below call getitem (slicing an axis, pad's pullback): handed down, not imported.
shape.provide(getitem=getitem)
