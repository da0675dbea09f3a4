"""NumPy's ``out=``: a result written into a given array, which is returned.

Outside transformations (nothing tracked) the result's values are written into the
memory of ``out`` (a Tensor or an ndarray), as NumPy writes them. Under a
transformation ``out`` (a Tensor) takes over the result's derivative records as
well (``kenaz.mutation.write_functional``, as ``put`` and ``fill_diagonal`` do):
later uses of ``out`` see the new values and carry their derivative, like a name
rebound to ``out.at[...].set(result)``. A pullback that saved the old memory of
``out`` is caught before the backward pass, as for any in-place change. What
cannot carry a derivative raises, naming the function and the fix: an ndarray
receiving a tracked result, a view of another array (the other array's derivative
would not follow), a batched (``vmap``) or traced (``jit``) value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mutation import assign, is_tracked, plain, write_functional
from ..ops import elementwise as ew
from ..ops import shape
from ..tensor import Tensor

__all__ = ["into_out"]


def into_out(
    out: Any,
    result: Any,
    name: str,
    *,
    casting: str = "unsafe",
    mask: Any = None,
    broadcast: bool = False,
) -> Any:
    """Write ``result`` into ``out`` (see the module) and return ``out``; ``result`` itself
    when ``out`` is None.

    Parameters
    ----------
    out : Tensor, ndarray, 1-tuple of one of them, or None
        NumPy's ``out=``.
    result : Tensor
        The value computed.
    name : str
        The function, for errors (``kenaz.numpy.<name>``; a name that starts with
        ``kenaz.`` is used as it is, ``kenaz.scipy.special.expit``).
    casting : str, optional
        NumPy's rule for casting ``result`` to ``out``'s dtype (``"unsafe"``, NumPy's
        rule for reductions; ufuncs pass their ``casting=``).
    mask : array-like of bool, optional
        NumPy's ``where=``: ``out`` keeps its values where it is False.
    broadcast : bool, optional
        ``result`` may broadcast to ``out``'s shape (ufuncs); otherwise the shapes
        must be equal (reductions).
    """
    label = name if name.startswith("kenaz.") else f"kenaz.numpy.{name}"
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{label}: out must hold one array, got {len(out)}")
        out = out[0]
    if out is None:
        return result
    if not isinstance(out, (Tensor, np.ndarray)):
        raise TypeError(f"{label}: out= must be a Tensor or an ndarray, got "
                        f"{type(out).__name__}")  # fmt: skip
    result = result if isinstance(result, Tensor) else Tensor(result)
    if not np.can_cast(result.dtype, out.dtype, casting=casting):
        raise TypeError(
            f"{label}: cannot cast the output from {result.dtype} to {out.dtype} "
            f"with casting rule {casting!r}"
        )
    _check_shape(out, result, mask, label, broadcast)
    value = result if result.dtype == out.dtype else ew.astype(result, out.dtype)
    if mask is not None:
        value = ew.where(mask, value, out if isinstance(out, Tensor) else Tensor(out))
    elif value.shape != out.shape:
        value = shape.broadcast_to(value, out.shape)
    if not isinstance(out, Tensor):
        if is_tracked(value):
            raise TypeError(
                f"{label}: out= a NumPy array cannot carry the derivative of a "
                "result a transformation tracks; pass a Tensor (kenaz.numpy.zeros(...)) as "
                "out=, or use the returned value"
            )
        np.copyto(out, value._value, casting="unsafe")  # the cast was checked above
        return out
    if type(out) is not Tensor or type(value) is not Tensor:
        raise TypeError(
            f"{label}: out= cannot be written inside vmap or jit (the out tensor or "
            "the result is a batched or traced value, with no memory of its own); use the "
            "returned value instead of out="
        )
    if not (is_tracked(value) or is_tracked(out)):
        assign(out, Ellipsis, value)
        return out
    if value._trace and isinstance(out._value, np.ndarray) and out._value.base is not None:
        raise TypeError(
            f"{label}: out= is a view of another array (shape {out.shape}), whose "
            "derivative could not follow the write; pass the whole array as out=, or use "
            "the returned value"
        )
    write_functional(out, value, name)
    return out


def _check_shape(out: Any, result: Tensor, mask: Any, label: str, broadcast: bool) -> None:
    """NumPy's rule: the result's shape is ``out``'s, or (a ufunc's) broadcasts to it."""
    shapes = [result.shape] + ([] if mask is None else [_shape_of(mask)])
    try:
        full = np.broadcast_shapes(*shapes, out.shape) if broadcast else result.shape
    except ValueError:
        full = None
    if full != out.shape:
        what = " (with where=)" if mask is not None else ""
        raise ValueError(
            f"{label}: out= has shape {out.shape}, the result{what} "
            f"{' and '.join(str(s) for s in shapes)}"
            + (", which does not broadcast to it" if broadcast else "")
        )


def _shape_of(mask: Any) -> tuple[int, ...]:
    """The shape of ``where=``, without reading a traced or batched tensor's value."""
    return mask.shape if isinstance(mask, Tensor) else np.shape(plain(mask))
