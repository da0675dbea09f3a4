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
from ..ops import batching as _batching
from ..ops import elementwise as _ew
from ..ops.special import scipy_special as _scipy_special_module
from ..tensor import Tensor

__all__ = [
    "logsumexp", "softmax", "log_softmax", "expit", "logit", "log_expit", "erf", "erfc",
    "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "gamma", "gammaln", "loggamma", "rgamma",
    "digamma", "psi", "polygamma", "multigammaln", "gammainc", "gammaincc", "betainc", "beta",
    "betaln", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "i0", "i1", "i0e", "i1e", "iv",
    "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn", "stdtr", "sinc", "gammasgn",
]  # fmt: skip

from ..ops.elementwise import erf  # noqa: E402
from ..ops.elementwise import logistic as expit  # noqa: E402
from ..ops.special import (  # noqa: E402,F401
    betainc,
    digamma,
    erfc,
    erfcinv,
    erfinv,
    gamma,
    gammainc,
    gammaincc,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    iv,
    ive,
    j0,
    j1,
    jv,
    log_ndtr,
    ndtri,
    rgamma,
    stdtr,
    xlog1py,
    xlogy,
    y0,
    y1,
    yv,
)
from ..ops.special import (
    polygamma as _polygamma,
)

psi = digamma
loggamma = gammaln
jn = jv
yn = yv
sinc = _knp.sinc


def _float(x: Any) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


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


def softmax(x: Any, axis: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x), axis)``, computed stably."""
    x = _float(x)
    return _ew.exp(x - logsumexp(x, axis=axis, keepdims=True))


def log_softmax(x: Any, axis: Any = None) -> Tensor:
    """``x - logsumexp(x, axis)``."""
    x = _float(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def logit(p: Any) -> Tensor:
    """``log(p / (1 - p))``, the inverse of :func:`expit`."""
    p = _float(p)
    return _ew.log(p) - _ew.log1p(-p)


def log_expit(x: Any) -> Tensor:
    """``log(expit(x))`` without underflow: ``-logaddexp(0, -x)``."""
    return -_knp.logaddexp(0.0, -_float(x))


def ndtr(x: Any) -> Tensor:
    """The standard normal distribution function."""
    return 0.5 * erfc(-_float(x) / _np.sqrt(2.0))


def betaln(a: Any, b: Any) -> Tensor:
    """``log(abs(beta(a, b)))``."""
    a, b = _float(a), _float(b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a: Any, b: Any) -> Tensor:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``, for ``a, b > 0``."""
    return _ew.exp(betaln(a, b))


def polygamma(n: Any, x: Any) -> Tensor:
    """The ``n``-th derivative of ``digamma`` at ``x`` (differentiable in ``x``)."""
    return _polygamma(n, x)


def multigammaln(a: Any, d: int) -> Tensor:
    """Log of the multivariate gamma function of dimension ``d``."""
    a = _float(a)
    total = 0.25 * d * (d - 1) * _np.log(_np.pi)
    for j in range(d):
        total = total + gammaln(a - 0.5 * j)
    return total


def entr(x: Any) -> Tensor:
    """``-x log x`` (0 at 0)."""
    x = _float(x)
    return -xlogy(x, x)


def rel_entr(x: Any, y: Any) -> Tensor:
    """``x log(x / y)`` (0 at ``x == 0``)."""
    x, y = _float(x), _float(y)
    return xlogy(x, x) - xlogy(x, y)


def kl_div(x: Any, y: Any) -> Tensor:
    """``x log(x / y) - x + y``."""
    x, y = _float(x), _float(y)
    return rel_entr(x, y) - x + y


def _gammasgn_impl(x: Any) -> Any:
    from scipy.special import gammasgn as _scipy_gammasgn

    return _scipy_gammasgn(x)


_gammasgn = _Op("gammasgn", _gammasgn_impl, batch=_batching.elementwise, differentiable=False)


def gammasgn(x: Any) -> Tensor:
    """The sign of the gamma function (piecewise constant: zero derivative, as in JAX)."""
    return _gammasgn(_float(x))


from ..convert import accept_nested_lists_in as _accept_nested_lists_in  # noqa: E402

# Every public function accepts lists holding tensors as array-likes (kenaz.convert).
_accept_nested_lists_in(globals())

from ._ufunc_keywords import wrap_ufuncs as _wrap_ufuncs  # noqa: E402

# Functions that are ufuncs in SciPy take NumPy's ufunc keywords (out=, where=, dtype=, ...).
_wrap_ufuncs(globals(), _scipy_special_module())
