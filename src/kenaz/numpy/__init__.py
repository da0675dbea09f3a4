"""``kenaz.numpy``: NumPy's API, differentiable under every kenaz transformation.

Change ``import numpy as np`` to ``import kenaz.numpy as np`` and the code can
be differentiated, vectorized and checked. Primitives come from
``kenaz.ops``; everything else here is composed from them, so it gets its
derivatives for free.
"""

from __future__ import annotations

import builtins as _builtins  # `max`, `min`, `abs`, `any`, `sum` are NumPy's below
import inspect as _inspect
import sys as _sys
from collections.abc import Callable, Sequence
from typing import Any
from typing import Literal as _Literal
from typing import overload as _overload

import numpy as _np

# -- dtypes and constants, straight from NumPy -----------------------------------------
from numpy import (  # noqa: F401  (re-exported)
    bool_,
    complex64,
    complex128,
    e,
    euler_gamma,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    inf,
    int8,
    int16,
    int32,
    int64,
    intp,
    longdouble,
    nan,
    newaxis,
    pi,
    uint8,
    uint16,
    uint32,
    uint64,
)

from .. import backend as _backend
from ..convert import array_argument as _array_argument
from ..convert import as_tensor as _as_tensor
from ..convert import read_value as _read_value
from ..convert import stacks_own_lists as _stacks_own_lists
from ..mutation import write_out as _write_out
from ..ops import elementwise as _ew
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..tensor import Tensor, holds_tensor
from . import _creation

ndarray = Tensor

# -- elementwise primitives under NumPy's names --------------------------------------------
from ..ops.elementwise import (  # noqa: E402,F401
    absolute,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    ceil,
    clip,
    conjugate,
    cos,
    cosh,
    divide,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    remainder,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tan,
    tanh,
    where,
)
from ..ops.elementwise import logistic as expit  # noqa: E402,F401
from ..ops.elementwise import round_ as round  # noqa: E402,F401,A004
from ..ops.indexing import getitem  # noqa: E402,F401
from ..ops.linalg import dot, einsum, inner, matmul, outer, tensordot, vdot  # noqa: E402,F401
from ..ops.reduction import (  # noqa: E402,F401
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    logsumexp,
    mean,
    prod,
    std,
    sum,
    var,
)
from ..ops.shape import (  # noqa: E402,F401
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    moveaxis,
    repeat,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
)
from ._counting import bincount, histogram  # noqa: E402,F401  (differentiable in weights)
from ._functional import apply_along_axis, apply_over_axes, piecewise  # noqa: E402,F401
from ._padding import pad  # noqa: E402,F401  (every one of NumPy's modes)
from ._roots import polydiv, roots, sort_complex  # noqa: E402,F401
from ._writes import fill_diagonal, place, put, put_along_axis  # noqa: E402,F401


def ravel(a: Any, order: str = "C") -> Tensor:
    """``a`` flattened in ``order``: ``"C"`` (rows), ``"F"`` (columns), ``"A"`` and ``"K"``
    (columns if the memory is column-major only, else rows), as :func:`numpy.ravel`."""
    if order == "C":
        return _shape.ravel(a)
    if order not in ("F", "A", "K"):
        raise ValueError(f"kenaz.numpy.ravel: order must be 'C', 'F', 'A' or 'K', got {order!r}")
    if order in ("A", "K"):
        value = a._value if type(a) is Tensor else a if isinstance(a, _np.ndarray) else None
        flags = getattr(value, "flags", None)
        fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
        order = "F" if fortran else "C"
    return _shape.reshape(a, (-1,), order=order) if order == "F" else _shape.ravel(a)


def real(val: Any) -> Tensor:
    """The real part (the value itself for real input)."""
    return _ew.real(val)


