"""ndarray's methods and attributes beyond the operators: what ``Tensor`` has besides.

``Tensor`` (kenaz.tensor) keeps the hot paths: its value, the operators, the
conversions. Everything else NumPy code reads of an ndarray lives here, in the
class ``NdarrayMethods`` (Tensor's base class to type checkers; at run time
kenaz.tensor copies its attributes onto Tensor, which costs each op less): the
methods that are ``kenaz.numpy`` functions with ``self`` first (``x.sum()``,
``x.reshape(2, 3)``), the functional updates ``x.at[idx]``, and the attributes of
memory (``flat``, ``strides``, ``flags``, ``base``, ``view``, ``data``...) with
NumPy's semantics where a tensor can have them: outside transformations views and
``flat`` write through; a tensor that a running transformation tracks refuses what
would leave its derivative behind, naming the alternative (kenaz.convert).

This module sits with Tensor, below the primitives, so it cannot import them:
``kenaz.numpy._tensor_methods`` binds the names below (``_numpy_api``, the
primitives) when kenaz is imported, as it does kenaz.tensor's.
"""

from __future__ import annotations

import pickle
import types
from typing import TYPE_CHECKING, Any

import numpy as np

from .backend import NUMPY_TYPES, to_numpy

__all__ = ["NdarrayMethods", "FlatIterator", "IndexUpdateHelper", "IndexUpdate"]


