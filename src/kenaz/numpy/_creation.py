"""Creation functions with no array input, on the default backend (``kenaz.default_backend``).

On NumPy (the default) each is NumPy's own function. On another namespace, the
Array API standard's function of that namespace makes the array directly
(``xp.zeros``, ``xp.ones``, ``xp.full``, ``xp.eye``, ``xp.arange``,
``xp.linspace``, ``xp.tril`` of ones for ``tri``), with NumPy's default dtypes:
float64 for ``zeros``/``ones``/``empty``/``eye``/``identity``/``tri``/``linspace``,
the fill value's dtype for ``full``, the arguments' for ``arange``. What the
standard cannot say (an integer ``linspace``, array-valued bounds, NumPy-only
keywords such as ``order``, a dtype the namespace lacks) is made by NumPy and
moved, as before.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend

__all__ = ["create"]


def create(name: str, numpy_function: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """The array ``numpy_function(*args, **kwargs)`` makes, made on the default backend.

    Examples
    --------
    >>> import array_api_strict as xps
    >>> import kenaz
    >>> with kenaz.default_backend(xps):
    ...     made = create("arange", np.arange, (3,), {})
    >>> type(made).__module__.split(".")[0], made.dtype
    ('array_api_strict', array_api_strict.int64)
    """
    xp = backend.current_default()
    if xp is np:
        return numpy_function(*args, **kwargs)
    standard = _STANDARD.get(name)
    if standard is not None:
        try:
            made = standard(xp, *args, **kwargs)
        except (TypeError, AttributeError, ValueError):
            made = None  # not expressible in the standard (or a bad call: NumPy says why)
        if made is not None:
            return made
    return backend.asarray_on(xp, np.asarray(numpy_function(*args, **kwargs)))


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(n) for n in shape)
    return (operator.index(shape),)


def _dtype(xp: Any, dtype: Any, default: Any) -> Any:
    return backend.backend_dtype(xp, np.dtype(default if dtype is None else dtype))


def _plain_scalar(value: Any) -> Any:
    """A NumPy scalar as a Python one (the standard's functions take Python scalars)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bool, int, float, complex)):
        return value
    raise TypeError("not a scalar")


def _zeros(xp: Any, shape: Any, dtype: Any = None, order: str = "C") -> Any:
    return xp.zeros(_shape(shape), dtype=_dtype(xp, dtype, np.float64)) if order == "C" else None


def _ones(xp: Any, shape: Any, dtype: Any = None, order: str = "C") -> Any:
    return xp.ones(_shape(shape), dtype=_dtype(xp, dtype, np.float64)) if order == "C" else None


def _full(xp: Any, shape: Any, fill_value: Any, dtype: Any = None, order: str = "C") -> Any:
    if order != "C":
        return None
    default = np.asarray(fill_value).dtype  # NumPy's: the fill value's own
    fill = _plain_scalar(fill_value)
    return xp.full(_shape(shape), fill, dtype=_dtype(xp, dtype, default))


def _eye(xp: Any, N: Any, M: Any = None, k: int = 0, dtype: Any = None, order: str = "C") -> Any:
    if order != "C":
        return None
    columns = None if M is None else operator.index(M)
    dtype = _dtype(xp, dtype, np.float64)
    return xp.eye(operator.index(N), columns, k=operator.index(k), dtype=dtype)


def _identity(xp: Any, n: Any, dtype: Any = None) -> Any:
    return xp.eye(operator.index(n), dtype=_dtype(xp, dtype, np.float64))


def _tri(xp: Any, N: Any, M: Any = None, k: int = 0, dtype: Any = None) -> Any:
    rows = operator.index(N)
    columns = rows if M is None else operator.index(M)
    ones = xp.ones((rows, columns), dtype=_dtype(xp, dtype, np.float64))
    return xp.tril(ones, k=operator.index(k))


def _arange(
    xp: Any, start: Any, stop: Any = None, step: Any = None, dtype: Any = None
) -> Any:
    given = [_plain_scalar(v) for v in (start, stop, step) if v is not None]
    default = np.result_type(*given)  # NumPy's: int64 for ints, float64 for floats
    if default.kind not in "iuf":
        return None
    step = 1 if step is None else _plain_scalar(step)
    stop = None if stop is None else _plain_scalar(stop)
    return xp.arange(_plain_scalar(start), stop, step, dtype=_dtype(xp, dtype, default))


def _linspace(
    xp: Any,
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    start, stop = _plain_scalar(start), _plain_scalar(stop)
    default = np.result_type(start, stop, 1.0)  # NumPy's: float64, or complex128
    if retstep or axis != 0 or (dtype is not None and np.dtype(dtype).kind not in "fc"):
        return None
    dtype = _dtype(xp, dtype, default)
    return xp.linspace(start, stop, operator.index(num), dtype=dtype, endpoint=bool(endpoint))


_STANDARD: dict[str, Callable[..., Any]] = {
    "zeros": _zeros,
    "ones": _ones,
    "empty": _zeros,  # never hand out uninitialized memory
    "full": _full,
    "eye": _eye,
    "identity": _identity,
    "tri": _tri,
    "arange": _arange,
    "linspace": _linspace,
}
