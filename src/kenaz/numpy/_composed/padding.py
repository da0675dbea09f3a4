"""``pad`` with every one of NumPy's modes, differentiable in the array (and in
``constant_values`` and ``end_values`` when they are tensors).

Each axis is padded in turn, as NumPy does (so corners take the values NumPy
gives them): a gather of the array for ``edge``, ``wrap``, ``reflect`` and
``symmetric`` (repeated in chunks when the padding is longer than the axis, as
in NumPy), a statistic of the edge rows for ``maximum``, ``minimum``, ``mean``
and ``median``, a ramp for ``linear_ramp``, and constants for ``constant`` and
``empty`` (whose values NumPy leaves undefined: zeros here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import array_argument, as_tensor
from ...mutation import is_tracked
from ...ops import elementwise as ew
from ...ops import reduction
from ...ops import shape as shape_ops
from ...ops.indexing import getitem
from ...tensor import Tensor, holds_tensor
from ._arguments import _knp

__all__ = ["pad"]

_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
          "reflect", "symmetric", "wrap", "empty")  # fmt: skip


def _pairs(value: Any, ndim: int, name: str) -> list[tuple[Any, Any]]:
    """NumPy's per-axis ``(before, after)`` broadcasting of ``pad_width``-like arguments."""
    if isinstance(value, Tensor) or (isinstance(value, (list, tuple)) and holds_tensor(value)):
        value = as_tensor(value)
        if value.ndim == 0:
            return [(value, value)] * ndim
        if value.shape == (2,) or value.shape == (1, 2):
            flat = shape_ops.reshape(value, (2,))
            return [(flat[0], flat[1])] * ndim
        if value.shape == (ndim, 2):
            return [(value[i, 0], value[i, 1]) for i in range(ndim)]
        raise ValueError(f"kenaz.numpy.pad: {name} of shape {value.shape} does not fit {ndim} axes")
    array = np.asarray(value)
    try:
        pairs = np.broadcast_to(array, (ndim, 2)) if array.ndim else np.full((ndim, 2), array)
    except ValueError:
        raise ValueError(
            f"kenaz.numpy.pad: {name} of shape {array.shape} does not fit {ndim} axes"
        ) from None
    return [(pairs[i, 0], pairs[i, 1]) for i in range(ndim)]


def _along(x: Tensor, axis: int, index: np.ndarray) -> Tensor:
    return getitem(x, (slice(None),) * axis + (index,))


def _fill(x: Tensor, axis: int, width: int, value: Any) -> Tensor:
    """A block of ``width`` rows along ``axis`` filled with ``value`` (a scalar)."""
    block_shape = x.shape[:axis] + (width,) + x.shape[axis + 1 :]
    return shape_ops.broadcast_to(ew.astype(as_tensor(value), x.dtype), block_shape)


def _stat(x: Tensor, axis: int, rows: np.ndarray, mode: str) -> Tensor:
    """The statistic of ``mode`` over ``rows`` of ``x`` along ``axis`` (kept as one row)."""
    part = _along(x, axis, rows)
    if mode == "maximum":
        return reduction.amax(part, axis=axis, keepdims=True)
    if mode == "minimum":
        return reduction.amin(part, axis=axis, keepdims=True)
    if mode == "mean":
        mean = reduction.mean(part, axis=axis, keepdims=True)
        return ew.round_(mean, 0) if x.dtype.kind in "iu" else mean  # NumPy rounds for ints
    result = _knp().median(part, axis=axis, keepdims=True)  # the statistics family's
    return ew.round_(result, 0) if x.dtype.kind in "iu" else result


def _reflect_axis(x: Tensor, axis: int, before: int, after: int, mode: str, odd: bool) -> Tensor:
    """``reflect`` or ``symmetric`` padding, in chunks no longer than the axis (NumPy's way)."""
    while before > 0 or after > 0:
        n = x.shape[axis]
        limit = n if mode == "symmetric" else n - 1
        if limit == 0:  # one element: reflecting it repeats it
            return _edge(x, axis, before, after)
        left, right = min(before, limit), min(after, limit)
        offset = 0 if mode == "symmetric" else 1
        left_rows = np.arange(left, 0, -1) - 1 + offset  # mirrored rows next to the start
        right_rows = n - 1 - offset - np.arange(right)  # and before the end
        parts = []
        if left:
            block = _along(x, axis, left_rows)
            parts.append(2 * _along(x, axis, np.array([0])) - block if odd else block)
        parts.append(x)
        if right:
            block = _along(x, axis, right_rows)
            parts.append(2 * _along(x, axis, np.array([n - 1])) - block if odd else block)
        x = shape_ops.concatenate(parts, axis=axis)
        before, after = before - left, after - right
    return x


