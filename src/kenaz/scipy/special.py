"""``kenaz.scipy.special``: SciPy's special functions, differentiable.

Elementwise primitives live in :mod:`kenaz.ops.special`; ``logsumexp``,
``softmax``, ``log_softmax``, ``logit``, ``beta`` and ``betaln`` are composed
from them. Integer inputs are converted to float64, as SciPy does.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from .. import numpy as _knp
from ..effects import Op as _Op
from ..numpy._ufunc_keywords import result_dtype as _result_dtype
from ..ops import batching as _batching
from ..ops import bits as _bits
from ..ops import elementwise as _ew
from ..ops import special as _ops
from ..tensor import Tensor
from ._ufunc_keywords import special_function as _public

__all__ = [
    "logsumexp", "softmax", "log_softmax", "expit", "logit", "log_expit", "erf", "erfc",
    "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "gamma", "gammaln", "loggamma", "rgamma",
    "digamma", "psi", "polygamma", "multigammaln", "gammainc", "gammaincc", "betainc", "beta",
    "betaln", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "i0", "i1", "i0e", "i1e", "iv",
    "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn", "stdtr", "sinc", "gammasgn",
]  # fmt: skip

# The primitives, each public under SciPy's name (and aliases) with the ufunc keywords
# where SciPy's function is a ufunc: one name, written once, where it is defined.
erf = _public(_ew.erf, "erf")
expit = _public(_ew.logistic, "expit")
betainc = _public(_ops.betainc, "betainc")
digamma = _public(_ops.digamma, "digamma")
erfc = _public(_ops.erfc, "erfc")
erfcinv = _public(_ops.erfcinv, "erfcinv")
erfinv = _public(_ops.erfinv, "erfinv")
gamma = _public(_ops.gamma, "gamma")
gammainc = _public(_ops.gammainc, "gammainc")
gammaincc = _public(_ops.gammaincc, "gammaincc")
gammaln = _public(_ops.gammaln, "gammaln")
i0 = _public(_ops.i0, "i0")
i0e = _public(_ops.i0e, "i0e")
i1 = _public(_ops.i1, "i1")
i1e = _public(_ops.i1e, "i1e")
iv = _public(_ops.iv, "iv")
ive = _public(_ops.ive, "ive")
j0 = _public(_ops.j0, "j0")
j1 = _public(_ops.j1, "j1")
jv = _public(_ops.jv, "jv")
log_ndtr = _public(_ops.log_ndtr, "log_ndtr")
ndtri = _public(_ops.ndtri, "ndtri")
rgamma = _public(_ops.rgamma, "rgamma")
stdtr = _public(_ops.stdtr, "stdtr")
xlog1py = _public(_ops.xlog1py, "xlog1py")
xlogy = _public(_ops.xlogy, "xlogy")
y0 = _public(_ops.y0, "y0")
y1 = _public(_ops.y1, "y1")
yv = _public(_ops.yv, "yv")
psi = _public(_ops.digamma, "psi")
loggamma = _public(_ops.gammaln, "loggamma")
jn = _public(_ops.jv, "jn")
sinc = _public(_knp.sinc, "sinc")  # NumPy's, which SciPy re-exports


def _float(x: Any) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


def _floats(name: str, *args: Any) -> list[Tensor]:
    """``args`` as tensors of the dtype SciPy's ufunc ``name`` computes in, Python numbers
    weak (NEP 50): ``rel_entr(1.5, x32)`` is float32, as SciPy's. A composite converts its
    arguments with this first, since an op on Python numbers alone gives a float64 tensor
    that would then promote."""
    dtype = _result_dtype(getattr(_ops.scipy_special(), name), *args)
    return [
        _ew.astype(a, dtype) if isinstance(a, Tensor) and a.dtype != dtype
        else a if isinstance(a, Tensor) else Tensor(_np.asarray(a, dtype))
        for a in args
    ]  # fmt: skip


@_public
def logsumexp(
    a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False
) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow.

    With ``return_sign`` it returns ``(log(abs(s)), sign(s))`` so that negative
    weights ``b`` are allowed.

    Examples
    --------
    >>> import kenaz.scipy.special as ks
    >>> ks.logsumexp([0.0, 0.0])
    Tensor(0.69314718)
    """
    a = _float(a)
    if a.size == 0:  # an empty sum: log(0) = -inf, as SciPy (max has no identity to shift by)
        shift: Any = 0.0
    else:
        shift = _ew.stop_gradient(_knp.amax(a, axis=axis, keepdims=True))
        shift = _ew.where(_ew.isfinite(shift), shift, 0.0)
    terms = _ew.exp(a - shift)
    if b is not None:
        terms = terms * b
    total = _knp.sum(terms, axis=axis, keepdims=True)
    if return_sign:
        sign = _ew.sign(total)
        out = _ew.log(_ew.absolute(total)) + shift
    else:
        out = _ew.log(total) + shift
    if not keepdims:
        out = _knp.squeeze(out, axis=axis)
        if return_sign:
            sign = _knp.squeeze(sign, axis=axis)
    return (out, sign) if return_sign else out


