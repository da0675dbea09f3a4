"""NumPy's exact signatures for the reductions and joins of ``kenaz.numpy``.

The primitives' front ends (``kenaz.ops.reduction.sum(x, axis, keepdims,
dtype)``, ...) take their parameters in their own order; NumPy code calls
``sum(a, axis, dtype, out, keepdims, initial, where)``. These wrappers take
NumPy's order and names, accept ``out=None`` and reject anything else with a
clear error (kenaz functions return new Tensors), and support ``initial`` and ``where``
where NumPy has them.
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

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "cumsum", "cumprod", "clip", "round", "around", "all", "any", "dot", "matmul", "einsum",
    "concatenate", "concat", "stack", "where", "full_like",
]  # fmt: skip

def reject_out(out: Any, name: str) -> None:
    """The error for ``out=`` (anything but None): kenaz cannot write into an array."""
    if out is not None:
        raise TypeError(
            f"kenaz.numpy.{name}: out= is not supported (kenaz functions return new Tensors); "
            "use the returned value"
        )


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


def _masked(a: Any, where: Any, fill: float) -> Tensor:
    return _t(a) if where is None or where is True else _ew.where(where, a, fill)


def _with_initial(result: Tensor, initial: Any, combine) -> Tensor:
    return result if initial is None else combine(result, initial)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Sum over ``axis`` (NumPy's signature; ``where`` masks, ``initial`` is added)."""
    if out is None and initial is None and where is None:  # the common call, kept short
        return _reduction.sum(a, axis=axis, keepdims=keepdims, dtype=dtype)
    reject_out(out, "sum")
    total = _reduction.sum(_masked(a, where, 0), axis=axis, keepdims=keepdims, dtype=dtype)
    return _with_initial(total, initial, _ew.add)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:
    """Product over ``axis`` (NumPy's signature)."""
    reject_out(out, "prod")
    total = _reduction.prod(_masked(a, where, 1), axis=axis, keepdims=keepdims, dtype=dtype)
    return _with_initial(total, initial, _ew.multiply)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None) -> Tensor:
    """Arithmetic mean over ``axis`` (NumPy's signature)."""
    reject_out(out, "mean")
    if where is None or where is True:
        return _reduction.mean(a, axis=axis, keepdims=keepdims, dtype=dtype)
    mask = _ew.astype(_shape.broadcast_to(where, _t(a).shape), _np.float64)
    total = sum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return total / _reduction.sum(mask, axis=axis, keepdims=keepdims)


