"""Array backends: which array library an op runs on, and the standard's gaps filled per library.

kenaz runs on NumPy, and on any array library that implements the Array API
standard (``__array_namespace__``, reached through ``array-api-compat``):
CuPy on GPUs, Dask for arrays larger than one machine, ``array-api-strict``
(the standard and nothing more) in the tests. An op's implementation takes
its namespace from its inputs:

- NumPy values (``ndarray``, NumPy scalars, Python numbers) take NumPy's own
  code at once: one type-identity test decides it, before any namespace
  lookup, so that NumPy stays the fast path;
- any other array takes :func:`namespace` of its inputs and the standard's
  function of that name; NumPy arrays mixed in (constants inside a rule) are
  moved to that namespace first.

Where the standard has no function (scatter-add, einsum, special functions)
a small table per library fills the gap (:func:`scatter_add`, :func:`einsum`),
and an op without one raises naming the op and the backend.

Creation follows the inputs: a rule's constants are made with
:func:`full_like`. Functions with no array input (``kenaz.numpy.zeros(3)``)
create on the default backend, NumPy unless :func:`default_backend` says
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from .errors import ConcretizationError

__all__ = [
    "NUMPY_TYPES",
    "is_numpy",
    "is_backend_array",
    "array_value",
    "is_numpy_array_like",
    "numpy_array_like",
    "ArrayLikeArgument",
    "namespace",
    "standard_namespace",
    "numpy_dtype",
    "backend_dtype",
    "asarray_on",
    "full_like",
    "namespace_of",
    "zeros_on",
    "scatter_add",
    "standard_index",
    "take_flat",
    "einsum",
    "special_function",
    "is_dask",
    "dask_map_matrices",
    "default_backend",
    "current_default",
    "materialize",
]

# Everything NumPy's own functions take as a value: the type identity test of the fast path.
NUMPY_TYPES = frozenset(
    {np.ndarray, bool, int, float, complex}
    | {t for t in set(np.sctypeDict.values()) if np.dtype(t).kind in "biufc"}
)


_PYTHON_NUMBERS = (bool, int, float, complex)


def is_numpy(value: Any) -> bool:
    """Whether ``value`` is a NumPy value (array, NumPy scalar or Python number)."""
    return type(value) in NUMPY_TYPES


def is_backend_array(value: Any) -> bool:
    """Whether ``value`` is an array of a library other than NumPy that kenaz runs on
    (anything with ``__array_namespace__``, and Dask arrays, which have none)."""
    if type(value) in NUMPY_TYPES or isinstance(value, (np.ndarray, np.generic)):
        return False
    if not hasattr(value, "shape"):
        return False
    if hasattr(value, "__array_namespace__"):
        return True
    module = type(value).__module__
    return module.startswith(("dask.", "cupy"))


# -- dtypes of a library's own ------------------------------------------------------------
# NumPy's, CuPy's and Dask's arrays have NumPy dtypes; a strict Array API library's have
# dtypes of its own, which kenaz maps to NumPy's by name (`numpy_dtype`). Reading a
# dtype is on the hot path of every rule, so `kenaz.tensor` reads it in C until kenaz
# first meets such a dtype: then the hooks registered here run (once in effect; they
# are idempotent), and `Tensor.dtype` maps from then on.
NUMPY_DTYPE_TYPES = frozenset(type(np.dtype(t)) for t in np.sctypeDict.values())
_foreign_dtype_hooks: list[Callable[[], None]] = []


def on_foreign_dtypes(hook: Callable[[], None]) -> None:
    """Run ``hook()`` when kenaz first meets a value or dtype that is not NumPy's own
    (at once if it already has)."""
    _foreign_dtype_hooks.append(hook)
    if _to_numpy:
        hook()


def _foreign_dtype_met() -> None:
    for hook in _foreign_dtype_hooks:
        hook()


# The namespace of each array type seen so far: array-api-compat's lookup costs
# microseconds, a dictionary read tens of nanoseconds.
_namespaces: dict[type, Any] = {}


def array_value(value: Any, dtype: Any = None) -> Any:
    """The array a Tensor of ``value`` holds: another Array API library's array kept
    (cast to ``dtype``), anything else as ``numpy.asarray`` converts it. Types NumPy
    would store as objects (strings, ragged lists) are refused."""
    if type(value) not in NUMPY_TYPES and is_backend_array(value):
        kind = numpy_dtype(value.dtype)  # a CuPy, Dask or other Array API array: kept
        if dtype is not None and np.dtype(dtype) != kind:
            xp = namespace(value)
            return xp.astype(value, backend_dtype(xp, dtype))
        return value
    array = np.asarray(value, dtype=dtype)
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"kenaz: cannot make a Tensor of dtype {array.dtype} from {type(value).__name__}; "
            "only bool, integer, float and complex data are supported"
        )
    return array


class ArrayLikeArgument(TypeError):
    """An op met a NumPy array-like that is no array library's array (a pandas Series,
    DataFrame or Index, an xarray object, a memoryview): ``kenaz.effects.perform``
    catches this, converts such arguments as ``numpy.asarray`` does
    (:func:`numpy_array_likes`) and runs the op again. Only such calls pay for it."""


def is_numpy_array_like(value: Any) -> bool:
    """Whether ``value`` is an array-like NumPy converts (it has a shape, ``__array__`` or
    ``__array_interface__``: pandas, xarray, memoryview) but neither a NumPy value, a
    Tensor nor another array library's array."""
    return (
        type(value) not in NUMPY_TYPES
        and (
            hasattr(value, "shape")
            or hasattr(value, "__array__")
            or hasattr(value, "__array_interface__")
            or hasattr(value, "__array_struct__")
        )
        and not isinstance(value, (np.ndarray, np.generic, _Tensor))
        and not is_backend_array(value)
    )


