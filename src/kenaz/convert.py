"""Conversions: which array-likes become tensors, and which tensors may become plain arrays.

One rule each way, enforced here and nowhere else:

- **Into a tensor.** :func:`as_tensor` is the one way in: whatever kenaz
  turns into a tensor (``kenaz.numpy.array``/``asarray``, the argument
  conversion of the namespace functions, the list arguments of a primitive
  performed under a transformation, the inputs and outputs of every
  transformation) goes through it. A tensor stays itself; a (nested) list or
  tuple holding tensors is *stacked* with differentiable ops, as
  ``jnp.array`` does, so ``knp.mean([x, x + 2])`` differentiates like
  ``knp.mean(knp.stack([x, x + 2]))``; anything else is data, a constant
  ``Tensor``. ``Tensor(value)`` itself makes only that constant, from data
  (``kenaz.backend.array_value``, the layer below it); it never calls back here.
- **Out of a tensor.** Turning a tensor that a *running* differentiating or
  batching transformation tracks into a plain NumPy array
  (``numpy.asarray(t)``, ``numpy.array([t, ...])``, ``t.__array__()``,
  ``t.numpy()``, ``Tensor(t)``) raises :class:`TrackedConversionError`: the
  derivative through the array would silently be zero. So does turning it
  into a Python or NumPy number under a differentiating transformation
  (``float(t)``, ``complex(t)``, ``t.item()``, ``t.tolist()``,
  ``numpy.float64(t)``, ``math.exp(t)``: :func:`check_number`). Outside
  transformations, and for tensors no running transformation tracks, these
  conversions work as they always did. ``int(t)``, ``bool(t)``, comparisons,
  ``repr``/``str`` and format specs stay allowed under ``grad``/``jvp``:
  their derivative is zero wherever it exists, and control flow, integer
  indexing and logging need them.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import array_value
from .effects import current_handlers, handler, perform_args
from .errors import TrackedConversionError
from .tensor import Tensor, holds_tensor

__all__ = [
    "TrackedConversionError",
    "as_tensor",
    "array_argument",
    "leaf_tensor",
    "perform_stacked",
    "check_convertible",
    "check_number",
    "tracked_by_running",
    "accepts_nested_lists",
    "read_value",
]



# -- into a tensor: the one way in --------------------------------------------------------
# `kenaz.ops.shape.stack`: ops.shape converts its own arguments with `as_tensor`, so it
# sits above this module; it registers its `stack` when it loads.
_stack: Callable[[list[Tensor]], Tensor] | None = None


def register_stack(stack: Callable[[list[Tensor]], Tensor]) -> None:
    """Called once by ``kenaz.ops.shape``: the differentiable stack :func:`as_tensor` uses."""
    global _stack
    _stack = stack


def as_tensor(x: Any, dtype: Any = None) -> Tensor:
    """``x`` as a tensor: the one way in, for every input kenaz turns into a tensor.

    ``kenaz.numpy.array``/``asarray``, the argument conversion of the namespace
    functions (:func:`array_argument`, :func:`accepts_nested_lists`), the handlers'
    list arguments (:func:`perform_stacked`) and the inputs and outputs of every
    transformation (:func:`leaf_tensor`) come here. Three cases, each going down
    the layers once:

    - a tensor is returned as it is (cast to ``dtype`` by a differentiable op);
    - a (nested) list or tuple holding tensors is stacked by differentiable ops,
      as ``jnp.array`` does: numbers and arrays in it become constants, and
      NumPy's dtype promotion applies (``[x, 1]`` with ``x`` float32 is float32);
    - anything else (numbers, lists of numbers, NumPy values, CuPy, Dask and
      other Array API arrays) is data: a constant tensor (what ``Tensor(x, dtype)``
      makes) of the array ``kenaz.backend.array_value`` makes.
    """
    if isinstance(x, Tensor):
        out = x
    elif isinstance(x, (list, tuple)) and holds_tensor(x):
        out = _stacked(x)
    else:
        return _constant(array_value(x, dtype))
    return out if dtype is None or out.dtype == dtype else out.astype(dtype)


_new = object.__new__


def _constant(value: Any) -> Tensor:
    """A constant tensor of the backend array ``value``: ``kenaz.tensor._make``, inlined (a
    call would cost as much as the allocation, and go back up to tensor.py for three lines)."""
    out = _new(Tensor)
    out._value = value
    out._trace = None
    return out


def _stacked(obj: list | tuple) -> Tensor:
    """The tensor of a nested list or tuple holding tensors (:func:`as_tensor`)."""
    if not obj:
        return _constant(array_value(obj))
    # `isinstance(i, Tensor)` first: a list test on a 0-d tensor would read its `__class__`.
    items = [
        i if isinstance(i, Tensor)
        else _stacked(i) if isinstance(i, (list, tuple)) and holds_tensor(i)
        else _constant(array_value(i))
        for i in obj
    ]  # fmt: skip
    assert _stack is not None, "kenaz.ops.shape registers stack when kenaz is imported"
    return _stack(items)


def array_argument(x: Any) -> Any:
    """An array argument of a primitive's front end, ready to be read: a list or tuple
    becomes a tensor (:func:`as_tensor`), anything else is returned as it is (the
    primitive converts it).

    Front ends call this (behind a cheap ``isinstance(x, Tensor)`` test) before reading
    a fact of ``x`` (its shape): through NumPy, on a list of tracked tensors, that read
    would be a refused conversion. So they need no wrapper (:func:`accepts_nested_lists`).
    """
    return as_tensor(x) if isinstance(x, (list, tuple)) else x


def leaf_tensor(x: Any, where: str) -> Tensor:
    """A leaf of what a transformed function takes or returns, as a tensor (:func:`as_tensor`).

    Tensors, arrays and numbers are accepted; anything else is a ``TypeError``
    naming the transformation ``where``.
    """
    if isinstance(x, Tensor):
        return x
    try:
        return as_tensor(x)
    except (TypeError, ValueError):
        raise TypeError(
            f"kenaz.{where}: the function must return Tensors, arrays or numbers "
            f"(or pytrees of them), got {type(x).__name__}"
        ) from None


def perform_stacked(h: Any, op: Any, args: tuple, params: dict) -> Any:
    """Perform ``op`` again through handler ``h``, its list arguments holding tensors stacked.

    A handler calls this from its ``handle`` (so with the stack set to the
    handlers outside it) when an argument is a list or tuple holding tensors:
    ``h`` is installed again, the lists become tensors (the stacking ops are
    seen by ``h`` and every handler outside it) and the op is performed on
    them. Only such calls pay for this.
    """
    with handler(h):
        stacked = tuple(
            as_tensor(a) if isinstance(a, (list, tuple)) and holds_tensor(a) else a for a in args
        )
        return perform_args(op, stacked, params)


def _running_levels() -> set[int]:
    """The levels of the running handlers whose tracked tensors carry derivatives."""
    return {h.level for h in current_handlers() if h.differentiates}


def check_convertible(t: Tensor, how: str) -> None:
    """Raise :class:`TrackedConversionError` if converting ``t`` to an array loses a derivative.

    ``how`` names the conversion in the message (``"numpy.asarray(t)"``).
    That is the case when ``t`` is a batched view of a running ``vmap``, or
    when a running ``grad``/``vjp``/``jvp``/``linearize`` tracks it.
    """
    if type(t) is not Tensor:  # a batched view of vmap (its own error once the vmap ended)
        batcher = getattr(t, "_batcher", None)
        if batcher is not None and getattr(batcher, "alive", False):
            raise _refusal(
                t,
                f"kenaz: {how} of a tensor batched by vmap (per-example shape {t.shape}): a "
                "NumPy array cannot hold the batch, and one example cannot stand for it. Use "
                "kenaz.numpy functions instead of numpy's (they batch), or "
                'vmap(f, method="loop") to run f once per example.',
            )
        t._value  # noqa: B018 - raises the view's own error (escaped from its vmap)
        return
    trace = t._trace
    if not trace:
        return
    running = _running_levels()
    if running and not running.isdisjoint(trace):
        raise _refusal(
            t,
            f"kenaz: {how} at {_user_location()}, of a tensor (shape {t.shape}, dtype "
            f"{t.dtype}) that a running grad/jvp/vjp/linearize differentiates: the NumPy "
            "array would be a constant and the derivative through it silently zero. Use "
            "kenaz.numpy functions instead of "
            "numpy's (`import kenaz.numpy as np`), or apply kenaz.stop_gradient(t) first if a "
            "constant is meant. int(t), bool(t) and comparisons still give Python values.",
        )


def tracked_by_running(t: Tensor) -> bool:
    """Whether a running ``grad``/``vjp``/``jvp``/``linearize`` tracks ``t``."""
    trace = t._trace
    if not trace:
        return False
    running = _running_levels()
    return bool(running) and not running.isdisjoint(trace)


def check_number(t: Tensor, how: str) -> None:
    """Raise :class:`TrackedConversionError` if turning ``t`` into a Python or NumPy number
    loses a derivative: a running ``grad``/``vjp``/``jvp``/``linearize`` tracks it.

    ``how`` names the conversion (``"float(t)"``). The tensor methods call this only
    for a tensor with a record (``t._trace``), so an untracked one pays nothing. A
    batched view of ``vmap`` is left to its own error (reading its value raises).
    """
    if type(t) is Tensor and tracked_by_running(t):
        raise TrackedConversionError(
            f"kenaz: {how} at {_user_location()}, of a tensor (shape {t.shape}, dtype "
            f"{t.dtype}) that a running grad/jvp/vjp/linearize differentiates: the number "
            "would be a constant, and the derivative through it silently zero. Compute with "
            "kenaz.numpy functions instead (knp.exp(t), not math.exp(t) or numpy.float64(t)), "
            "or apply kenaz.stop_gradient(t) first if a constant is meant. int(t), bool(t), "
            "comparisons and formatting (f\"{t:.3f}\") stay allowed."
        )


def _user_location() -> str:
    """``file:line`` of the innermost frame outside kenaz, NumPy and SciPy: the user's code."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_LIBRARIES):
        frame = frame.f_back
    if frame is None:
        return "an unknown place"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


