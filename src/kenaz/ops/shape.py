"""Shape primitives: reshape, broadcast_to, transpose, squeeze, expand_dims,
concatenate, flip, pad, repeat, tile; and composites built from them
(moveaxis, swapaxes, ravel, stack, split, ...).

All of them are linear: the jvp applies the op to the tangent and the vjp
applies its transpose to the cotangent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backend import NUMPY_TYPES, common, full_like, namespace
from ..convert import array_argument, as_tensor, register_stack
from ..effects import Op, each_argument
from ..tensor import Tensor, holds_tensor
from .axes import along_axes, batch_size, normalize_axes, scan, shape_of, shift_axes
from .axes import reduction as reduction_batch
from .linearity import linear


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tensor) else np.shape(x)


def _axes(axis, ndim: int, op: str) -> tuple[int, ...]:
    return normalize_axes(axis, ndim, op)


def _backend_reshape(x: Any, shape: tuple[int, ...], order: str) -> Any:
    xp = namespace(x)
    if order == "C":
        return xp.reshape(x, shape)
    # Column-major: reverse the axes, reshape row-major, reverse again.
    reversed_x = xp.permute_dims(x, tuple(range(x.ndim))[::-1])
    out = xp.reshape(reversed_x, shape[::-1])
    return xp.permute_dims(out, tuple(range(len(shape)))[::-1])


# -- what this family calls of the families above it ------------------------------------------
# Indexing (getitem) and the elementwise casts (astype, real) are families above this one:
# their rules use shape ops, so they import this module. The few shape functions that need
# them (slicing an axis, pad's pullback and tensor fill value, the cast in `sum_to`) call them
# through this table, which those modules fill when they load (`provide`): a lower layer
# reaches a higher one by registration, as Tensor's operators do, not by an import.
_above: dict[str, Callable[..., Any]] = {}


def provide(**functions: Callable[..., Any]) -> None:
    """Register functions of a family above this one, by name (``getitem``, ``astype``, ``real``).

    Called by kenaz.ops.indexing and kenaz.ops.elementwise when they load.

    Parameters
    ----------
    **functions : callable
        The functions, under the names the shape functions read them by.
    """
    _above.update(functions)


# -- reshape and broadcast_to ---------------------------------------------------------------
def _reshape_vjp(ans, x, shape, order):
    x_shape = x.shape
    return lambda g: _reshape(g, shape=x_shape, order=order)


def _reshape_batch(op, args, batch_axes, *, shape, order):
    (x,), (b,) = args, batch_axes
    size = _shape(x)[b]
    if order == "F":  # column-major: each example is contiguous when the batch axis is last
        x = move_axis(x, b, x.ndim - 1)
        return op(x, shape=shape + (size,), order=order), len(shape)
    return op(move_batch_to_front(x, b), shape=(size,) + shape, order=order), 0


_reshape = Op(
    "reshape",
    # The ndarray methods, not NumPy's Python-level wrappers: a third of their time.
    lambda x, shape, order: (
        np.asarray(x).reshape(shape, order=order)
        if type(x) in NUMPY_TYPES
        else _backend_reshape(x, shape, order)
    ),
    vjp=[_reshape_vjp],
    saves=[],  # shapes only: linear
    batch=_reshape_batch,
)
linear(_reshape)


def reshape(x, shape: int | Sequence[int], order: str = "C", *, copy: bool | None = None) -> Tensor:
    """Give ``x`` a new shape (``-1`` infers one dimension), as NumPy does; ``copy=True``
    returns new memory, ``copy=False`` refuses to copy (NumPy's meanings)."""
    if copy is not None:
        return _reshape_copy(x, shape, order, copy)
    if isinstance(x, Tensor):
        x_shape = x.shape
    else:  # a list of tensors: stacked before its shape is read
        x = array_argument(x)
        x_shape = _shape(x)
    # `map(int, ...)`, not a generator expression: a generator's frame costs as much as
    # the keyword-only `copy` above (CPython 3.11 does not specialize a call to a function
    # with keyword-only parameters: some 400 machine instructions per call).
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(int, shape))
    size = math.prod(x_shape)  # not np.prod: microseconds on a tuple
    if -1 in shape:  # resolve -1 here, so that rules and batching see the real shape
        known = math.prod([n for n in shape if n != -1])
        if shape.count(-1) > 1 or known == 0 or size % known:
            raise ValueError(
                f"kenaz.reshape: cannot reshape array of shape {x_shape} into {shape}"
            )
        shape = tuple(size // known if n == -1 else n for n in shape)
    if math.prod(shape) != size:
        raise ValueError(f"kenaz.reshape: cannot reshape array of shape {x_shape} into {shape}")
    if x_shape == shape and isinstance(x, Tensor):
        return x
    return _reshape(x, shape=shape, order=order)


def _reshape_copy(x, shape, order: str, copy: bool) -> Tensor:
    result = reshape(x, shape, order)
    if copy:  # new memory: a one-part concatenate copies (and is differentiable)
        flat = concatenate([reshape(result, (-1,))], axis=0)
        return reshape(flat, result.shape)
    source, made = getattr(x, "_value", None), getattr(result, "_value", None)
    if isinstance(source, np.ndarray) and isinstance(made, np.ndarray) and source.size and (
        not np.shares_memory(source, made)
    ):
        raise ValueError("kenaz.reshape: copy=False, but the new shape needs a copy")
    return result


def ravel(x) -> Tensor:
    """The elements of ``x`` as a 1-d tensor."""
    return reshape(x, (-1,))


def _broadcast_to_vjp(ans, x, shape):
    x_shape, x_dtype = x.shape, x.dtype
    return lambda g: sum_to(g, x_shape, x_dtype)


def _broadcast_to_batch(op, args, batch_axes, *, shape):
    (x,), (b,) = args, batch_axes
    x = move_batch_to_front(x, b, rank=len(shape))
    return op(x, shape=(x.shape[0],) + shape), 0


def _broadcast_to_impl(x: Any, shape: tuple[int, ...]) -> np.ndarray:
    if type(x) not in NUMPY_TYPES:
        return namespace(x).broadcast_to(x, shape)
    if np.ndim(x) == 0:  # a read-only view with zero strides, as np.broadcast_to makes,
        # built directly: a third of its time (a full sum's cotangent takes this path).
        value = np.asarray(x)
        view = np.ndarray(shape, value.dtype, value, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    return np.broadcast_to(x, shape)


_broadcast_to = Op(
    "broadcast_to",
    _broadcast_to_impl,
    vjp=[_broadcast_to_vjp],
    saves=[],  # shapes only: linear
    batch=_broadcast_to_batch,
)
linear(_broadcast_to)


def broadcast_to(array, shape: Sequence[int]) -> Tensor:
    """Broadcast ``x`` to ``shape`` (NumPy's rules)."""
    x = array  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    x_shape = _shape(x)
    try:
        if x_shape or min(shape, default=0) < 0:  # a 0-d value broadcasts to any shape
            np.broadcast_shapes(x_shape, shape)
    except ValueError:
        raise ValueError(
            f"kenaz.broadcast_to: cannot broadcast an array of shape {_shape(x)} to {shape}"
        ) from None
    if isinstance(x, Tensor) and x.shape == shape:
        return x
    return _broadcast_to(x, shape=shape)


# -- axis permutations --------------------------------------------------------------------------
def _transpose_vjp(ans, x, axes):
    inverse = tuple(int(i) for i in np.argsort(axes))
    return lambda g: _transpose(g, axes=inverse)


def _transpose_batch(op, args, batch_axes, *, axes):
    (x,), (b,) = args, batch_axes
    return op(x, axes=(b,) + shift_axes(axes, b)), 0


_transpose = Op(
    "transpose",
    lambda x, axes: (
        np.asarray(x).transpose(axes)
        if type(x) in NUMPY_TYPES
        else namespace(x).permute_dims(x, tuple(range(x.ndim))[::-1] if axes is None else axes)
    ),
    vjp=[_transpose_vjp],
    saves=[],  # shapes only: linear
    batch=_transpose_batch,
)
linear(_transpose)


def transpose(a, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes of ``x`` (reverse them when ``axes`` is None)."""
    x = a  # NumPy's name for the argument
    if isinstance(x, Tensor):
        ndim = x.ndim
    else:  # a list of tensors: stacked before its shape is read
        x = array_argument(x)
        ndim = len(_shape(x))
    if axes is None:
        axes = tuple(range(ndim))[::-1]
    else:
        given, axes = axes, []
        for a in given:  # a loop: a generator's frame cost more than the rest of transpose
            axes.append(int(a) % ndim if -ndim <= a < ndim else a)
        axes = tuple(axes)
        if sorted(axes) != list(range(ndim)):
            raise ValueError(
                f"kenaz.transpose: axes {axes} are not a permutation of the {ndim} axes "
                f"of an array of shape {_shape(x)}"
            )
    if axes == tuple(range(ndim)) and isinstance(x, Tensor):
        return x
    return _transpose(x, axes=axes)


def moveaxis(a, source, destination) -> Tensor:
    """Move axes of ``x`` from ``source`` to ``destination`` positions."""
    x = a  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    ndim = len(_shape(x))
    source = _axes_in_order(source, ndim, "moveaxis")
    destination = _axes_in_order(destination, ndim, "moveaxis")
    if len(source) != len(destination):
        raise ValueError("kenaz.moveaxis: source and destination need the same number of axes")
    order = [a for a in range(ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(x, order)


def _axes_in_order(axis, ndim: int, op: str) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(_axes(a, ndim, op)[0] for a in axes)


def swapaxes(a, axis1: int, axis2: int) -> Tensor:
    """Interchange two axes of ``x``."""
    x = a  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    ndim = len(_shape(x))
    a, b = _axes(axis1, ndim, "swapaxes")[0], _axes(axis2, ndim, "swapaxes")[0]
    if a == b and isinstance(x, Tensor):  # as `transpose` does for the identity
        return x
    order = list(range(ndim))
    order[a], order[b] = order[b], order[a]
    return _transpose(x, axes=tuple(order))  # a permutation: nothing for `transpose` to check


# -- adding and removing unit axes -----------------------------------------------------------
def _to_shape_of_input(ans, x, **params):
    x_shape = x.shape
    return lambda g: reshape(g, x_shape)


def _squeeze_batch(op, args, batch_axes, *, axis):
    (x,), (b,) = args, batch_axes
    return op(x, axis=shift_axes(axis, b)), b - sum(a < b for a in axis)


_squeeze = Op(
    "squeeze",
    lambda x, axis: (
        np.asarray(x).squeeze(axis) if type(x) in NUMPY_TYPES else namespace(x).squeeze(x, axis)
    ),
    vjp=[_to_shape_of_input],
    saves=[],  # shapes only: linear
    batch=_squeeze_batch,
)
linear(_squeeze)


def squeeze(a, axis: int | Sequence[int] | None = None) -> Tensor:
    """Remove unit axes (all of them when ``axis`` is None)."""
    x = a  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    x_shape = _shape(x)
    if axis is None:
        axes = tuple(i for i, n in enumerate(x_shape) if n == 1)
    else:
        axes = _axes(axis, len(x_shape), "squeeze")
        for a in axes:
            if x_shape[a] != 1:
                raise ValueError(
                    f"kenaz.squeeze: cannot select axis {a} of shape {x_shape}: its size is not 1"
                )
    return _squeeze(x, axis=axes) if axes else _as_tensor(x)


def _expand_dims_batch(op, args, batch_axes, *, axis):
    (x,), (b,) = args, batch_axes
    return op(move_batch_to_front(x, b), axis=tuple(a + 1 for a in axis)), 0


def _expand_dims_impl(x: Any, axis: tuple[int, ...]) -> np.ndarray:
    # x[:, None]: the view np.expand_dims makes, in a sixth of its time (no Python-level
    # argument handling; the per-example gradients of vmap(grad) insert many axes).
    if type(x) is not np.ndarray and type(x) in NUMPY_TYPES:  # other backends index alike
        x = np.asarray(x)
    ndim = x.ndim + len(axis)
    index: list[Any] = [slice(None)] * ndim
    for a in axis:
        index[a % ndim] = None
    return x[tuple(index)]


_expand_dims = Op(
    "expand_dims",
    _expand_dims_impl,
    vjp=[_to_shape_of_input],
    saves=[],  # shapes only: linear
    batch=_expand_dims_batch,
)
linear(_expand_dims)


def expand_dims(a, axis: int | Sequence[int]) -> Tensor:
    """Insert unit axes at the positions ``axis`` of the result."""
    x = a  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    return _expand_dims(x, axis=_axes(axis, len(_shape(x)) + count, "expand_dims"))


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


# -- joining and splitting ---------------------------------------------------------------------
def _concatenate_vjp(index, ans, *xs, axis):
    start = int(sum(_shape(x)[axis] for x in xs[:index]))
    stop = start + _shape(xs[index])[axis]
    x_shape, x_dtype = xs[index].shape, xs[index].dtype  # a tracked argument is a Tensor
    if x_dtype == ans.dtype:
        return lambda g: slice_axis(g, axis, start, stop)
    # Inputs of mixed dtypes (float32 with float64): the cotangent takes the input's dtype.
    return lambda g: sum_to(slice_axis(g, axis, start, stop), x_shape, x_dtype)


def _concatenate_jvp(index, t, ans, *xs, axis):
    start = int(sum(_shape(x)[axis] for x in xs[:index]))
    widths = [(0, 0)] * ans.ndim
    widths[axis] = (start, ans.shape[axis] - start - t.shape[axis])
    padded = pad(t, widths)
    # Inputs of mixed dtypes: the tangent takes the output's dtype.
    return padded if padded.dtype == ans.dtype else sum_to(padded, ans.shape, ans.dtype)


def _concatenate_batch(op, args, batch_axes, *, axis):
    size = batch_size(args, batch_axes)
    xs = [with_batch_in_front(x, b, size) for x, b in zip(args, batch_axes, strict=True)]
    return op(*xs, axis=axis + 1), 0


_concatenate = Op(
    "concatenate",
    lambda *xs, axis: (
        np.concatenate(xs, axis=axis)
        if NUMPY_TYPES.issuperset(map(type, xs))  # in C: a generator costs a frame
        else _backend_concat(xs, axis)
    ),
    jvp=each_argument(_concatenate_jvp),
    vjp=each_argument(_concatenate_vjp),
    saves=each_argument(lambda index: ()),  # shapes only: linear
    batch=_concatenate_batch,
)


def concatenate(xs: Sequence[Any], axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis (of the flattened inputs when ``axis`` is None)."""
    # Each item a list of tensors is stacked before its shape is read.
    xs = [x if isinstance(x, Tensor) else array_argument(x) for x in xs]
    if not xs:
        raise ValueError("kenaz.concatenate: need at least one array to concatenate")
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    shapes = [x.shape if isinstance(x, Tensor) else np.shape(x) for x in xs]
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError("kenaz.concatenate: zero-dimensional arrays cannot be concatenated")
    axis = _axes(axis, ndim, "concatenate")[0]
    for s in shapes:
        if len(s) != ndim or s[:axis] + s[axis + 1 :] != shapes[0][:axis] + shapes[0][axis + 1 :]:
            raise ValueError(
                f"kenaz.concatenate: shapes {shapes} differ outside the concatenation axis {axis}"
            )
    return _concatenate(*xs, axis=axis)


def stack(xs: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors of the same shape along a new axis."""
    xs = [x if isinstance(x, Tensor) else array_argument(x) for x in xs]
    if not xs:
        raise ValueError("kenaz.stack: need at least one array to stack")
    shapes = {_shape(x) for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"kenaz.stack: all inputs must have the same shape, got {sorted(shapes)}")
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)


def slice_axis(x, axis: int, start: int, stop: int, step: int = 1) -> Tensor:
    """``x[..., start:stop:step, ...]`` with the slice on ``axis``."""
    index = (slice(None),) * axis + (slice(start, stop, step),)
    return _above["getitem"](x, index)  # indexing, a family above: see `provide`


def split(ary, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Split ``ary`` into sub-tensors along ``axis`` (NumPy's ``split``)."""
    x = ary  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    x_shape = _shape(x)
    axis = _axes(axis, len(x_shape), "split")[0]
    n = x_shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(
                f"kenaz.split: an axis of length {n} does not split into {sections} equal sections"
            )
        bounds = list(range(0, n + 1, n // sections)) if n else [0] * (sections + 1)
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    return [slice_axis(x, axis, a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _backend_concat(xs: tuple, axis: int) -> Any:
    xp, xs = common(xs)
    return xp.concat([xp.asarray(x) for x in xs], axis=axis)


# -- flip, pad, repeat, tile ---------------------------------------------------------------
_flip = Op(
    "flip",
    lambda x, axis: np.flip(x, axis) if type(x) in NUMPY_TYPES else namespace(x).flip(x, axis=axis),
    vjp=[lambda ans, x, axis: lambda g: _flip(g, axis=axis)],
    saves=[],  # shapes only: linear
    batch=along_axes,
)
linear(_flip)


def flip(m, axis: int | Sequence[int] | None = None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    x = m  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _flip(x, axis=_axes(axis, len(_shape(x)), "flip"))


def _pad_vjp(ans, x, pad_width, constant_values):
    x_shape = x.shape
    index = tuple(slice(before, before + n) for (before, _), n in zip(pad_width, x_shape))
    getitem = _above["getitem"]  # indexing, a family above: see `provide`
    return lambda g: getitem(g, index)


def _pad_batch(op, args, batch_axes, *, pad_width, constant_values):
    (x,), (b,) = args, batch_axes
    widths = pad_width[:b] + ((0, 0),) + pad_width[b:]
    return op(x, pad_width=widths, constant_values=constant_values), b


def _backend_pad(x: Any, pad_width: tuple, constant_values: Any) -> Any:
    """A constant pad with the standard's functions: blocks of the constant concatenated
    on each side of each axis (the standard has no ``pad``)."""
    xp = namespace(x)
    for axis, (before, after) in enumerate(pad_width):
        parts = []
        for width in (before, after):
            block_shape = tuple(x.shape[:axis]) + (width,) + tuple(x.shape[axis + 1 :])
            parts.append(xp.full(block_shape, constant_values, dtype=x.dtype))
        x = xp.concat([parts[0], x, parts[1]], axis=axis)
    return x


_pad = Op(
    "pad",
    lambda x, pad_width, constant_values: (
        np.pad(x, pad_width, constant_values=constant_values)
        if type(x) in NUMPY_TYPES
        else _backend_pad(x, pad_width, constant_values)
    ),
    jvp=[
        lambda t, ans, x, pad_width, constant_values: _pad(
            t, pad_width=pad_width, constant_values=0
        )
    ],
    vjp=[_pad_vjp],
    saves=[],  # shapes only: linear
    batch=_pad_batch,
)


def pad(x, pad_width, mode: str = "constant", constant_values: float = 0) -> Tensor:
    """Pad ``x`` with a constant (``mode="constant"``; other modes are not supported yet)."""
    if mode != "constant":
        raise NotImplementedError(f"kenaz.pad: mode {mode!r} is not supported; use 'constant'")
    if not isinstance(x, Tensor):
        x = array_argument(x)
    ndim = len(_shape(x))
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2))
    widths = tuple((int(a), int(b)) for a, b in widths)
    if isinstance(constant_values, Tensor) or (
        isinstance(constant_values, (list, tuple)) and holds_tensor(constant_values)
    ):
        # A tensor fill value is differentiable: pad with 0, then add it times the border.
        x, fill = as_tensor(x), as_tensor(constant_values)
        if fill.ndim != 0:
            raise NotImplementedError(
                "kenaz.pad: constant_values as a tensor must be a scalar to be differentiated; "
                "pad with 0 and add the border values yourself"
            )
        border = np.pad(np.zeros(x.shape, dtype=x.dtype), widths, constant_values=1)
        padded = _pad(x, pad_width=widths, constant_values=0)
        return padded + _above["astype"](fill, x.dtype) * border  # see `provide`
    return _pad(x, pad_width=widths, constant_values=constant_values)


def _repeat_vjp(ans, x, repeats, axis):
    x_shape = x.shape
    n = x_shape[axis]
    groups = np.repeat(np.arange(n), repeats)
    index = (slice(None),) * axis + (groups,)

    def pullback(g):
        zeros = Tensor(full_like(g, x_shape, 0, g.dtype))
        return zeros.at[index].add(g)

    return pullback


def _backend_repeat(x: Any, repeats: Any, axis: int) -> Any:
    xp = namespace(x)
    if not isinstance(repeats, int):
        repeats = xp.asarray(np.asarray(repeats))
    return xp.repeat(x, repeats, axis=axis)


_repeat = Op(
    "repeat",
    lambda x, repeats, axis: (
        np.repeat(x, repeats, axis=axis)
        if type(x) in NUMPY_TYPES
        else _backend_repeat(x, repeats, axis)
    ),
    vjp=[_repeat_vjp],
    saves=[],  # shapes only: linear
    batch=scan,  # acts along one axis and keeps the layout, like a scan
)
linear(_repeat)


def repeat(a, repeats, axis: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None)."""
    x = a  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _axes(axis, len(_shape(x)), "repeat")[0]
    repeats = int(repeats) if np.ndim(repeats) == 0 else tuple(int(r) for r in repeats)
    return _repeat(x, repeats=repeats, axis=axis)


def _tile_vjp(ans, x, reps):
    x_shape = x.shape
    ndim = len(reps)
    full = (1,) * (ndim - len(x_shape)) + x_shape
    interleaved = tuple(n for pair in zip(reps, full) for n in pair)

    def pullback(g):
        grouped = reshape(g, interleaved)
        summed = _sum(grouped, axis=tuple(range(0, 2 * ndim, 2)), keepdims=False)
        return reshape(summed, x_shape)

    return pullback


def _tile_batch(op, args, batch_axes, *, reps):
    (x,), (b,) = args, batch_axes
    return op(move_batch_to_front(x, b, rank=len(reps)), reps=(1,) + reps), 0


_tile = Op(
    "tile",
    lambda x, reps: np.tile(x, reps) if type(x) in NUMPY_TYPES else namespace(x).tile(x, reps),
    vjp=[_tile_vjp],
    saves=[],  # shapes only: linear
    batch=_tile_batch,
)
linear(_tile)


def tile(A, reps) -> Tensor:  # noqa: N803  (NumPy's name)
    """Repeat ``x`` ``reps`` times along each axis (NumPy's ``tile``)."""
    x = A  # NumPy's name for the argument
    if not isinstance(x, Tensor):
        x = array_argument(x)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    ndim = max(len(reps), len(_shape(x)))
    return _tile(x, reps=(1,) * (ndim - len(reps)) + reps)


# -- moving batch axes (for batching rules: they perform the primitives above) -------------
def move_axis(x: Tensor, source: int, destination: int) -> Tensor:
    """``moveaxis`` for non-negative axes, straight to the primitive (rules run per op)."""
    if source == destination:
        return x
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return _transpose(x, axes=tuple(order))


def move_batch_to_front(x: Any, axis: int | None, rank: int | None = None) -> Any:
    """Move the batch axis of ``x`` to 0; with ``rank``, insert unit axes after it so
    that the per-example part has ``rank`` dimensions (right-aligned broadcasting)."""
    if axis is None:
        return x
    x_shape = x.shape
    if axis != 0:
        x = move_axis(x, axis, 0)
        x_shape = (x_shape[axis],) + x_shape[:axis] + x_shape[axis + 1 :]
    if rank is not None and len(x_shape) - 1 < rank:
        padded = (x_shape[0],) + (1,) * (rank - len(x_shape) + 1) + x_shape[1:]
        x = _reshape(x, shape=padded, order="C")
    return x


def with_batch_in_front(x: Any, axis: int | None, size: int) -> Any:
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast (a view) to ``size``."""
    if axis is not None:
        return move_batch_to_front(x, axis)
    x_shape = shape_of(x)
    return _broadcast_to(_expand_dims(x, axis=(0,)), shape=(size,) + x_shape)


# -- sum, the adjoint of broadcasting ------------------------------------------------------
# Here rather than with the other reductions (kenaz.ops.reduction re-exports it): the
# derivative of a broadcast is a sum and that of a sum a broadcast, so both live in
# the lowest family, and every family above undoes broadcasting with `sum_to`.
def expand_reduced(g: Tensor, axis: tuple[int, ...], keepdims: bool) -> Tensor:
    """Re-insert reduced axes (as size 1) into a reduction's output or cotangent."""
    return g if keepdims or not axis else expand_dims(g, axis)


def sum_to(x: Tensor, target_shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """Sum ``x`` down to ``target_shape`` (undoing broadcasting) and cast to ``dtype``."""
    if x.shape != target_shape:
        lead = x.ndim - len(target_shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(target_shape) if n == 1 and x.shape[lead + i] != 1
        )
        if axes:  # without leading axes, keeping the summed ones gives the target shape
            x = _sum(x, axis=axes, keepdims=not lead)
        if x.shape != target_shape:
            x = reshape(x, target_shape)
    if x.dtype != dtype:
        # The casts are elementwise ops, a family above this one (whose rules use
        # `sum_to`): registered by it when it loads (see `provide`).
        astype, real = _above["astype"], _above["real"]
        x = astype(real(x) if x.dtype.kind == "c" and dtype.kind != "c" else x, dtype)
    return x


def _sum_vjp(ans, x, axis, keepdims):
    x_shape = x.shape
    # The primitive itself, not `broadcast_to`: the cotangent has the sum's shape, which
    # broadcasts to x's by construction, so the function's checks would find nothing (they
    # were 40% of a full sum's pullback).
    if axis == tuple(range(len(axis))):  # leading axes (a full sum): broadcasting restores them
        return lambda g: g if g.shape == x_shape else _broadcast_to(g, shape=x_shape)

    def pullback(g):
        g = expand_reduced(g, axis, keepdims)
        return g if g.shape == x_shape else _broadcast_to(g, shape=x_shape)

    return pullback


def _backend_sum(xp, x, axis, keepdims):
    if xp is not np and xp.isdtype(x.dtype, "bool"):  # the standard sums numbers only
        x = xp.astype(x, xp.int64)  # NumPy's count: its default integer
    return xp.sum(x, axis=axis, keepdims=keepdims)


_sum = Op(
    "sum",
    lambda x, axis, keepdims: _backend_sum(namespace(x), x, axis, keepdims),
    # np.add.reduce is np.sum without its Python-level dispatch (a microsecond).
    numpy_impl=np.add.reduce,
    vjp=[_sum_vjp],
    saves=[],  # shapes only: linear
    batch=reduction_batch,
)
linear(_sum)

register_stack(stack)  # kenaz.convert stacks lists of tensors with it