class NdarrayMethods:
    """``Tensor``'s ndarray methods and attributes (see the module)."""

    __slots__ = ()

    if TYPE_CHECKING:  # what the methods read of Tensor (defined there)
        _value: Any
        _trace: dict[int, Any] | None

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def dtype(self) -> np.dtype[Any]: ...

        @property
        def ndim(self) -> int: ...

        @property
        def size(self) -> int: ...

    def copy(self) -> Tensor:
        """A copy with its own memory (differentiable), as ``ndarray.copy``."""
        return _copy(self)

    @property
    def at(self) -> IndexUpdateHelper:
        """Functional updates: ``x.at[idx].set(v)``, ``.add``, ``.multiply``, ``.min``, ``.max``."""
        return IndexUpdateHelper(self)

    # -- methods: NumPy's ndarray signatures (kenaz.numpy's functions, self first) ----
    def sum(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.sum(self, *args, **kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.mean(self, *args, **kwargs)

    def prod(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.prod(self, *args, **kwargs)

    def max(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.max(self, *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.min(self, *args, **kwargs)

    def argmax(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.argmax(self, *args, **kwargs)

    def argmin(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.argmin(self, *args, **kwargs)

    def var(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.var(self, *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.std(self, *args, **kwargs)

    def cumsum(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.cumsum(self, *args, **kwargs)

    def cumprod(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.cumprod(self, *args, **kwargs)

    def reshape(self, *shape: Any, order: str = "C") -> Tensor:
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return transpose(self, axes or None)

    @property
    def T(self) -> Tensor:
        return transpose(self)

    @property
    def mT(self) -> Tensor:
        """The transpose of the last two axes (``ndarray.mT``)."""
        if self.ndim < 2:  # NumPy's error (swapaxes would raise an AxisError)
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return swapaxes(self, -1, -2)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        return swapaxes(self, axis1, axis2)

    def astype(self, dtype: Any, copy: bool = True) -> Tensor:
        """Cast to ``dtype``: a copy even for the same dtype unless ``copy=False`` (NumPy's)."""
        if copy and np.dtype(dtype) == self.dtype:
            return _copy(self)
        return astype(self, dtype)

    def ravel(self) -> Tensor:
        return ravel(self)

    def flatten(self) -> Tensor:
        return _copy(ravel(self))

    def squeeze(self, axis: int | tuple[int, ...] | None = None) -> Tensor:
        return squeeze(self, axis)

    def clip(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.clip(self, *args, **kwargs)

    def dot(self, other: Any) -> Tensor:
        return dot(self, other)

    def conj(self) -> Tensor:
        return conjugate(self)

    def round(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.round(self, *args, **kwargs)

    @property
    def real(self) -> Tensor:
        return real(self)

    @property
    def imag(self) -> Tensor:
        return imag(self)

    # More of ndarray's methods: kenaz.numpy's functions with ``self`` first.
    def all(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.all(self, *args, **kwargs)

    def any(self, *args: Any, **kwargs: Any) -> Tensor:
        return _numpy_api.any(self, *args, **kwargs)

    def argsort(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.argsort(self, *args, **kwargs)

    def argpartition(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.argpartition(self, *args, **kwargs)

    def nonzero(self) -> tuple[Tensor, ...]:
        return _knp.nonzero(self)

    def diagonal(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.diagonal(self, *args, **kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.trace(self, *args, **kwargs)

    def repeat(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.repeat(self, *args, **kwargs)

    def take(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.take(self, *args, **kwargs)

    def compress(self, condition: Any, axis: int | None = None) -> Tensor:
        return _knp.compress(condition, self, axis)

    def choose(self, choices: Any, mode: str = "raise") -> Tensor:
        return _knp.choose(self, choices, mode)

    def searchsorted(self, *args: Any, **kwargs: Any) -> Tensor:
        return _knp.searchsorted(self, *args, **kwargs)

    def conjugate(self) -> Tensor:
        return conjugate(self)

    def tobytes(self, order: str = "C") -> bytes:
        return np.asarray(self._value).tobytes(order)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    # ndarray's in-place methods, with the rules of `x[...] = v` (kenaz.mutation).
    def fill(self, value: Any) -> None:
        """Set every element to ``value``, in place."""
        _mutation.assign(self, Ellipsis, value)

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> None:
        """Sort in place along ``axis`` (``kenaz.numpy.sort`` returns a sorted copy)."""
        _mutation.assign(self, Ellipsis, _knp.sort(self, axis=axis))

    def partition(
        self, kth: Any, axis: int = -1, kind: str = "introselect", order: Any = None
    ) -> None:
        """Partition in place around ``kth``, as ``ndarray.partition``."""
        _mutation.assign(self, Ellipsis, _knp.partition(self, kth, axis=axis))

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        """``numpy.put``: set the flattened elements at ``indices``, in place."""
        _mutation.in_place_target(self, "put").put(
            _mutation.plain(indices), _mutation.plain(values), mode
        )

    # -- ndarray's attributes of memory --------------------------------------------------
    @property
    def flat(self) -> FlatIterator:
        """A flat iterator over the elements (``ndarray.flat``): ``t.flat[i]`` reads
        (differentiably), ``t.flat[i] = v`` writes into the tensor's memory, as NumPy's."""
        return FlatIterator(self)  # type: ignore[arg-type]

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes to step in each dimension (``ndarray.strides``; NumPy values only)."""
        return _numpy_memory(self, "strides").strides

    @property
    def flags(self) -> Any:
        """The memory layout flags of the value (``ndarray.flags``; NumPy values only)."""
        return _numpy_memory(self, "flags").flags

    @property
    def base(self) -> Tensor | None:
        """The tensor whose memory this one views, or None if it owns its memory.

        A new Tensor object of the base's memory (NumPy returns the base array itself),
        so ``t.base is None`` tests ownership as in NumPy; ``is`` against another tensor
        does not hold."""
        check_convertible(self, "t.base")
        base = _numpy_memory(self, "base").base
        return None if base is None else _wrap(base)

    @property
    def data(self) -> memoryview:
        """A memoryview of the value's memory (``ndarray.data``)."""
        check_convertible(self, "t.data")
        return np.asarray(_numpy_memory(self, "data")).data

    @property
    def ctypes(self) -> Any:
        """The ctypes interface to the value's memory (``ndarray.ctypes``)."""
        check_convertible(self, "t.ctypes")
        return np.asarray(_numpy_memory(self, "ctypes")).ctypes

    @property
    def device(self) -> Any:
        """The device of the value: ``"cpu"`` for NumPy's, the backend's own otherwise."""
        value = self._value
        return "cpu" if type(value) in NUMPY_TYPES else value.device

    def to_device(self, device: Any, /, *, stream: Any = None) -> Any:
        """The tensor on ``device`` (Array API): itself for its own device."""
        if device == self.device:
            return self
        raise ValueError(
            f"kenaz: t.to_device({device!r}): the tensor's value lives on {self.device!r}; "
            "kenaz moves values between devices by backend (kenaz.default_backend, or "
            "create the value with that library)"
        )

    def view(self, dtype: Any = None, type: Any = None) -> Tensor:
        """A new tensor of the same memory (``ndarray.view``): writes through both ways.

        Without ``dtype`` it is differentiable. With one, the bytes are reinterpreted:
        no derivative exists, so a tensor a running transformation tracks refuses
        (use ``astype``). ``type=`` (an ndarray subclass) is NumPy's: use
        ``numpy.asarray(t).view(type)``.
        """
        if type is not None:
            raise TypeError(
                "kenaz: t.view(type=...) makes an ndarray subclass, not a Tensor; use "
                "numpy.asarray(t).view(type)"
            )
        if dtype is None:
            if self._trace:  # tracked: a differentiable alias (the same memory)
                return alias(self)
            return _wrap(_numpy_memory(self, "view").view())
        check_convertible(self, "t.view(dtype) (a reinterpretation of bytes; use astype)")
        return _wrap(_numpy_memory(self, "view").view(dtype))

    def getfield(self, dtype: Any, offset: int = 0) -> Tensor:
        """The field of ``dtype`` at byte ``offset`` of each element (``ndarray.getfield``)."""
        check_convertible(self, "t.getfield() (a reinterpretation of bytes)")
        return _wrap(_numpy_memory(self, "getfield").getfield(dtype, offset))

    def setfield(self, val: Any, dtype: Any, offset: int = 0) -> None:
        """Write ``val`` into the field of ``dtype`` at ``offset``, in place."""
        _mutation.in_place_target(self, "setfield").setfield(_mutation.plain(val), dtype, offset)

    def setflags(self, write: Any = None, align: Any = None, uic: Any = None) -> None:
        """Set the value's memory flags (``ndarray.setflags``): ``write=False`` makes the
        tensor read-only, as an ndarray."""
        _numpy_memory(self, "setflags").setflags(write=write, align=align, uic=uic)

    def resize(self, *new_shape: Any, refcheck: bool = True) -> None:
        """Change shape and size in place (``ndarray.resize``): new elements are zero."""
        shape = (
            new_shape[0] if len(new_shape) == 1 and not isinstance(new_shape[0], int) else new_shape
        )
        old = _mutation.in_place_target(self, "resize")
        resized = np.zeros(shape, dtype=old.dtype)
        count = min(old.size, resized.size)
        resized.flat[:count] = old.ravel()[:count]
        self._value = resized

    def byteswap(self, inplace: bool = False) -> Tensor:
        """Swap the bytes of each element (``ndarray.byteswap``): not differentiable."""
        if inplace:
            _mutation.in_place_target(self, "byteswap").byteswap(inplace=True)
            return self  # type: ignore[return-value]
        check_convertible(self, "t.byteswap() (a reinterpretation of bytes)")
        return _wrap(_numpy_memory(self, "byteswap").byteswap())

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:
        """Write the values to a file (``ndarray.tofile``)."""
        check_convertible(self, "t.tofile()")
        to_numpy(self._value).tofile(fid, sep, format)

    def dumps(self) -> bytes:
        """The tensor pickled (``ndarray.dumps``): ``pickle.loads`` gives a Tensor back."""
        check_convertible(self, "t.dumps()")
        return pickle.dumps(self)

    def dump(self, file: Any) -> None:
        """Pickle the tensor into ``file`` (a path or an open binary file)."""
        check_convertible(self, "t.dump()")
        if hasattr(file, "write"):
            pickle.dump(self, file)
            return
        with open(file, "wb") as handle:
            pickle.dump(self, handle)

    # -- ndarray's remaining operators and protocols --------------------------------------
    def __divmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        return floor_divide(self, other), remainder(self, other)

    def __rdivmod__(self, other: Any) -> tuple[Tensor, Tensor]:
        return floor_divide(other, self), remainder(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return _knp.left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _knp.left_shift(other, self)

    def __rshift__(self, other: Any) -> Tensor:
        return _knp.right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return _knp.right_shift(other, self)

    def __ilshift__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, _knp.left_shift, np.left_shift, other)

    def __irshift__(self, other: Any) -> Tensor:
        return _mutation.update_in_place(self, _knp.right_shift, np.right_shift, other)

    def __contains__(self, value: Any) -> bool:
        """``value in t``: whether any element equals ``value`` (NumPy's meaning)."""
        return bool(_numpy_api.any(self == value))

    def __copy__(self) -> Tensor:
        """``copy.copy(t)``: a copy with its own memory, as for an ndarray (differentiable)."""
        return _copy(self)

    def __deepcopy__(self, memo: Any) -> Tensor:
        return _copy(self)

    def __delitem__(self, index: Any) -> None:
        raise ValueError("cannot delete array elements")  # NumPy's error

    __class_getitem__ = classmethod(types.GenericAlias)


def _numpy_memory(tensor: Any, what: str) -> Any:
    """The NumPy value of ``tensor`` for an attribute of memory (``strides``...)."""
    value = tensor._value
    if type(value) not in NUMPY_TYPES:
        raise AttributeError(
            f"kenaz: t.{what} exists for NumPy values only; this tensor's value is a "
            f"{type(value).__module__}.{type(value).__name__}"
        )
    return value if type(value) is np.ndarray else np.asarray(value)


class FlatIterator:
    """``t.flat``: the elements in C order. Reading is differentiable (``ravel(t)[i]``);
    writing goes into the tensor's memory, with the rules of ``t[i] = v``."""

    __slots__ = ("base",)

    def __init__(self, base: Tensor) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> Any:
        return iter(ravel(self.base))

    def __getitem__(self, index: Any) -> Tensor:
        return getitem(ravel(self.base), index)

    def __setitem__(self, index: Any, value: Any) -> None:
        check_convertible_value(value)
        _mutation.in_place_target(self.base, "flat").flat[index] = _mutation.plain(value)

    def copy(self) -> Tensor:
        """The elements as a new 1-d tensor (``flatiter.copy``)."""
        return _copy(ravel(self.base))


def check_convertible_value(value: Any) -> None:
    """Refuse to write a tracked tensor into memory (its derivative would be lost)."""
    from_tensor = getattr(value, "_trace", None) is not None
    if from_tensor:
        check_convertible(value, "t.flat[i] = v (v is written into memory)")


class IndexUpdateHelper:
    """``x.at``: indexing it returns the functional update methods for that index."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __getitem__(self, index: Any) -> IndexUpdate:
        return IndexUpdate(self.tensor, index)


class IndexUpdate:
    """``x.at[index]``: the functional updates of ``x`` at ``index``."""

    __slots__ = ("tensor", "index")

    def __init__(self, tensor: Tensor, index: Any) -> None:
        self.tensor = tensor
        self.index = index

    def get(self) -> Tensor:
        """``x[index]``."""
        return getitem(self.tensor, self.index)

    def set(self, values: Any) -> Tensor:
        """A copy of ``x`` with ``x[index] = values``."""
        return scatter(self.tensor, self.index, values, "set")

    def add(self, values: Any) -> Tensor:
        """A copy of ``x`` with ``values`` added at ``index`` (repeated indices accumulate)."""
        return scatter(self.tensor, self.index, values, "add")

    def multiply(self, values: Any) -> Tensor:
        """A copy of ``x`` with ``x[index]`` multiplied by ``values``."""
        return scatter(self.tensor, self.index, values, "multiply")

    def min(self, values: Any) -> Tensor:
        """A copy of ``x`` with ``x[index] = minimum(x[index], values)``."""
        return scatter(self.tensor, self.index, values, "min")

    def max(self, values: Any) -> Tensor:
        """A copy of ``x`` with ``x[index] = maximum(x[index], values)``."""
        return scatter(self.tensor, self.index, values, "max")


# -- names bound by kenaz.numpy._tensor_methods when kenaz is imported -------------------
if TYPE_CHECKING:
    from . import mutation as _mutation
    from . import numpy as _knp
    from .convert import check_convertible
    from .numpy import _signatures as _numpy_api
    from .ops.elementwise import alias, astype, conjugate, floor_divide, imag, real, remainder
    from .ops.elementwise import copy as _copy
    from .ops.indexing import getitem, scatter
    from .ops.linalg import dot
    from .ops.shape import ravel, reshape, squeeze, swapaxes, transpose
    from .tensor import Tensor
    from .tensor import _make as _wrap
