"""``kenaz.numpy``'s array basics with NumPy's full signatures: ``array``/``asarray``,
``linspace``, ``real``/``imag``/``astype``, ``ravel``, ``diff``, the stacking and
``atleast_*`` helpers, ``roll``, ``take``, ``take_along_axis``, ``average`` and
``count_nonzero`` (moved out of ``kenaz.numpy``'s ``__init__``, which stays small).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from typing import Literal as _Literal
from typing import overload as _overload

import numpy as _np

from .. import backend as _backend
from ..convert import as_tensor as _as_tensor
from ..convert import read_value as _read_value
from ..mutation import write_out as _write_out
from ..ops import elementwise as _ew
from ..ops import shape as _shape
from ..ops.indexing import getitem
from ..ops.shape import broadcast_to, concatenate, expand_dims, flip, moveaxis, reshape
from ..tensor import Tensor, holds_tensor
from . import _creation
from ._namespace import assembled as _knp  # kenaz.numpy, when these run
from ._namespace import composite as _composite

__all__ = [
    "array", "asarray", "linspace", "real", "imag", "astype", "ravel", "diff", "hstack",
    "vstack", "row_stack", "column_stack", "dstack", "atleast_1d", "atleast_2d", "atleast_3d",
    "fliplr", "flipud", "roll", "take", "take_along_axis", "average", "count_nonzero",
]  # fmt: skip


@_composite
def ravel(a: Any, order: str = "C") -> Tensor:
    """``a`` flattened in ``order``: ``"C"`` (rows), ``"F"`` (columns), ``"A"`` and ``"K"``
    (columns if the memory is column-major only, else rows), as :func:`numpy.ravel`."""
    if order == "C":
        return _shape.ravel(a)
    if order not in ("F", "A", "K"):
        raise ValueError(f"kenaz.numpy.ravel: order must be 'C', 'F', 'A' or 'K', got {order!r}")
    if order in ("A", "K"):
        value = a._value if type(a) is Tensor else a if isinstance(a, _np.ndarray) else None
        flags = getattr(value, "flags", None)
        fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
        order = "F" if fortran else "C"
    return _shape.reshape(a, (-1,), order=order) if order == "F" else _shape.ravel(a)


@_composite
def real(val: Any) -> Tensor:
    """The real part (the value itself for real input)."""
    return _ew.real(val)


@_composite
def imag(val: Any) -> Tensor:
    """The imaginary part (zeros for real input)."""
    return _ew.imag(val)


@_composite
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` cast to ``dtype`` (Array API ``astype``); ``copy=False`` returns ``x`` itself when
    it already has ``dtype``."""
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.astype: device must be 'cpu' or None, got {device!r}")
    x = x if isinstance(x, Tensor) else _as_tensor(x)
    if x.dtype == _np.dtype(dtype):
        return _ew.copy(x) if copy else x
    return _ew.astype(x, dtype)


def array(
    object: Any,  # noqa: A002  (NumPy's name)
    dtype: Any = None,
    *,
    copy: bool = True,
    order: str = "K",
    subok: bool = False,
    ndmin: int = 0,
    ndmax: int = 0,
    like: Any = None,
) -> Tensor:
    """Create a tensor. Nested lists of tensors are stacked differentiably (``kenaz.convert``).

    ``ndmin`` prepends unit axes; ``order`` and ``subok`` are memory layout and subclass
    choices (a Tensor has neither), ``ndmax`` limits how deep NumPy reads nested lists and
    ``like`` picks NumPy's array type: both go to NumPy for plain values.
    """
    result = _array(object, dtype, copy, ndmax, like)
    if ndmin > result.ndim:
        result = reshape(result, (1,) * (ndmin - result.ndim) + result.shape)
    return result


