"""The one public array type: ``Tensor``, a wrapper of a NumPy value.

Operators, indexing and methods all go through ``perform`` (see
``kenaz.effects``), so every transformation sees them. Each tensor carries a
small record per transformation level that tracks it (``_trace``: level number
-> tape node or tangent), so an intermediate that nothing needs any more dies
as soon as the user's code drops it.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from . import tree
from .backend import (
    NUMPY_DTYPE_TYPES,
    NUMPY_TYPES,
    array_value,
    numpy_dtype,
    on_foreign_dtypes,
    register_tensor_class,
    to_numpy,
)
from .ndarray_methods import NdarrayMethods

__all__ = ["Tensor", "tracked_records", "NestedTensorsArgument"]


def _numpy_dtype_of(tensor: Tensor) -> np.dtype:
    # NumPy, CuPy and Dask values have NumPy dtypes; a strict Array API library's dtypes
    # map to NumPy's by name, so that rules speak one dtype vocabulary.
    dtype = tensor._value.dtype
    return dtype if type(dtype) in NUMPY_DTYPE_TYPES else numpy_dtype(dtype)


_DTYPE_DOC = "The NumPy dtype (a backend's own maps to it by name)."


if TYPE_CHECKING:  # what type checkers read: Tensor has ndarray's methods (see below)
    _TensorBase = NdarrayMethods
else:
    _TensorBase = object


class Tensor(_TensorBase):
    """An n-dimensional array that transformations can see through.

    Create tensors with ``kenaz.numpy`` functions (``array``, ``zeros``, ...)
    or ``Tensor(value)``. Every operation accepts tensors, NumPy arrays, their
    array-likes (pandas, xarray) and Python scalars alike and returns a
    ``Tensor``; ``numpy.asarray(t)``, ``t.numpy()`` and ``float(t)`` give plain
    values back (inside ``grad`` or ``jvp`` those of a tensor they track raise
    :class:`~kenaz.errors.TrackedConversionError` instead of silently dropping
    its derivative: see ``kenaz.convert``; ``int`` and ``bool`` stay allowed).
    Outside transformations a 0-d tensor is a number to ``numbers`` and
    ``numpy.isscalar``, as NumPy's scalars are. A
    tensor that no running transformation tracks changes in place as a NumPy
    array does (``x[idx] = v``, ``x += v``); a tracked one is updated
    functionally with ``x.at[idx].set(v)`` (see ``kenaz.mutation``).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> x = knp.array([1.0, 2.0, 3.0])
    >>> (x * 2 + 1).sum()
    Tensor(15.)
    >>> x.at[0].set(10.0)
    Tensor([10.,  2.,  3.])
    """

    __slots__ = ("_value", "_trace", "__weakref__")
    # Make `ndarray + tensor` call Tensor.__radd__ instead of converting, and
    # `pandas.Series + tensor` too (pandas defers to a higher `__pandas_priority__`).
    __array_priority__ = 1000
    __pandas_priority__ = 5000

    def __init__(self, value: Any, dtype: Any = None) -> None:
        # A constant of `value`'s data, its array made by the layer below
        # (`backend.array_value`). The way in from anything else (lists holding
        # tensors) is kenaz.convert.as_tensor, above, which calls this for data.
        if isinstance(value, Tensor):  # read as any conversion out of a tensor is
            value = value._plain_value("Tensor(t)")
        self._value = array_value(value, dtype)
        self._trace: dict[int, Any] | None = None

    # -- plain values ---------------------------------------------------------
    # Getters in C (attrgetter): transformations and rules read these for nearly
    # every op, and a Python-level property takes about twice as long.
    if not TYPE_CHECKING:  # type checkers read the base class's declarations
        shape = property(attrgetter("_value.shape"), doc="The shape: a tuple of ints.")
        # In C while every value kenaz has met has a NumPy dtype (NumPy's, CuPy's, Dask's);
        # `_map_backend_dtypes` maps a strict Array API library's own once one appears.
        dtype = property(attrgetter("_value.dtype"), doc=_DTYPE_DOC)
        ndim = property(attrgetter("_value.ndim"), doc="The number of dimensions.")
        size = property(attrgetter("_value.size"), doc="The number of elements.")

    def _plain_value(self, how: str) -> Any:
        """The backend value, for a conversion out of kenaz (``how`` names it in the error):
        refused for a tensor a running transformation tracks, whose derivative through the
        value would silently be lost (``kenaz.convert.check_convertible``). ``_trace`` is
        None for every tensor no transformation tracks, so eager code pays one test."""
        if self._trace or type(self) is not Tensor:
            check_convertible(self, how)
        return self._value

    def numpy(self) -> np.ndarray:
        """Return the value as a NumPy array (no copy for NumPy values; do not modify it).

        A Dask value is computed, a CuPy value copied from the device. Inside ``grad``,
        ``jvp`` or ``vmap``, a tensor they track cannot be converted (the derivative
        would silently be lost): see ``kenaz.convert``.
        """
        return to_numpy(self._plain_value("t.numpy()"))

    # Python and NumPy numbers: refused for a tensor a running grad/jvp differentiates
    # (the number would be a constant: kenaz.convert.check_number). `_trace` is None for
    # every tensor no transformation tracks, so eager code pays one attribute test.
    def item(self, *args: Any) -> Any:
        """Return the element (at ``args``, as ``ndarray.item``) as a Python scalar."""
        if self._trace:
            check_number(self, "t.item()")
        return self._value.item(*args)

    def tolist(self) -> Any:
        """Return the value as nested Python lists of Python scalars (``ndarray.tolist``)."""
        if self._trace:
            check_number(self, "t.tolist()")
        return to_numpy(self._value).tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # numpy.asarray(t), numpy.array([t, ...])
        how = "numpy.asarray(t) or numpy.float64(t) (Tensor.__array__)"
        value = np.asarray(to_numpy(self._plain_value(how)), dtype=dtype)
        return value.copy() if copy else value

    # NumPy's own functions and ufuncs run the kenaz counterpart (differentiable),
    # or raise naming the function: see kenaz.numpy._dispatch.
    # kenaz.numpy is layers above Tensor: `array_ufunc` and `array_function` are bound
    # by kenaz.numpy._tensor_methods, as the operators' primitives are.
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return array_function(func, types, args, kwargs)

    def __float__(self) -> float:  # also math.*(t) and numpy.float64(t)
        if self._trace:
            check_number(self, "float(t)")
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __index__(self) -> int:
        return self._value.__index__()

    def __complex__(self) -> complex:
        if self._trace:
            check_number(self, "complex(t)")
        return complex(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d Tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self.shape:
            raise TypeError("iteration over a 0-d Tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(to_numpy(self._value), separator=", ", prefix="Tensor(")
        dtype = self.dtype
        default = dtype in (np.float64, np.int64, np.bool_)
        return f"Tensor({body})" if default else f"Tensor({body}, dtype={dtype})"

    # -- a 0-d result is a number to other libraries, as NumPy's scalars are ------------
    # `isinstance(t, numbers.Real)`, `numpy.isscalar(t)` and the checks built on them
    # (matplotlib's `alpha=`, SciPy's scalar arguments) read `t.__class__` when `type(t)`
    # does not answer: for a 0-d NumPy value that no running transformation tracks it
    # names a subclass registered with `numbers` (below). `type(t)` stays Tensor, so
    # kenaz's own type tests are untouched; only an isinstance that fails on a Tensor
    # comes here (not `isinstance(t, Tensor)`, the test of the hot paths).
    if not TYPE_CHECKING:

        @property
        def __class__(self) -> type:
            cls = type(self)
            if cls is not Tensor:  # a batched view of vmap: never a number
                return cls
            value = self._value
            if value.shape or type(value) not in NUMPY_TYPES:  # an array, or a lazy value
                return Tensor
            if self._trace and tracked_by_running(self):  # inside grad: issue 22's rules
                return Tensor
            return _SCALAR_CLASSES.get(value.dtype.kind, Tensor)

    def __reduce__(self) -> tuple[Any, tuple[Any, Any]]:
        # Explicit, because `__class__` above may name a subclass that pickle's default
        # (`copyreg.__newobj__`) would refuse; a copy keeps the records, as before.
        return _rebuild, (self._value, self._trace)

    def __round__(self, ndigits: int | None = None) -> Any:
        """``round(t)``: a Python int for a 0-d tensor (as for NumPy's scalars), else the
        tensor rounded to ``ndigits`` decimals (``numpy.round``)."""
        if ndigits is None and not self.shape:
            return round(self._value.item())
        return _numpy_api.round(self, ndigits or 0)

    def __str__(self) -> str:
        """The value as NumPy prints it (``1.5``, ``[1. 2.]``); ``repr`` says Tensor."""
        if type(self) is not Tensor:  # a batched view has no single value to print
            return repr(self)
        return str(to_numpy(self._value))

    __hash__ = object.__hash__

    if TYPE_CHECKING:  # `x[index]`: bound at the end of this module to the getitem primitive

        def __getitem__(self, index: Any) -> Tensor: ...

    # -- operators (bound below, once the primitives exist) ----------------------
    # The binary arithmetic, bitwise and comparison operators and `@` are made by
    # `kenaz.operators.binary_operator` and `matmul_operator` (they inline perform's eager
    # path, which sits above this module) and set by `kenaz.numpy._tensor_methods`:
    # `x + y` performs `add`, `x < y` performs `less`, `x @ y` is `kenaz.ops.linalg.matmul`.
    if TYPE_CHECKING:

        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...

    def __pow__(self, other: Any) -> Tensor:
        if type(other) is int and other == 2:  # the commonest power, as NumPy's `x ** 2`
            return perform_args(square, (self,), {})
        return perform_args(power, (self, other), {})

    def __rpow__(self, other: Any) -> Tensor:
        return perform_args(power, (other, self), {})

    def __rmatmul__(self, other: Any) -> Tensor:
        return matmul(other, self)

    def __neg__(self) -> Tensor:
        return perform_args(negative, (self,), {})

    def __pos__(self) -> Tensor:
        return _copy(self)  # NumPy's `+x` is a copy

    def __abs__(self) -> Tensor:
        return perform_args(absolute, (self,), {})

    def __invert__(self) -> Tensor:
        return perform_args(invert, (self,), {})

    def __setitem__(self, index: Any, value: Any) -> None:
        # In place, as NumPy, unless a running transformation tracks `self` or `value`
        # (then a clear error naming `.at[]`): see kenaz.mutation.
        _mutation.assign(self, index, value)

    # In-place operators change an untracked Tensor's memory, as NumPy's do; on a
    # tracked one (or with a tracked operand) they rebind the name, as in JAX.
    def __iadd__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, add, np.add, other)

    def __isub__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, subtract, np.subtract, other)

    def __imul__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, multiply, np.multiply, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, divide, np.divide, other)

    def __ifloordiv__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, floor_divide, np.floor_divide, other)

    def __imod__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, remainder, np.remainder, other)

    def __ipow__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, power, np.power, other)

    def __iand__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, bitwise_and, np.bitwise_and, other)

    def __ior__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, bitwise_or, np.bitwise_or, other)

    def __ixor__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, bitwise_xor, np.bitwise_xor, other)

    def __imatmul__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, matmul, np.matmul, other)

    def __format__(self, spec: str) -> str:
        """Format as NumPy formats the value: a 0-d Tensor takes every spec its scalar
        takes (``f"{loss:.6f}"``, ``f"{acc:15}"``); an empty spec gives ``str``."""
        if not spec:
            return str(self)
        value = self._value
        return format(value[()] if isinstance(value, np.ndarray) else value, spec)

    # -- exchange with other array libraries, and notebooks ----------------------
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """Export the value as a DLPack capsule, for ``torch.from_dlpack``, ``jax.dlpack``,
        ``numpy.from_dlpack`` and CuPy.

        The consumer shares the tensor's memory (no copy), and sees a plain array: what
        it computes is outside kenaz's transformations. A consumer that cannot receive a
        read-only array (DLPack before 1.0) gets a copy, unless it asked for none.
        """
        # The consumer sees a plain array; a NumPy scalar result becomes a 0-d array.
        value = np.asarray(self._plain_value("DLPack export (t.__dlpack__())"))
        requested = {"stream": stream, "max_version": max_version, "dl_device": dl_device}
        kwargs = {name: v for name, v in requested.items() if v is not None}
        if copy is not None:
            kwargs["copy"] = copy
        try:
            return value.__dlpack__(**kwargs)
        except BufferError:
            if value.flags.writeable or copy is False:
                raise
            return value.copy().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device of the value: ``(1, 0)``, the CPU, for NumPy."""
        return np.asarray(self._value).__dlpack_device__()

    def _repr_html_(self) -> str:
        """The notebook display: shape and dtype above the values."""
        from html import escape

        summary = f"Tensor &middot; shape {escape(str(self.shape))} &middot; {self.dtype}"
        return (
            f'<div class="kenaz-tensor"><div style="font-family: monospace; opacity: 0.7">'
            f"{summary}</div><pre>{escape(repr(self))}</pre></div>"
        )


class RealScalar(Tensor):
    """What ``t.__class__`` says of a 0-d real tensor outside transformations: registered
    as ``numbers.Real``, so that ``numpy.isscalar(t)`` and library checks accept it as they
    accept ``numpy.float64``. No tensor is made of this class (``type(t)`` is Tensor)."""

    __slots__ = ()


class IntegralScalar(RealScalar):
    """:class:`RealScalar` for integer dtypes: registered as ``numbers.Integral``."""

    __slots__ = ()


class ComplexScalar(Tensor):
    """:class:`RealScalar` for complex dtypes: registered as ``numbers.Complex``."""

    __slots__ = ()


numbers.Real.register(RealScalar)
numbers.Integral.register(IntegralScalar)
numbers.Complex.register(ComplexScalar)
# By dtype kind; booleans are no number to `numbers` (nor is `numpy.bool_`).
_SCALAR_CLASSES = {
    "f": RealScalar,
    "i": IntegralScalar,
    "u": IntegralScalar,
    "c": ComplexScalar,
}


def _map_backend_dtypes() -> None:
    """From the first value whose dtype is not NumPy's own on (array-api-strict's),
    ``Tensor.dtype`` maps dtypes to NumPy's: a Python getter, 60 ns more per read,
    paid only in a process that uses such a library."""
    if Tensor.dtype.fget is not _numpy_dtype_of:
        Tensor.dtype = property(_numpy_dtype_of, doc=_DTYPE_DOC)  # type: ignore[method-assign]


# NdarrayMethods' methods and attributes are set on Tensor itself rather than inherited:
# CPython walks a tensor's bases when it makes one and again when it frees one, and a base
# class more cost every op about 15 machine instructions. Tensor's own definitions come
# first, as they would before a base class's.
for _name, _attribute in vars(NdarrayMethods).items():
    if _name not in vars(Tensor) and _name != "__annotations__":
        setattr(Tensor, _name, _attribute)

on_foreign_dtypes(_map_backend_dtypes)
register_tensor_class(Tensor)
_new = object.__new__
tree.register_leaf_type(Tensor)  # `tree.flatten` of tensors skips optree


def _make(value: Any) -> Tensor:
    """Wrap a backend value without checks (the hot path of every op)."""
    tensor = _new(Tensor)
    tensor._value = value
    tensor._trace = None
    return tensor


def _rebuild(value: Any, trace: dict[int, Any] | None) -> Tensor:
    """A tensor of ``value`` with the records ``trace`` (unpickling and ``copy``)."""
    tensor = _make(value)
    tensor._trace = trace
    return tensor


def tracked_records(op_name: str, args: tuple, level: int) -> list[tuple[int, Any]]:
    """The ``(position, record)`` of each argument tracked at transformation ``level``
    (empty when none is): what a handler needs of an op's arguments, in one pass.

    A list or tuple holding tensors raises :class:`NestedTensorsArgument`:
    the handler catches it and performs the op again with the list stacked
    (``kenaz.convert.perform_stacked``).
    """
    found = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            trace = a._trace
            if trace:
                record = trace.get(level)
                if record is not None:  # `is not None`: a record may be a Tensor
                    found.append((i, record))
        elif isinstance(a, (list, tuple)) and holds_tensor(a):
            raise NestedTensorsArgument(
                f"kenaz.{op_name}: got a {type(a).__name__} of Tensors where an array was "
                "expected; pass a single Tensor (kenaz.numpy.stack or kenaz.numpy.array)"
            )
    return found


class NestedTensorsArgument(TypeError):
    """An op's argument is a list or tuple holding tensors (see :func:`tracked_records`).

    Handlers catch it and stack the list differentiably; one that does not
    refuses the call with this message rather than losing the derivative.
    """


def holds_tensor(items: Any) -> bool:
    """Whether the (nested) list or tuple ``items`` holds a Tensor."""
    return any(
        isinstance(i, Tensor) or (isinstance(i, (list, tuple)) and holds_tensor(i)) for i in items
    )


# -- the primitives the operators and methods above perform ----------------------------
# Tensor sits below the effects and the primitives (they import it; see
# docs/architecture.md), so it cannot import them. `kenaz.numpy._tensor_methods`,
# above them all, binds these module-level names (and `Tensor.__getitem__`) when kenaz
# is imported: the operators read them as globals, exactly as if imported here.
if TYPE_CHECKING:
    from . import mutation as _mutation
    from .convert import check_convertible, check_number, tracked_by_running
    from .effects import perform_args
    from .numpy import _signatures as _numpy_api
    from .numpy._dispatch import array_function, array_ufunc
    from .ops.elementwise import (
        absolute,
        add,
        bitwise_and,
        bitwise_or,
        bitwise_xor,
        divide,
        floor_divide,
        invert,
        multiply,
        negative,
        power,
        remainder,
        square,
        subtract,
    )
    from .ops.elementwise import copy as _copy
    from .ops.linalg import matmul