# The namespaces whose functions a refused conversion names (`kenaz.numpy.pad: ...`).
NAMESPACES = (
    "kenaz.numpy",
    "kenaz.numpy.linalg",
    "kenaz.numpy.fft",
    "kenaz.scipy.special",
    "kenaz.scipy.linalg",
    "kenaz.scipy.signal",
)


# The code between the user's and the refused conversion: kenaz's, and NumPy's and
# SciPy's Python functions that kenaz calls (`np.ndim(a)` converts `a` inside one).
_LIBRARIES = ("kenaz.", "numpy", "scipy")


def _refusal(t: Tensor, message: str) -> TrackedConversionError:
    """The error refusing to convert ``t``, naming the namespace function the user called.

    The function is the outermost namespace function among the library frames
    below the caller's code (``kenaz.numpy.pad``, also when ``kenaz.nn`` called
    it): a function not wrapped by :func:`accepts_nested_lists` is named here,
    with the arguments holding ``t``, as the wrapper names the composites (a
    wrapped function's frame is no namespace function's: its wrapper names it).
    Only the error path pays for the walk over the frames.
    """
    frame, entry, name = sys._getframe(2), None, None
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_LIBRARIES):
        public = _public_name(frame.f_code)
        if public:
            entry, name = frame, public
        frame = frame.f_back
    if entry is None:
        return TrackedConversionError(message)
    code = entry.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    arguments = {n: entry.f_locals.get(n) for n in code.co_varnames[:count]}
    names = [n for n, value in arguments.items() if _holds(value, t)] or [
        n for n, value in arguments.items() if _refused(value)
    ]
    return _naming(name, names, message)


