"""``kenaz.numpy``: NumPy's API, differentiable under every kenaz transformation.

Change ``import numpy as np`` to ``import kenaz.numpy as np`` and the code can
be differentiated, vectorized and checked. Primitives come from
``kenaz.ops``; everything else here is composed from them, so it gets its
derivatives for free.

Assembled in one pass, each name bound once: NumPy's dtypes and constants, the
primitives (``kenaz.ops``), NumPy's signatures (``_signatures``), the functions
here, ``fft``/``linalg``/``random``, the composed families (``_composed``),
NumPy's utilities (``_utilities``). Each composite got the retry for lists of
tensors where it is defined (``@_composite``: see ``_namespace``). Then the module
is registered for those that read it (``_namespace``) and Tensor's methods are
bound (``_tensor_methods``).
"""

from __future__ import annotations

import builtins as _builtins  # `max`, `min`, `abs`, `any`, `sum` are NumPy's below
import inspect as _inspect
import sys as _sys
from collections.abc import Callable, Sequence
from typing import Any

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
from ..ops import elementwise as _ew
from ..ops import indexing as _indexing
from ..ops import reduction as _reduction
from ..ops.sorting import argsort as _argsort
from ..tensor import Tensor, holds_tensor
from . import _creation
from ._namespace import composite as _composite
from ._ufunc_keywords import result_dtype as _ufunc_result_dtype

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
)
from ..ops.elementwise import logistic as expit  # noqa: E402,F401
from ..ops.indexing import getitem  # noqa: E402,F401
from ..ops.linalg import inner, tensordot, vdot  # noqa: E402,F401
from ..ops.reduction import logsumexp  # noqa: E402,F401
from ..ops.shape import (  # noqa: E402,F401
    broadcast_to,
    expand_dims,
    flip,
    moveaxis,
    repeat,
    reshape,
    split,
    squeeze,
    swapaxes,
    tile,
    transpose,
)
from ._arrays import (  # noqa: E402,F401  (array basics with NumPy's signatures)
    array,
    asarray,
    astype,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    average,
    column_stack,
    count_nonzero,
    diff,
    dstack,
    fliplr,
    flipud,
    hstack,
    imag,
    linspace,
    ravel,
    real,
    roll,
    row_stack,
    take,
    take_along_axis,
    vstack,
)

# NumPy's signatures for the reductions, products and joins (out=, initial, where), and where:
# the only definition of each of these names in the namespace.
from ._signatures import (  # noqa: E402,F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    around,
    clip,
    concat,
    concatenate,
    cumprod,
    cumsum,
    dot,
    einsum,
    full_like,
    matmul,
    max,
    mean,
    min,
    outer,
    prod,
    round,
    stack,
    std,
    sum,
    var,
    where,
)

abs = absolute  # noqa: A001
true_divide = divide
mod = remainder
conj = conjugate
atan2 = arctan2
permute_dims = transpose


# -- creation -----------------------------------------------------------------------------
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


@_composite
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
    return _composite(create)


zeros = _constant(_np.zeros)
ones = _constant(_np.ones)
empty = _constant(_np.zeros, "empty")  # never hand out uninitialized memory
eye = _constant(_np.eye)
identity = _constant(_np.identity)
arange = _constant(_np.arange)
tri = _constant(_np.tri)


@_composite
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
    return _ew.broadcast_copy(fill, shape)  # fresh and writable, as numpy.full's


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

    return _composite(create)


def _shape_of(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, Tensor) else _np.shape(a)


def _result_dtype(a: Any) -> _np.dtype:
    return a.dtype if isinstance(a, Tensor) else _np.asarray(a).dtype


zeros_like = _like(_np.zeros)
ones_like = _like(_np.ones)
empty_like = zeros_like




# -- shape helpers that work on tensors ---------------------------------------------------
def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a``."""
    return a.shape if isinstance(a, Tensor) else _np.shape(_array_argument(a))


def ndim(a: Any) -> int:
    """The number of dimensions of ``a``."""
    return a.ndim if isinstance(a, Tensor) else _np.ndim(_array_argument(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis``)."""
    s = shape(a)
    return int(_np.prod(s)) if axis is None else s[axis]


@_composite
def result_type(*arrays_and_dtypes: Any) -> _np.dtype:
    """NumPy's ``result_type`` on tensors, arrays, scalars and dtypes."""
    return _np.result_type(*[a.dtype if isinstance(a, Tensor) else a for a in arrays_and_dtypes])


