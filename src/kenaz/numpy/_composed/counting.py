"""``bincount`` and ``histogram``, differentiable in their ``weights`` (and the bin
edges ``histogram`` computes from the data's range).

Which bin each element falls in is read from the values (piecewise constant: no
derivative); the weights are then summed per bin with a scatter-add, so the
counts' derivative in each weight is 1 in its bin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...convert import as_tensor, read_value
from ...ops import elementwise as ew
from ...ops import reduction, shape
from ...tensor import Tensor
from .._namespace import composite as _composite

__all__ = ["bincount", "histogram"]


def _summed(index: np.ndarray, weights: Tensor, length: int) -> Tensor:
    """``zeros(length).at[index].add(weights)``: the weights summed per bin."""
    weights = weights if weights.dtype.kind in "fc" else ew.astype(weights, np.float64)
    zeros = Tensor(np.zeros(length, dtype=weights.dtype))
    return zeros.at[index].add(weights)


@_composite
def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> Tensor:
    """Occurrences of each non-negative integer in ``x``; with ``weights``, their sums
    (differentiable in ``weights``), as :func:`numpy.bincount`.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.bincount([0, 1, 1, 3], weights=knp.array([0.5, 1.0, 2.0, 4.0]))
    Tensor([0.5, 3. , 0. , 4. ])
    """
    values = np.asarray(read_value(x))
    if values.ndim != 1:
        raise ValueError(f"kenaz.numpy.bincount: x must be 1-d, got shape {values.shape}")
    if values.size and values.dtype.kind not in "iub":
        if not np.can_cast(values.dtype, np.intp, "safe"):
            raise TypeError(
                f"kenaz.numpy.bincount: x must hold integers, got {values.dtype}"
            )
    values = values.astype(np.intp)
    if values.size and values.min() < 0:
        raise ValueError("kenaz.numpy.bincount: x must be non-negative")
    length = max(int(values.max()) + 1 if values.size else 0, int(minlength))
    if weights is None:
        return Tensor(np.bincount(values, minlength=minlength))
    weights = as_tensor(weights)
    if weights.shape != values.shape:
        raise ValueError(
            f"kenaz.numpy.bincount: weights {weights.shape} and x {values.shape} differ in shape"
        )
    if weights.dtype.kind != "c":
        weights = ew.astype(weights, np.float64)  # NumPy sums weights in double precision
    return _summed(values, weights, length)


def _edges(a: Tensor, bins: Any, value_range: Any, weights: Any) -> Tensor:
    """Bin edges: given, or ``bins + 1`` equal steps over ``range`` (the data's range by
    default, differentiable through its minimum and maximum)."""
    if not isinstance(bins, (int, np.integer)):
        if isinstance(bins, str):  # NumPy's estimators ('auto', 'fd', ...): on the values
            edges = np.histogram_bin_edges(read_value(a), bins, value_range, read_value(weights)
                                           if weights is not None else None)  # fmt: skip
            return Tensor(edges)
        edges = as_tensor(bins)
        if edges.ndim != 1 or (np.diff(read_value(edges)) < 0).any():
            raise ValueError("kenaz.numpy.histogram: bins must increase monotonically")
        return edges
    if bins < 1:
        raise ValueError("kenaz.numpy.histogram: bins must be a positive integer")
    if value_range is not None:
        low, high = (as_tensor(v) for v in value_range)
        if float(read_value(low)) > float(read_value(high)):
            raise ValueError("kenaz.numpy.histogram: max must be larger than min in range")
    elif a.size == 0:
        low, high = Tensor(0.0), Tensor(1.0)
    else:
        low, high = reduction.amin(a), reduction.amax(a)
    dtype = a.dtype if a.dtype.kind == "f" else np.dtype(np.float64)  # NumPy's edges
    low, high = ew.astype(low, dtype), ew.astype(high, dtype)
    if float(read_value(low)) == float(read_value(high)):  # NumPy widens an empty range
        low, high = low - 0.5, high + 0.5
    # numpy.linspace's formula, in the data's float dtype (NumPy's edges to the last bit):
    # i * ((high - low) / bins) + low; the last edge is `high` itself, so that the
    # maximum stays inside
    inner = np.arange(int(bins)).astype(dtype) * ((high - low) / int(bins)) + low
    return shape.concatenate([inner, shape.reshape(high, (1,))], axis=0)


@_composite
def histogram(
    a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None  # noqa: A002
) -> tuple[Tensor, Tensor]:
    """``(hist, bin_edges)`` as :func:`numpy.histogram`: counts (or summed ``weights``,
    differentiable) per bin, the last bin closed. ``density`` divides by the total and
    the bin widths (differentiable in the edges too)."""
    a = as_tensor(a)
    flat = shape.ravel(a)
    edges = _edges(flat, bins, range, weights)
    values = read_value(flat)
    edge_values = read_value(edges)
    index = np.searchsorted(edge_values, values, side="right") - 1
    index[values == edge_values[-1]] = len(edge_values) - 2  # the last bin includes its right edge
    inside = (index >= 0) & (index < len(edge_values) - 1) & (values >= edge_values[0])
    bin_count = len(edge_values) - 1
    if weights is None:
        hist: Tensor = Tensor(np.bincount(index[inside], minlength=bin_count).astype(np.intp))
        if not density:
            return hist, edges
        hist = ew.astype(hist, np.float64)
    else:
        weights = shape.ravel(as_tensor(weights))
        if weights.shape != flat.shape:
            raise ValueError("kenaz.numpy.histogram: weights should have the same shape as a")
        hist = _summed(index[inside], weights[np.flatnonzero(inside)], bin_count)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (reduction.sum(hist) * widths)
    return hist, edges