def _naming(function: str, names: list[str], message: Any) -> TrackedConversionError:
    """A refused conversion restated naming the namespace ``function`` and its arguments."""
    what = (
        f"its argument{'s' if len(names) > 1 else ''} {', '.join(names)} "
        "cannot be differentiated (converted to a NumPy array inside). "
        if names
        else ""
    )
    named = TrackedConversionError(f"{function}: {what}{message}")
    named.names_function = True  # type: ignore[attr-defined]
    return named


def _public_name(code: Any) -> str | None:
    """``"kenaz.numpy.pad"`` for the code of a function a namespace exports, else None."""
    for namespace in NAMESPACES:
        module = sys.modules.get(namespace)
        function = getattr(module, code.co_name, None) if module is not None else None
        if getattr(function, "__code__", None) is code:
            return f"{namespace}.{code.co_name}"
    return None


def _holds(value: Any, t: Tensor) -> bool:
    """Whether ``value`` is ``t`` or a (nested) list or tuple holding it."""
    if value is t:
        return True
    return isinstance(value, (list, tuple)) and any(_holds(v, t) for v in value)


def _refused(value: Any) -> bool:
    """Whether ``value`` is, or is a (nested) list or tuple holding, a tensor whose
    conversion to an array is refused."""
    if isinstance(value, Tensor):
        try:
            check_convertible(value, "")
        except TrackedConversionError:
            return True
        return False
    if isinstance(value, (list, tuple)):
        return any(_refused(v) for v in value)
    return False


