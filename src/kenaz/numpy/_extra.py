"""More of NumPy's namespace, composed from kenaz primitives (so differentiable for free).

What HIPS autograd differentiates beyond the basics, and the Array API names:
NaN-aware reductions, quantiles, ``kron``, ``convolve``, ``interp``, ``polyval``,
``meshgrid``, splitting and joining helpers, ``unique`` (differentiable in the
values it returns), and zero-derivative helpers (``signbit``, ``trunc``, ...).
Functions whose result depends on values in a way no derivative can follow
(``searchsorted``, ``argwhere``, ...) return constant tensors.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as _np

from ..convert import as_tensor as _as_tensor
from ..convert import read_value as _read_value
from ..ops import bits as _bits
from ..ops import elementwise as _ew
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops.indexing import getitem as _getitem
from ..ops.linalg import einsum as _einsum
from ..ops.linalg import matmul as _matmul
from ..tensor import Tensor
from . import linalg as _linalg

__all__ = [
    "fabs", "real_if_close", "float_power", "fmod", "copysign", "heaviside", "ptp", "kron",
    "diagflat", "rollaxis", "broadcast_arrays", "array_split", "hsplit", "vsplit", "dsplit",
    "partition", "argpartition", "select", "nan_to_num", "logspace", "geomspace", "rot90",
    "ediff1d", "gradient", "nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
    "nanprod", "nancumsum", "nancumprod", "nanargmax", "nanargmin", "median", "quantile",
    "nanquantile", "nanpercentile", "nanmedian",
    "percentile", "cov", "corrcoef", "correlate", "convolve", "polyval", "polyfit", "vander",
    "interp", "trapezoid", "append", "choose", "copy", "rint", "trunc", "fix", "isreal",
    "iscomplex", "isrealobj", "iscomplexobj", "signbit", "searchsorted", "unique",
    "unique_values", "unique_counts", "unique_inverse", "unique_all", "meshgrid",
    "flatnonzero", "argwhere", "can_cast", "isdtype", "indices", "unravel_index",
    "ravel_multi_index", "compress", "extract", "block", "vecdot", "matrix_transpose",
    "unstack", "cumulative_sum", "cumulative_prod", "acos", "acosh", "asin", "asinh", "atan",
    "atanh", "pow", "positive", "bitwise_invert", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "left_shift", "right_shift", "nextafter", "trim_zeros", "resize",
    "insert", "delete", "frexp", "ldexp", "modf", "divmod", "spacing", "i0", "isneginf",
    "isposinf", "gcd", "lcm", "array_equal", "array_equiv", "isscalar",
]  # fmt: skip


def _knp():
    # kenaz.numpy imports this module, so it is read when used, not when this loads.
    from .. import numpy

    return numpy


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(x)


def _float(x: Any) -> Tensor:
    x = _t(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


def _axis(axis: int, ndim: int) -> int:
    return _reduction.normalize_axes(axis, ndim, "axis")[0]


# -- elementwise ---------------------------------------------------------------------------
acos, acosh, asin, asinh = _ew.arccos, _ew.arccosh, _ew.arcsin, _ew.arcsinh
atan, atanh, pow = _ew.arctan, _ew.arctanh, _ew.power  # noqa: A001
bitwise_invert = bitwise_not = _ew.invert
left_shift = bitwise_left_shift = _bits.left_shift
right_shift = bitwise_right_shift = _bits.right_shift
signbit, spacing, nextafter = _bits.signbit, _bits.spacing, _bits.nextafter
gcd, lcm, rint, trunc = _bits.gcd, _bits.lcm, _bits.rint, _bits.trunc
def fix(x: Any, out: Any = None) -> Tensor:
    """Round towards zero (zero derivative, as ``trunc``); ``out=`` as NumPy's."""
    from ..mutation import write_out  # out= writes with the mutation rules (layer above)

    result = trunc(x)
    return result if out is None else write_out(out, result, "kenaz.numpy.fix")


def fabs(x: Any) -> Tensor:
    """Absolute value of real input."""
    return _ew.absolute(x)


def positive(x: Any) -> Tensor:
    """``+x``: a copy, as NumPy's."""
    return _ew.copy(x)


def float_power(x: Any, y: Any) -> Tensor:
    """``x ** y`` computed in float64 (complex128 for complex input)."""
    x = _t(x)
    target = _np.complex128 if x.dtype.kind == "c" or _t(y).dtype.kind == "c" else _np.float64
    return _ew.power(_ew.astype(x, target), y)


def fmod(x: Any, y: Any) -> Tensor:
    """C-style remainder with the sign of ``x``: ``x - trunc(x / y) * y``."""
    return x - trunc(_ew.divide(x, y)) * y


def copysign(x: Any, y: Any) -> Tensor:
    """``|x|`` with the sign of ``y``."""
    return _ew.where(signbit(y), -_ew.absolute(x), _ew.absolute(x))


def heaviside(x: Any, h0: Any) -> Tensor:
    """0 for ``x < 0``, ``h0`` at 0, 1 for ``x > 0`` (differentiable in ``h0``)."""
    x = _t(x)
    return _ew.where(_ew.less(x, 0), 0.0, _ew.where(_ew.greater(x, 0), 1.0, h0))


