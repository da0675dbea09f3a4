"""NumPy's exact signatures for the reductions and joins of ``kenaz.numpy``.

The primitives' front ends (``kenaz.ops.reduction.sum(x, axis, keepdims,
dtype)``, ...) take their parameters in their own order; NumPy code calls
``sum(a, axis, dtype, out, keepdims, initial, where)``. These wrappers take
NumPy's order and names, write into ``out=`` as NumPy does (``_out.into_out``: in
place outside transformations, functionally and differentiably under them), and
support ``initial`` and ``where`` where NumPy has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as _np

from ..convert import array_argument, as_tensor
from ..ops import elementwise as _ew
from ..ops import linalg as _products
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops.elementwise import equal, greater, not_equal
from ..tensor import Tensor
from ._composed.indices_and_sets import nonzero
from ._out import into_out

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "cumsum", "cumprod", "clip", "round", "around", "all", "any", "dot", "outer", "matmul",
    "einsum", "concatenate", "concat", "stack", "where", "full_like",
]  # fmt: skip

def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


def _masked(a: Any, where: Any, fill: float) -> Tensor:
    return _t(a) if where is None or where is True else _ew.where(where, a, fill)


def _with_initial(result: Tensor, initial: Any, combine) -> Tensor:
    return result if initial is None else combine(result, initial)


def _extreme(a: Any, axis: Any, keepdims: bool, initial: Any, reduce, combine) -> Tensor:
    """``max``/``min`` (``reduce``) with NumPy's ``initial``: over an empty array it is
    ``initial`` itself (NumPy's identity there; the reduction alone has none and raises)."""
    if initial is not None and _t(a).size == 0:  # zeros of the result's shape, plus initial
        return _ew.add(_ew.multiply(_reduction.sum(a, axis=axis, keepdims=keepdims), 0),
                       initial)  # fmt: skip
    return _with_initial(reduce(a, axis=axis, keepdims=keepdims), initial, combine)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Sum over ``axis`` (NumPy's signature; ``where`` masks, ``initial`` is added)."""
    if out is None and initial is None and where is None:  # the common call, kept short
        return _reduction.sum(a, axis=axis, keepdims=keepdims, dtype=dtype)
    total = _reduction.sum(_masked(a, where, 0), axis=axis, keepdims=keepdims, dtype=dtype)
    result = _with_initial(total, initial, _ew.add)
    return result if out is None else into_out(out, result, "sum")


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:
    """Product over ``axis`` (NumPy's signature)."""
    total = _reduction.prod(_masked(a, where, 1), axis=axis, keepdims=keepdims, dtype=dtype)
    result = _with_initial(total, initial, _ew.multiply)
    return result if out is None else into_out(out, result, "prod")


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None) -> Tensor:
    """Arithmetic mean over ``axis`` (NumPy's signature)."""
    if where is None or where is True:
        result = _reduction.mean(a, axis=axis, keepdims=keepdims, dtype=dtype)
        return result if out is None else into_out(out, result, "mean")
    total = sum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    # The count in the total's precision: a float32 mean stays float32, as NumPy's.
    count_dtype = _np.finfo(total.dtype).dtype if total.dtype.kind in "fc" else _np.float64
    mask = _ew.astype(_shape.broadcast_to(where, _t(a).shape), count_dtype)
    result = total / _reduction.sum(mask, axis=axis, keepdims=keepdims)
    return result if out is None else into_out(out, result, "mean")


def _ddof(ddof: Any, correction: Any) -> Any:
    return ddof if correction is None else correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None) -> Tensor:  # fmt: skip
    """Variance over ``axis`` (NumPy's signature; ``correction`` is the Array API ``ddof``;
    ``mean`` a mean computed already, shaped as with ``keepdims=True``)."""
    a = _t(a) if dtype is None else _ew.astype(a, dtype)
    ddof = _ddof(ddof, correction)
    if (where is None or where is True) and mean is None:
        result = _reduction.var(a, axis=axis, ddof=ddof, keepdims=keepdims)
    else:
        result = _masked_var(a, axis, ddof, keepdims, where, mean)
    return result if out is None else into_out(out, result, "var")


