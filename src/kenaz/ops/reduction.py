"""Reductions and scans: sum, prod, max, min, argmax, argmin, cumsum, cumprod.

The public functions normalize ``axis`` to a tuple of non-negative ints
before performing the primitive, so rules and batching never see ``None`` or
negative axes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import NUMPY_TYPES, full_like, namespace
from ..call import Call
from ..convert import array_argument
from ..effects import Op
from ..tensor import Tensor
from . import batching, shape
from . import elementwise as ew
from .axes import normalize_axes  # noqa: F401  (re-exported: kenaz.ops.reduction.normalize_axes)
from .linearity import linear
from .shape import _sum, expand_reduced, sum_to  # noqa: F401  (sum lives with broadcasting)


def _ndim(x: Any) -> int:
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)





# -- sum -----------------------------------------------------------------------------
def sum(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:  # noqa: A001
    """Sum of elements over ``axis`` (NumPy's ``sum``)."""
    if isinstance(x, Tensor):
        ndim = x.ndim
    else:  # a list of tensors: stacked before its shape is read
        x = array_argument(x)
        ndim = _ndim(x)
    if dtype is not None:
        x = ew.astype(x, dtype)
    # No axis (all of them), the commonest call: its tuple at once, without normalize_axes'
    # frame (a tenth of an eager `sum` of 16 elements).
    axes = tuple(range(ndim)) if axis is None else normalize_axes(axis, ndim, "sum")
    return _sum(x, axis=axes, keepdims=keepdims)


def mean(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
    """Arithmetic mean over ``axis``."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if dtype is not None:
        x = ew.astype(x, dtype)
    axes = normalize_axes(axis, _ndim(x), "mean")
    x_shape = np.shape(x) if not isinstance(x, Tensor) else x.shape
    count = math.prod([x_shape[a] for a in axes])  # not np.prod: 5 us on a list
    total = _sum(x, axis=axes, keepdims=keepdims)
    if total.dtype.kind in "biu":
        total = ew.astype(total, np.float64)
    return total / count


def var(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    axes = normalize_axes(axis, _ndim(x), "var")
    x_shape = np.shape(x) if not isinstance(x, Tensor) else x.shape
    count = math.prod([x_shape[a] for a in axes])  # not np.prod: 5 us on a list
    centered = x - mean(x, axis=axes, keepdims=True)
    if centered.dtype.kind == "c":
        squared = ew.real(centered * ew.conjugate(centered))
    else:
        squared = centered * centered
    return _sum(squared, axis=axes, keepdims=keepdims) / max(count - ddof, 0)


def std(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Standard deviation over ``axis``.

    Where the data are constant (one element, or all equal) the standard
    deviation is 0 and has no derivative (``sqrt`` at 0); kenaz gives 0 there,
    the subgradient, as HIPS autograd does and as ``norm`` at 0 does, rather
    than NaN. Elsewhere it is ``sqrt(var)``.
    """
    variance = var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    if variance.dtype.kind != "f":
        return ew.sqrt(variance)
    positive = ew.greater(variance, 0)
    # The double `where`: sqrt never sees a 0, so no inf * 0 = NaN reaches the derivative.
    return ew.where(positive, ew.sqrt(ew.where(positive, variance, 1.0)), 0.0)


# -- max and min: ties share the derivative equally (as in JAX) --------------------------
def _chooser_weights(ans, x, axis, keepdims):
    chosen = ew.equal(x, expand_reduced(ans, axis, keepdims))
    weights = ew.astype(chosen, ans.dtype)
    return weights / _sum(weights, axis=axis, keepdims=True)


def _chooser(name: str, impl) -> Op:
    op = Op(
        name,
        lambda x, axis, keepdims: impl(x, axis=axis, keepdims=keepdims),
        jvp=[
            lambda t, ans, x, axis, keepdims: _sum(
                t * _chooser_weights(ans, x, axis, keepdims), axis=axis, keepdims=keepdims
            )
        ],
        vjp=[
            lambda ans, x, axis, keepdims: lambda g: expand_reduced(g, axis, keepdims)
            * _chooser_weights(ans, x, axis, keepdims)
        ],
        batch=batching.reduction,
        saves=[(-1, 0)],
    )
    return op


def _neutral_reduction(numpy_function, standard_name: str):
    def impl(x, axis, keepdims):
        if type(x) in NUMPY_TYPES:
            return numpy_function(x, axis=axis, keepdims=keepdims)
        return getattr(namespace(x), standard_name)(x, axis=axis, keepdims=keepdims)

    impl.numpy_impl = numpy_function  # NumPy's, called by `perform` at once on NumPy values
    return impl


_max = _chooser("max", _neutral_reduction(np.max, "max"))
_min = _chooser("min", _neutral_reduction(np.min, "min"))


def amax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``; tied maxima share the derivative equally."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _max(x, axis=normalize_axes(axis, _ndim(x), "max"), keepdims=keepdims)


def amin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``; tied minima share the derivative equally."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _min(x, axis=normalize_axes(axis, _ndim(x), "min"), keepdims=keepdims)


# -- logsumexp: a composite with its own rules, for speed and stability ------------------------
def _logsumexp_impl(x, axis, keepdims):
    if type(x) not in NUMPY_TYPES:
        xp = namespace(x)
        shift = xp.max(x, axis=axis, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, xp.zeros_like(shift))
        out = xp.log(xp.sum(xp.exp(x - shift), axis=axis, keepdims=True)) + shift
        return out if keepdims else xp.squeeze(out, axis=axis)
    x = np.asarray(x)
    if any(x.shape[a] == 0 for a in axis):  # nothing to sum: -inf, as SciPy and JAX give
        return np.add.reduce(x, axis=axis, keepdims=keepdims) - np.inf
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0)  # all -inf (or an inf): no shift
    with np.errstate(divide="ignore"):  # all -inf: log(0) = -inf is the answer
        out = np.log(np.add.reduce(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax_weights(ans, x, axis, keepdims):
    """``exp(x - logsumexp(x))``: the derivative of logsumexp, the softmax over ``axis``."""
    return ew.exp(x - expand_reduced(ans, axis, keepdims))


_logsumexp = Op(
    "logsumexp",
    _logsumexp_impl,
    jvp=[
        lambda t, ans, x, axis, keepdims: _sum(
            t * _softmax_weights(ans, x, axis, keepdims), axis=axis, keepdims=keepdims
        )
    ],
    vjp=[
        lambda ans, x, axis, keepdims: lambda g: expand_reduced(g, axis, keepdims)
        * _softmax_weights(ans, x, axis, keepdims)
    ],
    batch=batching.reduction,
    saves=[(-1, 0)],
)


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, without overflow; its derivative is the softmax."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _logsumexp(x, axis=normalize_axes(axis, _ndim(x), "logsumexp"), keepdims=keepdims)


# -- argmax and argmin: integer results, no derivative ----------------------------------------
def _arg_impl(fn):
    def impl(x, axis, keepdims):
        return fn(x, axis=axis, keepdims=keepdims)

    return impl


_argmax = Op(
    "argmax",
    _neutral_reduction(np.argmax, "argmax"),
    batch=batching.index_reduction,
    differentiable=False,
)
_argmin = Op(
    "argmin",
    _neutral_reduction(np.argmin, "argmin"),
    batch=batching.index_reduction,
    differentiable=False,
)


def _single_axis(axis, ndim: int, op: str) -> int | None:
    return None if axis is None else normalize_axes(axis, ndim, op)[0]


def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Indices of the maxima along ``axis`` (of the flattened array when ``None``)."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _argmax(x, axis=_single_axis(axis, _ndim(x), "argmax"), keepdims=keepdims)


def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Indices of the minima along ``axis`` (of the flattened array when ``None``)."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    return _argmin(x, axis=_single_axis(axis, _ndim(x), "argmin"), keepdims=keepdims)


# -- prod: the derivative is the product of the *other* elements, exact with zeros ------------
def _exclusive_cumprod(x: Tensor, axis: int, reverse: bool = False) -> Tensor:
    """Product of the elements before each one along ``axis`` (after, with ``reverse``)."""
    if reverse:
        return shape.flip(_exclusive_cumprod(shape.flip(x, (axis,)), axis), (axis,))
    n = x.shape[axis]
    head = shape.slice_axis(x, axis, 0, n - 1)
    ones_shape = x.shape[:axis] + (1,) + x.shape[axis + 1 :]
    ones = Tensor(full_like(x, ones_shape, 1, x.dtype))
    return shape.concatenate([ones, _cumprod(head, axis=axis)], axis=axis)


def _product_of_others(x: Tensor, axis: tuple[int, ...]) -> Tensor:
    """For each element, the product of the other elements of its reduction group."""
    if not axis or x.size == 0:  # no other elements, or no elements at all
        return Tensor(full_like(x, x.shape, 1, x.dtype))
    kept = tuple(a for a in range(x.ndim) if a not in axis)
    moved = shape.transpose(x, kept + axis)
    group_size = int(np.prod([x.shape[a] for a in axis]))  # not -1: kept axes may be empty
    grouped = shape.reshape(moved, moved.shape[: len(kept)] + (group_size,))
    last = grouped.ndim - 1
    others = _exclusive_cumprod(grouped, last) * _exclusive_cumprod(grouped, last, reverse=True)
    others = shape.reshape(others, moved.shape)
    return shape.transpose(others, tuple(np.argsort(kept + axis)))


_prod = Op(
    "prod",
    _neutral_reduction(np.prod, "prod"),
    jvp=[
        lambda t, ans, x, axis, keepdims: _sum(
            t * _product_of_others(x, axis), axis=axis, keepdims=keepdims
        )
    ],
    vjp=[
        lambda ans, x, axis, keepdims: lambda g: expand_reduced(g, axis, keepdims)
        * _product_of_others(x, axis)
    ],
    batch=batching.reduction,
    saves=[(0,)],
)


def prod(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
    """Product of elements over ``axis``; its derivative is exact where elements are 0."""
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if dtype is not None:
        x = ew.astype(x, dtype)
    return _prod(x, axis=normalize_axes(axis, _ndim(x), "prod"), keepdims=keepdims)


# -- scans ---------------------------------------------------------------------------
_cumsum = Op(
    "cumsum",
    lambda x, axis: (
        np.cumsum(x, axis=axis)
        if type(x) in NUMPY_TYPES
        else namespace(x).cumulative_sum(x, axis=axis)
    ),
    vjp=[
        lambda ans, x, axis: lambda g: shape.flip(
            _cumsum(shape.flip(g, (axis,)), axis=axis), (axis,)
        )
    ],
    batch=batching.scan,
    saves=[],  # linear
)
linear(_cumsum)


def _cumprod_by_masked_prod(x: Tensor, axis: int) -> Tensor:
    """cumprod written with ``prod`` over a triangular mask: O(n^2), used only for derivatives.

    ``out[i] = prod_j where(j <= i, x[j], 1)`` inherits ``prod``'s exact rule at zeros.
    """
    n = x.shape[axis]
    moved = shape.moveaxis(x, axis, -1)
    lower = np.tril(np.ones((n, n), dtype=bool))
    masked = ew.where(lower, shape.expand_dims(moved, (moved.ndim - 1,)), 1)
    return shape.moveaxis(prod(masked, axis=-1), -1, axis)


# cumprod's derivatives are those of `_cumprod_by_masked_prod` (exact at zeros, where
# dividing by the elements is not): a call op whose eager implementation is NumPy's and
# whose function every differentiating transformation runs (the default rule of a call);
# batching keeps the fast scan.
_cumprod = Call(
    "cumprod",
    lambda args, params: _cumprod_by_masked_prod(args[0], params["axis"]),
    impl=lambda x, axis: (
        np.cumprod(x, axis=axis)
        if type(x) in NUMPY_TYPES
        else namespace(x).cumulative_prod(x, axis=axis)
    ),
    batch=batching.scan,
    multiple_results=False,
)


def _scan(op: Op, x, axis, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        x = array_argument(x)
    if axis is None:
        x = shape.ravel(x)
        axis = 0
    return op(x, axis=normalize_axes(axis, _ndim(x), name)[0])


def cumsum(x, axis=None) -> Tensor:
    """Cumulative sum along ``axis`` (of the flattened array when ``None``)."""
    return _scan(_cumsum, x, axis, "cumsum")


def cumprod(x, axis=None) -> Tensor:
    """Cumulative product along ``axis``; derivatives are exact where elements are 0."""
    return _scan(_cumprod, x, axis, "cumprod")
