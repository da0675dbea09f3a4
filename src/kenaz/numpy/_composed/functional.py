"""NumPy's function-applying helpers, differentiable when the functions are written with
kenaz: ``piecewise``, ``apply_along_axis`` and ``apply_over_axes``.

They call the user's function on tensors (slices, or the elements a condition
selects) and assemble the results with kenaz ops; which elements each condition
selects is read from the values (piecewise constant, no derivative).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...convert import as_tensor, read_value
from ...ops import elementwise as ew
from ...ops import shape
from ...tensor import Tensor
from .._namespace import composite as _composite

__all__ = ["piecewise", "apply_along_axis", "apply_over_axes"]


@_composite
def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Tensor:
    """``funclist[i](x[condlist[i]], *args, **kw)`` where ``condlist[i]`` holds (a scalar in
    ``funclist`` is a constant), later conditions winning; one more function than
    conditions covers the rest. As :func:`numpy.piecewise`, differentiable in ``x`` and in
    what the functions compute.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> x = knp.array([-2.0, 3.0])
    >>> knp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v])
    Tensor([2., 9.])
    """
    x = as_tensor(x)
    conditions = [np.asarray(read_value(c), dtype=bool) for c in _as_list(condlist, x)]
    functions = list(funclist) if isinstance(funclist, (list, tuple)) else [funclist]
    if len(functions) == len(conditions) + 1:  # the last function: where no condition holds
        rest = ~np.any(np.stack(conditions), axis=0) if conditions else np.ones(x.shape, bool)
        conditions.append(rest)
    elif len(functions) != len(conditions):
        raise ValueError(
            f"kenaz.numpy.piecewise: with {len(conditions)} condition(s), funclist must hold "
            f"{len(conditions)} or {len(conditions) + 1} functions, got {len(functions)}"
        )
    result = Tensor(np.zeros(x.shape, dtype=x.dtype))
    for condition, function in zip(conditions, functions, strict=True):
        condition = np.broadcast_to(condition, x.shape)
        if not condition.any():
            continue
        where = np.nonzero(condition)
        if callable(function):
            values = function(x[where], *args, **kw)
        else:  # a constant
            values = function
        values = as_tensor(values)
        values = values if values.dtype == x.dtype else ew.astype(values, x.dtype)
        result = result.at[where].set(values)
    return result


def _as_list(condlist: Any, x: Tensor) -> list[Any]:
    """NumPy's reading of ``condlist``: one boolean array, or a list of them."""
    if isinstance(condlist, (list, tuple)):
        first = condlist[0] if condlist else None
        if first is not None and np.ndim(read_value(first)) == 0 and x.ndim > 0:
            return [condlist]  # a list of scalars: one condition array
        return list(condlist)
    condition = np.asarray(read_value(condlist))
    if condition.ndim > x.ndim:  # a stack of conditions
        return list(condition)
    return [condition]


@_composite
def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Tensor:  # fmt: skip
    """``func1d`` applied to every 1-d slice of ``arr`` along ``axis`` (its result's axes take
    ``axis``'s place), as :func:`numpy.apply_along_axis`; differentiable through ``func1d``."""
    arr = as_tensor(arr)
    axis = axis % arr.ndim
    moved = shape.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    results = [as_tensor(func1d(moved[index], *args, **kwargs)) for index in np.ndindex(outer)]
    if not results:
        raise ValueError("kenaz.numpy.apply_along_axis: cannot apply to an empty array")
    inner = results[0].shape
    stacked = shape.reshape(shape.stack(results, axis=0), outer + inner)
    # (outer..., inner...) -> (outer[:axis], inner..., outer[axis:])
    order = (list(range(axis)) + list(range(len(outer), len(outer) + len(inner)))
             + list(range(axis, len(outer))))  # fmt: skip
    return shape.transpose(stacked, order) if order != list(range(len(order))) else stacked


@_composite
def apply_over_axes(func: Callable[..., Any], a: Any, axes: Any) -> Tensor:
    """``func(a, axis)`` for each of ``axes`` in turn, keeping the rank (a result one axis
    short gets it back), as :func:`numpy.apply_over_axes`."""
    result = as_tensor(a)
    for axis in np.atleast_1d(axes):
        axis = int(axis) % result.ndim
        reduced = as_tensor(func(result, axis))
        if reduced.ndim == result.ndim:
            result = reduced
        elif reduced.ndim == result.ndim - 1:
            result = shape.expand_dims(reduced, axis)
        else:
            raise ValueError(
                "kenaz.numpy.apply_over_axes: function is not returning an array of the "
                "correct shape"
            )
    return result
