"""Sampled signals: ``convolve``, ``correlate``, ``interp``, ``trapezoid``, ``gradient``,
``ediff1d`` and ``unwrap``, composed from primitives.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as _np

from ...ops import elementwise as _ew
from ...ops import reduction as _reduction
from ...ops import shape as _shape
from ...ops.indexing import getitem as _getitem
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _axis, _float, _knp, _t

__all__ = ["ediff1d", "gradient", "correlate", "convolve", "interp", "trapezoid", "unwrap"]


@_composite
def convolve(a: Any, v: Any, mode: str = "full") -> Tensor:
    """Discrete linear convolution of two 1-d sequences (modes full, same, valid)."""
    a, v = _t(a), _t(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("kenaz.convolve: both inputs must be 1-d")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    padded = _shape.pad(a, ((m - 1, m - 1),))
    windows = _np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :]
    full = _reduction.sum(_getitem(padded, windows) * _shape.flip(v, 0), axis=-1)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return _shape.slice_axis(full, 0, start, start + n)
    if mode == "valid":
        return _shape.slice_axis(full, 0, m - 1, n)
    raise ValueError(f"kenaz.convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


@_composite
def correlate(a: Any, v: Any, mode: str = "valid") -> Tensor:
    """Cross-correlation of two 1-d sequences: ``c[k] = sum_n a[n + k] conj(v[n])``."""
    a, v = _t(a), _t(v)
    v = _ew.conjugate(v) if v.dtype.kind == "c" else v
    return convolve(a, _shape.flip(v, 0), mode)


@_composite
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Tensor:  # fmt: skip
    """Piecewise-linear interpolation; differentiable in ``x``, ``xp`` and ``fp``."""
    if period is not None:
        raise NotImplementedError("kenaz.interp: period is not supported")
    x, xp, fp = _float(x), _float(xp), _t(fp)
    n = xp.shape[0]
    above = _ew.astype(_ew.less_equal(xp, _shape.expand_dims(x, -1)), _np.int64)
    upper = _ew.clip(_reduction.sum(above, axis=-1), 1, n - 1)
    lower = upper - 1
    x0, x1 = _getitem(xp, lower), _getitem(xp, upper)
    f0, f1 = _getitem(fp, lower), _getitem(fp, upper)
    result = f0 + (x - x0) / (x1 - x0) * (f1 - f0)
    result = _ew.where(_ew.less(x, xp[0]), fp[0] if left is None else left, result)
    return _ew.where(_ew.greater(x, xp[n - 1]), fp[n - 1] if right is None else right, result)


@_composite
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """Integral by the trapezoidal rule along ``axis``."""
    y = _t(y)
    axis = _axis(axis, y.ndim)
    n = y.shape[axis]
    average = (_shape.slice_axis(y, axis, 1, n) + _shape.slice_axis(y, axis, 0, n - 1)) / 2
    if x is None:
        return _reduction.sum(average, axis=axis) * dx
    x = _t(x)
    if x.ndim == 1:
        widths = x[1:] - x[:-1]
        widths = _shape.reshape(widths, (-1,) + (1,) * (y.ndim - 1 - axis))
    else:
        m = x.shape[axis]
        widths = _shape.slice_axis(x, axis, 1, m) - _shape.slice_axis(x, axis, 0, m - 1)
    return _reduction.sum(average * widths, axis=axis)


@_composite
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Central differences inside, one-sided at the edges (uniform scalar spacings)."""
    if edge_order != 1:
        raise NotImplementedError("kenaz.gradient: only edge_order=1 is supported")
    f = _float(f)
    axes = tuple(range(f.ndim)) if axis is None else _reduction.normalize_axes(axis, f.ndim, "")
    spacings = list(varargs) or [1.0]
    if len(spacings) == 1:
        spacings = spacings * len(axes)
    results = []
    for ax, h in zip(axes, spacings, strict=True):
        if _np.ndim(h) != 0:
            raise NotImplementedError("kenaz.gradient: coordinate arrays are not supported")
        n = f.shape[ax]
        interior = (_shape.slice_axis(f, ax, 2, n) - _shape.slice_axis(f, ax, 0, n - 2)) / (2 * h)
        first = (_shape.slice_axis(f, ax, 1, 2) - _shape.slice_axis(f, ax, 0, 1)) / h
        last = (_shape.slice_axis(f, ax, n - 1, n) - _shape.slice_axis(f, ax, n - 2, n - 1)) / h
        results.append(_shape.concatenate([first, interior, last], axis=ax))
    return results[0] if len(results) == 1 else results


@_composite
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tensor:
    """Differences between consecutive elements of the flattened array."""
    flat = _shape.ravel(_t(ary))
    parts = [] if to_begin is None else [_shape.ravel(_t(to_begin))]
    parts.append(flat[1:] - flat[:-1])
    if to_end is not None:
        parts.append(_shape.ravel(_t(to_end)))
    return _shape.concatenate([_ew.astype(p, flat.dtype) for p in parts], axis=0)


@_composite
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * math.pi) -> Tensor:
    """NumPy's ``unwrap``, composed of primitives (so ``vmap`` batches it). The added
    multiples of ``period`` are constants: the derivative is the identity (away from
    the jumps, where it is not defined)."""
    knp = _knp()
    p = _float(p)
    axis = _axis(axis, p.ndim)
    values = _ew.stop_gradient(p)
    dd = knp.diff(values, axis=axis)
    high = period / 2
    discont = high if discont is None else discont
    ddmod = _ew.remainder(dd + high, period) - high
    ddmod = _ew.where(_ew.logical_and(_ew.equal(ddmod, -high), _ew.greater(dd, 0)), high, ddmod)
    correction = _ew.where(_ew.less(_ew.absolute(dd), discont), 0.0, ddmod - dd)
    correction = knp.cumsum(correction, axis=axis)
    first = _shape.slice_axis(_ew.multiply(values, 0.0), axis, 0, 1)
    return p + _ew.stop_gradient(knp.concatenate([first, correction], axis=axis))