def _array(obj: Any, dtype: Any, copy: Any, ndmax: int, like: Any) -> Tensor:
    if isinstance(obj, Tensor):
        if not copy:
            return obj if dtype is None else _ew.astype(obj, dtype)
        return (
            _ew.copy(obj)
            if dtype is None or _np.dtype(dtype) == obj.dtype
            else (_ew.astype(obj, dtype))
        )
    if not (isinstance(obj, (list, tuple)) and holds_tensor(obj)):  # data: NumPy's copy
        keywords = {"ndmax": ndmax} if ndmax else {}
        if like is not None:
            keywords["like"] = like
        obj = _np.array(obj, dtype=dtype, copy=copy, **keywords)
    return _as_tensor(obj, dtype)  # the one way in (kenaz.convert)


def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
            copy: Any = None, like: Any = None) -> Tensor:  # fmt: skip
    """Convert to a tensor without copying where possible (lists of tensors are stacked);
    ``copy=True`` always copies, ``copy=False`` refuses to (NumPy's meanings)."""
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.asarray: device must be 'cpu' or None, got {device!r}")
    obj = a
    if isinstance(obj, Tensor):
        if copy:
            return array(obj, dtype=dtype, copy=True)
        if copy is False and dtype is not None and _np.dtype(dtype) != obj.dtype:
            raise ValueError("kenaz.numpy.asarray: a dtype change needs a copy (copy=False)")
        return obj if dtype is None else astype(obj, dtype)
    if isinstance(obj, (list, tuple)) and holds_tensor(obj):
        return _as_tensor(obj, dtype)  # the one way in (kenaz.convert): stacked
    if copy is False:
        return _as_tensor(_np.asarray(obj, dtype=dtype, copy=False))
    return array(obj, dtype=dtype, copy=True if copy else None, like=like)


@_overload
def linspace(
    start: Any, stop: Any, num: int = ..., endpoint: bool = ...,
    retstep: _Literal[False] = ..., dtype: Any = ..., axis: int = ..., *, device: Any = ...,
) -> Tensor: ...  # fmt: skip


@_overload
def linspace(
    start: Any, stop: Any, num: int = ..., endpoint: bool = ..., *,
    retstep: _Literal[True], dtype: Any = ..., axis: int = ..., device: Any = ...,
) -> tuple[Tensor, Tensor]: ...  # fmt: skip


@_composite
def linspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
    dtype: Any = None, axis: int = 0, *, device: Any = None,
) -> Any:  # fmt: skip
    """Evenly spaced numbers over an interval; differentiable in ``start`` and ``stop``.

    ``retstep=True`` also returns the step (NaN for fewer than two samples, as NumPy's).
    """
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.linspace: device must be 'cpu' or None, got {device!r}")
    if retstep:
        samples = linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
        div = (num - 1) if endpoint else num
        difference = asarray(stop) - asarray(start)
        step = difference / div if div > 0 else difference * _np.nan
        return samples, step
    if not isinstance(start, Tensor) and not isinstance(stop, Tensor):
        if _backend.current_default() is _np:
            return Tensor(_np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis))
        keywords = dict(num=num, endpoint=endpoint, dtype=dtype, axis=axis)
        return Tensor(_creation.create("linspace", _np.linspace, (start, stop), keywords))
    div = (num - 1) if endpoint else num
    steps = _np.arange(num, dtype=float) / (div if div > 0 else 1)
    start, stop = asarray(start), asarray(stop)
    steps = steps.reshape((-1,) + (1,) * _np.broadcast_shapes(start.shape, stop.shape).__len__())
    out = start + (stop - start) * steps
    out = moveaxis(out, 0, axis) if axis != 0 else out
    return out if dtype is None else out.astype(dtype, copy=False)


