"""The rest of NumPy's main namespace: its utilities, passed through to NumPy.

Every public name of ``numpy`` is in ``kenaz.numpy`` (``scripts/numpy_coverage.py``
lists them in ``docs/numpy_coverage.md``), in one of four ways:

- **implemented**: a kenaz function, differentiable (or a constant);
- **NumPy's own**: the very NumPy object, for what holds no array data
  (constants, dtypes and scalar types, error state and print options,
  submodules such as ``testing``);
- **on values**: NumPy on the plain values, also on tracked Tensors, for
  functions whose results carry no derivative (strings, indices, booleans,
  file output): ``digitize``, ``array2string``, ``savetxt``, ...;
- **pass-through**: NumPy on the plain values for Tensors no running
  transformation tracks (``histogram``, ``fill_diagonal`` on an untracked
  Tensor, ``bincount``, set operations, ...); given a tracked Tensor it
  raises, naming the function, rather than silently dropping the derivative.

Numeric array results of the wrappers come back as Tensors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as _np

from ..mutation import in_place_target, plain, refuse_tracked
from ..tensor import Tensor

# -- NumPy's own objects: no array data in, nothing to differentiate -----------------
_OWN_FUNCTIONS = [
    "base_repr", "binary_repr", "broadcast_shapes", "busday_count", "busday_offset",
    "datetime_as_string", "datetime_data", "format_float_positional",
    "format_float_scientific", "frompyfunc", "get_include", "get_printoptions", "getbufsize",
    "geterr", "geterrcall", "info", "is_busday", "isnat", "issubdtype", "iterable",
    "mintypecode", "nested_iters", "printoptions", "promote_types", "set_printoptions",
    "setbufsize", "seterr", "seterrcall", "show_config", "show_runtime", "test", "typename",
    "diag_indices", "tril_indices", "triu_indices", "mask_indices",
]  # fmt: skip
_OWN_VALUES = [
    "False_", "True_", "ScalarType", "__version__", "index_exp", "little_endian", "mgrid",
    "ogrid", "s_", "sctypeDict", "typecodes",
]  # fmt: skip
# Submodules, looked up on first use (kenaz.numpy's __getattr__): some are slow to import.
OWN_MODULES = frozenset({
    "char", "core", "ctypeslib", "dtypes", "emath", "exceptions", "f2py", "lib", "ma",
    "polynomial", "rec", "strings", "testing", "typing",
})  # fmt: skip

# -- NumPy on the values, whatever tracks them: results without derivatives ----------
VALUES_ONLY = frozenset({
    "array2string", "array_repr", "array_str", "common_type", "min_scalar_type",
    "may_share_memory", "shares_memory", "isfortran", "einsum_path", "save", "savetxt",
    "savez", "savez_compressed", "digitize", "isin", "lexsort", "packbits", "unpackbits",
    "diag_indices_from", "tril_indices_from", "triu_indices_from", "ix_", "bitwise_count",
})  # fmt: skip

# -- NumPy on untracked values; a tracked argument is refused by name ------------------
PASS_THROUGH = frozenset({
    "histogram2d", "histogramdd", "histogram_bin_edges",
    "intersect1d", "setdiff1d", "setxor1d", "union1d", "fromfunction",
    "bartlett", "blackman", "hamming", "hanning", "kaiser",
    "frombuffer", "fromfile", "fromiter", "fromregex", "fromstring", "from_dlpack",
    "genfromtxt", "load", "loadtxt", "asmatrix", "bmat",
    # write into their first argument (a Tensor nothing tracks changes in place); put,
    # place, put_along_axis and fill_diagonal are kenaz.s own (numpy/_composed/writes.py)
    "copyto", "putmask",
})  # fmt: skip
WRITES_FIRST = frozenset({"copyto", "putmask"})


def _as_tensors(result: Any) -> Any:
    """Numeric ndarrays (also in tuples and lists) as Tensors; anything else as it is."""
    if type(result) is _np.ndarray and result.dtype.kind in "biufc":
        return Tensor(result)
    if type(result) in (tuple, list):
        return type(result)(_as_tensors(r) for r in result)
    return result


def _on_values(name: str) -> Callable[..., Any]:
    numpy_function = getattr(_np, name)

    @functools.wraps(numpy_function)
    def on_values(*args: Any, **kwargs: Any) -> Any:
        return _as_tensors(numpy_function(*plain(args), **plain(kwargs)))

    on_values.__kenaz_numpy__ = "values"  # type: ignore[attr-defined]
    return on_values


def _pass_through(name: str) -> Callable[..., Any]:
    numpy_function = getattr(_np, name)

    @functools.wraps(numpy_function)
    def pass_through(*args: Any, **kwargs: Any) -> Any:
        refuse_tracked(name, args, kwargs)
        if name in WRITES_FIRST and args and isinstance(args[0], Tensor):
            args = (in_place_target(args[0], name), *args[1:])
        return _as_tensors(numpy_function(*plain(args), **plain(kwargs)))

    pass_through.__kenaz_numpy__ = "pass-through"  # type: ignore[attr-defined]
    return pass_through


class vectorize(_np.vectorize):  # noqa: N801 - NumPy's name
    """NumPy's ``vectorize``, refusing Tensors a running transformation tracks
    (a Python loop over elements cannot carry a derivative; use ``kenaz.vmap``)."""

    __kenaz_numpy__ = "pass-through"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        refuse_tracked("vectorize", args, kwargs)
        return _as_tensors(super().__call__(*plain(args), **plain(kwargs)))


class _Concatenator:
    """``r_`` and ``c_``: NumPy's, refusing tracked Tensors (use ``kenaz.numpy.concatenate``)."""

    __kenaz_numpy__ = "pass-through"

    def __init__(self, name: str) -> None:
        self._name = name
        self._numpy = getattr(_np, name)

    def __getitem__(self, key: Any) -> Any:
        refuse_tracked(self._name, (key,), {})
        return _as_tensors(self._numpy[plain(key)])

    def __len__(self) -> int:
        return 0