def real_if_close(a: Any, tol: float = 100) -> Tensor:
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0
    (decided on the values; the real part is differentiable)."""
    a = _t(a)
    if a.dtype.kind != "c":
        return a
    limit = tol * _np.finfo(a.dtype).eps if tol > 1 else tol
    return _ew.real(a) if _np.all(_np.abs(_np.imag(_read_value(a))) < limit) else a


def isreal(x: Any) -> Tensor:
    """Elementwise: is the imaginary part 0."""
    x = _t(x)
    return _ew.equal(_ew.imag(x), 0) if x.dtype.kind == "c" else Tensor(_np.ones(x.shape, bool))


def iscomplex(x: Any) -> Tensor:
    """Elementwise: is the imaginary part nonzero."""
    return _ew.logical_not(isreal(x))


def isrealobj(x: Any) -> bool:
    return _t(x).dtype.kind != "c"


def iscomplexobj(x: Any) -> bool:
    return _t(x).dtype.kind == "c"


def isneginf(x: Any) -> Tensor:
    return _ew.logical_and(_ew.isinf(x), signbit(x))


def isposinf(x: Any) -> Tensor:
    return _ew.logical_and(_ew.isinf(x), _ew.logical_not(signbit(x)))


def ldexp(x: Any, exponent: Any) -> Tensor:
    """``x * 2**exponent``."""
    return _float(x) * _ew.power(2.0, _float(exponent))


def frexp(x: Any) -> tuple[Tensor, Tensor]:
    """Mantissa (differentiable) and integer exponent with ``x = mantissa * 2**exponent``."""
    x = _float(x)
    exponent = _bits.frexp_exponent(x)
    return x * _ew.power(2.0, -_ew.astype(exponent, x.dtype)), exponent


def modf(x: Any) -> tuple[Tensor, Tensor]:
    """Fractional and integral parts (the fractional part carries the derivative)."""
    whole = trunc(x)
    return x - whole, whole


def divmod(x: Any, y: Any) -> tuple[Tensor, Tensor]:  # noqa: A001
    """``(floor_divide(x, y), remainder(x, y))``."""
    return _ew.floor_divide(x, y), _ew.remainder(x, y)


def i0(x: Any) -> Tensor:
    """Modified Bessel function of order 0 (needs SciPy, like ``kenaz.scipy``)."""
    # Imported when used: SciPy-backed functions load SciPy lazily, and so does this.
    from ..ops import special

    return special.i0(_float(x))


# -- reductions ----------------------------------------------------------------------------
def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Range ``max - min`` along ``axis``."""
    return _reduction.amax(a, axis, keepdims) - _reduction.amin(a, axis, keepdims)


def _without_nan(a: Any, fill: float) -> Tensor:
    a = _t(a)
    return _ew.where(_ew.isnan(a), fill, a) if a.dtype.kind in "fc" else a


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Tensor:  # fmt: skip
    """Sum treating NaN as 0 (NumPy's signature: ``initial`` is added, ``where`` masks)."""
    return _knp().sum(_without_nan(a, 0.0), axis, dtype, out, keepdims, initial, where)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Tensor:  # fmt: skip
    """Product treating NaN as 1 (NumPy's signature)."""
    return _knp().prod(_without_nan(a, 1.0), axis, dtype, out, keepdims, initial, where)