def _stack_lists(args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """``args``/``kwargs`` with the lists holding tensors stacked, or None if there are none."""
    found = False

    def convert(a: Any) -> Any:
        nonlocal found
        if isinstance(a, (list, tuple)) and holds_tensor(a):
            found = True
            return as_tensor(a)
        return a

    new_args = tuple(convert(a) for a in args)
    new_kwargs = {k: convert(v) for k, v in kwargs.items()}
    return (new_args, new_kwargs) if found else None


def _refused_arguments(f: Any, args: tuple, kwargs: dict) -> list[str]:
    """The names of ``f``'s arguments that hold a tensor whose conversion is refused."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {f"#{i}": a for i, a in enumerate(args)} | kwargs
    return [name for name, value in bound.items() if _refused(value)]


def accepts_nested_lists(f: Any, where: str = "kenaz") -> Any:
    """Wrap the namespace function ``f`` so that its array-like arguments may be lists of tensors.

    ``f`` runs as is. Only if it raises a ``TypeError`` (such as
    :class:`TrackedConversionError`: it treated a list holding tracked
    tensors as a NumPy array-like; or Python's own for ``list * 2.0``) while
    an argument is a list holding tensors is it called again with those lists stacked by
    :func:`as_tensor`: the one rule, with no cost to calls that do not
    need it. A list the function meant as a sequence of arrays of different
    shapes cannot be stacked, and the original error stands. A refused
    conversion is restated naming the function (``where.f``) and the
    arguments that cannot be differentiated.
    """
    if getattr(f, "__kenaz_lists__", False):
        return f

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except TypeError as error:  # TrackedConversionError, or Python's `list * float`
            try:
                stacked = _stack_lists(args, kwargs)
            except (ValueError, TypeError):
                stacked = None
            if stacked is None:
                if (
                    isinstance(error, TrackedConversionError)
                    and not error.args[0].startswith(f"{where}.")
                    and not getattr(error, "names_function", False)
                ):
                    names = _refused_arguments(f, args, kwargs)
                    raise _naming(f"{where}.{f.__name__}", names, error) from None
                raise
        return f(*stacked[0], **stacked[1])

    call.__kenaz_lists__ = True  # type: ignore[attr-defined]
    return call


# The modules of the primitives' front ends. Their functions stack their own list
# arguments: each calls `array_argument` (or `as_tensor`) on an array argument before
# reading anything of it through NumPy, or hands it unread to a primitive, whose handlers
# stack it (`perform_stacked`). So they are not wrapped: no wrapper frame on the calls of
# hot loops (sum, mean, reshape, matmul, concatenate, where...).
STACKS_ITS_OWN_LISTS = ("kenaz.ops.", "kenaz.numpy._signatures", "kenaz.numpy._composed.padding")


def read_value(x: Any, dtype: Any = None) -> Any:
    """The NumPy value of ``x``, for a composite that reads it only to decide something
    piecewise constant (sort order, indices, a branch, a scaling count).

    Unlike ``numpy.asarray`` this does not refuse tracked tensors: the caller
    promises that no derivative flows through what it reads (the values it
    returns are gathered or computed with tensor ops). Batched views of
    ``vmap`` still raise: their value is not one array.
    """
    if isinstance(x, Tensor):
        x = x._value
    elif isinstance(x, (list, tuple)) and holds_tensor(x):
        x = as_tensor(x)._value
    return np.asarray(x, dtype=dtype)