def _masked_var(a: Tensor, axis: Any, ddof: Any, keepdims: bool, where: Any, mean: Any) -> Tensor:
    """The variance over the entries ``where`` keeps, about ``mean`` (or their mean)."""
    where = True if where is None else where
    real = _np.empty(0, _np.result_type(a.dtype, _np.float16)).real.dtype  # ints: float64
    count = sum(_ew.astype(_shape.broadcast_to(where, a.shape), real), axis=axis, keepdims=True)
    if mean is None:
        mean = sum(a, axis=axis, keepdims=True, where=where) / count
    deviation = _masked(a - mean, where, 0)
    squares = _ew.real(deviation * _ew.conjugate(deviation)) if a.dtype.kind == "c" else (
        deviation * deviation)  # fmt: skip
    total = sum(squares, axis=axis, keepdims=keepdims)
    count = count if keepdims else _reduction.sum(count, axis=axis)
    return total / (count - ddof)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None) -> Tensor:  # fmt: skip
    """Standard deviation over ``axis`` (NumPy's signature)."""
    a = _t(a) if dtype is None else _ew.astype(a, dtype)
    ddof = _ddof(ddof, correction)
    if (where is None or where is True) and mean is None:
        result = _reduction.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    else:
        result = _ew.sqrt(_masked_var(a, axis, ddof, keepdims, where, mean))
    return result if out is None else into_out(out, result, "std")


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Maximum over ``axis`` (ties share the derivative; NumPy's signature)."""
    if where is not None and where is not True:
        if initial is None:
            raise ValueError("kenaz.numpy.max: where= needs an initial value, as in NumPy")
        a = _ew.where(where, a, initial)
    result = _extreme(a, axis, keepdims, initial, _reduction.amax, _ew.maximum)
    return result if out is None else into_out(out, result, "max")


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Minimum over ``axis`` (NumPy's signature)."""
    if where is not None and where is not True:
        if initial is None:
            raise ValueError("kenaz.numpy.min: where= needs an initial value, as in NumPy")
        a = _ew.where(where, a, initial)
    result = _extreme(a, axis, keepdims, initial, _reduction.amin, _ew.minimum)
    return result if out is None else into_out(out, result, "min")


amax, amin = max, min


def argmax(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the maximum (integer: no derivative)."""
    result = _reduction.argmax(a, axis=axis, keepdims=keepdims)
    return result if out is None else into_out(out, result, "argmax", casting="safe")


def argmin(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the minimum (integer: no derivative)."""
    result = _reduction.argmin(a, axis=axis, keepdims=keepdims)
    return result if out is None else into_out(out, result, "argmin", casting="safe")


def cumsum(a, axis=None, dtype=None, out=None) -> Tensor:
    """Cumulative sum (flattened when ``axis`` is None)."""
    result = _reduction.cumsum(a if dtype is None else _ew.astype(a, dtype), axis=axis)
    return result if out is None else into_out(out, result, "cumsum")


def cumprod(a, axis=None, dtype=None, out=None) -> Tensor:
    """Cumulative product (flattened when ``axis`` is None)."""
    result = _reduction.cumprod(a if dtype is None else _ew.astype(a, dtype), axis=axis)
    return result if out is None else into_out(out, result, "cumprod")


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs) -> Tensor:  # noqa: A002
    """Limit values to ``[a_min, a_max]`` (or the Array API's ``min``/``max``)."""
    if kwargs:
        raise TypeError(f"kenaz.numpy.clip: unsupported arguments {sorted(kwargs)}")
    low = a_min if a_min is not None else min
    high = a_max if a_max is not None else max
    result = _ew.clip(a, low, high)
    if out is None:
        return result
    return into_out(out, result, "clip", casting="same_kind", broadcast=True)


def round(a, decimals=0, out=None) -> Tensor:  # noqa: A001
    """Round to ``decimals`` (zero derivative, as in JAX)."""
    if not isinstance(a, Tensor):  # a list of tensors: stacked (round_ multiplies it)
        a = array_argument(a)
    result = _ew.round_(a, decimals)
    return result if out is None else into_out(out, result, "round", casting="same_kind")


around = round


def _all(a, axis=None, keepdims: bool = False) -> Tensor:
    """Whether every element along ``axis`` is nonzero (a count of zeros: ``vmap`` batches it)."""
    return equal(sum(equal(a, 0), axis=axis, keepdims=keepdims), 0)


def _any(a, axis=None, keepdims: bool = False) -> Tensor:
    """Whether some element along ``axis`` is nonzero."""
    return greater(sum(not_equal(a, 0), axis=axis, keepdims=keepdims), 0)


def all(a, axis=None, out=None, keepdims=False, *, where=None) -> Tensor:  # noqa: A001
    """Whether all elements along ``axis`` are true."""
    result = _all(_masked(a, where, True), axis=axis, keepdims=keepdims)
    return result if out is None else into_out(out, result, "all")


def any(a, axis=None, out=None, keepdims=False, *, where=None) -> Tensor:  # noqa: A001
    """Whether any element along ``axis`` is true."""
    result = _any(_masked(a, where, False), axis=axis, keepdims=keepdims)
    return result if out is None else into_out(out, result, "any")


def dot(a, b, out=None) -> Tensor:
    """NumPy's ``dot``."""
    result = _products.dot(a, b)
    return result if out is None else into_out(out, result, "dot", casting="no")


def outer(a, b, out=None) -> Tensor:
    """NumPy's ``outer`` (the inputs flattened)."""
    result = _products.outer(a, b)
    return result if out is None else into_out(out, result, "outer", casting="same_kind")


def matmul(x1, x2, /, out=None, **kwargs) -> Tensor:
    """Matrix product with NumPy's ``@`` semantics."""
    if kwargs:
        raise TypeError(f"kenaz.numpy.matmul: unsupported arguments {sorted(kwargs)}")
    result = _products.matmul(x1, x2)
    return result if out is None else into_out(out, result, "matmul", casting="same_kind")


def einsum(subscripts, *operands, out=None, optimize=False, **kwargs) -> Tensor:
    """Einstein summation (``optimize`` is accepted and ignored); also NumPy's sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    if kwargs:
        raise TypeError(f"kenaz.numpy.einsum: unsupported arguments {sorted(kwargs)}")
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts, *operands))
    result = _products.einsum(subscripts, *operands)
    return result if out is None else into_out(out, result, "einsum", casting="safe")


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _from_sublists(arguments: tuple) -> tuple[str, tuple]:
    """``(a, [0, 1], b, [1, 2][, [0, 2]])`` -> ``("ab,bc->ac", (a, b))``."""

    def letters(sublist: Any) -> str:
        text = ""
        for axis in sublist:
            if axis is Ellipsis:
                text += "..."
            elif isinstance(axis, (int, _np.integer)) and 0 <= axis < len(_LETTERS):
                text += _LETTERS[int(axis)]
            else:
                raise ValueError(
                    f"kenaz.numpy.einsum: sublist entries must be integers in [0, 52) or "
                    f"Ellipsis, got {axis!r}"
                )
        return text

    operands = arguments[0::2]
    sublists = arguments[1::2]
    output = None
    if len(arguments) % 2:  # a trailing output sublist
        operands, output = operands[:-1], arguments[-1]
    subscripts = ",".join(letters(s) for s in sublists)
    if output is not None:
        subscripts += "->" + letters(output)
    return subscripts, tuple(operands)


def concatenate(
    arrays: Sequence[Any], axis=0, out=None, *, dtype=None, casting="same_kind"
) -> Tensor:
    """Join arrays along an existing axis (flattened when ``axis`` is None)."""
    result = _shape.concatenate(arrays, axis=axis)
    result = result if dtype is None else _ew.astype(result, dtype)
    return result if out is None else into_out(out, result, "concatenate", casting=casting)


concat = concatenate


def stack(arrays: Sequence[Any], axis=0, out=None, *, dtype=None, casting="same_kind") -> Tensor:
    """Join arrays along a new axis."""
    result = _shape.stack(arrays, axis=axis)
    result = result if dtype is None else _ew.astype(result, dtype)
    return result if out is None else into_out(out, result, "stack", casting=casting)



def where(condition, x=None, y=None, /) -> Any:
    """``x`` where ``condition`` holds, else ``y``; with only ``condition``, its ``nonzero()``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("kenaz.numpy.where: give both x and y, or neither")
    return _ew.where(condition, x, y)


def full_like(
    a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None
) -> Tensor:
    """A tensor shaped like ``a`` filled with ``fill_value`` (differentiable in ``fill_value``)."""
    target_shape = _t(a).shape if shape is None else shape
    fill = _t(fill_value)
    target_dtype = _t(a).dtype if dtype is None else dtype
    return _ew.broadcast_copy(_ew.astype(fill, target_dtype), target_shape)  # writable