def imag(val: Any) -> Tensor:
    """The imaginary part (zeros for real input)."""
    return _ew.imag(val)


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` cast to ``dtype`` (Array API ``astype``); ``copy=False`` returns ``x`` itself when
    it already has ``dtype``."""
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.astype: device must be 'cpu' or None, got {device!r}")
    x = x if isinstance(x, Tensor) else _as_tensor(x)
    if x.dtype == _np.dtype(dtype):
        return _ew.copy(x) if copy else x
    return _ew.astype(x, dtype)


abs = absolute  # noqa: A001
true_divide = divide
mod = remainder
conj = conjugate
max = amax  # noqa: A001
min = amin  # noqa: A001
around = round
atan2 = arctan2
concat = concatenate
permute_dims = transpose


# -- creation -----------------------------------------------------------------------------
@_stacks_own_lists
def array(
    object: Any,  # noqa: A002  (NumPy's name)
    dtype: Any = None,
    *,
    copy: bool = True,
    order: str = "K",
    subok: bool = False,
    ndmin: int = 0,
    ndmax: int = 0,
    like: Any = None,
) -> Tensor:
    """Create a tensor. Nested lists of tensors are stacked differentiably (``kenaz.convert``).

    ``ndmin`` prepends unit axes; ``order`` and ``subok`` are memory layout and subclass
    choices (a Tensor has neither), ``ndmax`` limits how deep NumPy reads nested lists and
    ``like`` picks NumPy's array type: both go to NumPy for plain values.
    """
    result = _array(object, dtype, copy, ndmax, like)
    if ndmin > result.ndim:
        result = reshape(result, (1,) * (ndmin - result.ndim) + result.shape)
    return result


def _array(obj: Any, dtype: Any, copy: Any, ndmax: int, like: Any) -> Tensor:
    if isinstance(obj, Tensor):
        if not copy:
            return obj if dtype is None else _ew.astype(obj, dtype)
        return _ew.copy(obj) if dtype is None or _np.dtype(dtype) == obj.dtype else (
            _ew.astype(obj, dtype)
        )
    if isinstance(obj, (list, tuple)) and holds_tensor(obj):
        return _as_tensor(obj, dtype)
    keywords = {"ndmax": ndmax} if ndmax else {}
    if like is not None:
        keywords["like"] = like
    return Tensor(_np.array(obj, dtype=dtype, copy=copy, **keywords))


@_stacks_own_lists
def asarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
            copy: Any = None, like: Any = None) -> Tensor:  # fmt: skip
    """Convert to a tensor without copying where possible (lists of tensors are stacked);
    ``copy=True`` always copies, ``copy=False`` refuses to (NumPy's meanings)."""
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.asarray: device must be 'cpu' or None, got {device!r}")
    obj = a
    if isinstance(obj, Tensor):
        if copy:
            return array(obj, dtype=dtype, copy=True)
        if copy is False and dtype is not None and _np.dtype(dtype) != obj.dtype:
            raise ValueError("kenaz.numpy.asarray: a dtype change needs a copy (copy=False)")
        return obj if dtype is None else astype(obj, dtype)
    if isinstance(obj, (list, tuple)) and holds_tensor(obj):
        return _as_tensor(obj, dtype)
    if copy is False:
        return Tensor(_np.asarray(obj, dtype=dtype, copy=False))
    return array(obj, dtype=dtype, copy=True if copy else None, like=like)


def _placed(value: Any, like: Any = None) -> Tensor:
    """``value`` (made by NumPy) as a Tensor on the backend of ``like``, or on the default
    backend (``kenaz.default_backend``) when there is no ``like``."""
    like_value = None if like is None else _backend.value_of(like)
    if like_value is None:
        xp = _backend.current_default()
    else:
        xp = _backend.namespace(like_value)
    return Tensor(value if xp is _np else _backend.asarray_on(xp, _np.asarray(value)))


def _plain_argument(value: Any) -> Any:
    """A shape or fill value with its tensors read as NumPy values (a traced tensor raises
    its own clear error here, which NumPy would otherwise swallow into a vague TypeError)."""
    if isinstance(value, Tensor):
        return value._value
    if isinstance(value, (list, tuple)):
        return type(value)(_plain_argument(v) for v in value)
    return value


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of another library's array, through DLPack.

    ``x`` is any object with ``__dlpack__`` on the CPU: a NumPy array, a PyTorch
    tensor, a JAX or CuPy array (after moving it to the host). No data is copied
    unless ``copy=True``; changing ``x`` in place changes the tensor (and a change
    made that way is invisible to kenaz's check of what a tape saved). The tensor
    is a constant: derivatives do not flow back into the other library.

    Parameters
    ----------
    x : object with ``__dlpack__`` and ``__dlpack_device__``
        The array to import.
    device : optional
        Must be the CPU (``"cpu"`` or None): kenaz's backend is NumPy.
    copy : bool, optional
        True always copies; False never does (an error if a copy were needed).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import numpy as np
    >>> import kenaz.numpy as knp
    >>> source = np.arange(3.0)
    >>> t = knp.from_dlpack(source)
    >>> t
    Tensor([0., 1., 2.])
    >>> np.shares_memory(np.from_dlpack(t), source)
    True
    """
    if isinstance(x, Tensor):  # already kenaz's: itself, so that derivatives flow through
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"kenaz.numpy.from_dlpack: {type(x).__name__} does not support DLPack (it has no "
            "__dlpack__ method); use kenaz.numpy.asarray for lists and other values"
        )
    try:
        value = _np.from_dlpack(x, device=device, copy=copy)
    except (BufferError, RuntimeError, TypeError, ValueError) as error:
        raise type(error)(
            f"kenaz.numpy.from_dlpack: cannot import {type(x).__name__} ({error}); kenaz "
            "computes with NumPy on the CPU, so move GPU arrays to the host first "
            "(e.g. `x.cpu()` in PyTorch)"
        ) from error
    return Tensor(value)


def _constant(maker: Callable[..., Any], name: str | None = None) -> Callable[..., Tensor]:
    name = maker.__name__ if name is None else name

    def create(*args: Any, **kwargs: Any) -> Tensor:
        args = tuple(_plain_argument(a) for a in args)
        kwargs = {k: _plain_argument(v) for k, v in kwargs.items()}
        return Tensor(_creation.create(name, maker, args, kwargs))

    create.__name__ = name
    create.__doc__ = (
        f"NumPy's ``{maker.__name__}``, as a constant Tensor (on the default backend: "
        "``kenaz.default_backend``)."
    )
    # Every argument goes to NumPy's function: its parameters are this function's.
    create.__signature__ = _inspect.signature(getattr(_np, name))  # type: ignore[attr-defined]
    return create


zeros = _constant(_np.zeros)
ones = _constant(_np.ones)
empty = _constant(_np.zeros, "empty")  # never hand out uninitialized memory
eye = _constant(_np.eye)
identity = _constant(_np.identity)
arange = _constant(_np.arange)
tri = _constant(_np.tri)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
         device: Any = None, like: Any = None) -> Tensor:  # fmt: skip
    """A tensor of ``shape`` filled with ``fill_value`` (differentiable in ``fill_value``)."""
    if not isinstance(fill_value, Tensor) and not (
        isinstance(fill_value, (list, tuple)) and holds_tensor(fill_value)
    ):
        kwargs = {k: v for k, v in (("device", device), ("like", like)) if v is not None}
        if _backend.current_default() is _np:
            return Tensor(_np.full(shape, fill_value, dtype=dtype, order=order, **kwargs))
        keywords = dict(dtype=dtype, order=order, **kwargs)
        return Tensor(_creation.create("full", _np.full, (shape, fill_value), keywords))
    fill = _as_tensor(fill_value, dtype)
    shape = (shape,) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    return _shape.broadcast_to(fill, shape)


def _like(maker: Callable[..., Any]) -> Callable[..., Tensor]:
    def create(
        a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None, *,
        device: Any = None,
    ) -> Tensor:  # fmt: skip
        """A constant tensor shaped like ``a`` (``order``, ``subok``: memory layout and
        subclass, which a Tensor does not have; ``device``: ``"cpu"`` or None)."""
        if device not in (None, "cpu"):
            raise ValueError(f"kenaz.numpy.{maker.__name__}_like: device must be 'cpu' or None")
        a_shape = _shape_of(a) if shape is None else shape
        a_dtype = _result_dtype(a) if dtype is None else dtype
        return _placed(maker(a_shape, dtype=a_dtype), like=a)

    return create


def _shape_of(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, Tensor) else _np.shape(a)


def _result_dtype(a: Any) -> _np.dtype:
    return a.dtype if isinstance(a, Tensor) else _np.asarray(a).dtype


zeros_like = _like(_np.zeros)
ones_like = _like(_np.ones)
empty_like = zeros_like


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Tensor:
    """A tensor shaped like ``a`` filled with ``fill_value``."""
    a_shape = _shape_of(a) if shape is None else shape
    value = _np.full(a_shape, fill_value, dtype=_result_dtype(a) if dtype is None else dtype)
    return _placed(value, like=a)


@_overload
def linspace(
    start: Any, stop: Any, num: int = ..., endpoint: bool = ...,
    retstep: _Literal[False] = ..., dtype: Any = ..., axis: int = ..., *, device: Any = ...,
) -> Tensor: ...  # fmt: skip
@_overload
def linspace(
    start: Any, stop: Any, num: int = ..., endpoint: bool = ..., *,
    retstep: _Literal[True], dtype: Any = ..., axis: int = ..., device: Any = ...,
) -> tuple[Tensor, Tensor]: ...  # fmt: skip
def linspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
    dtype: Any = None, axis: int = 0, *, device: Any = None,
) -> Any:  # fmt: skip
    """Evenly spaced numbers over an interval; differentiable in ``start`` and ``stop``.

    ``retstep=True`` also returns the step (NaN for fewer than two samples, as NumPy's).
    """
    if device not in (None, "cpu"):
        raise ValueError(f"kenaz.numpy.linspace: device must be 'cpu' or None, got {device!r}")
    if retstep:
        samples = linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
        div = (num - 1) if endpoint else num
        difference = asarray(stop) - asarray(start)
        step = difference / div if div > 0 else difference * _np.nan
        return samples, step
    if not isinstance(start, Tensor) and not isinstance(stop, Tensor):
        if _backend.current_default() is _np:
            return Tensor(
                _np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
            )
        keywords = dict(num=num, endpoint=endpoint, dtype=dtype, axis=axis)
        return Tensor(_creation.create("linspace", _np.linspace, (start, stop), keywords))
    div = (num - 1) if endpoint else num
    steps = _np.arange(num, dtype=float) / (div if div > 0 else 1)
    start, stop = asarray(start), asarray(stop)
    steps = steps.reshape((-1,) + (1,) * _np.broadcast_shapes(start.shape, stop.shape).__len__())
    out = start + (stop - start) * steps
    out = moveaxis(out, 0, axis) if axis != 0 else out
    return out if dtype is None else out.astype(dtype, copy=False)


# -- shape helpers that work on tensors ---------------------------------------------------
@_stacks_own_lists
def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a``."""
    return a.shape if isinstance(a, Tensor) else _np.shape(_array_argument(a))


@_stacks_own_lists
def ndim(a: Any) -> int:
    """The number of dimensions of ``a``."""
    return a.ndim if isinstance(a, Tensor) else _np.ndim(_array_argument(a))


@_stacks_own_lists
def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis``)."""
    s = shape(a)
    return int(_np.prod(s)) if axis is None else s[axis]


def result_type(*arrays_and_dtypes: Any) -> _np.dtype:
    """NumPy's ``result_type`` on tensors, arrays, scalars and dtypes."""
    return _np.result_type(*[a.dtype if isinstance(a, Tensor) else a for a in arrays_and_dtypes])


# -- composites ---------------------------------------------------------------------------
@_stacks_own_lists
def reciprocal(x) -> Tensor:
    """``1 / x``."""
    return 1 / asarray(x)


@_stacks_own_lists
def exp2(x) -> Tensor:
    return power(2.0, x)


# Python floats, not NumPy float64 scalars: under NEP 50 those would promote float32 to float64.
_LN2 = float(_np.log(2.0))
_LN10 = float(_np.log(10.0))


@_stacks_own_lists
def log2(x) -> Tensor:
    return log(x) / _LN2


@_stacks_own_lists
def log10(x) -> Tensor:
    return log(x) / _LN10


@_stacks_own_lists
def cbrt(x) -> Tensor:
    """Real cube root."""
    return sign(x) * power(absolute(x), 1.0 / 3.0)


@_stacks_own_lists
def deg2rad(x) -> Tensor:
    return _array_argument(x) * (_np.pi / 180.0)


@_stacks_own_lists
def rad2deg(x) -> Tensor:
    return _array_argument(x) * (180.0 / _np.pi)


radians, degrees = deg2rad, rad2deg


@_stacks_own_lists
def angle(z, deg: bool = False) -> Tensor:
    """The argument of complex ``z`` (``arctan2(imag, real)``), in degrees with ``deg``."""
    z = asarray(z)
    result = arctan2(imag(z), real(z)) if z.dtype.kind == "c" else arctan2(zeros_like(z), z)
    return result * (180.0 / _np.pi) if deg else result


@_stacks_own_lists
def hypot(x, y) -> Tensor:
    x, y = _array_argument(x), _array_argument(y)
    return sqrt(x * x + y * y)


@_stacks_own_lists
def logaddexp(x, y) -> Tensor:
    """``log(exp(x) + exp(y))`` without overflow."""
    m = stop_gradient(maximum(x, y))
    m = where(isfinite(m), m, 0.0)
    return m + log(exp(x - m) + exp(y - m))


@_stacks_own_lists
def logaddexp2(x, y) -> Tensor:
    x, y = _array_argument(x), _array_argument(y)
    return logaddexp(x * _LN2, y * _LN2) / _LN2


@_stacks_own_lists
def sinc(x) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0, with derivatives of every order right at 0 too."""
    x = _array_argument(x)
    near_zero = absolute(x) < 0.1
    safe = where(near_zero, 1.0, x)
    t2 = (_np.pi * x) ** 2
    # sin(t) / t = 1 - t**2/6 + t**4/120 - t**6/5040 + t**8/362880 - ...: for |x| < 0.1
    # the omitted terms are below 3e-13, and the polynomial's derivatives are sinc's.
    series = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42 * (1 - t2 / 72)))
    return where(near_zero, series, sin(_np.pi * safe) / (_np.pi * safe))


@_stacks_own_lists
def fmax(x, y) -> Tensor:
    return where(isnan(y), x, where(isnan(x), y, maximum(x, y)))


@_stacks_own_lists
def fmin(x, y) -> Tensor:
    return where(isnan(y), x, where(isnan(x), y, minimum(x, y)))


def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
    keepdims: bool = False,
) -> Any:  # a tuple with returned=True  # fmt: skip
    """Weighted average over ``axis`` (``keepdims`` keeps the reduced axes as ones)."""
    if keepdims:
        axes = tuple(range(ndim(a))) if axis is None else axis
        result = average(a, axis, weights, returned)
        kept = [expand_dims(r, axes) if ndim(r) < ndim(a) else r for r in
                (result if returned else (result,))]  # fmt: skip
        return tuple(kept) if returned else kept[0]
    if weights is None:
        avg = mean(a, axis=axis)
        count = size(a) / size(avg)
        return (avg, full_like(avg, count)) if returned else avg
    weights = asarray(weights)
    if weights.shape != shape(a):
        if axis is None or weights.ndim != 1:
            raise ValueError("kenaz.average: 1-d weights need an axis; otherwise shapes must match")
        weights = reshape(weights, [-1 if i == axis % ndim(a) else 1 for i in range(ndim(a))])
    total = sum(weights * ones_like(a), axis=axis)
    avg = sum(a * weights, axis=axis) / total
    return (avg, total) if returned else avg


def diff(a, n: int = 1, axis: int = -1, prepend: Any = _np._NoValue,
         append: Any = _np._NoValue) -> Tensor:  # fmt: skip
    """n-th discrete difference along ``axis``; ``prepend``/``append`` values (broadcast to
    one row along ``axis``) are joined before differencing, as in :func:`numpy.diff`."""
    if n < 0:
        raise ValueError(f"kenaz.numpy.diff: order must be non-negative but got {n}")
    if prepend is not _np._NoValue or append is not _np._NoValue:
        a = asarray(a)
        ax = axis % a.ndim
        parts = [a]
        for value, at_end in ((prepend, False), (append, True)):
            if value is _np._NoValue:
                continue
            value = asarray(value)
            if value.ndim == 0:
                value = broadcast_to(value, a.shape[:ax] + (1,) + a.shape[ax + 1 :])
            parts = [*parts, value] if at_end else [value, *parts]
        a = concatenate(parts, axis=ax)
    for _ in range(n):
        length = shape(a)[axis]
        ax = axis % ndim(a)
        a = _shape.slice_axis(a, ax, 1, length) - _shape.slice_axis(a, ax, 0, length - 1)
    return a


def _joined(parts: list[Tensor], axis: int, dtype: Any, casting: str, name: str) -> Tensor:
    """``concatenate`` with NumPy's ``dtype`` and ``casting`` (checked per part)."""
    if dtype is not None:
        for part in parts:
            if not _np.can_cast(part.dtype, dtype, casting=casting):
                raise TypeError(
                    f"kenaz.numpy.{name}: cannot cast {part.dtype} to {_np.dtype(dtype)} with "
                    f"casting rule {casting!r}"
                )
        parts = [_ew.astype(part, dtype) for part in parts]
    return concatenate(parts, axis=axis)


def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """Join along the second axis (the first for 1-d arrays)."""
    parts = [atleast_1d(x) for x in tup]
    return _joined(parts, 0 if ndim(parts[0]) == 1 else 1, dtype, casting, "hstack")


def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Tensor:
    """Join along the first axis (1-d arrays as rows)."""
    return _joined([atleast_2d(x) for x in tup], 0, dtype, casting, "vstack")


row_stack = vstack


def column_stack(tup: Sequence[Any]) -> Tensor:
    """1-d arrays as columns, joined along the second axis."""
    return concatenate([reshape(x, (-1, 1)) if ndim(x) < 2 else x for x in tup], axis=1)


def dstack(tup: Sequence[Any]) -> Tensor:
    """Join along the third axis."""
    return concatenate([atleast_3d(x) for x in tup], axis=2)


@_stacks_own_lists
def atleast_1d(*arys) -> Any:
    """Each argument with at least one axis; one argument gives one tensor, several a tuple."""
    results = tuple(_at_least(x, 1) for x in arys)
    return results[0] if len(results) == 1 else results


def _at_least(x, rank: int) -> Tensor:
    x = asarray(x)
    if x.ndim >= rank:
        return x
    if rank == 1:
        return reshape(x, (1,))
    if rank == 2:
        return reshape(x, (1,) * (2 - x.ndim) + x.shape)
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    return reshape(x, (1, -1, 1)) if x.ndim == 1 else expand_dims(x, 2)


@_stacks_own_lists
def atleast_2d(*arys) -> Any:
    """Each argument with at least two axes (a tuple for several arguments)."""
    results = tuple(_at_least(x, 2) for x in arys)
    return results[0] if len(results) == 1 else results


@_stacks_own_lists
def atleast_3d(*arys) -> Any:
    """Each argument with at least three axes (a tuple for several arguments)."""
    results = tuple(_at_least(x, 3) for x in arys)
    return results[0] if len(results) == 1 else results


def fliplr(m) -> Tensor:
    """Reverse the columns."""
    return flip(m, 1)


def flipud(m) -> Tensor:
    """Reverse the rows."""
    return flip(m, 0)


def roll(a, shift, axis=None) -> Tensor:
    """Roll elements along ``axis`` (of the flattened array when None); ``shift`` and ``axis``
    may be tuples, broadcast against each other, as in :func:`numpy.roll`."""
    if axis is None:
        total = int(_np.sum(_np.asarray(_read_value(shift))))
        return reshape(roll(ravel(a), total, 0), shape(a))
    if _np.ndim(axis) or _np.ndim(_read_value(shift)):
        shifts, axes = _np.broadcast_arrays(_np.asarray(_read_value(shift)), _np.asarray(axis))
        per_axis: dict[int, int] = {}
        for s_, ax_ in zip(shifts.ravel(), axes.ravel(), strict=True):
            key = int(ax_) % ndim(a)
            per_axis[key] = per_axis.get(key, 0) + int(s_)
        for ax_, s_ in per_axis.items():
            a = roll(a, s_, ax_)
        return asarray(a)
    x = a
    n = shape(x)[axis]
    if n == 0:
        return asarray(x)
    shift = int(shift) % n
    if shift == 0:
        return asarray(x)
    ax = axis % ndim(x)
    return concatenate(
        [_shape.slice_axis(x, ax, n - shift, n), _shape.slice_axis(x, ax, 0, n - shift)], axis=ax
    )


def take(a, indices, axis=None, out=None, mode="raise") -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None); ``mode``
    ``"raise"``, ``"wrap"`` or ``"clip"`` treats indices out of range as NumPy does."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"kenaz.numpy.take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    source = ravel(a) if axis is None else a
    ax = 0 if axis is None else axis % ndim(a)
    if mode != "raise":
        n = shape(source)[ax]
        index_value = _np.asarray(_read_value(indices), dtype=_np.intp)
        indices = index_value % n if mode == "wrap" else _np.clip(index_value, 0, n - 1)
    result = getitem(source, (slice(None),) * ax + (indices,))
    return result if out is None else _write_out(out, result, "kenaz.numpy.take")


def take_along_axis(arr, indices, axis: int | None = -1) -> Tensor:
    """Pick values along ``axis`` at ``indices`` of the same rank as ``arr`` (``axis=None``:
    of the flattened array)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = axis % a.ndim
    idx = indices if isinstance(indices, Tensor) else _np.asarray(indices)
    index = []
    for d in range(a.ndim):
        if d == ax:
            index.append(idx)
        else:
            shape_d = [1] * a.ndim
            shape_d[d] = a.shape[d]
            index.append(_np.arange(a.shape[d]).reshape(shape_d))
    return getitem(a, tuple(index))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Sum along a diagonal."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The diagonal of ``a`` over ``axis1`` and ``axis2``, as the last axis."""
    a = moveaxis(asarray(a), (axis1, axis2), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    rows = _np.arange(_builtins.max(0, -offset), _builtins.min(n, m - offset))
    return getitem(a, (Ellipsis, rows, rows + offset))


def diag(v, k: int = 0) -> Tensor:
    """Extract a diagonal (2-d input) or build a diagonal matrix (1-d input)."""
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    n = v.shape[0] + _builtins.abs(k)
    rows = _np.arange(v.shape[0]) + _builtins.max(0, -k)
    zero = zeros((n, n), dtype=v.dtype)
    return zero.at[rows, rows + k].set(v)


def tril(m, k: int = 0) -> Tensor:
    m = asarray(m)
    return where(_np.tri(*m.shape[-2:], k=k, dtype=bool), m, 0)


def triu(m, k: int = 0) -> Tensor:
    m = asarray(m)
    return where(_np.tri(*m.shape[-2:], k=k - 1, dtype=bool), 0, m)


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """Cross product of 2- or 3-vectors, NumPy's signature (``axis`` sets all three axes).

    ``axisa``/``axisb`` are the vector axes of ``a`` and ``b``, ``axisc`` that of
    the result. Two 2-vectors give the scalar z-component, as in NumPy; a
    2-vector with a 3-vector is taken with z = 0.
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(asarray(a), axisa, -1), moveaxis(asarray(b), axisb, -1)
    sizes = (a.shape[-1], b.shape[-1])
    if _builtins.any(n not in (2, 3) for n in sizes):
        raise ValueError(
            f"kenaz.cross: incompatible dimensions for cross product (dimension must be 2 or "
            f"3), got {sizes[0]} and {sizes[1]}"
        )
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if sizes == (2, 2):
        return z
    a2 = a[..., 2] if sizes[0] == 3 else 0.0
    b2 = b[..., 2] if sizes[1] == 3 else 0.0
    x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    common = _np.broadcast_shapes(*(shape(c) for c in (x, y, z)))
    out = stack([broadcast_to(c, common) for c in (x, y, z)], axis=-1)
    return moveaxis(out, -1, axisc)


def allclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    return _builtins.bool(_np.allclose(_read_value(a), _read_value(b), rtol, atol, equal_nan))


@_stacks_own_lists
def isclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    """``|a - b| <= atol + rtol * |b|`` elementwise; composed of primitives, so it batches."""
    a, b = asarray(a), asarray(b)
    finite = logical_and(isfinite(a), isfinite(b))
    finite_a, finite_b = where(finite, a, 0), where(finite, b, 0)  # no inf - inf
    within = less_equal(absolute(finite_a - finite_b), atol + rtol * absolute(finite_b))
    close = where(finite, within, equal(a, b))
    return logical_or(close, logical_and(isnan(a), isnan(b))) if equal_nan else close


def all(a, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether every element along ``axis`` is nonzero (a count of zeros: ``vmap`` batches it)."""
    return equal(sum(equal(a, 0), axis=axis, keepdims=keepdims), 0)


def any(a, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether some element along ``axis`` is nonzero."""
    return greater(sum(not_equal(a, 0), axis=axis, keepdims=keepdims), 0)


@_stacks_own_lists
def count_nonzero(a, axis=None, *, keepdims=False) -> Tensor:
    """The number of nonzero elements along ``axis``."""
    return sum(not_equal(a, 0), axis=axis, keepdims=keepdims)


def nonzero(a) -> tuple[Tensor, ...]:
    return tuple(Tensor(i) for i in _np.nonzero(_read_value(a)))


def argsort(a, axis: int | None = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None, descending: bool = False) -> Tensor:  # fmt: skip
    """Indices that sort ``a`` along ``axis`` (always stable; flattened when ``axis`` is None)."""
    # The sorting primitives load on first use (no other function here needs them).
    from ..ops.sorting import argsort as _argsort

    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _reduction.normalize_axes(axis, a.ndim, "argsort")[0]
    return _argsort(a, axis=axis, descending=descending)


def sort(a, axis: int | None = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None, descending: bool = False) -> Tensor:  # fmt: skip
    """Sorted copy; differentiable (the derivative follows the permutation, stable on ties)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), -1
    return take_along_axis(a, argsort(a, axis=axis, descending=descending), axis)


def sum_to(x, shape: Sequence[int]) -> Tensor:
    """Sum ``x`` down to ``shape``, undoing broadcasting (a kenaz extension)."""
    x = asarray(x)
    return _reduction.sum_to(x, tuple(shape), x.dtype)


def scatter(x, index, values, mode: str = "add") -> Tensor:
    """Functional scatter (``x.at[index].<mode>(values)``), a kenaz extension."""
    return _indexing.scatter(x, index, values, mode)


# -- submodules ------------------------------------------------------------------------------
from . import (  # noqa: E402,F401
    _tensor_methods,  # noqa: E402,F401  (binds Tensor's operators and methods)
    fft,
    linalg,
    random,
)

_tensor_methods.bind(_sys.modules[__name__])  # Tensor's operators and methods: see there
from ._extra import *  # noqa: E402,F401,F403  (more of NumPy's namespace, composed)
from ._index_tricks import c_, r_  # noqa: E402,F401
from ._signatures import *  # noqa: E402,F401,F403  (NumPy's signatures: out=, initial, where)

# Defined last: earlier functions take a `dtype` parameter of the same name.
dtype = _np.dtype

# The public names: what `from kenaz.numpy import *` gives, and what type checkers and the
# API reference see as exported (tests/typing checks this list against the module).
from . import _extra  # noqa: E402

__all__ = [
    "abs", "absolute", "add", "allclose", "angle", "arange", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctan2", "arctanh", "argsort", "array", "asarray", "astype", "atan2",
    "atleast_1d", "atleast_2d", "atleast_3d", "average", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bool_", "broadcast_to", "cbrt", "ceil", "column_stack", "complex128",
    "complex64", "conj", "conjugate", "cos", "cosh", "count_nonzero", "cross", "deg2rad",
    "degrees", "diag", "diagonal", "diff", "divide", "dstack", "dtype", "e", "empty",
    "empty_like", "equal", "erf", "euler_gamma", "exp", "exp2", "expand_dims", "expit", "expm1",
    "eye", "fft", "finfo", "flip", "fliplr", "flipud", "float16", "float32", "float64", "floor",
    "floor_divide", "fmax", "fmin", "from_dlpack", "full", "getitem", "greater",
    "greater_equal", "hstack", "hypot", "identity", "iinfo", "imag", "inf", "inner", "int16",
    "int32", "int64", "int8", "intp", "invert", "isclose", "isfinite", "isinf", "isnan", "less",
    "less_equal", "linalg", "linspace", "log", "log10", "log1p", "log2", "logaddexp",
    "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp",
    "maximum", "minimum", "mod", "moveaxis", "multiply", "nan", "ndarray", "ndim", "negative",
    "newaxis", "nonzero", "not_equal", "ones", "ones_like", "outer", "pad", "permute_dims",
    "pi", "power", "rad2deg", "radians", "random", "ravel", "real", "reciprocal", "remainder",
    "repeat", "reshape", "result_type", "roll", "row_stack", "scatter", "shape", "sign", "sin",
    "sinc", "sinh", "size", "sort", "split", "sqrt", "square", "squeeze", "stop_gradient",
    "subtract", "sum_to", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot",
    "tile", "trace", "transpose", "tri", "tril", "triu", "true_divide", "uint16", "uint32",
    "uint64", "uint8", "vdot", "vstack", "zeros", "zeros_like"
]  # fmt: skip
__all__ += _extra.__all__
# NumPy's signatures (`_signatures`), named here so that type checkers see them as exported
__all__ += [
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "cumsum", "cumprod", "clip", "round", "around", "all", "any", "dot", "matmul", "einsum",
    "concatenate", "concat", "stack", "where", "full_like",
]  # fmt: skip

# The rest of NumPy's namespace: NumPy's own utilities, and pass-throughs that refuse
# tracked Tensors (see _utilities and docs/numpy_coverage.md). kenaz's own names win.
from . import _utilities  # noqa: E402

_added = [name for name in _utilities.NAMESPACE if name not in globals()]
for _name in _added:
    globals()[_name] = _utilities.NAMESPACE[_name]
vectorize = _utilities.vectorize


# NumPy's submodules (`testing`, `ma`, `lib`, ...), imported on first use. Not a module
# `__getattr__`: that would stop Python from specializing every `knp.<name>` lookup.
for _name in sorted(_utilities.OWN_MODULES):
    globals()[_name] = _utilities.NumpySubmodule(_name)
__all__ += [name for name in _added if not name.startswith("_")]
__all__ += ["vectorize", "r_", "c_", "longdouble", *sorted(_utilities.OWN_MODULES)]
# Differentiable in place of NumPy's (issue 24): writes, counts, functional helpers, roots.
__all__ += [
    "bincount", "histogram", "apply_along_axis", "apply_over_axes", "piecewise", "polydiv",
    "roots", "sort_complex", "fill_diagonal", "place", "put", "put_along_axis",
]  # fmt: skip
del _name, _added

from ..convert import accept_nested_lists_in as _accept_nested_lists_in  # noqa: E402

# Every public function accepts lists holding tensors as array-likes (kenaz.convert).
_accept_nested_lists_in(globals())
