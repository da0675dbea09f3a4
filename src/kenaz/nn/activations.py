"""Activation functions, composed from kenaz primitives (so every transformation sees them).

The ones that can overflow (``softplus``, ``softmax``, ``log_softmax``,
``sigmoid``) are written in their numerically stable forms: they stay finite,
and so do their derivatives, for inputs of any size.
"""

from __future__ import annotations

import math
from typing import Any

from .. import numpy as knp
from ..tensor import Tensor

__all__ = [
    "relu",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "swish",
    "softplus",
    "sigmoid",
    "log_sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
]


def relu(x: Any) -> Tensor:
    """``max(x, 0)``, with derivative 0 at 0.

    Examples
    --------
    >>> relu(knp.array([-1.0, 0.0, 2.0]))
    Tensor([0., 0., 2.])
    """
    x = knp.asarray(x)
    return knp.where(x > 0, x, 0)


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Examples
    --------
    >>> leaky_relu(knp.array([-1.0, 2.0]), 0.1)
    Tensor([-0.1,  2. ])
    """
    x = knp.asarray(x)
    return knp.where(x > 0, x, negative_slope * x)


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    Examples
    --------
    >>> elu(knp.array([0.0, 1.0]))
    Tensor([0., 1.])
    """
    x = knp.asarray(x)
    negative_part = knp.minimum(x, 0)  # keeps exp from overflowing in the unused branch
    return knp.where(x > 0, x, alpha * knp.expm1(negative_part))


def gelu(x: Any, approximate: bool = False) -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)`` (the tanh approximation if ``approximate``).

    Examples
    --------
    >>> round(float(gelu(1.0)), 4)
    0.8413
    """
    x = knp.asarray(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + knp.tanh(inner))
    return 0.5 * x * (1 + knp.erf(x * (1 / math.sqrt(2))))


def sigmoid(x: Any) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, stable for large ``|x|``.

    Examples
    --------
    >>> sigmoid(0.0)
    Tensor(0.5)
    """
    return knp.expit(x)


def log_sigmoid(x: Any) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, finite for large negative ``x``.

    Examples
    --------
    >>> round(float(log_sigmoid(-1000.0)))
    -1000
    """
    return -softplus(-knp.asarray(x))


def silu(x: Any) -> Tensor:
    """``x * sigmoid(x)`` (also called swish).

    Examples
    --------
    >>> silu(0.0)
    Tensor(0.)
    """
    x = knp.asarray(x)
    return x * sigmoid(x)


swish = silu


def softplus(x: Any) -> Tensor:
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)`` so it never overflows.

    (The popular ``max(x, 0) + log1p(exp(-|x|))`` has the wrong derivative at
    exactly 0, where both kinks sit: 0 instead of 1/2.)

    Examples
    --------
    >>> float(softplus(1000.0))
    1000.0
    >>> import kenaz
    >>> kenaz.grad(softplus)(0.0)
    Tensor(0.5)
    """
    return knp.logaddexp(x, 0.0)


def tanh(x: Any) -> Tensor:
    """Hyperbolic tangent.

    Examples
    --------
    >>> tanh(0.0)
    Tensor(0.)
    """
    return knp.tanh(x)


def _shifted(x: Any, axis: int | tuple[int, ...]) -> Tensor:
    """``x - max(x)`` over ``axis``; the max is a constant (it cancels in the result)."""
    x = knp.asarray(x)
    peak = knp.stop_gradient(knp.max(x, axis=axis, keepdims=True))
    return x - knp.where(knp.isfinite(peak), peak, 0)


def softmax(x: Any, axis: int | tuple[int, ...] = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` over ``axis``, shifted by the max so it never overflows.

    Examples
    --------
    >>> softmax(knp.array([0.0, 0.0]))
    Tensor([0.5, 0.5])
    >>> softmax(knp.array([1000.0, 1000.0]))
    Tensor([0.5, 0.5])
    """
    unnormalized = knp.exp(_shifted(x, axis))
    return unnormalized / knp.sum(unnormalized, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: int | tuple[int, ...] = -1) -> Tensor:
    """``x - logsumexp(x)`` over ``axis``, stable for large inputs.

    Examples
    --------
    >>> log_softmax(knp.array([1000.0, 1000.0]))
    Tensor([-0.69314718, -0.69314718])
    """
    shifted = _shifted(x, axis)
    return shifted - knp.log(knp.sum(knp.exp(shifted), axis=axis, keepdims=True))
