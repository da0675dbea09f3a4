"""NumPy's ufunc keywords (``out``, ``where``, ``casting``, ``order``, ``dtype``, ``subok``,
``signature``) for kenaz functions that stand for ufuncs (``scipy.special``'s).

``dtype`` (or the output type of ``signature``) casts the inputs, after ``casting``
allows it; ``where`` keeps the result where it holds and ``out``'s values (zeros
without ``out``: NumPy leaves that memory uninitialized) elsewhere, differentiably;
``out`` receives the result in place, as NumPy's ``out`` does, outside
transformations (kenaz's mutation rules: a tensor a transformation tracks is not
written into). ``order`` is a memory layout and ``subok`` a subclass choice: checked
and accepted, the result is a Tensor.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..convert import accepts_nested_lists, as_tensor
from ..effects import Op
from ..mutation import write_out
from ..ops import elementwise as ew
from ..ops.special import scipy_special
from ..tensor import Tensor


def _cast(x: Any, dtype: np.dtype, casting: str, name: str) -> Tensor:
    x = x if isinstance(x, Tensor) else as_tensor(x)
    if not np.can_cast(x.dtype, dtype, casting=casting):
        raise TypeError(
            f"kenaz.scipy.special.{name}: cannot cast input from {x.dtype} to {dtype} with "
            f"casting rule {casting!r}"
        )
    return x if x.dtype == dtype else ew.astype(x, dtype)


def _output_dtype(signature: Any) -> np.dtype:
    """The output type of a ufunc ``signature`` (a dtype, a tuple of them, or ``"dd->d"``)."""
    if isinstance(signature, str):
        return np.dtype(signature.split("->")[-1][0])
    if isinstance(signature, tuple):
        return np.dtype(signature[-1])
    return np.dtype(signature)


def with_ufunc_keywords(function: Callable[..., Tensor], name: str, nin: int) -> Callable:
    """``function`` of ``nin`` arrays, taking NumPy's ufunc keywords (see the module)."""

    def ufunc(
        *args: Any,
        out: Any = None,
        where: Any = True,
        casting: str = "same_kind",
        order: str = "K",
        dtype: Any = None,
        subok: bool = True,
        signature: Any = None,
    ) -> Any:
        if len(args) != nin:
            raise TypeError(f"kenaz.scipy.special.{name}: takes {nin} arrays, got {len(args)}")
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"kenaz.scipy.special.{name}: order must be K, A, C or F")
        if signature is not None and dtype is None:
            dtype = _output_dtype(signature)
        if dtype is not None:
            args = tuple(_cast(a, np.dtype(dtype), casting, name) for a in args)
        result = function(*args)
        if dtype is not None and result.dtype != np.dtype(dtype):
            result = ew.astype(result, dtype)
        if where is not True:
            target = out[0] if isinstance(out, tuple) else out
            kept = (
                Tensor(np.zeros(result.shape, result.dtype))
                if target is None
                else as_tensor(target)
            )
            result = ew.where(where, result, kept)
        if out is None:
            return result
        return write_out(out, result, f"kenaz.scipy.special.{name}", casting)

    kinds = inspect.Parameter
    arrays = [inspect.Parameter(f"x{i + 1}" if nin > 1 else "x", kinds.POSITIONAL_ONLY)
              for i in range(nin)]  # fmt: skip
    keywords = [inspect.Parameter("out", kinds.POSITIONAL_OR_KEYWORD, default=None)] + [
        inspect.Parameter(k, kinds.KEYWORD_ONLY, default=v)
        for k, v in (("where", True), ("casting", "same_kind"), ("order", "K"),
                     ("dtype", None), ("subok", True), ("signature", None))
    ]  # fmt: skip
    ufunc.__signature__ = inspect.Signature(arrays + keywords)  # type: ignore[attr-defined]
    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__module__ = "kenaz.scipy.special"
    ufunc.__doc__ = (
        getattr(function, "__doc__", None)
        if not isinstance(function, Op)
        else (f"SciPy's ``{name}``, differentiable, with NumPy's ufunc keywords.")
    )
    ufunc.__wrapped__ = function  # type: ignore[attr-defined]
    return ufunc


def special_function(function: Callable[..., Any], name: str | None = None) -> Callable:
    """``function`` made public in ``kenaz.scipy.special`` as ``name`` (default: its own).

    A composite (not an :class:`~kenaz.effects.Op`) accepts lists holding tensors
    (``kenaz.convert.accepts_nested_lists``); where SciPy's ``name`` is a ufunc, the
    result takes NumPy's ufunc keywords (:func:`with_ufunc_keywords`). Used where each
    name is defined (``@special_function`` or ``name = special_function(op, "name")``),
    so that no later pass rewrites a name.
    """
    name = name or function.__name__
    if not isinstance(function, Op):
        function = accepts_nested_lists(function, "kenaz.scipy.special")
    theirs = getattr(scipy_special(), name, None)
    if isinstance(theirs, np.ufunc):
        return with_ufunc_keywords(function, name, theirs.nin)
    return function