def numpy_array_like(value: Any) -> Any:
    """``value`` as NumPy converts it, if it is a NumPy array-like of another type
    (:func:`is_numpy_array_like`); anything else unchanged."""
    if not is_numpy_array_like(value):
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":
        kind = type(value)
        raise TypeError(
            f"kenaz: a {kind.__module__}.{kind.__name__} converts to a NumPy array of dtype "
            f"{array.dtype}; only bool, integer, float and complex data are supported"
        )
    return array


def _namespace_of_type(value: Any) -> Any:
    kind = type(value)
    found = _namespaces.get(kind)
    if found is None:
        if is_numpy_array_like(value):  # pandas, xarray, memoryview: NumPy's, converted
            raise ArrayLikeArgument(f"kenaz: {kind.__name__} is converted by numpy.asarray")
        dtype = getattr(value, "dtype", None)
        if dtype is not None and type(dtype) not in NUMPY_DTYPE_TYPES:
            numpy_dtype(dtype)  # a library with dtypes of its own: maps them from now on
        try:
            import array_api_compat
        except ImportError:  # pragma: no cover - only without the optional dependency
            raise TypeError(
                f"kenaz: a {kind.__module__}.{kind.__name__} value needs array-api-compat "
                "(pip install 'kenaz[dask]' or 'kenaz[cupy]')"
            ) from None
        try:
            found = array_api_compat.array_namespace(value)
        except TypeError:
            raise TypeError(
                f"kenaz: {kind.__module__}.{kind.__name__} is not an array kenaz can run on; "
                "pass NumPy arrays, Python numbers, or arrays of an Array API library "
                "(CuPy, Dask, array-api-strict)"
            ) from None
        _namespaces[kind] = found
    return found


def namespace(*values: Any) -> Any:
    """The array namespace that runs an op on ``values``.

    ``numpy`` itself when every value is a NumPy value (subclasses included) or a
    Python number;
    otherwise the Array API namespace (through ``array-api-compat``) of the
    first value that is not. Values that are neither arrays nor numbers
    (``None``, tuples of indices) are ignored.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz.backend import namespace
    >>> namespace(np.ones(2), 1.0) is np
    True
    """
    for value in values:
        if (
            type(value) not in NUMPY_TYPES
            and hasattr(value, "shape")
            and not isinstance(value, (np.ndarray, np.generic))  # subclasses: NumPy's own
        ):
            return _namespace_of_type(value)
    return np


