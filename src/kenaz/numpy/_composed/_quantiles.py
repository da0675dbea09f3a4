"""``quantile``, ``percentile``, ``nanquantile`` and ``nanpercentile`` with every one of
NumPy's methods (the nine of Hyndman and Fan, and ``lower``, ``higher``, ``midpoint``,
``nearest``) and ``weights`` (for ``inverted_cdf``, as NumPy).

The sorted order and which order statistics a quantile falls between are read from
the values (piecewise constant); the result gathers those statistics from the
tensor, so it is differentiable in ``a`` and, for the continuous methods, in ``q``
(through the interpolation weight), as NumPy's result is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import as_tensor, read_value
from ...ops import elementwise as ew
from ...ops import reduction, shape
from ...tensor import Tensor
from .._namespace import composite as _composite
from .._out import into_out
from ._arguments import _knp

__all__ = ["quantile", "percentile", "nanquantile", "nanpercentile"]

# Hyndman and Fan's (alpha, beta) of the continuous methods: index n q + alpha + q (1 -
# alpha - beta) - 1 (``linear``, alpha = beta = 1, as (n - 1) q: NumPy's rounding).
_CONTINUOUS = {
    "interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
    "linear": (1.0, 1.0), "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
}  # fmt: skip
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_METHODS = (*_CONTINUOUS, "averaged_inverted_cdf", "midpoint", *_DISCRETE)


def _float(x: Any) -> Tensor:
    x = as_tensor(x)
    return x if x.dtype.kind in "fc" else ew.astype(x, np.float64)


def _grouped(a: Tensor, axis: Any) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the reduced ``axis`` merged into one last axis, and the reduced axes."""
    if axis is None:
        return shape.ravel(a), tuple(range(a.ndim))
    axes = reduction.normalize_axes(axis, a.ndim, "quantile")
    kept = [i for i in range(a.ndim) if i not in axes]
    data = shape.transpose(a, kept + list(axes))
    return shape.reshape(data, data.shape[: len(kept)] + (-1,)), axes


def _discrete_index(method: str, n: Tensor, q: Tensor) -> Tensor:
    """The order statistic a discrete method picks (NumPy's rules, ties included)."""
    if method == "lower":
        index = ew.floor((n - 1) * q)
    elif method == "higher":
        index = ew.ceil((n - 1) * q)
    elif method == "nearest":
        index = ew.round_((n - 1) * q, 0)  # half to even, as numpy.around
    else:
        virtual = n * q - (1.5 if method == "closest_observation" else 1.0)
        previous = ew.floor(virtual)
        exact = ew.equal(virtual, previous)
        if method == "closest_observation":  # the even order statistic (odd index) at a tie
            exact = ew.logical_and(exact, ew.equal(ew.remainder(previous, 2.0), 1.0))
        index = ew.where(exact, previous, previous + 1)
    return _clip_index(index, n)


def _clip_index(index: Tensor, n: Tensor) -> Tensor:
    index = ew.minimum(ew.maximum(index, 0.0), ew.maximum(n - 1, 0.0))
    return ew.astype(ew.stop_gradient(index), np.intp)


def _gather(ordered: Tensor, index: Tensor) -> Tensor:
    """``ordered[..., index]`` per slice: ``ordered`` is ``(kept..., N)``, ``index``
    ``(nq, kept...)`` (or broadcastable to it); the result ``(nq, kept...)``."""
    target = index.shape[:1] + ordered.shape[:-1]
    expanded = shape.broadcast_to(ordered, target[:1] + ordered.shape)
    index = shape.broadcast_to(index, target)
    return shape.squeeze(_knp().take_along_axis(expanded, shape.expand_dims(index, -1), -1), -1)


def _of_sorted(ordered: Tensor, n: Tensor, q: Tensor, method: str) -> Tensor:
    """Quantiles ``q`` (``(nq,)``) of the sorted slices ``ordered`` (``(kept..., N)``) with
    ``n`` valid values each (a ``kept``-shaped tensor), all with kenaz ops (so ``vmap``
    batches them): the continuous methods are differentiable in ``q`` too."""
    kept = ordered.shape[:-1]
    q = shape.reshape(q, (-1,) + (1,) * len(kept))  # (nq, 1, ...)
    n = ew.astype(shape.expand_dims(n, 0), q.dtype)  # (1, kept...)
    if method in _DISCRETE:
        return _gather(ordered, _discrete_index(method, n, q))
    if method == "linear":
        virtual = q * (n - 1)
    elif method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        virtual = n * q + (alpha - 1) + q * (1 - alpha - beta)
    elif method == "averaged_inverted_cdf":
        virtual = ew.stop_gradient(n * q - 1)
    else:  # midpoint
        scaled = ew.stop_gradient((n - 1) * q)
        virtual = 0.5 * (ew.floor(scaled) + ew.ceil(scaled))
    previous = ew.floor(virtual)
    gamma = virtual - previous  # the fractional part: differentiable in q
    if method == "averaged_inverted_cdf":
        gamma = ew.where(ew.equal(gamma, 0), 0.5, 1.0)
    elif method == "midpoint":
        gamma = ew.where(ew.equal(gamma, 0), 0.0, 0.5)
    top = ew.greater_equal(virtual, n - 1)
    bottom = ew.less(virtual, 0)
    below = ew.where(top, n - 1, ew.where(bottom, 0.0, previous))
    above = ew.where(top, n - 1, ew.where(bottom, 0.0, previous + 1))
    low, high = _gather(ordered, _clip_index(below, n)), _gather(ordered, _clip_index(above, n))
    return low + (high - low) * ew.astype(gamma, low.dtype)