def _count(a: Tensor, axis: Any, keepdims: bool) -> Tensor:
    present = _ew.astype(_ew.logical_not(_ew.isnan(a)), _np.zeros((), a.dtype).real.dtype)
    return _reduction.sum(present, axis=axis, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            *, where: Any = None) -> Tensor:  # fmt: skip
    """Mean ignoring NaNs (and the elements ``where`` excludes)."""
    if out is not None:
        raise TypeError("kenaz.numpy.nanmean: out= is not supported; use the returned value")
    a = _float(a)
    if where is not None and where is not True:
        a = _ew.where(where, a, _np.nan)
    total = _reduction.sum(_without_nan(a, 0.0), axis=axis, keepdims=keepdims, dtype=dtype)
    return total / _count(a, axis, keepdims)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Tensor:  # fmt: skip
    """Variance ignoring NaNs (and the elements ``where`` excludes); ``mean`` is a mean
    already computed (with ``keepdims=True``), ``correction`` the Array API's ``ddof``."""
    if out is not None:
        raise TypeError("kenaz.numpy.nanvar: out= is not supported; use the returned value")
    a = _float(a) if dtype is None else _ew.astype(_float(a), dtype)
    if where is not None and where is not True:
        a = _ew.where(where, a, _np.nan)
    ddof = ddof if correction is None else correction
    center = nanmean(a, axis, keepdims=True) if mean is None else mean
    centered = _without_nan(a - center, 0.0)
    squared = _ew.real(centered * _ew.conjugate(centered)) if a.dtype.kind == "c" else (
        centered * centered
    )
    total = _reduction.sum(squared, axis=axis, keepdims=keepdims)
    return total / (_count(a, axis, keepdims) - ddof)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Tensor:  # fmt: skip
    """Standard deviation ignoring NaNs (NumPy's signature, as :func:`nanvar`)."""
    return _ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                           correction=correction))  # fmt: skip


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tensor:  # fmt: skip
    """Maximum ignoring NaNs (NumPy's signature)."""
    return _knp().max(_without_nan(a, -_np.inf), axis, out, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> Tensor:  # fmt: skip
    """Minimum ignoring NaNs (NumPy's signature)."""
    return _knp().min(_without_nan(a, _np.inf), axis, out, keepdims, initial, where)


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor:
    """Index of the maximum ignoring NaNs (integer: no derivative)."""
    if out is not None:
        raise TypeError("kenaz.numpy.nanargmax: out= is not supported; use the returned value")
    return _reduction.argmax(_without_nan(a, -_np.inf), axis, keepdims=keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tensor:
    """Index of the minimum ignoring NaNs (integer: no derivative)."""
    if out is not None:
        raise TypeError("kenaz.numpy.nanargmin: out= is not supported; use the returned value")
    return _reduction.argmin(_without_nan(a, _np.inf), axis, keepdims=keepdims)


def nancumsum(a: Any, axis: Any = None) -> Tensor:
    return _reduction.cumsum(_without_nan(a, 0.0), axis)


def nancumprod(a: Any, axis: Any = None) -> Tensor:
    return _reduction.cumprod(_without_nan(a, 1.0), axis)


def cumulative_sum(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Array API ``cumulative_sum`` (``include_initial`` prepends a zero)."""
    return _cumulative(_reduction.cumsum, 0.0, x, axis, dtype, include_initial)


def cumulative_prod(
    x: Any, /, *, axis: Any = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Array API ``cumulative_prod`` (``include_initial`` prepends a one)."""
    return _cumulative(_reduction.cumprod, 1.0, x, axis, dtype, include_initial)


def _cumulative(scan, initial, x, axis, dtype, include_initial):
    x = _t(x)
    if dtype is not None:
        x = _ew.astype(x, dtype)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("kenaz: cumulative_sum/prod need an axis for arrays of ndim > 1")
        axis = 0
    axis = _axis(axis, x.ndim)
    out = scan(x, axis)
    if include_initial:
        first = Tensor(_np.full(x.shape[:axis] + (1,) + x.shape[axis + 1 :], initial, out.dtype))
        out = _shape.concatenate([first, out], axis=axis)
    return out


def _grouped(a: Tensor, axis: Any) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the reduced ``axis`` merged into one last axis, and the reduced axes."""
    if axis is None:
        return _shape.ravel(a), tuple(range(a.ndim))
    axes = _reduction.normalize_axes(axis, a.ndim, "quantile")
    kept = [i for i in range(a.ndim) if i not in axes]
    data = _shape.transpose(a, kept + list(axes))
    return _shape.reshape(data, data.shape[: len(kept)] + (-1,)), axes


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median ignoring NaNs."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:  # fmt: skip
    """Median along ``axis`` (mean of the two middle values for even counts)."""
    return quantile(a, 0.5, axis, out, overwrite_input, keepdims=keepdims)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Tensor:  # fmt: skip
    """Covariance matrix of the variables in the rows of ``m`` (columns with ``rowvar=False``),
    with NumPy's integer frequency weights ``fweights`` and observation weights ``aweights``
    (differentiable in ``aweights``)."""
    knp = _knp()
    x = knp.atleast_2d(_float(m))
    if not rowvar and x.shape[0] != 1:
        x = _shape.transpose(x)
    if y is not None:
        other = knp.atleast_2d(_float(y))
        if not rowvar and other.shape[0] != 1:
            other = _shape.transpose(other)
        x = _shape.concatenate([x, other], axis=0)
    if dtype is not None:
        x = _ew.astype(x, dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    weights = None
    if fweights is not None:
        frequencies = _read_value(fweights)
        if frequencies.ndim != 1 or frequencies.shape[0] != x.shape[1]:
            raise RuntimeError("kenaz.numpy.cov: fweights must be 1-d, one per observation")
        if not _np.all(frequencies == _np.around(frequencies)) or _np.any(frequencies < 0):
            raise ValueError("kenaz.numpy.cov: fweights must be non-negative integers")
        weights = _ew.astype(_t(frequencies), x.real.dtype if x.dtype.kind == "c" else x.dtype)
    if aweights is not None:
        observation = _float(aweights)
        if observation.ndim != 1 or observation.shape[0] != x.shape[1]:
            raise RuntimeError("kenaz.numpy.cov: aweights must be 1-d, one per observation")
        if _np.any(_read_value(observation) < 0):
            raise ValueError("kenaz.numpy.cov: aweights must be non-negative")
        weights = observation if weights is None else weights * observation
    if weights is None:
        centered = x - _reduction.mean(x, axis=1, keepdims=True)
        other = _ew.conjugate(centered) if centered.dtype.kind == "c" else centered
        result = _matmul(centered, _shape.transpose(other)) / (x.shape[1] - ddof)
        return _shape.squeeze(result)
    total = _reduction.sum(weights)
    average = _reduction.sum(x * weights, axis=1, keepdims=True) / total
    if ddof == 0:
        norm = total
    elif aweights is None:
        norm = total - ddof
    else:
        norm = total - ddof * _reduction.sum(weights * observation) / total
    centered = x - average
    other = _ew.conjugate(centered) if centered.dtype.kind == "c" else centered
    result = _matmul(centered * weights, _shape.transpose(other)) / norm
    return _shape.squeeze(result)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tensor:
    """Pearson correlation coefficients."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _ew.sqrt(_ew.real(_linalg.diagonal(c)) if c.dtype.kind == "c" else _linalg.diagonal(c))
    return c / _shape.expand_dims(d, 1) / _shape.expand_dims(d, 0)


# -- products, signals, polynomials ----------------------------------------------------------
def kron(a: Any, b: Any) -> Tensor:
    """Kronecker product."""
    a, b = _t(a), _t(b)
    ndim = max(a.ndim, b.ndim)
    a = _shape.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = _shape.reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    left, right = string.ascii_lowercase[:ndim], string.ascii_uppercase[:ndim]
    interleaved = "".join(x + y for x, y in zip(left, right, strict=True))
    product = _einsum(f"{left},{right}->{interleaved}", a, b)
    return _shape.reshape(product, tuple(m * n for m, n in zip(a.shape, b.shape, strict=True)))


def convolve(a: Any, v: Any, mode: str = "full") -> Tensor:
    """Discrete linear convolution of two 1-d sequences (modes full, same, valid)."""
    a, v = _t(a), _t(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("kenaz.convolve: both inputs must be 1-d")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    padded = _shape.pad(a, ((m - 1, m - 1),))
    windows = _np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :]
    full = _reduction.sum(_getitem(padded, windows) * _shape.flip(v, 0), axis=-1)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return _shape.slice_axis(full, 0, start, start + n)
    if mode == "valid":
        return _shape.slice_axis(full, 0, m - 1, n)
    raise ValueError(f"kenaz.convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


def correlate(a: Any, v: Any, mode: str = "valid") -> Tensor:
    """Cross-correlation of two 1-d sequences: ``c[k] = sum_n a[n + k] conj(v[n])``."""
    a, v = _t(a), _t(v)
    v = _ew.conjugate(v) if v.dtype.kind == "c" else v
    return convolve(a, _shape.flip(v, 0), mode)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """Vandermonde matrix: columns are powers of ``x``."""
    x = _t(x)
    columns = x.shape[0] if N is None else N
    powers = _np.arange(columns) if increasing else _np.arange(columns)[::-1]
    return _ew.power(_shape.expand_dims(x, 1), powers.astype(float))


def polyval(p: Any, x: Any) -> Tensor:
    """Evaluate the polynomial with coefficients ``p`` (highest power first) at ``x``."""
    p = _t(p)
    result = _ew.multiply(_t(x), 0.0)
    for i in range(p.shape[0]):
        result = result * x + p[i]
    return result


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: bool = False) -> Tensor:  # fmt: skip
    """Least-squares polynomial fit (coefficients, highest power first)."""
    if full or cov or w is not None:
        raise NotImplementedError("kenaz.polyfit: full, w and cov are not supported")
    design = vander(_float(x), deg + 1)
    return _linalg.lstsq(design, _float(y), rcond=rcond)[0]


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Tensor:  # fmt: skip
    """Piecewise-linear interpolation; differentiable in ``x``, ``xp`` and ``fp``."""
    if period is not None:
        raise NotImplementedError("kenaz.interp: period is not supported")
    x, xp, fp = _float(x), _float(xp), _t(fp)
    n = xp.shape[0]
    above = _ew.astype(_ew.less_equal(xp, _shape.expand_dims(x, -1)), _np.int64)
    upper = _ew.clip(_reduction.sum(above, axis=-1), 1, n - 1)
    lower = upper - 1
    x0, x1 = _getitem(xp, lower), _getitem(xp, upper)
    f0, f1 = _getitem(fp, lower), _getitem(fp, upper)
    result = f0 + (x - x0) / (x1 - x0) * (f1 - f0)
    result = _ew.where(_ew.less(x, xp[0]), fp[0] if left is None else left, result)
    return _ew.where(_ew.greater(x, xp[n - 1]), fp[n - 1] if right is None else right, result)


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """Integral by the trapezoidal rule along ``axis``."""
    y = _t(y)
    axis = _axis(axis, y.ndim)
    n = y.shape[axis]
    average = (_shape.slice_axis(y, axis, 1, n) + _shape.slice_axis(y, axis, 0, n - 1)) / 2
    if x is None:
        return _reduction.sum(average, axis=axis) * dx
    x = _t(x)
    if x.ndim == 1:
        widths = x[1:] - x[:-1]
        widths = _shape.reshape(widths, (-1,) + (1,) * (y.ndim - 1 - axis))
    else:
        m = x.shape[axis]
        widths = _shape.slice_axis(x, axis, 1, m) - _shape.slice_axis(x, axis, 0, m - 1)
    return _reduction.sum(average * widths, axis=axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Central differences inside, one-sided at the edges (uniform scalar spacings)."""
    if edge_order != 1:
        raise NotImplementedError("kenaz.gradient: only edge_order=1 is supported")
    f = _float(f)
    axes = tuple(range(f.ndim)) if axis is None else _reduction.normalize_axes(axis, f.ndim, "")
    spacings = list(varargs) or [1.0]
    if len(spacings) == 1:
        spacings = spacings * len(axes)
    results = []
    for ax, h in zip(axes, spacings, strict=True):
        if _np.ndim(h) != 0:
            raise NotImplementedError("kenaz.gradient: coordinate arrays are not supported")
        n = f.shape[ax]
        interior = (_shape.slice_axis(f, ax, 2, n) - _shape.slice_axis(f, ax, 0, n - 2)) / (2 * h)
        first = (_shape.slice_axis(f, ax, 1, 2) - _shape.slice_axis(f, ax, 0, 1)) / h
        last = (_shape.slice_axis(f, ax, n - 1, n) - _shape.slice_axis(f, ax, n - 2, n - 1)) / h
        results.append(_shape.concatenate([first, interior, last], axis=ax))
    return results[0] if len(results) == 1 else results


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tensor:
    """Differences between consecutive elements of the flattened array."""
    flat = _shape.ravel(_t(ary))
    parts = [] if to_begin is None else [_shape.ravel(_t(to_begin))]
    parts.append(flat[1:] - flat[:-1])
    if to_end is not None:
        parts.append(_shape.ravel(_t(to_end)))
    return _shape.concatenate([_ew.astype(p, flat.dtype) for p in parts], axis=0)


# -- creation ---------------------------------------------------------------------------------
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Tensor:  # fmt: skip
    """``base ** linspace(start, stop)``."""
    exponents = _knp().linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = _ew.power(base, exponents)
    return out if dtype is None else _ew.astype(out, dtype)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Tensor:  # fmt: skip
    """Numbers spaced evenly on a log scale between positive (or negative) ends."""
    start, stop = _float(start), _float(stop)
    sign = _ew.sign(start)
    exponents = _knp().linspace(
        _ew.log(start * sign), _ew.log(stop * sign), num, endpoint=endpoint, axis=axis
    )
    out = _ew.exp(exponents) * sign
    return out if dtype is None else _ew.astype(out, dtype)


def meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[Tensor]:
    """Coordinate matrices from coordinate vectors."""
    xs = [_shape.ravel(_t(x)) for x in xi]
    ndim = len(xs)
    shapes = [[1] * ndim for _ in xs]
    for i, x in enumerate(xs):
        shapes[i][i] = x.shape[0]
    if indexing == "xy" and ndim > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    grids = [_shape.reshape(x, tuple(s)) for x, s in zip(xs, shapes, strict=True)]
    if sparse:
        return tuple(grids)
    full = _np.broadcast_shapes(*[g.shape for g in grids])
    return tuple(_shape.broadcast_to(g, full) for g in grids)


def indices(dimensions: Sequence[int], dtype: Any = int, sparse: bool = False) -> Any:
    """The index grids of an array of shape ``dimensions`` (constants)."""
    result = _np.indices(dimensions, dtype=dtype, sparse=sparse)
    return tuple(Tensor(r) for r in result) if sparse else Tensor(result)


def diagflat(v: Any, k: int = 0) -> Tensor:
    """A 2-d array with the flattened ``v`` on diagonal ``k``."""
    return _knp().diag(_shape.ravel(_t(v)), k)


# -- shape manipulation --------------------------------------------------------------------------
def rollaxis(a: Any, axis: int, start: int = 0) -> Tensor:
    """Roll ``axis`` backwards until it lies before ``start`` (prefer ``moveaxis``)."""
    a = _t(a)
    axis = _axis(axis, a.ndim)
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return _shape.moveaxis(a, axis, start) if axis != start else a


def broadcast_arrays(*args: Any) -> tuple[Tensor, ...]:
    """Broadcast the arguments against each other."""
    tensors = [_t(a) for a in args]
    target = _np.broadcast_shapes(*[t.shape for t in tensors])
    return tuple(_shape.broadcast_to(t, target) for t in tensors)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    """Split into sections that may differ in size by one."""
    x = _t(x)
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        sections = int(indices_or_sections)
        each, extra = n // sections, n % sections
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = _np.concatenate([[0], _np.cumsum(sizes)]).astype(int)
    else:
        bounds = _np.array([0, *indices_or_sections, n])
    bounds = _np.clip(bounds, 0, n)
    return [
        _shape.slice_axis(x, axis, int(a), max(int(a), int(b)))
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]


def hsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    x = _t(x)
    return _shape.split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    return _shape.split(x, indices_or_sections, axis=0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Tensor]:
    x = ary  # NumPy's name for the argument
    return _shape.split(x, indices_or_sections, axis=2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Array API ``unstack``: the slices along ``axis``."""
    x = _t(x)
    axis = _axis(axis, x.ndim)
    return tuple(_getitem(x, (slice(None),) * axis + (i,)) for i in range(x.shape[axis]))


def partition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
              order: Any = None) -> Tensor:  # fmt: skip
    """A partition around ``kth``: here the fully sorted array, which is one (``kind`` does
    not change it; ``order`` names fields of structured arrays, which a Tensor is not)."""
    if order is not None:
        raise ValueError("kenaz.numpy.partition: order= needs a structured array")
    return _knp().sort(a, axis=axis)


def argpartition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
                 order: Any = None) -> Tensor:  # fmt: skip
    """Indices of a partition around ``kth``: those of the full sort, which is one."""
    if order is not None:
        raise ValueError("kenaz.numpy.argpartition: order= needs a structured array")
    return _knp().argsort(a, axis=axis)  # a full sort is a valid partition


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    m = _t(m)
    k %= 4
    first, second = axes
    if k == 0:
        return m
    if k == 2:
        return _shape.flip(_shape.flip(m, first), second)
    if k == 1:
        return _shape.swapaxes(_shape.flip(m, second), first, second)
    return _shape.flip(_shape.swapaxes(m, first, second), second)


def append(arr: Any, values: Any, axis: Any = None) -> Tensor:
    """``arr`` with ``values`` appended (flattened when ``axis`` is None)."""
    if axis is None:
        return _shape.concatenate([_shape.ravel(_t(arr)), _shape.ravel(_t(values))], axis=0)
    return _shape.concatenate([_t(arr), _t(values)], axis=axis)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tensor:
    """The first choice whose condition holds, elementwise; ``default`` where none does."""
    if len(condlist) != len(choicelist):
        raise ValueError("kenaz.select: condlist and choicelist must have the same length")
    result = _t(default)
    for condition, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        result = _ew.where(condition, choice, result)
    return result


def choose(a: Any, choices: Sequence[Any], mode: str = "raise") -> Tensor:
    """``choices[a[i]][i]`` elementwise (``mode="raise"`` only)."""
    index = _t(a)
    stacked = _shape.stack(list(broadcast_arrays(index, *choices))[1:])
    return _knp().take_along_axis(stacked, _np.asarray(index)[None], 0)[0]


def copy(a: Any, order: str = "K", subok: bool = False) -> Tensor:
    """A copy of ``a`` with its own memory (differentiable)."""
    return _ew.copy(a)


def compress(condition: Any, a: Any, axis: Any = None) -> Tensor:
    """The slices of ``a`` along ``axis`` where ``condition`` is True."""
    picked = _np.nonzero(_np.asarray(condition))[0]
    if axis is None:
        return _getitem(_shape.ravel(_t(a)), picked)
    return _knp().take(a, picked, axis=axis)


def extract(condition: Any, arr: Any) -> Tensor:
    """The elements of ``arr`` where ``condition`` is True."""
    return _getitem(_shape.ravel(_t(arr)), _np.nonzero(_np.ravel(_np.asarray(condition)))[0])


def block(arrays: Any) -> Tensor:
    """Assemble an array from nested lists of blocks (``numpy.block``)."""

    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) else 0

    def max_ndim(x: Any) -> int:
        return max(max_ndim(item) for item in x) if isinstance(x, list) else _t(x).ndim

    list_depth = depth(arrays)
    result_ndim = max(list_depth, max_ndim(arrays))

    def assemble(x: Any, level: int) -> Tensor:
        if not isinstance(x, list):
            x = _t(x)
            return _shape.reshape(x, (1,) * (result_ndim - x.ndim) + x.shape)
        parts = [assemble(item, level + 1) for item in x]
        return _shape.concatenate(parts, axis=-(list_depth - level))

    return assemble(arrays, 0)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Tensor:
    """Drop leading (``"f"``) and trailing (``"b"``) zeros along ``axis`` (every axis by
    default: the slices that are zero throughout), as NumPy 2's ``trim_zeros``."""
    values = _read_value(filt)
    result = _t(filt)
    axes = range(values.ndim) if axis is None else [
        int(a) % values.ndim for a in _np.atleast_1d(axis)
    ]
    for ax in axes:
        others = tuple(i for i in range(values.ndim) if i != ax)
        nonzero = _np.flatnonzero(_np.any(values != 0, axis=others) if others else values != 0)
        if nonzero.size == 0:
            start = stop = 0
        else:
            start = int(nonzero[0]) if "f" in trim.lower() else 0
            stop = int(nonzero[-1]) + 1 if "b" in trim.lower() else values.shape[ax]
        result = _getitem(result, (slice(None),) * ax + (slice(start, stop),))
        values = values[(slice(None),) * ax + (slice(start, stop),)]
    return result


def resize(a: Any, new_shape: Any) -> Tensor:
    """Repeat the flattened ``a`` cyclically to fill ``new_shape``."""
    flat = _shape.ravel(_t(a))
    shape = (int(new_shape),) if _np.ndim(new_shape) == 0 else tuple(int(n) for n in new_shape)
    size = math.prod(shape)
    return _shape.reshape(_getitem(flat, _np.arange(size) % flat.shape[0]), shape)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tensor:
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``."""
    arr = _t(arr)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    n = arr.shape[axis]
    marker = _np.insert(_np.arange(n), obj, -1)
    k = int(_np.sum(marker == -1))
    values = _t(values)
    slot_shape = arr.shape[:axis] + (k,) + arr.shape[axis + 1 :]
    if _np.ndim(obj) == 0 and values.ndim == arr.ndim - 1:
        values = _shape.expand_dims(values, axis)
    values = _ew.astype(_shape.broadcast_to(values, slot_shape), arr.dtype)
    source = _np.where(marker == -1, n + _np.cumsum(marker == -1) - 1, marker)
    joined = _shape.concatenate([arr, values], axis=axis)
    return _getitem(joined, (slice(None),) * axis + (source,))


def delete(arr: Any, obj: Any, axis: Any = None) -> Tensor:
    """``arr`` without the entries ``obj`` along ``axis``."""
    arr = _t(arr)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    kept = _np.delete(_np.arange(arr.shape[axis]), obj)
    return _getitem(arr, (slice(None),) * axis + (kept,))


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Tensor:  # fmt: skip
    """Replace NaN and infinities by finite numbers (the derivative is 0 there)."""
    x = _t(x)
    if x.dtype.kind == "c":
        return _ew.real(nan_to_num(_ew.real(x), nan=nan, posinf=posinf, neginf=neginf)) + 1j * (
            nan_to_num(_ew.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        )
    if x.dtype.kind != "f":
        return x
    info = _np.finfo(x.dtype)
    x = _ew.where(_ew.isnan(x), nan, x)
    x = _ew.where(isposinf(x), info.max if posinf is None else posinf, x)
    return _ew.where(isneginf(x), info.min if neginf is None else neginf, x)


# -- values only: indices and sets ---------------------------------------------------------------
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tensor:
    """Insertion indices (integers: no derivative)."""
    return Tensor(_np.searchsorted(_read_value(a), _read_value(v), side, sorter))


def flatnonzero(a: Any) -> Tensor:
    return Tensor(_np.flatnonzero(_read_value(a)))


def argwhere(a: Any) -> Tensor:
    return Tensor(_np.argwhere(_read_value(a)))


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Tensor, ...]:
    return tuple(Tensor(i) for i in _np.unravel_index(_read_value(indices), shape, order=order))


def ravel_multi_index(
    multi_index: Any, dims: Any, mode: str = "raise", order: str = "C"
) -> Tensor:
    index = tuple(_read_value(i) for i in multi_index)
    return Tensor(_np.ravel_multi_index(index, dims, mode=mode, order=order))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    source = from_.dtype if isinstance(from_, Tensor) else from_
    return bool(_np.can_cast(source, to, casting))


def isdtype(dtype: Any, kind: Any) -> bool:
    return bool(_np.isdtype(_np.dtype(dtype), kind))


def isscalar(element: Any) -> bool:
    """True for Python and NumPy scalars (a 0-d Tensor is an array, as in NumPy)."""
    return bool(_np.isscalar(element))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    return bool(_np.array_equal(_read_value(a1), _read_value(a2), equal_nan=equal_nan))


def array_equiv(a1: Any, a2: Any) -> bool:
    return bool(_np.array_equiv(_read_value(a1), _read_value(a2)))


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,  # noqa: A002  (NumPy's name)
) -> Any:
    """Sorted unique elements (or, with ``axis``, unique slices along it); the values are
    differentiable (gathered from ``ar``). ``sorted=False`` is accepted: the result is sorted
    (NumPy allows either)."""
    values = _read_value(ar)  # the order and grouping only: piecewise constant
    source = _t(ar)
    if axis is None:
        _, first, inverse, counts = _np.unique(values, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=equal_nan)  # fmt: skip
        unique_values = _getitem(_shape.ravel(source), first)
        inverse = inverse.reshape(values.shape)
    else:
        axis = int(axis) % values.ndim
        _, first, inverse, counts = _np.unique(values, return_index=True, return_inverse=True,
                                               return_counts=True, axis=axis,
                                               equal_nan=equal_nan)  # fmt: skip
        unique_values = _getitem(source, (slice(None),) * axis + (first,))
        inverse = inverse.reshape(-1)
    result: list[Any] = [unique_values]
    if return_index:
        result.append(Tensor(first))
    if return_inverse:
        result.append(Tensor(inverse))
    if return_counts:
        result.append(Tensor(counts))
    return result[0] if len(result) == 1 else tuple(result)


def unique_values(x: Any) -> Tensor:
    return unique(x)


def unique_counts(x: Any) -> tuple[Tensor, Tensor]:
    return unique(x, return_counts=True)


def unique_inverse(x: Any) -> tuple[Tensor, Tensor]:
    return unique(x, return_inverse=True)


def unique_all(x: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    return unique(x, return_index=True, return_inverse=True, return_counts=True)


vecdot = _linalg.vecdot
matrix_transpose = _linalg.matrix_transpose


# -- conversions: kenaz has one array type, so these are `asarray` (differentiable) ---------
def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: Any = None, like: Any = None) -> Tensor:  # fmt: skip
    """``asarray``: Tensor is kenaz's only array type."""
    return _knp().asarray(a, dtype, order, device=device, copy=copy, like=like)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``asarray`` (memory layout is NumPy's business; the values are the same)."""
    return _knp().asarray(a, dtype=dtype, like=like)


def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``asarray`` (memory layout is NumPy's business; the values are the same)."""
    return _knp().asarray(a, dtype=dtype, like=like)


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Tensor:
    """``asarray``; the layout requirements do not change the values."""
    return _knp().asarray(a, dtype=dtype, like=like)


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Tensor:
    """``asarray``, raising ``ValueError`` if ``a`` holds infs or NaNs (as NumPy)."""
    a = _knp().asarray(a, dtype=dtype)
    if a.dtype.kind in "fc" and not bool(_knp().all(_ew.isfinite(a))):
        raise ValueError("array must not contain infs or NaNs")
    return a


# -- matrix-vector products (NumPy 2.2's ufuncs) ----------------------------------------------
def matvec(x1: Any, x2: Any) -> Tensor:
    """``x1 @ x2`` for stacks of matrices ``x1`` and vectors ``x2``."""
    return _matmul(x1, _shape.expand_dims(_t(x2), -1))[..., 0]


def vecmat(x1: Any, x2: Any) -> Tensor:
    """``conj(x1) @ x2`` for stacks of vectors ``x1`` and matrices ``x2``."""
    return _matmul(_shape.expand_dims(_ew.conjugate(_t(x1)), -2), x2)[..., 0, :]


# -- phase unwrapping: the correction is piecewise constant ------------------------------------
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * math.pi) -> Tensor:
    """NumPy's ``unwrap``, composed of primitives (so ``vmap`` batches it). The added
    multiples of ``period`` are constants: the derivative is the identity (away from
    the jumps, where it is not defined)."""
    knp = _knp()
    p = _float(p)
    axis = _axis(axis, p.ndim)
    values = _ew.stop_gradient(p)
    dd = knp.diff(values, axis=axis)
    high = period / 2
    discont = high if discont is None else discont
    ddmod = _ew.remainder(dd + high, period) - high
    ddmod = _ew.where(_ew.logical_and(_ew.equal(ddmod, -high), _ew.greater(dd, 0)), high, ddmod)
    correction = _ew.where(_ew.less(_ew.absolute(dd), discont), 0.0, ddmod - dd)
    correction = knp.cumsum(correction, axis=axis)
    first = _shape.slice_axis(_ew.multiply(values, 0.0), axis, 0, 1)
    return p + _ew.stop_gradient(knp.concatenate([first, correction], axis=axis))


# -- polynomial arithmetic (coefficients highest power first, as np.polyval) --------------------
def _poly1d_coefficients(p: Any) -> Tensor:
    p = _knp().atleast_1d(_t(p))
    if p.ndim != 1:
        raise ValueError(f"kenaz: polynomial coefficients must be 1-d, got shape {p.shape}")
    return p


def polyadd(a1: Any, a2: Any) -> Tensor:
    """Sum of two polynomials."""
    a1, a2 = _poly1d_coefficients(a1), _poly1d_coefficients(a2)
    n = max(a1.shape[0], a2.shape[0])
    pad = _knp().pad
    return pad(a1, (n - a1.shape[0], 0)) + pad(a2, (n - a2.shape[0], 0))


def polysub(a1: Any, a2: Any) -> Tensor:
    """Difference of two polynomials."""
    return polyadd(a1, -_poly1d_coefficients(a2))


def polymul(a1: Any, a2: Any) -> Tensor:
    """Product of two polynomials (the convolution of their coefficients)."""
    return convolve(_poly1d_coefficients(a1), _poly1d_coefficients(a2))


def polyder(p: Any, m: int = 1) -> Tensor:
    """The ``m``-th derivative of a polynomial."""
    p = _poly1d_coefficients(p)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return _ew.multiply(p[:1], 0.0)
        p = p[:-1] * _np.arange(n, 0, -1, dtype=float)
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Tensor:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (0)."""
    p = _poly1d_coefficients(p)
    constants = _np.zeros(m) if k is None else _np.atleast_1d(_np.asarray(k, dtype=float))
    if constants.shape[0] == 1 and m > 1:
        constants = _np.repeat(constants, m)
    for i in range(m):
        n = p.shape[0]
        scaled = p / _np.arange(n, 0, -1, dtype=float)
        p = _knp().concatenate([scaled, _knp().asarray(constants[i : i + 1], dtype=scaled.dtype)])
    return p


def poly(seq_of_zeros: Any) -> Tensor:
    """Coefficients of the monic polynomial with the given (1-d) roots."""
    roots = _poly1d_coefficients(seq_of_zeros)
    coefficients = _knp().ones(1, dtype=roots.dtype)
    for i in range(roots.shape[0]):
        factor = _knp().stack([_knp().ones((), roots.dtype), -roots[i]])  # x - root
        coefficients = convolve(coefficients, factor)
    return coefficients


__all__ += [
    "asanyarray", "ascontiguousarray", "asfortranarray", "require", "asarray_chkfinite",
    "matvec", "vecmat", "unwrap", "polyadd", "polysub", "polymul", "polyder", "polyint", "poly",
]  # fmt: skip

# Every one of NumPy's methods, and weights (issue 24).
from ._quantiles import nanpercentile, nanquantile, percentile, quantile  # noqa: E402,F401