def standard_namespace(*values: Any) -> Any:
    """Like :func:`namespace`, but NumPy's as the Array API standard's (``array_api_compat.numpy``).

    For code written once against the standard (reference implementations, tests).
    """
    xp = namespace(*values)
    if xp is np:
        import array_api_compat.numpy

        return array_api_compat.numpy
    return xp


# -- dtypes: kenaz speaks NumPy's dtypes; a backend's own map to them by name --------------
_STANDARD_DTYPE_NAMES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
_to_numpy: dict[Any, np.dtype] = {}


def numpy_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype equal to a backend's ``dtype`` (CuPy and Dask use NumPy's own)."""
    if isinstance(dtype, np.dtype):
        return dtype
    found = _to_numpy.get(dtype)
    if found is None:
        name = getattr(dtype, "_canonical_name", None) or str(dtype).rsplit(".", 1)[-1]
        if name not in _STANDARD_DTYPE_NAMES:
            raise TypeError(f"kenaz: no NumPy dtype corresponds to {dtype!r}")
        found = _to_numpy[dtype] = np.dtype(name)
        _foreign_dtype_met()
    return found


def backend_dtype(xp: Any, dtype: Any) -> Any:
    """The dtype of namespace ``xp`` named like the NumPy ``dtype``."""
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    return getattr(xp, name)


# -- moving values and creating them on an input's backend --------------------------------
def asarray_on(xp: Any, value: Any) -> Any:
    """``value`` as an array of namespace ``xp`` (Python numbers are left alone: every
    namespace mixes them with arrays)."""
    if type(value) in _PYTHON_NUMBERS or xp is np:
        return value
    if type(value) in NUMPY_TYPES:
        array = np.asarray(value)
        return xp.asarray(array, dtype=backend_dtype(xp, array.dtype))
    return value


def common(values: tuple) -> tuple[Any, tuple]:
    """The namespace of ``values`` and the values moved to it (the slow path of an impl)."""
    xp = namespace(*values)
    if xp is np:
        return xp, values
    return xp, tuple(asarray_on(xp, v) for v in values)



def promoted(xp: Any, values: tuple) -> tuple:
    """``values`` (arrays of ``xp`` and Python numbers) cast to their common dtype by
    NumPy's rules (NEP 50: Python numbers are weak), so that an op mixing kinds (a boolean
    mask times a float, an int array plus a float) means on every backend what it means
    on NumPy; the standard leaves mixed kinds undefined and strict libraries refuse them."""
    if xp is np:
        return values
    first = values[0]
    if all(hasattr(v, "dtype") and v.dtype == first.dtype for v in values):
        return values  # one dtype already: the common case
    dtypes = [numpy_dtype(v.dtype) for v in values if hasattr(v, "dtype")]
    numbers = [v for v in values if type(v) in _PYTHON_NUMBERS]
    target = np.result_type(*dtypes, *numbers)
    if all(d == target for d in dtypes) and all(_weakly_fits(n, target) for n in numbers):
        return values
    backend_target = backend_dtype(xp, target)
    return tuple(
        xp.asarray(v, dtype=backend_target)
        if type(v) in _PYTHON_NUMBERS
        else (xp.astype(v, backend_target) if numpy_dtype(v.dtype) != target else v)
        for v in values
    )


def _weakly_fits(number: Any, dtype: np.dtype) -> bool:
    """Whether the standard mixes the Python ``number`` with arrays of ``dtype`` as is."""
    kind = dtype.kind
    if type(number) is bool:
        return kind == "b"
    if type(number) is int:
        return kind in "iufc"
    if type(number) is float:
        return kind in "fc"
    return kind == "c"


# `kenaz.tensor.Tensor`, a layer above: it registers itself when it loads, so that the
# functions below unwrap tensors without an import per call.
_Tensor: type = type(None)


def register_tensor_class(cls: type) -> None:
    """Called once by ``kenaz.tensor``: the class whose values :func:`value_of` unwraps."""
    global _Tensor
    _Tensor = cls


# The Tensor subclasses whose instances refuse to give a value (a jit tracer), noted on the
# first refusal: the error they raise is built with a walk up the stack (about 10 µs), and
# every `grad` traced by jit asks for its seed's backend here (`full_like`).
_valueless: set[type] = set()


def value_of(like: Any) -> Any:
    """The backend value behind ``like``: a Tensor's value, that of the batch behind a
    ``vmap`` view (which has none of its own), or ``like`` itself (None for a jit-traced
    tensor, which has no value: its program runs on NumPy, the default backend)."""
    while isinstance(like, _Tensor):
        kind = type(like)
        if kind in _valueless:
            return None
        batched = getattr(like, "_batched", None)
        if batched is None:
            try:
                return like._value
            except ConcretizationError:  # a jit-traced tensor: every one of its type refuses
                if kind is not _Tensor:
                    _valueless.add(kind)
                return None
            except ValueError:
                return None
        like = batched
    return like


def full_like(like: Any, shape: tuple[int, ...], fill: Any, dtype: Any) -> Any:
    """An array of ``shape`` filled with ``fill``, on the backend of ``like``.

    ``like`` is a Tensor, a backend value, or ``None`` for the default backend.
    """
    value = like._value if type(like) is _Tensor else value_of(like)
    if type(value) in NUMPY_TYPES:  # the fast path: a plain Tensor of a NumPy value
        xp = np
    else:
        xp = namespace(value) if value is not None else current_default()
    if xp is np:
        array = np.empty(shape, dtype)  # np.full without its Python-level wrapper
        array.fill(fill)
        return array
    return xp.full(shape, fill, dtype=backend_dtype(xp, dtype))


_ones: dict[Any, np.ndarray] = {}  # a 0-d one per NumPy dtype, copied for each seed


def one_like(like: Any, dtype: Any) -> Any:
    """A 0-d one of ``dtype`` on the backend of ``like``: a gradient's seed (``full_like``'s
    ``(), 1``, a fresh array, in one copy on NumPy)."""
    value = like._value if type(like) is _Tensor else value_of(like)
    if type(value) in NUMPY_TYPES:
        one = _ones.get(dtype)
        if one is None:
            one = _ones[dtype] = np.ones((), dtype)
        return one.copy()
    return full_like(like, (), 1, dtype)


def namespace_of(like: Any) -> Any:
    """The namespace of the array behind ``like`` (a Tensor or a backend value), or ``None``
    for NumPy (and for a jit-traced tensor, whose program runs on NumPy): what a record of
    an input keeps to make its zeros later on the same backend, without keeping the input."""
    value = like._value if type(like) is _Tensor else None
    if type(value) in NUMPY_TYPES:  # the fast path: a plain Tensor of a NumPy value
        return None
    value = value_of(like)
    if value is None or type(value) in NUMPY_TYPES:
        return None
    xp = namespace(value)
    return None if xp is np else xp


def zeros_on(xp: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Zeros of ``shape`` and (NumPy) ``dtype`` in namespace ``xp`` (``None``: NumPy)."""
    if xp is None or xp is np:
        return np.zeros(shape, dtype)
    return xp.zeros(shape, dtype=backend_dtype(xp, dtype))