def _weighted(ordered: Tensor, weights: np.ndarray, q: Tensor) -> Tensor:
    """``inverted_cdf`` with weights: the first sorted value whose cumulative weight
    reaches ``q`` of the total (weights sorted with the values)."""
    cumulative = np.cumsum(weights, axis=-1)
    total = cumulative[..., -1:]
    q_values = read_value(q).astype(float).reshape((-1,) + (1,) * (ordered.ndim - 1))
    cdf = cumulative / np.where(total > 0, total, 1.0)
    reached = cdf[None] >= q_values[..., None] * (1 - 1e-15)  # (nq, kept..., N)
    index = np.minimum(np.argmax(reached, axis=-1), ordered.shape[-1] - 1)
    return _gather(ordered, Tensor(index))


def _quantile(
    a: Any, q: Any, axis: Any, method: str, keepdims: bool, weights: Any, ignore_nan: bool,
    name: str,
) -> Tensor:  # fmt: skip
    if method not in _METHODS:
        raise ValueError(f"kenaz.numpy.{name}: method {method!r} is not one of {_METHODS}")
    a = _float(a)
    q_tensor = _float(q)
    q_values = read_value(q_tensor)  # checked, and its shape: q is not batched by vmap
    if np.any((q_values < 0) | (q_values > 1)):
        raise ValueError(f"kenaz.numpy.{name}: quantiles must be in the range [0, 1]")
    data, axes = _grouped(a, axis)
    ordered = _knp().sort(data, axis=-1)  # differentiable, batched under vmap  # NaNs sort last
    if ignore_nan:
        n = reduction.sum(ew.astype(ew.logical_not(ew.isnan(data)), np.int64), axis=-1)
    else:
        n = Tensor(np.full(data.shape[:-1], data.shape[-1], dtype=np.int64))
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"kenaz.numpy.{name}: only method='inverted_cdf' supports weights")
        w = np.asarray(read_value(weights), dtype=float)
        if w.shape != a.shape:
            if w.ndim != 1 or axis is None or np.ndim(axis) or w.shape[0] != a.shape[axis]:
                raise ValueError(f"kenaz.numpy.{name}: weights must have a's shape, or be 1-d "
                                 "along a single axis")  # fmt: skip
            along = [1] * a.ndim
            along[axis] = -1
            w = np.broadcast_to(w.reshape(along), a.shape)
        if (w < 0).any():
            raise ValueError(f"kenaz.numpy.{name}: weights must be non-negative")
        values = read_value(data)  # the order of the weights: piecewise constant
        order = np.argsort(values, axis=-1, kind="stable")
        w_grouped = read_value(_grouped(Tensor(w), axis)[0])
        w_sorted = np.take_along_axis(np.where(np.isnan(values), 0.0, w_grouped), order, -1)
        result = _weighted(ordered, w_sorted, q_tensor)
    else:
        result = _of_sorted(ordered, n, shape.reshape(q_tensor, (-1,)), method)
    if ignore_nan:  # a slice of NaNs only has no quantile
        result = ew.where(ew.equal(shape.expand_dims(n, 0), 0), np.nan, result)
    result = shape.reshape(result, q_values.shape + result.shape[1:])
    if keepdims:
        result = shape.expand_dims(result, tuple(q_values.ndim + i for i in axes))
    return result


@_composite
def quantile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Tensor:  # fmt: skip
    """``q``-th quantiles (``q`` in [0, 1]) along ``axis`` by any of NumPy's ``method``s;
    ``weights`` with ``method="inverted_cdf"``.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.quantile(knp.array([1.0, 2.0, 3.0, 4.0]), 0.5, method="lower")
    Tensor(2.)
    """
    method = interpolation or method
    result = _quantile(a, q, axis, method, keepdims, weights, False, "quantile")
    return into_out(out, result, "quantile")


@_composite
def percentile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Tensor:  # fmt: skip
    """``q``-th percentiles (``q`` in [0, 100]); as :func:`quantile`."""
    method = interpolation or method
    result = _quantile(a, _float(q) / 100, axis, method, keepdims, weights, False, "percentile")
    return into_out(out, result, "percentile")


@_composite
def nanquantile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Tensor:  # fmt: skip
    """Quantiles ignoring NaNs (each slice among its own valid values; NaN if it has none)."""
    method = interpolation or method
    result = _quantile(a, q, axis, method, keepdims, weights, True, "nanquantile")
    return into_out(out, result, "nanquantile")


@_composite
def nanpercentile(
    a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
    method: str = "linear", keepdims: bool = False, *, weights: Any = None,
    interpolation: Any = None,
) -> Tensor:  # fmt: skip
    """Percentiles ignoring NaNs."""
    method = interpolation or method
    result = _quantile(a, _float(q) / 100, axis, method, keepdims, weights, True, "nanpercentile")
    return into_out(out, result, "nanpercentile")
