"""NumPy dispatch: ``numpy.sin(t)``, ``numpy.sum(t, axis=0)``, ``ndarray + t`` on Tensors.

``Tensor.__array_ufunc__`` and ``Tensor.__array_function__`` send NumPy's
functions here. Two cases:

- No argument is tracked by a running transformation (always the case when
  none runs): there is no derivative to keep, so NumPy itself runs on the
  plain values and returns what NumPy returns (ndarrays), as HIPS autograd
  does outside its transformations. That is what code written for NumPy
  arrays (SciPy's compiled routines, matplotlib) needs. NumPy functions that
  write into an argument (``out=``, ``fill_diagonal``, ``copyto``, ...) write
  into the Tensor's memory, as ``x[idx] = v`` does.
- An argument is tracked: the function is looked up by name in the matching
  kenaz namespace (``numpy.linalg.norm`` -> ``kenaz.numpy.linalg.norm``), its
  arguments are re-bound by name, and the kenaz function runs, so unmodified
  NumPy code stays differentiable under every transformation. A NumPy
  function kenaz does not differentiate raises a ``TypeError`` naming it,
  rather than converting the tensor to an array and silently dropping its
  derivative.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ..effects import handlers_installed
from ..mutation import in_place_target, is_tracked, plain
from ..tensor import Tensor
from ._namespace import assembled
from ._utilities import VALUES_ONLY

__all__ = ["array_ufunc", "array_function"]

# NumPy module -> the kenaz module holding the functions of the same names.
_NAMESPACES = {
    "numpy": "kenaz.numpy",
    "numpy.linalg": "kenaz.numpy.linalg",
    "numpy.fft": "kenaz.numpy.fft",
}

# Functions that only inspect values (no derivative can flow through them):
# they run on the plain arrays and return NumPy's answer.
_ON_VALUES = {
    "iscomplexobj",
    "isrealobj",
    "array_equal",
    "array_equiv",
    "can_cast",
    "min_scalar_type",
    "may_share_memory",
    "shares_memory",
    "array_repr",
    "array_str",
    "array2string",
    "save",
    "savez",
    "savez_compressed",
    "savetxt",
    "digitize",
    "isin",
}

# ufunc methods that are reductions or scans of a kenaz function.
_UFUNC_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "amax",
    "minimum": "amin",
    "logical_and": "all",
    "logical_or": "any",
}
_UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

# How many leading parameters may be matched by position when their names differ.
_LEADING_ARRAYS = 2


def _unsupported(name: str, why: str = "") -> TypeError:
    return TypeError(
        f"kenaz: numpy.{name} is not implemented for kenaz Tensors{why}. Converting the "
        "Tensor to an array would silently drop its derivative; use a kenaz.numpy function, "
        "or convert explicitly with `t.numpy()` if no derivative is needed."
    )


@functools.cache
def _kenaz_counterpart(module: str, name: str) -> Callable | None:
    target = _NAMESPACES.get(module)
    if target is None:
        return None
    try:
        namespace = importlib.import_module(target)
    except ImportError:
        return None
    found = getattr(namespace, name, None)
    return found if callable(found) else None


@functools.cache
def _signature(func: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def _is_default(value: Any, param: inspect.Parameter) -> bool:
    default = param.default
    if default is inspect.Parameter.empty:
        return False
    if value is default:
        return True
    # NumPy's "<no value>" sentinel and None/False/0 defaults passed explicitly.
    return type(value) is type(default) and isinstance(value, (type(None), bool, int, str)) and (
        value == default
    )


def _rebind(
    name: str, numpy_func: Callable, kenaz_func: Callable, args: tuple, kwargs: dict
) -> tuple[list[Any], dict[str, Any]]:
    """Map a call of ``numpy_func`` onto ``kenaz_func``'s parameters, by name then by position."""
    numpy_sig, kenaz_sig = _signature(numpy_func), _signature(kenaz_func)
    kenaz_params = list(kenaz_sig.parameters.values()) if kenaz_sig is not None else []
    variadic = bool(kenaz_params) and kenaz_params[0].kind is inspect.Parameter.VAR_POSITIONAL
    if numpy_sig is None or not kenaz_params or variadic:
        # No signature to map by name (C functions, primitives): pass the call through as given.
        return list(args), {k: v for k, v in kwargs.items() if k != "out" or v is not None}
    bound = numpy_sig.bind(*args, **kwargs)
    kenaz_names = {p.name for p in kenaz_params if p.kind is not p.VAR_POSITIONAL}
    accepts_any_keyword = any(p.kind is p.VAR_KEYWORD for p in kenaz_params)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    numpy_order = list(numpy_sig.parameters)
    for param_name, value in bound.arguments.items():
        param = numpy_sig.parameters[param_name]
        index = numpy_order.index(param_name)
        if param.kind is param.VAR_POSITIONAL:
            positional.extend(value)
            continue
        if param.kind is param.VAR_KEYWORD:
            keywords.update(value)
            continue
        if _is_default(value, param):  # out= is passed on: kenaz writes into it as NumPy
            continue
        if param_name in kenaz_names:
            keywords[param_name] = value
        elif index < _LEADING_ARRAYS and index < len(kenaz_params) and kenaz_params[index].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            # The leading array arguments are named differently (a/x, b/y): match by position.
            keywords[kenaz_params[index].name] = value
        elif accepts_any_keyword:
            keywords[param_name] = value
        else:
            raise _unsupported(name, f" with the argument {param_name}={value!r}")
    # Positional-only kenaz parameters cannot be passed by keyword.
    for param in kenaz_params:
        if param.kind is param.POSITIONAL_ONLY and param.name in keywords:
            positional.insert(kenaz_params.index(param), keywords.pop(param.name))
    return positional, keywords


