"""NumPy's ufunc keywords (``out``, ``where``, ``casting``, ``order``, ``dtype``, ``subok``,
``signature``) for kenaz functions that stand for ufuncs (``scipy.special``'s).

The semantics are those of ``kenaz.numpy``'s ufuncs (``kenaz.numpy._ufunc_keywords``):
``dtype`` (or the output type of ``signature``) casts the inputs, after ``casting``
allows it; ``out`` (by keyword or positionally, ``expit(x, o)``, as NumPy takes it)
receives the result in place, as NumPy's ``out`` does, outside transformations
(kenaz's mutation rules: a tensor a transformation tracks is not written into);
``where`` keeps the result where it holds and ``out``'s values elsewhere, with a zero
derivative there (the inputs pass the mask on their way in, so no ``0 * inf``). Without
``out``, ``where`` raises: NumPy and SciPy leave those entries uninitialized (arbitrary
memory), and any fill kenaz chose would look like a computed value. ``order`` is a
memory layout and ``subok`` a subclass choice: checked and accepted, the result is a
Tensor.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..convert import accepts_nested_lists, as_tensor
from ..effects import Op
from ..numpy._out import into_out
from ..numpy._ufunc_keywords import masked_operands
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
        if len(args) == nin + 1 and out is None:  # NumPy's positional out: expit(x, o)
            args, out = args[:nin], args[nin]
        elif len(args) == nin + 1:
            raise TypeError(
                f"kenaz.scipy.special.{name}: cannot specify 'out' as both a positional and "
                "keyword argument (pass it once, as out=...)"
            )
        if len(args) != nin:
            raise TypeError(
                f"kenaz.scipy.special.{name}: takes {nin} array(s) and an optional out, got "
                f"{len(args)} arguments"
            )
        if where is not True and out is None:
            raise TypeError(
                f"kenaz.scipy.special.{name}: where= needs out=, which holds the values kept "
                "where the mask is False (SciPy leaves them uninitialized). Pass out=, or write "
                f"kenaz.numpy.where(mask, kenaz.scipy.special.{name}(...), fill)"
            )
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"kenaz.scipy.special.{name}: order must be K, A, C or F")
        if signature is not None and dtype is None:
            dtype = _output_dtype(signature)
        if dtype is not None:
            args = tuple(_cast(a, np.dtype(dtype), casting, name) for a in args)
        if where is True:
            result = function(*args)
        else:  # the excluded entries are computed at a kept point, with no derivative
            with np.errstate(all="ignore"):
                result = function(*masked_operands(list(args), where))
        if dtype is not None and result.dtype != np.dtype(dtype):
            result = ew.astype(result, dtype)
        mask = None if where is True else where
        label = f"kenaz.scipy.special.{name}"
        return into_out(out, result, label, casting=casting, mask=mask, broadcast=True)

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