def _edge(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    n = x.shape[axis]
    rows = np.concatenate([np.zeros(before, int), np.arange(n), np.full(after, n - 1)])
    return _along(x, axis, rows)


def _pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str, options: dict) -> Tensor:
    n = x.shape[axis]
    if mode in ("edge", "wrap"):
        if n == 0:
            raise ValueError(f"kenaz.numpy.pad: can't extend an empty axis {axis} with {mode!r}")
        if mode == "edge":
            return _edge(x, axis, before, after)
        return _along(x, axis, np.arange(-before, n + after) % n)
    if mode in ("reflect", "symmetric"):
        if n == 0:
            raise ValueError(f"kenaz.numpy.pad: can't extend an empty axis {axis} with {mode!r}")
        odd = options.get("reflect_type", "even") == "odd"
        return _reflect_axis(x, axis, before, after, mode, odd)
    parts = []
    if mode in ("constant", "empty"):
        low, high = options["constant_values"][axis] if mode == "constant" else (0, 0)
        parts = [_fill(x, axis, before, low), x, _fill(x, axis, after, high)]
    elif mode == "linear_ramp":  # from the end value (outermost) towards the edge value
        low, high = (ew.astype(as_tensor(v), x.dtype) for v in options["end_values"][axis])
        first, last = _along(x, axis, np.array([0])), _along(x, axis, np.array([n - 1]))
        shape = [1] * x.ndim
        shape[axis] = -1
        up = (np.arange(before) / max(before, 1)).reshape(shape)  # 0, 1/before, ...
        down = (np.arange(after - 1, -1, -1) / max(after, 1)).reshape(shape)  # ..., 1/after, 0
        parts = [low + (first - low) * up, x, high + (last - high) * down]  # ints: truncated
    else:  # maximum, minimum, mean, median
        if n == 0:
            raise ValueError(f"kenaz.numpy.pad: can't compute {mode!r} of an empty axis {axis}")
        low_length, high_length = options["stat_length"][axis]
        low_length = n if low_length is None else max(1, min(int(low_length), n))
        high_length = n if high_length is None else max(1, min(int(high_length), n))
        low = _stat(x, axis, np.arange(low_length), mode)
        high = _stat(x, axis, np.arange(n - high_length, n), mode)
        parts = [_repeat(low, axis, before), x, _repeat(high, axis, after)]
    parts = [p if p.dtype == x.dtype else ew.astype(p, x.dtype) for p in parts]
    return shape_ops.concatenate(parts, axis=axis)


def _repeat(row: Tensor, axis: int, width: int) -> Tensor:
    return shape_ops.broadcast_to(row, row.shape[:axis] + (width,) + row.shape[axis + 1 :])


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Tensor:
    """Pad ``array`` as :func:`numpy.pad`, in any of NumPy's modes.

    Parameters
    ----------
    array : array_like
        The array to pad.
    pad_width : int or sequence
        ``(before, after)`` per axis, broadcast as in NumPy.
    mode : str or callable, optional
        ``"constant"`` (default), ``"edge"``, ``"linear_ramp"``, ``"maximum"``,
        ``"mean"``, ``"median"``, ``"minimum"``, ``"reflect"``, ``"symmetric"``,
        ``"wrap"``, ``"empty"`` (zeros here), or NumPy's callable form (on arrays no
        transformation tracks).
    **kwargs
        ``constant_values``, ``end_values``, ``stat_length``, ``reflect_type``, as NumPy's.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.pad(knp.array([1.0, 2.0, 3.0]), 2, mode="reflect")
    Tensor([3., 2., 1., 2., 3., 2., 1.])
    """
    x = array if isinstance(array, Tensor) else array_argument(array)
    x = as_tensor(x)
    ndim = x.ndim
    allowed = {
        "constant": {"constant_values"}, "linear_ramp": {"end_values"},
        "maximum": {"stat_length"}, "mean": {"stat_length"}, "median": {"stat_length"},
        "minimum": {"stat_length"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
    }  # fmt: skip
    if callable(mode):
        return _callable_mode(x, pad_width, mode, kwargs)
    if mode not in _MODES:
        raise ValueError(f"kenaz.numpy.pad: mode {mode!r} is not one of NumPy's: {_MODES}")
    unknown = set(kwargs) - allowed.get(mode, set())
    if unknown:
        raise ValueError(f"kenaz.numpy.pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(unknown)}")  # fmt: skip
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError("kenaz.numpy.pad: pad_width must be of integral type")
    widths = [(int(a), int(b)) for a, b in _pairs(widths, ndim, "pad_width")]
    if any(a < 0 or b < 0 for a, b in widths):
        raise ValueError("kenaz.numpy.pad: index can't contain negative values")
    constant = kwargs.get("constant_values", 0)
    if mode == "constant" and not isinstance(constant, Tensor) and np.ndim(constant) == 0 and not (
        isinstance(constant, (list, tuple)) and holds_tensor(constant)
    ):
        return shape_ops.pad(x, tuple(widths), constant_values=constant)  # the primitive
    options: dict[str, Any] = {"reflect_type": kwargs.get("reflect_type", "even")}
    if mode == "constant":
        options["constant_values"] = _pairs(constant, ndim, "constant_values")
    elif mode == "linear_ramp":
        options["end_values"] = _pairs(kwargs.get("end_values", 0), ndim, "end_values")
    else:
        options["stat_length"] = _stat_lengths(kwargs.get("stat_length"), ndim)
    if options["reflect_type"] not in ("even", "odd"):
        raise ValueError("kenaz.numpy.pad: reflect_type must be 'even' or 'odd'")
    for axis, (before, after) in enumerate(widths):
        if before or after:
            x = _pad_axis(x, axis, before, after, mode, options)
    return x


def _stat_lengths(stat_length: Any, ndim: int) -> list[tuple[Any, Any]]:
    if stat_length is None:
        return [(None, None)] * ndim
    return [(int(a), int(b)) for a, b in _pairs(stat_length, ndim, "stat_length")]


def _callable_mode(x: Tensor, pad_width: Any, mode: Any, kwargs: dict) -> Tensor:
    """NumPy's callable mode writes into vectors in place: run on the values of an array
    no transformation tracks."""
    if is_tracked(x):
        raise TypeError(
            "kenaz.numpy.pad: a callable mode writes into NumPy vectors in place, which has "
            "no derivative; use one of the named modes, or kenaz.stop_gradient(x) first"
        )
    return Tensor(np.pad(np.asarray(x._value), pad_width, mode, **kwargs))