# -- composites ---------------------------------------------------------------------------
def reciprocal(x) -> Tensor:
    """``1 / x``."""
    return 1 / asarray(x)


def exp2(x) -> Tensor:
    return power(2.0, x)


# Python floats, not NumPy float64 scalars: under NEP 50 those would promote float32 to float64.
_LN2 = float(_np.log(2.0))
_LN10 = float(_np.log(10.0))


def log2(x) -> Tensor:
    return log(x) / _LN2


def log10(x) -> Tensor:
    return log(x) / _LN10


def cbrt(x) -> Tensor:
    """Real cube root (NumPy's; derivative ``+inf`` at 0, as ``sqrt``'s)."""
    x = _array_argument(x)
    return _ew.cbrt(x if x.dtype.kind == "f" else _ew.astype(x, _np.float64))


def deg2rad(x) -> Tensor:
    return _array_argument(x) * (_np.pi / 180.0)


def rad2deg(x) -> Tensor:
    return _array_argument(x) * (180.0 / _np.pi)


radians, degrees = deg2rad, rad2deg


def angle(z, deg: bool = False) -> Tensor:
    """The argument of complex ``z`` (``arctan2(imag, real)``), in degrees with ``deg``."""
    z = asarray(z)
    result = arctan2(imag(z), real(z)) if z.dtype.kind == "c" else arctan2(zeros_like(z), z)
    return result * (180.0 / _np.pi) if deg else result


def hypot(x, y) -> Tensor:
    """``sqrt(x**2 + y**2)`` without overflow or underflow (scaled by the larger of
    ``|x|``, ``|y|``, as NumPy's), ``inf`` where either is infinite; its derivative at
    ``(0, 0)`` is 0, the minimum-norm subgradient (as for ``abs`` at 0)."""
    dtype = _ufunc_result_dtype(_np.hypot, x, y)  # NumPy's (a Python number does not promote)
    x, y = (_as_tensor(v, dtype) if not isinstance(v, Tensor) else
            v if v.dtype == dtype else _ew.astype(v, dtype) for v in (x, y))  # fmt: skip
    big = stop_gradient(maximum(absolute(x), absolute(y)))  # nan if either is
    zero = big == 0
    scale = where(zero | ~isfinite(big), 1.0, big)
    x_safe = where(zero, 1.0, x)  # no 0 / 0 in the derivative at (0, 0)
    x_scaled, y_scaled = x_safe / scale, y / scale
    result = where(zero, 0.0, scale * sqrt(x_scaled * x_scaled + y_scaled * y_scaled))
    return where(isinf(x) | isinf(y), _np.inf, result)


def logaddexp(x, y) -> Tensor:
    """``log(exp(x) + exp(y))`` without overflow."""
    m = stop_gradient(maximum(x, y))
    m = where(isfinite(m), m, 0.0)
    return m + log(exp(x - m) + exp(y - m))


def logaddexp2(x, y) -> Tensor:
    x, y = _array_argument(x), _array_argument(y)
    return logaddexp(x * _LN2, y * _LN2) / _LN2


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


def fmax(x, y) -> Tensor:
    return where(isnan(y), x, where(isnan(x), y, maximum(x, y)))


def fmin(x, y) -> Tensor:
    return where(isnan(y), x, where(isnan(x), y, minimum(x, y)))