@_composite
def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
    keepdims: bool = False,
) -> Any:  # a tuple with returned=True  # fmt: skip
    """Weighted average over ``axis`` (``keepdims`` keeps the reduced axes as ones)."""
    if keepdims:
        axes = tuple(range(_knp().ndim(a))) if axis is None else axis
        result = average(a, axis, weights, returned)
        kept = [expand_dims(r, axes) if _knp().ndim(r) < _knp().ndim(a) else r for r in
                (result if returned else (result,))]  # fmt: skip
        return tuple(kept) if returned else kept[0]
    if weights is None:
        avg = _knp().mean(a, axis=axis)
        count = _knp().size(a) / _knp().size(avg)
        return (avg, _knp().full_like(avg, count)) if returned else avg
    weights = asarray(weights)
    if weights.shape != _knp().shape(a):
        if axis is None or weights.ndim != 1:
            raise ValueError("kenaz.average: 1-d weights need an axis; otherwise shapes must match")
        weights = reshape(
            weights, [-1 if i == axis % _knp().ndim(a) else 1 for i in range(_knp().ndim(a))]
        )
    total = _knp().sum(weights * _knp().ones_like(a), axis=axis)
    avg = _knp().sum(a * weights, axis=axis) / total
    return (avg, total) if returned else avg


@_composite
def diff(a, n: int = 1, axis: int = -1, prepend: Any = _np._NoValue,
         append: Any = _np._NoValue) -> Tensor:  # fmt: skip
    """n-th discrete difference along ``axis``; ``prepend``/``append`` values (broadcast to
    one row along ``axis``) are joined before differencing, as in :func:`numpy.diff`."""
    if n < 0:
        raise ValueError(f"kenaz.numpy.diff: order must be non-negative but got {n}")
    if prepend is not _np._NoValue or append is not _np._NoValue:
        a = asarray(a)
        ax = axis % a.ndim
        parts = [a]
        for value, at_end in ((prepend, False), (append, True)):
            if value is _np._NoValue:
                continue
            value = asarray(value)
            if value.ndim == 0:
                value = broadcast_to(value, a.shape[:ax] + (1,) + a.shape[ax + 1 :])
            parts = [*parts, value] if at_end else [value, *parts]
        a = concatenate(parts, axis=ax)
    for _ in range(n):
        length = _knp().shape(a)[axis]
        ax = axis % _knp().ndim(a)
        a = _shape.slice_axis(a, ax, 1, length) - _shape.slice_axis(a, ax, 0, length - 1)
    return a


def _joined(parts: list[Tensor], axis: int, dtype: Any, casting: str, name: str) -> Tensor:
    """``concatenate`` with NumPy's ``dtype`` and ``casting`` (checked per part)."""
    if dtype is not None:
        for part in parts:
            if not _np.can_cast(part.dtype, dtype, casting=casting):
                raise TypeError(
                    f"kenaz.numpy.{name}: cannot cast {part.dtype} to {_np.dtype(dtype)} with "
                    f"casting rule {casting!r}"
                )
        parts = [_ew.astype(part, dtype) for part in parts]
    return concatenate(parts, axis=axis)


@_composite
def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """Join along the second axis (the first for 1-d arrays)."""
    parts = [atleast_1d(x) for x in tup]
    return _joined(parts, 0 if _knp().ndim(parts[0]) == 1 else 1, dtype, casting, "hstack")


@_composite
def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """Join along the first axis (1-d arrays as rows)."""
    return _joined([atleast_2d(x) for x in tup], 0, dtype, casting, "vstack")


@_composite
def column_stack(tup: Sequence[Any]) -> Tensor:
    """1-d arrays as columns, joined along the second axis."""
    return concatenate([reshape(x, (-1, 1)) if _knp().ndim(x) < 2 else x for x in tup], axis=1)


row_stack = vstack


@_composite
def dstack(tup: Sequence[Any]) -> Tensor:
    """Join along the third axis."""
    return concatenate([atleast_3d(x) for x in tup], axis=2)


def atleast_1d(*arys) -> Any:
    """Each argument with at least one axis; one argument gives one tensor, several a tuple."""
    results = tuple(_at_least(x, 1) for x in arys)
    return results[0] if len(results) == 1 else results