# -- the standard's gaps, filled per library ----------------------------------------------
def scatter_add(xp: Any, out: Any, index: Any, values: Any) -> Any:
    """``out`` with ``values`` added at ``index``, repeated indices accumulating.

    NumPy: ``np.add.at``; CuPy: ``cupyx.scatter_add`` (both in place, on a copy).
    Other namespaces (Dask, array-api-strict), which have no such function: a
    one-hot matrix product over the flattened positions, which accumulates
    repeated indices and stays lazy on Dask. (``array_api_extra.at(...).add``
    does *not* accumulate repeated indices, so it cannot serve here.)
    """
    if xp is np:
        out = np.array(out, copy=True)
        np.add.at(out, index, values)
        return out
    name = xp.__name__
    if "cupy" in name:
        import cupy
        import cupyx

        out = cupy.array(out, copy=True)
        cupyx.scatter_add(out, index, values)
        return out
    # The flat positions the index selects, found on NumPy (indices are small and known);
    # then out + onehot.T @ values, in out's namespace.
    shape = tuple(out.shape)
    size = int(np.prod(shape))
    positions = np.arange(size).reshape(shape)[_numpy_index(index)]
    positions = positions.reshape(-1)
    values = xp.reshape(xp.broadcast_to(values, _selected_shape(shape, index)), (-1,))
    onehot = np.zeros((positions.size, size), dtype=numpy_dtype(out.dtype))
    onehot[np.arange(positions.size), positions] = 1
    added = xp.matmul(xp.asarray(onehot.T), values[:, None])
    return out + xp.reshape(added, shape)