# NumPy functions that write into their first argument.
_WRITES_FIRST = {"fill_diagonal", "copyto", "put", "place", "putmask", "put_along_axis"}


def _tracked_call(args: Any, kwargs: dict) -> bool:
    """Whether a transformation runs and some argument is tracked by it."""
    return bool(handlers_installed()) and (is_tracked(args) or is_tracked(kwargs))


def _writable_out(out: Any, name: str) -> Any:
    """``out=`` (a Tensor, array, or tuple of them) with Tensors as their (checked) memory."""
    if isinstance(out, Tensor):
        return in_place_target(out, name)
    if isinstance(out, tuple):
        return tuple(_writable_out(o, name) for o in out)
    return out


def _as_given(result: Any, given: Any, plain_given: Any) -> Any:
    """NumPy returns the ``out`` array it wrote into: give back the Tensor that was passed."""
    if isinstance(given, Tensor) and result is plain_given:
        return given
    if isinstance(given, tuple):
        if not isinstance(result, tuple):  # a ufunc's single output, passed as `(out,)`
            return _as_given(result, given[0], plain_given[0]) if len(given) == 1 else result
        return tuple(_as_given(r, g, p) for r, g, p in zip(result, given, plain_given))
    return result


def _as_tensors(result: Any) -> Any:
    """A ufunc's numeric array results as Tensors (a tuple for several outputs)."""
    if isinstance(result, tuple):
        return tuple(_as_tensors(r) for r in result)
    if isinstance(result, (np.ndarray, np.generic)) and result.dtype.kind in "biufc":
        return Tensor(result)
    return result