class NumpySubmodule:
    """``kenaz.numpy.<name>``: NumPy's submodule of that name, imported on first use
    (``numpy.testing`` and ``numpy.f2py`` take a tenth of a second to import)."""

    __kenaz_numpy__ = "NumPy's own"

    def __init__(self, name: str) -> None:
        self.__name__ = f"numpy.{name}"
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(getattr(_np, self._name), attribute)

    def __dir__(self) -> list[str]:
        return dir(getattr(_np, self._name))

    def __repr__(self) -> str:
        return f"<NumPy's module numpy.{self._name}, imported on first use>"


r_ = _Concatenator("r_")
c_ = _Concatenator("c_")


def _namespace() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _OWN_FUNCTIONS + _OWN_VALUES:
        if hasattr(_np, name):
            found[name] = getattr(_np, name)
    for name in sorted(VALUES_ONLY):
        if hasattr(_np, name):
            found[name] = _on_values(name)
    for name in sorted(PASS_THROUGH):
        if hasattr(_np, name):
            found[name] = _pass_through(name)
    # Classes: dtypes and scalar types, errstate, nditer, matrix, ... (NumPy's own).
    # (NumPy's own dict, not getattr over dir(): that would import lazy submodules.)
    for name, value in list(vars(_np).items()):
        if not name.startswith("_") and isinstance(value, type) and name not in found:
            found[name] = value
    found["__array_namespace_info__"] = _np.__array_namespace_info__
    found.pop("ndarray", None)  # kenaz.numpy.ndarray is Tensor
    found.pop("vectorize", None)
    return found


NAMESPACE = _namespace()
__all__ = sorted(NAMESPACE) + ["vectorize", "r_", "c_"]
globals().update(NAMESPACE)