def standard_index(xp: Any, ndim: int, index: Any) -> Any:
    """A NumPy-style index for an array of namespace ``xp`` and rank ``ndim``: index arrays
    moved to ``xp`` (as int64), and a trailing ``...`` where NumPy implies one (the
    standard requires an index to name every axis)."""
    if xp is np:
        return index
    items = index if isinstance(index, tuple) else (index,)
    moved = []
    for item in items:
        if (
            type(item) is np.ndarray
            or isinstance(item, np.generic)
            and not isinstance(item, np.bool_)
        ):
            array = np.asarray(item)
            if array.dtype.kind in "iu":
                array = array.astype(np.int64)
            item = xp.asarray(array)
        moved.append(item)
    named = sum(1 for item in moved if item is not None and item is not Ellipsis)
    if Ellipsis not in [i for i in moved if i is Ellipsis] and named < ndim:
        moved.append(Ellipsis)
    return tuple(moved)


def take_flat(xp: Any, x: Any, index: Any) -> Any:
    """``x[index]`` for any NumPy index, by ``take`` on the flattened array: the positions
    the index selects are found on NumPy (index arrays are known on the host), so a
    namespace with only the standard's indexing (integers, slices, or integer arrays
    alone) serves NumPy's advanced indexing, mixed with slices, masks and ``None``."""
    shape = tuple(x.shape)
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    positions = positions[_numpy_index(index)]
    flat = xp.take(xp.reshape(x, (-1,)), xp.asarray(positions.reshape(-1)), axis=0)
    return xp.reshape(flat, positions.shape)


def _numpy_index(index: Any) -> Any:
    """An index with its arrays (of any backend) as NumPy arrays."""
    if isinstance(index, tuple):
        return tuple(_numpy_index(i) for i in index)
    if hasattr(index, "shape") and type(index) is not np.ndarray:
        return np.asarray(to_numpy(index))
    return index


def _selected_shape(shape: tuple[int, ...], index: Any) -> tuple[int, ...]:
    return np.empty(shape, dtype=np.bool_)[_numpy_index(index)].shape


def to_numpy(value: Any) -> np.ndarray:
    """A backend value as a NumPy array: computed (Dask), copied from the device (CuPy)."""
    if type(value) in NUMPY_TYPES:
        return np.asarray(value)
    if hasattr(value, "compute") and hasattr(value, "dask"):
        value = value.compute()
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        return value.get()
    try:
        return np.asarray(value)
    except (TypeError, RuntimeError):
        return np.from_dlpack(value)


def einsum(xp: Any, spec: str, *operands: Any) -> Any:
    """``einsum`` in namespace ``xp``: NumPy's, CuPy's, Dask's (none in the standard)."""
    if xp is np:
        return np.einsum(spec, *operands)
    name = xp.__name__
    for library in ("cupy", "dask"):
        if library in name:
            module = __import__("cupy" if library == "cupy" else "dask.array", fromlist=["x"])
            return module.einsum(spec, *operands)
    return einsum_by_broadcasting(xp, spec, *operands)


def einsum_by_broadcasting(xp: Any, spec: str, *operands: Any) -> Any:
    """``einsum`` with the standard's functions only (it has no einsum): each operand's
    repeated letters taken as diagonals, its axes laid out over all the letters (size 1
    where it has none), one broadcast product, and a sum over the letters not kept.

    Exact, but the product holds every letter's axis at once: fine for the sizes a
    strict namespace tests, not a fast path (NumPy, CuPy and Dask use their own)."""
    inputs, output = spec.split("->") if "->" in spec else (spec, None)
    subscripts = inputs.split(",")
    if "." in inputs or (output is not None and "." in output):
        raise NotImplementedError(
            f"kenaz.einsum: {spec!r}: '...' on {xp.__name__} is not supported"
        )
    if output is None:  # implicit mode: the letters seen once, sorted
        letters = "".join(subscripts)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    letters = list(dict.fromkeys("".join(subscripts) + output))
    product = None
    for subscript, operand in zip(subscripts, operands):
        operand, subscript = _diagonals(xp, operand, subscript)
        order = sorted(range(len(subscript)), key=lambda i: letters.index(subscript[i]))
        operand = xp.permute_dims(operand, tuple(order))
        present = [subscript[i] for i in order]
        shape = tuple(operand.shape[present.index(c)] if c in present else 1 for c in letters)
        operand = xp.reshape(operand, shape)
        product = operand if product is None else product * operand
    summed = tuple(i for i, c in enumerate(letters) if c not in output)
    result = xp.sum(product, axis=summed) if summed else product
    kept = [c for c in letters if c in output]
    return xp.permute_dims(result, tuple(kept.index(c) for c in output))