def _ddof(ddof: Any, correction: Any) -> Any:
    return ddof if correction is None else correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None) -> Tensor:  # fmt: skip
    """Variance over ``axis`` (NumPy's signature; ``correction`` is the Array API ``ddof``)."""
    reject_out(out, "var")
    if (where is not None and where is not True) or mean is not None:
        raise NotImplementedError("kenaz.numpy.var: where= and mean= are not supported")
    a = _t(a) if dtype is None else _ew.astype(a, dtype)
    return _reduction.var(a, axis=axis, ddof=_ddof(ddof, correction), keepdims=keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None) -> Tensor:  # fmt: skip
    """Standard deviation over ``axis`` (NumPy's signature)."""
    reject_out(out, "std")
    if (where is not None and where is not True) or mean is not None:
        raise NotImplementedError("kenaz.numpy.std: where= and mean= are not supported")
    a = _t(a) if dtype is None else _ew.astype(a, dtype)
    return _reduction.std(a, axis=axis, ddof=_ddof(ddof, correction), keepdims=keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Maximum over ``axis`` (ties share the derivative; NumPy's signature)."""
    reject_out(out, "max")
    if where is not None and where is not True:
        if initial is None:
            raise ValueError("kenaz.numpy.max: where= needs an initial value, as in NumPy")
        a = _ew.where(where, a, initial)
    return _with_initial(_reduction.amax(a, axis=axis, keepdims=keepdims), initial, _ew.maximum)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None) -> Tensor:  # noqa: A001
    """Minimum over ``axis`` (NumPy's signature)."""
    reject_out(out, "min")
    if where is not None and where is not True:
        if initial is None:
            raise ValueError("kenaz.numpy.min: where= needs an initial value, as in NumPy")
        a = _ew.where(where, a, initial)
    return _with_initial(_reduction.amin(a, axis=axis, keepdims=keepdims), initial, _ew.minimum)


amax, amin = max, min


def argmax(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the maximum (integer: no derivative)."""
    reject_out(out, "argmax")
    return _reduction.argmax(a, axis=axis, keepdims=keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the minimum (integer: no derivative)."""
    reject_out(out, "argmin")
    return _reduction.argmin(a, axis=axis, keepdims=keepdims)


def cumsum(a, axis=None, dtype=None, out=None) -> Tensor:
    """Cumulative sum (flattened when ``axis`` is None)."""
    reject_out(out, "cumsum")
    return _reduction.cumsum(a if dtype is None else _ew.astype(a, dtype), axis=axis)


def cumprod(a, axis=None, dtype=None, out=None) -> Tensor:
    """Cumulative product (flattened when ``axis`` is None)."""
    reject_out(out, "cumprod")
    return _reduction.cumprod(a if dtype is None else _ew.astype(a, dtype), axis=axis)


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs) -> Tensor:  # noqa: A002
    """Limit values to ``[a_min, a_max]`` (or the Array API's ``min``/``max``)."""
    reject_out(out, "clip")
    if kwargs:
        raise TypeError(f"kenaz.numpy.clip: unsupported arguments {sorted(kwargs)}")
    low = a_min if a_min is not None else min
    high = a_max if a_max is not None else max
    return _ew.clip(a, low, high)


def round(a, decimals=0, out=None) -> Tensor:  # noqa: A001
    """Round to ``decimals`` (zero derivative, as in JAX)."""
    reject_out(out, "round")
    if not isinstance(a, Tensor):  # a list of tensors: stacked (round_ multiplies it)
        a = array_argument(a)
    return _ew.round_(a, decimals)


around = round


def _all(a, axis=None, keepdims: bool = False) -> Tensor:
    """Whether every element along ``axis`` is nonzero (a count of zeros: ``vmap`` batches it)."""
    return equal(sum(equal(a, 0), axis=axis, keepdims=keepdims), 0)


def _any(a, axis=None, keepdims: bool = False) -> Tensor:
    """Whether some element along ``axis`` is nonzero."""
    return greater(sum(not_equal(a, 0), axis=axis, keepdims=keepdims), 0)


def all(a, axis=None, out=None, keepdims=False, *, where=None) -> Tensor:  # noqa: A001
    """Whether all elements along ``axis`` are true."""
    reject_out(out, "all")
    return _all(_masked(a, where, True), axis=axis, keepdims=keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=None) -> Tensor:  # noqa: A001
    """Whether any element along ``axis`` is true."""
    reject_out(out, "any")
    return _any(_masked(a, where, False), axis=axis, keepdims=keepdims)


def dot(a, b, out=None) -> Tensor:
    """NumPy's ``dot``."""
    reject_out(out, "dot")
    return _products.dot(a, b)


def matmul(x1, x2, /, out=None, **kwargs) -> Tensor:
    """Matrix product with NumPy's ``@`` semantics."""
    reject_out(out, "matmul")
    if kwargs:
        raise TypeError(f"kenaz.numpy.matmul: unsupported arguments {sorted(kwargs)}")
    return _products.matmul(x1, x2)


def einsum(subscripts, *operands, out=None, optimize=False, **kwargs) -> Tensor:
    """Einstein summation (``optimize`` is accepted and ignored); also NumPy's sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    reject_out(out, "einsum")
    if kwargs:
        raise TypeError(f"kenaz.numpy.einsum: unsupported arguments {sorted(kwargs)}")
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts, *operands))
    return _products.einsum(subscripts, *operands)


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
    reject_out(out, "concatenate")
    result = _shape.concatenate(arrays, axis=axis)
    return result if dtype is None else _ew.astype(result, dtype)


concat = concatenate


def stack(arrays: Sequence[Any], axis=0, out=None, *, dtype=None, casting="same_kind") -> Tensor:
    """Join arrays along a new axis."""
    reject_out(out, "stack")
    result = _shape.stack(arrays, axis=axis)
    return result if dtype is None else _ew.astype(result, dtype)



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
