"""NumPy's functions that write into their first argument: ``put``, ``place``,
``put_along_axis`` and ``fill_diagonal``, differentiable.

Outside transformations they change the array's memory and return None, as NumPy's
do. Under a transformation they compute the same update functionally (a scatter,
as ``x.at[index].set(values)``) and write it into the array, which then carries the
derivative of the values written (``kenaz.mutation.write_functional``).
``inplace=False`` (JAX's keyword) leaves the array alone and returns the updated
copy instead, also inside ``vmap`` and ``jit``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...convert import as_tensor, read_value
from ...mutation import in_place_target, is_tracked, transformation_running, write_functional
from ...ops import elementwise as ew
from ...ops import shape
from ...tensor import Tensor
from .._namespace import composite as _composite

__all__ = ["put", "place", "put_along_axis", "fill_diagonal"]


def _cycled(values: Any, count: int, dtype: Any) -> Tensor:
    """``values`` flattened and repeated to ``count`` elements (NumPy's rule for ``put``,
    ``place`` and ``fill_diagonal``), in ``dtype``."""
    flat = shape.ravel(as_tensor(values))
    if flat.size == 0:
        if count:
            raise ValueError("kenaz.numpy: cannot write values from an empty array")
        return Tensor(np.zeros(0, dtype))
    if flat.size < count:
        flat = shape.tile(flat, (math.ceil(count / flat.size),))
    flat = shape.slice_axis(flat, 0, 0, count)
    return flat if flat.dtype == dtype else ew.astype(flat, dtype)


def _last_writes(indices: np.ndarray) -> np.ndarray:
    """Positions of the last write to each index (NumPy writes in order: the last wins)."""
    _, first_in_reversed = np.unique(indices[::-1], return_index=True)
    return np.sort(len(indices) - 1 - first_in_reversed)


def _scatter_flat(a: Tensor, flat_indices: np.ndarray, values: Tensor) -> Tensor:
    keep = _last_writes(flat_indices)
    flat = shape.ravel(a)
    updated = flat.at[flat_indices[keep]].set(values[keep] if len(keep) < values.size else values)
    return shape.reshape(updated, a.shape)


def _write(a: Any, values: Any, name: str, inplace: bool, update: Any, numpy_write: Any) -> Any:
    """Run the write: NumPy's in place when nothing is tracked, else the functional
    ``update()`` (written back into ``a`` unless ``inplace=False``)."""
    if not inplace:
        return update()
    if not isinstance(a, Tensor):
        if isinstance(a, np.ndarray) and not transformation_running():
            numpy_write(a)
            return None
        raise TypeError(f"kenaz.numpy.{name}: the array to write into must be a Tensor or an "
                        "ndarray (or pass inplace=False)")  # fmt: skip
    if not transformation_running() or not (is_tracked(a) or is_tracked(values)):
        numpy_write(in_place_target(a, name))
        return None
    write_functional(a, update(), name)
    return None


@_composite
def put(a: Any, ind: Any, v: Any, mode: str = "raise", *, inplace: bool = True) -> Any:
    """``a.flat[ind] = v`` (``v`` repeated to ``len(ind)``), as :func:`numpy.put`.

    ``mode`` is ``"raise"`` (out-of-range indices raise), ``"wrap"`` or ``"clip"``.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> a = knp.zeros(4)
    >>> knp.put(a, [0, 2], [1.0, 2.0])
    >>> a
    Tensor([1., 0., 2., 0.])
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"kenaz.numpy.put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    size = int(np.prod(np.shape(a)))
    indices = np.asarray(read_value(ind), dtype=np.intp).ravel()
    if mode == "raise" and ((indices >= size) | (indices < -size)).any():
        raise IndexError(f"kenaz.numpy.put: index out of range for an array of size {size}")
    if mode == "wrap":
        indices = indices % max(size, 1)
    elif mode == "clip":
        indices = np.clip(indices, 0, size - 1)
    indices = indices % max(size, 1)

    def update() -> Tensor:
        target = as_tensor(a)
        return _scatter_flat(target, indices, _cycled(v, len(indices), target.dtype))

    return _write(a, v, "put", inplace, update, lambda arr: np.put(arr, indices, read_value(v)))


@_composite
def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``arr[mask] = vals`` with ``vals`` repeated to the number of true elements, as
    :func:`numpy.place`."""
    mask_value = np.asarray(read_value(mask), dtype=bool)
    indices = np.flatnonzero(np.broadcast_to(mask_value, np.shape(arr)))

    def update() -> Tensor:
        target = as_tensor(arr)
        return _scatter_flat(target, indices, _cycled(vals, len(indices), target.dtype))

    return _write(arr, vals, "place", inplace, update,
                  lambda array: np.place(array, mask_value, read_value(vals)))  # fmt: skip


@_composite
def put_along_axis(
    arr: Any, indices: Any, values: Any, axis: int | None, *, inplace: bool = True
) -> Any:
    """``arr[..., indices, ...] = values`` along ``axis`` (indices of ``arr``'s rank), as
    :func:`numpy.put_along_axis`; ``axis=None`` works on the flattened array."""
    index_value = np.asarray(read_value(indices), dtype=np.intp)
    arr_shape = np.shape(arr)
    if axis is None:
        flat_positions = index_value.ravel() % max(int(np.prod(arr_shape)), 1)
    else:
        axis = axis % len(arr_shape)
        grids = list(np.indices(index_value.shape, sparse=True))
        grids[axis] = index_value % arr_shape[axis]
        flat_positions = np.ravel_multi_index(
            tuple(np.broadcast_arrays(*grids)), arr_shape
        ).ravel()

    def update() -> Tensor:
        target = as_tensor(arr)
        broadcast = shape.broadcast_to(as_tensor(values), index_value.shape)
        flat = shape.ravel(broadcast)
        return _scatter_flat(target, flat_positions, ew.astype(flat, target.dtype))

    def numpy_write(array: np.ndarray) -> None:
        np.put_along_axis(array, index_value, read_value(values), axis)

    return _write(arr, values, "put_along_axis", inplace, update, numpy_write)


@_composite
def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """Fill the main diagonal of ``a`` (2-d, or all axes equal) with ``val``, repeated, as
    :func:`numpy.fill_diagonal`; ``wrap`` continues past the end of a tall matrix."""
    a_shape = np.shape(a)
    if len(a_shape) < 2:
        raise ValueError("kenaz.numpy.fill_diagonal: array must be at least 2-d")
    if len(a_shape) == 2:
        step = a_shape[1] + 1
        end = None if wrap else a_shape[1] * a_shape[1]
    else:
        if len(set(a_shape)) != 1:
            raise ValueError("kenaz.numpy.fill_diagonal: all dimensions of input must be equal")
        step = 1 + int(np.cumprod(a_shape[:-1]).sum())
        end = None
    positions = np.arange(int(np.prod(a_shape)))[:end:step]

    def update() -> Tensor:
        target = as_tensor(a)
        return _scatter_flat(target, positions, _cycled(val, len(positions), target.dtype))

    return _write(a, val, "fill_diagonal", inplace, update,
                  lambda array: np.fill_diagonal(array, read_value(val), wrap=wrap))  # fmt: skip