def _diagonals(xp: Any, operand: Any, subscript: str) -> tuple[Any, str]:
    """Take the diagonal of each letter repeated in ``subscript`` ("ii" -> "i")."""
    while len(set(subscript)) < len(subscript):
        letter = next(c for c in subscript if subscript.count(c) > 1)
        first = subscript.index(letter)
        second = subscript.index(letter, first + 1)
        n = operand.shape[first]
        # Move the two axes last, flatten them, take positions k * (n + 1).
        rest = [i for i in range(len(subscript)) if i not in (first, second)]
        operand = xp.permute_dims(operand, (*rest, first, second))
        operand = xp.reshape(operand, tuple(operand.shape[:-2]) + (n * n,))
        operand = xp.take(operand, xp.asarray(np.arange(n) * (n + 1)), axis=-1)
        subscript = "".join(subscript[i] for i in rest) + letter
    return operand, subscript


def special_function(xp: Any, name: str) -> Any:
    """SciPy's special function ``name`` for namespace ``xp`` (none is in the standard):
    CuPy's ``cupyx.scipy.special``; on Dask, SciPy's mapped over the blocks."""
    library = xp.__name__
    if "cupy" in library:
        import cupyx.scipy.special

        return getattr(cupyx.scipy.special, name)
    if "dask" in library:
        import dask.array
        import scipy.special

        function = getattr(scipy.special, name)
        return lambda x: dask.array.map_blocks(function, x, dtype=x.dtype)
    raise NotImplementedError(
        f"kenaz.{name}: the {library} namespace has no {name} (the Array API standard has "
        "no special functions); run it on NumPy, CuPy or Dask"
    )


def is_dask(xp: Any) -> bool:
    """Whether namespace ``xp`` is Dask's (``dask.array`` or array-api-compat's wrapper)."""
    return "dask" in getattr(xp, "__name__", "")