@_composite
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None) -> Tensor:
    """Sum along a diagonal (NumPy's signature: ``dtype`` of the sum, ``out`` written)."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


@_composite
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The diagonal of ``a`` over ``axis1`` and ``axis2``, as the last axis."""
    a = moveaxis(asarray(a), (axis1, axis2), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    rows = _np.arange(_builtins.max(0, -offset), _builtins.min(n, m - offset))
    # Read-only, as NumPy's diagonal (a view): a write would not reach `a`.
    return _ew.read_only_view(getitem(a, (Ellipsis, rows, rows + offset)))


@_composite
def diag(v, k: int = 0) -> Tensor:
    """Extract a diagonal (2-d input) or build a diagonal matrix (1-d input)."""
    v = asarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    n = v.shape[0] + _builtins.abs(k)
    rows = _np.arange(v.shape[0]) + _builtins.max(0, -k)
    zero = zeros((n, n), dtype=v.dtype)
    return zero.at[rows, rows + k].set(v)


@_composite
def tril(m, k: int = 0) -> Tensor:
    m = asarray(m)
    return where(_np.tri(*m.shape[-2:], k=k, dtype=bool), m, 0)


@_composite
def triu(m, k: int = 0) -> Tensor:
    m = asarray(m)
    return where(_np.tri(*m.shape[-2:], k=k - 1, dtype=bool), 0, m)


@_composite
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


@_composite
def allclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    return _builtins.bool(_np.allclose(_read_value(a), _read_value(b), rtol, atol, equal_nan))


def isclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    """``|a - b| <= atol + rtol * |b|`` elementwise; composed of primitives, so it batches."""
    a, b = asarray(a), asarray(b)
    finite = logical_and(isfinite(a), isfinite(b))
    finite_a, finite_b = where(finite, a, 0), where(finite, b, 0)  # no inf - inf
    within = less_equal(absolute(finite_a - finite_b), atol + rtol * absolute(finite_b))
    close = where(finite, within, equal(a, b))
    return logical_or(close, logical_and(isnan(a), isnan(b))) if equal_nan else close




@_composite
def argsort(a, axis: int | None = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None, descending: bool = False) -> Tensor:  # fmt: skip
    """Indices that sort ``a`` along ``axis`` (always stable; flattened when ``axis`` is None)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _reduction.normalize_axes(axis, a.ndim, "argsort")[0]
    return _argsort(a, axis=axis, descending=descending)


@_composite
def sort(a, axis: int | None = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None, descending: bool = False) -> Tensor:  # fmt: skip
    """Sorted copy; differentiable (the derivative follows the permutation, stable on ties)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), -1
    return take_along_axis(a, argsort(a, axis=axis, descending=descending), axis)


@_composite
def sum_to(x, shape: Sequence[int]) -> Tensor:
    """Sum ``x`` down to ``shape``, undoing broadcasting (a kenaz extension)."""
    x = asarray(x)
    return _reduction.sum_to(x, tuple(shape), x.dtype)


@_composite
def scatter(x, index, values, mode: str = "add") -> Tensor:
    """Functional scatter (``x.at[index].<mode>(values)``), a kenaz extension."""
    return _indexing.scatter(x, index, values, mode)


# -- submodules ------------------------------------------------------------------------------
from . import (  # noqa: E402,F401
    fft,
    linalg,
    random,
)
from ._composed import *  # noqa: E402,F401,F403  (more of NumPy's namespace, by family)
from ._index_tricks import c_, r_  # noqa: E402,F401

# Defined last: earlier functions take a `dtype` parameter of the same name.
dtype = _np.dtype

# The public names: what `from kenaz.numpy import *` gives, and what type checkers and the
# API reference see as exported (tests/typing checks this list against the module).
from . import _composed  # noqa: E402

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
    "newaxis", "not_equal", "ones", "ones_like", "outer", "permute_dims",
    "pi", "power", "rad2deg", "radians", "random", "ravel", "real", "reciprocal", "remainder",
    "repeat", "reshape", "result_type", "roll", "row_stack", "scatter", "shape", "sign", "sin",
    "sinc", "sinh", "size", "sort", "split", "sqrt", "square", "squeeze", "stop_gradient",
    "subtract", "sum_to", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot",
    "tile", "trace", "transpose", "tri", "tril", "triu", "true_divide", "uint16", "uint32",
    "uint64", "uint8", "vdot", "vstack", "zeros", "zeros_like"
]  # fmt: skip
__all__ += _composed.__all__
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
del _name, _added

from ._ufunc_keywords import apply as _with_ufunc_keywords  # noqa: E402

_with_ufunc_keywords(globals())  # NumPy's ufunc keywords (out=, where=, dtype=...): see there

# -- the namespace is assembled: what reads it ---------------------------------------------
from . import _namespace, _tensor_methods  # noqa: E402

# The composites that call the namespace they belong to (fft's shifts, linalg.cross, the
# composed families) read it through _namespace once it is complete.
_namespace.register(_sys.modules[__name__])
# Tensor's operators and methods (kenaz.tensor's names for the primitives, x.sum(), x.sort()),
# bound in this one place: see _tensor_methods.
_tensor_methods.bind(_sys.modules[__name__])
