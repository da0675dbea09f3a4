"""Loss functions: regression (mse, mae, huber) and classification (cross-entropies).

Every loss takes ``reduction``: ``"mean"`` (the default), ``"sum"``, or
``"none"`` for the per-example values. Classification losses take logits
(unnormalized scores), never probabilities, so they can be computed stably.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .. import numpy as knp
from ..tensor import Tensor
from .activations import log_softmax, softplus

__all__ = [
    "Reduction",
    "mse",
    "mae",
    "huber",
    "binary_cross_entropy",
    "softmax_cross_entropy",
    "one_hot",
]

Reduction = Literal["mean", "sum", "none"]


def _reduce(values: Tensor, reduction: Reduction) -> Tensor:
    if reduction == "mean":
        return knp.mean(values)
    if reduction == "sum":
        return knp.sum(values)
    if reduction == "none":
        return values
    raise ValueError(
        f"kenaz.nn losses: reduction must be 'mean', 'sum' or 'none', got {reduction!r}"
    )


def _check_same_shape(predictions: Tensor, targets: Tensor, name: str) -> None:
    if predictions.shape != targets.shape:
        raise ValueError(
            f"kenaz.nn.{name}: predictions of shape {predictions.shape} and targets of shape "
            f"{targets.shape} differ; reshape one (a common slip is (n, 1) against (n,))"
        )


def mse(predictions: Any, targets: Any, reduction: Reduction = "mean") -> Tensor:
    """Mean squared error ``(predictions - targets) ** 2``.

    Examples
    --------
    >>> mse(knp.array([1.0, 2.0]), knp.array([1.0, 4.0]))
    Tensor(2.)
    """
    predictions, targets = knp.asarray(predictions), knp.asarray(targets)
    _check_same_shape(predictions, targets, "mse")
    return _reduce(knp.square(predictions - targets), reduction)


def mae(predictions: Any, targets: Any, reduction: Reduction = "mean") -> Tensor:
    """Mean absolute error ``|predictions - targets|``.

    Examples
    --------
    >>> mae(knp.array([1.0, 2.0]), knp.array([1.0, 4.0]))
    Tensor(1.)
    """
    predictions, targets = knp.asarray(predictions), knp.asarray(targets)
    _check_same_shape(predictions, targets, "mae")
    return _reduce(knp.abs(predictions - targets), reduction)


def huber(
    predictions: Any, targets: Any, delta: float = 1.0, reduction: Reduction = "mean"
) -> Tensor:
    """Huber loss: quadratic for errors below ``delta``, linear above.

    ``0.5 * e**2`` where ``|e| <= delta``, ``delta * (|e| - 0.5 * delta)`` elsewhere.

    Examples
    --------
    >>> huber(knp.array([0.5, 3.0]), knp.zeros(2), reduction="none")
    Tensor([0.125, 2.5  ])
    """
    predictions, targets = knp.asarray(predictions), knp.asarray(targets)
    _check_same_shape(predictions, targets, "huber")
    error = knp.abs(predictions - targets)
    quadratic = knp.minimum(error, delta)
    linear = error - quadratic
    return _reduce(0.5 * quadratic * quadratic + delta * linear, reduction)


def binary_cross_entropy(logits: Any, targets: Any, reduction: Reduction = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(logits)`` against targets in ``[0, 1]``.

    Computed as ``softplus(logits) - logits * targets``, which never takes
    the log of 0.

    Examples
    --------
    >>> round(float(binary_cross_entropy(knp.array([0.0]), knp.array([1.0]))), 4)
    0.6931
    """
    logits = knp.asarray(logits)
    targets = knp.asarray(targets).astype(logits.dtype)
    _check_same_shape(logits, targets, "binary_cross_entropy")
    return _reduce(softplus(logits) - logits * targets, reduction)


def one_hot(labels: Any, num_classes: int, dtype: Any = np.float64) -> Tensor:
    """Integer labels of shape ``s`` as one-hot rows of shape ``s + (num_classes,)``.

    Written as a comparison (no indexing), so it works unchanged under ``vmap``.

    Examples
    --------
    >>> one_hot(knp.array([2, 0]), 3)
    Tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    labels = knp.asarray(labels)
    return (knp.expand_dims(labels, -1) == np.arange(num_classes)).astype(dtype)


def _check_label_range(labels: Tensor, num_classes: int) -> None:
    """Refuse labels outside ``[0, num_classes)`` (they would silently give a zero loss)."""
    try:
        values = np.asarray(labels)
    except Exception:  # a batched view inside vmap has no single value: skip the check
        return
    if values.size and (values.min() < 0 or values.max() >= num_classes):
        raise ValueError(
            f"kenaz.nn.softmax_cross_entropy: labels must lie in [0, {num_classes}), got "
            f"values from {values.min()} to {values.max()}"
        )


def softmax_cross_entropy(
    logits: Any,
    labels: Any,
    reduction: Reduction = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy of ``softmax(logits)`` against integer labels or target distributions.

    Parameters
    ----------
    logits : tensor of shape ``(..., num_classes)``
        Unnormalized class scores.
    labels : tensor
        Integer class indices of shape ``(...)``, or one-hot rows / class
        probabilities of the same shape as ``logits``.
    reduction : {"mean", "sum", "none"}, optional
    label_smoothing : float, optional
        Mix the targets with the uniform distribution by this amount.

    Returns
    -------
    Tensor
        The reduced loss (a scalar), or per-example losses of shape ``(...)``.

    Examples
    --------
    >>> logits = knp.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    >>> by_index = softmax_cross_entropy(logits, knp.array([0, 1]))
    >>> by_one_hot = softmax_cross_entropy(logits, one_hot([0, 1], 3))
    >>> bool(abs(by_index - by_one_hot) < 1e-12)
    True
    """
    logits = knp.asarray(logits)
    labels = knp.asarray(labels)
    num_classes = logits.shape[-1]
    if labels.dtype.kind in "iub":
        if labels.shape != logits.shape[:-1]:
            raise ValueError(
                "kenaz.nn.softmax_cross_entropy: integer labels must have shape "
                f"{logits.shape[:-1]} "
                f"(the logits' shape {logits.shape} without the class axis), got {labels.shape}"
            )
        _check_label_range(labels, num_classes)
        targets = one_hot(labels, num_classes, logits.dtype)
    else:
        if labels.shape != logits.shape:
            raise ValueError(
                f"kenaz.nn.softmax_cross_entropy: one-hot or probability labels must have the "
                f"logits' shape {logits.shape}, got {labels.shape}; integer labels need an "
                "integer dtype"
            )
        targets = labels.astype(logits.dtype, copy=False)
    # A tensor is always applied: skipping it at 0 would drop its derivative there.
    if isinstance(label_smoothing, knp.ndarray) or label_smoothing:
        targets = (1 - label_smoothing) * targets + label_smoothing / num_classes
    per_example = -knp.sum(targets * log_softmax(logits, axis=-1), axis=-1)
    return _reduce(per_example, reduction)