def dask_map_matrices(
    function: Any, arrays: list[tuple[Any, int]], results: list[tuple[tuple[int, ...], Any]]
) -> tuple[Any, ...]:
    """Apply a NumPy ``function`` to each matrix of Dask stacks, lazily.

    The standard's linalg functions that Dask lacks (``eigh``, ``slogdet``, ``pinv``,
    ``eig``...), and those it has only for single 2-d matrices, run this way: the
    arrays' leading (stack) axes are broadcast together and keep their chunks, their
    core axes (the matrix's, or none for a per-matrix scalar) become one chunk each,
    and one task per block of matrices calls ``function`` on NumPy blocks. Several
    results travel packed in one array (flattened, in their common dtype) and are
    unpacked lazily into arrays of their own shapes and dtypes: nothing is computed.

    Parameters
    ----------
    function : callable
        ``function(*blocks) -> result or tuple of results`` on NumPy arrays whose
        leading axes are a block of the stack (``numpy.linalg``'s functions broadcast so).
    arrays : list of (dask.array.Array, int)
        Each argument and how many trailing axes are its core (2 for a matrix).
    results : list of (shape, dtype)
        Each result's core shape (its shape per matrix) and NumPy dtype.

    Returns
    -------
    tuple of dask.array.Array
        One per result, of shape ``stack + core``.
    """
    import dask.array as da

    stack = np.broadcast_shapes(*(tuple(a.shape[: a.ndim - core]) for a, core in arrays))
    rank = len(stack)
    broadcast = [da.broadcast_to(a, stack + tuple(a.shape[a.ndim - core :])) for a, core in arrays]
    stack_chunks = broadcast[0].chunks[:rank]
    letters = "abcdefghijklmnopqrstuvwxy"  # "z" is the packed results' axis
    if rank + 2 * len(arrays) > len(letters):
        raise NotImplementedError(f"kenaz: a stack of {rank} axes is too deep for Dask here")
    stack_index = letters[:rank]
    operands: list[Any] = []
    for position, (array, (_, core)) in enumerate(zip(broadcast, arrays)):
        array = array.rechunk(stack_chunks + (-1,) * core)
        core_index = letters[rank + 2 * position : rank + 2 * position + core]
        operands += [array, stack_index + core_index]
    packed_dtype = np.result_type(*(dtype for _, dtype in results))
    sizes = [int(np.prod(shape)) for shape, _ in results]

    def packed(*blocks: np.ndarray) -> np.ndarray:
        out = function(*blocks)
        out = tuple(out) if isinstance(out, tuple) else (out,)
        block_stack = blocks[0].shape[:rank]
        return np.concatenate(
            [np.asarray(o).astype(packed_dtype).reshape(block_stack + (-1,)) for o in out],
            axis=-1,
        )

    together = da.blockwise(
        packed,
        stack_index + "z",
        *operands,
        new_axes={"z": sum(sizes)},
        dtype=packed_dtype,
        concatenate=True,
        meta=np.empty((0,) * (rank + 1), dtype=packed_dtype),
    )
    unpacked = []
    start = 0
    for size, (shape, dtype) in zip(sizes, results):
        part = together[..., start : start + size]
        start += size
        part = part[..., 0] if shape == () else da.reshape(part, stack + tuple(shape))
        dtype = np.dtype(dtype)
        if packed_dtype.kind == "c" and dtype.kind != "c":
            part = da.real(part)
        unpacked.append(part if part.dtype == dtype else part.astype(dtype))
    return tuple(unpacked)


# -- the default backend of creation functions with no array input ----------------------------
_default: ContextVar[Any] = ContextVar("kenaz_default_backend", default=np)


def current_default() -> Any:
    """The namespace in which functions with no array input create arrays (NumPy by default)."""
    return _default.get()


@contextmanager
def default_backend(xp: Any) -> Iterator[Any]:
    """Create arrays on namespace ``xp`` inside the block, where no input says where.

    Examples
    --------
    >>> import array_api_strict as xps
    >>> import kenaz.numpy as knp
    >>> from kenaz.backend import default_backend, namespace, value_of
    >>> with default_backend(xps):
    ...     zeros = knp.zeros(3)
    >>> namespace(value_of(zeros)).__name__, zeros.dtype
    ('array_api_strict', dtype('float64'))
    """
    float64 = getattr(xp, "float64", None)  # a library with dtypes of its own: map them
    if not isinstance(float64, np.dtype) and not (
        isinstance(float64, type) and issubclass(float64, np.generic)
    ):
        numpy_dtype(float64)
    token = _default.set(xp)
    try:
        yield xp
    finally:
        _default.reset(token)


# -- lazy backends -----------------------------------------------------------------------
def materialize(tree: Any) -> Any:
    """Compute every lazy (Dask) leaf of a pytree in one call: one graph, shared work.

    Tensors holding Dask arrays come back as Tensors holding NumPy arrays; other
    leaves are returned unchanged.

    Examples
    --------
    >>> import numpy as np, kenaz
    >>> kenaz.materialize({"w": np.ones(2)})["w"]
    array([1., 1.])
    """
    from . import tree as trees

    # Tensor, a layer above, registered itself (`register_tensor_class`): no import of it.
    leaves, treedef = trees.flatten(tree)
    values = [leaf._value if isinstance(leaf, _Tensor) else leaf for leaf in leaves]
    lazy = [i for i, v in enumerate(values) if hasattr(v, "dask") and hasattr(v, "compute")]
    if lazy:
        import dask

        computed = dask.compute(*[values[i] for i in lazy])
        for i, value in zip(lazy, computed):
            leaves[i] = _Tensor(value) if isinstance(leaves[i], _Tensor) else value
    return trees.unflatten(treedef, leaves)