def numpy_on_values(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """Run NumPy's ``func`` on the plain values of Tensors, as if they were ndarrays."""
    args, kwargs = list(args), dict(kwargs)
    if name in _WRITES_FIRST and args and isinstance(args[0], Tensor):
        args[0] = in_place_target(args[0], name)
    given_out = kwargs.get("out")
    if given_out is not None:
        kwargs["out"] = _writable_out(given_out, name)
    implementation = getattr(func, "_implementation", func)
    result = implementation(*plain(args), **plain(kwargs))
    return result if given_out is None else _as_given(result, given_out, kwargs["out"])


def array_function(func: Callable, types: tuple[type, ...], args: tuple, kwargs: dict) -> Any:
    """``Tensor.__array_function__``: NumPy on untracked values, else the kenaz counterpart."""
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    name = func.__name__
    if not _tracked_call(args, kwargs):
        return numpy_on_values(func, name, args, kwargs)
    module = getattr(func, "__module__", "numpy") or "numpy"
    if (name in _ON_VALUES or name in VALUES_ONLY) and module == "numpy":
        return func(*plain(args), **plain(kwargs))
    kenaz_func = _kenaz_counterpart(module, name)
    qualified = name if module == "numpy" else f"{module.removeprefix('numpy.')}.{name}"
    if kenaz_func is None or kenaz_func is func:
        raise _unsupported(qualified)
    positional, keywords = _rebind(qualified, func, kenaz_func, args, kwargs)
    return kenaz_func(*positional, **keywords)


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``Tensor.__array_ufunc__``: NumPy on untracked values, else the kenaz counterpart
    of a ufunc (or its reduce/accumulate/outer)."""
    name = ufunc.__name__
    if not _tracked_call(inputs, kwargs):
        inputs = list(inputs)
        if method == "at" and isinstance(inputs[0], Tensor):  # writes into its first input
            inputs[0] = in_place_target(inputs[0], f"{name}.at")
        given_out = kwargs.get("out")
        if given_out is not None:
            kwargs = dict(kwargs, out=_writable_out(given_out, name))
        result = getattr(ufunc, method)(*plain(inputs), **plain(kwargs))
        if given_out is not None:
            return _as_given(result, given_out, kwargs["out"])
        return _as_tensors(result)
    kenaz_func = _kenaz_counterpart("numpy", name)
    if method == "__call__" and kwargs and _takes_ufunc_keywords(kenaz_func):
        return kenaz_func(*inputs, **kwargs)  # out=, where=, dtype=...: see _ufunc_keywords
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in out):
        raise TypeError(
            f"kenaz: numpy.{name}(..., out=...) is not supported on tracked "
            "Tensors: use the returned value instead of out="
        )
    dtype = kwargs.pop("dtype", None)
    for key, value in kwargs.items():
        if method in ("reduce", "accumulate") and key in ("axis", "keepdims"):
            continue
        harmless = (key == "where" and value is True) or (key == "casting" and value == "same_kind")
        if not harmless:
            raise TypeError(f"kenaz: numpy.{name}(..., {key}=...) is not supported for Tensors")
    if method == "__call__":
        result = _call_kenaz(name, kenaz_func, inputs, {})
    elif method == "reduce":
        result = _reduce_or_scan(name, _UFUNC_REDUCE, inputs, kwargs, method, keepdims=True)
    elif method == "accumulate":
        result = _reduce_or_scan(name, _UFUNC_ACCUMULATE, inputs, kwargs, method, keepdims=False)
    elif method == "outer":
        knp = assembled()  # kenaz.numpy: this module loads before its functions all exist
        a, b = (knp.asarray(x) for x in inputs)
        a = knp.reshape(a, a.shape + (1,) * b.ndim)
        result = _call_kenaz(name, _kenaz_counterpart("numpy", name), (a, b), {})
    else:
        raise _unsupported(f"{name}.{method}")
    return result if dtype is None else result.astype(dtype)


def _takes_ufunc_keywords(kenaz_func: Callable | None) -> bool:
    signature = None if kenaz_func is None else _signature(kenaz_func)
    return signature is not None and "casting" in signature.parameters


def _call_kenaz(name: str, kenaz_func: Callable | None, args: tuple, kwargs: dict) -> Any:
    if kenaz_func is None:
        raise _unsupported(name)
    return kenaz_func(*args, **kwargs)


def _reduce_or_scan(
    name: str, table: dict[str, str], inputs: tuple, kwargs: dict, method: str, keepdims: bool
) -> Any:
    target = table.get(name)
    if target is None or len(inputs) != 1:
        raise _unsupported(f"{name}.{method}")
    axis = kwargs.get("axis", 0)
    params: dict[str, Any] = {"axis": axis}
    if keepdims and kwargs.get("keepdims"):
        params["keepdims"] = True
    return _call_kenaz(name, _kenaz_counterpart("numpy", target), inputs, params)