def _at_least(x, rank: int) -> Tensor:
    x = asarray(x)
    if x.ndim >= rank:
        return x
    if rank == 1:
        return reshape(x, (1,))
    if rank == 2:
        return reshape(x, (1,) * (2 - x.ndim) + x.shape)
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    return reshape(x, (1, -1, 1)) if x.ndim == 1 else expand_dims(x, 2)


def atleast_2d(*arys) -> Any:
    """Each argument with at least two axes (a tuple for several arguments)."""
    results = tuple(_at_least(x, 2) for x in arys)
    return results[0] if len(results) == 1 else results


def atleast_3d(*arys) -> Any:
    """Each argument with at least three axes (a tuple for several arguments)."""
    results = tuple(_at_least(x, 3) for x in arys)
    return results[0] if len(results) == 1 else results


@_composite
def fliplr(m) -> Tensor:
    """Reverse the columns."""
    return flip(m, 1)


@_composite
def flipud(m) -> Tensor:
    """Reverse the rows."""
    return flip(m, 0)


@_composite
def roll(a, shift, axis=None) -> Tensor:
    """Roll elements along ``axis`` (of the flattened array when None); ``shift`` and ``axis``
    may be tuples, broadcast against each other, as in :func:`numpy.roll`."""
    if axis is None:
        total = int(_np.sum(_np.asarray(_read_value(shift))))
        return reshape(roll(ravel(a), total, 0), _knp().shape(a))
    if _np.ndim(axis) or _np.ndim(_read_value(shift)):
        shifts, axes = _np.broadcast_arrays(_np.asarray(_read_value(shift)), _np.asarray(axis))
        per_axis: dict[int, int] = {}
        for s_, ax_ in zip(shifts.ravel(), axes.ravel(), strict=True):
            key = int(ax_) % _knp().ndim(a)
            per_axis[key] = per_axis.get(key, 0) + int(s_)
        for ax_, s_ in per_axis.items():
            a = roll(a, s_, ax_)
        return asarray(a)
    x = a
    n = _knp().shape(x)[axis]
    if n == 0:
        return asarray(x)
    shift = int(shift) % n
    if shift == 0:
        return asarray(x)
    ax = axis % _knp().ndim(x)
    return concatenate(
        [_shape.slice_axis(x, ax, n - shift, n), _shape.slice_axis(x, ax, 0, n - shift)], axis=ax
    )


@_composite
def take(a, indices, axis=None, out=None, mode="raise") -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None); ``mode``
    ``"raise"``, ``"wrap"`` or ``"clip"`` treats indices out of range as NumPy does."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"kenaz.numpy.take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    source = ravel(a) if axis is None else a
    ax = 0 if axis is None else axis % _knp().ndim(a)
    if mode != "raise":
        n = _knp().shape(source)[ax]
        index_value = _np.asarray(_read_value(indices), dtype=_np.intp)
        indices = index_value % n if mode == "wrap" else _np.clip(index_value, 0, n - 1)
    result = getitem(source, (slice(None),) * ax + (indices,))
    return result if out is None else _write_out(out, result, "kenaz.numpy.take")


@_composite
def take_along_axis(arr, indices, axis: int | None = -1) -> Tensor:
    """Pick values along ``axis`` at ``indices`` of the same rank as ``arr`` (``axis=None``:
    of the flattened array)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = axis % a.ndim
    idx = indices if isinstance(indices, Tensor) else _np.asarray(indices)
    index = []
    for d in range(a.ndim):
        if d == ax:
            index.append(idx)
        else:
            shape_d = [1] * a.ndim
            shape_d[d] = a.shape[d]
            index.append(_np.arange(a.shape[d]).reshape(shape_d))
    return getitem(a, tuple(index))


def count_nonzero(a, axis=None, *, keepdims=False) -> Tensor:
    """The number of nonzero elements along ``axis``."""
    return _knp().sum(_knp().not_equal(a, 0), axis=axis, keepdims=keepdims)