@_public
def softmax(x: Any, axis: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), axis)``, computed stably."""
    x = _float(x)
    return _ew.exp(x - logsumexp(x, axis=axis, keepdims=True))


@_public
def log_softmax(x: Any, axis: Any = None) -> Tensor:
    """``x - logsumexp(x, axis)``."""
    x = _float(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


@_public
def logit(p: Any) -> Tensor:
    """``log(p / (1 - p))``, the inverse of :func:`expit`."""
    p = _float(p)
    return _ew.log(p) - _ew.log1p(-p)


@_public
def log_expit(x: Any) -> Tensor:
    """``log(expit(x))`` without underflow: ``-logaddexp(0, -x)``."""
    return -_knp.logaddexp(0.0, -_float(x))


_SQRT_HALF = float(_np.sqrt(0.5))


@_public
def ndtr(x: Any) -> Tensor:
    """The standard normal distribution function."""
    return 0.5 * erfc(-_float(x) * _SQRT_HALF)  # a Python float: float32 stays float32


@_public
def betaln(a: Any, b: Any) -> Tensor:
    """``log(abs(beta(a, b)))``."""
    a, b = _floats("betaln", a, b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


@_public
def beta(a: Any, b: Any) -> Tensor:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``, for ``a, b > 0``."""
    return _ew.exp(betaln(a, b))


@_public
def yn(n: Any, x: Any) -> Tensor:
    """The Bessel function of the second kind of integer order ``n`` (a float ``n`` is
    truncated, as SciPy's ``yn`` does; ``yv`` takes real orders)."""
    order = n if isinstance(n, int) else _bits.trunc(n)
    return _ops.yv(order, x)


@_public
def polygamma(n: Any, x: Any) -> Tensor:
    """The ``n``-th derivative of ``digamma`` at ``x`` (differentiable in ``x``)."""
    return _ops.polygamma(n, x)


@_public
def multigammaln(a: Any, d: int) -> Tensor:
    """Log of the multivariate gamma function of dimension ``d``."""
    a = _float(a)
    total = 0.25 * d * (d - 1) * float(_np.log(_np.pi))  # no NumPy scalar: no promotion
    for j in range(d):
        total = total + gammaln(a - 0.5 * j)
    return total


@_public
def entr(x: Any) -> Tensor:
    """``-x log x`` (0 at 0)."""
    x = _float(x)
    return -xlogy(x, x)


@_public
def rel_entr(x: Any, y: Any) -> Tensor:
    """``x log(x / y)`` (0 at ``x == 0``)."""
    x, y = _floats("rel_entr", x, y)
    return xlogy(x, x) - xlogy(x, y)


@_public
def kl_div(x: Any, y: Any) -> Tensor:
    """``x log(x / y) - x + y``."""
    x, y = _floats("kl_div", x, y)
    return rel_entr(x, y) - x + y


def _gammasgn_impl(x: Any) -> Any:
    from scipy.special import gammasgn as _scipy_gammasgn

    return _scipy_gammasgn(x)


_gammasgn = _Op("gammasgn", _gammasgn_impl, batch=_batching.elementwise, differentiable=False)


@_public
def gammasgn(x: Any) -> Tensor:
    """The sign of the gamma function (piecewise constant: zero derivative, as in JAX)."""
    return _gammasgn(_float(x))
