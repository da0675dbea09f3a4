"""Classification metrics. They are evaluated, not differentiated, so they return floats."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["accuracy", "top_k_accuracy"]


def _label_indices(labels: Any, num_classes: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.dtype.kind in "iub":
        return labels
    if labels.shape[-1:] == (num_classes,):
        return labels.argmax(axis=-1)  # one-hot rows
    raise ValueError(
        f"kenaz.nn.metrics: labels must be integer classes or one-hot rows of length "
        f"{num_classes}, got dtype {labels.dtype} and shape {labels.shape}"
    )


def accuracy(logits: Any, labels: Any) -> float:
    """Fraction of examples whose highest-scoring class is the label.

    Parameters
    ----------
    logits : array of shape ``(..., num_classes)``
        Scores (logits or probabilities).
    labels : array
        Integer classes of shape ``(...)`` or one-hot rows.

    Examples
    --------
    >>> accuracy([[0.1, 0.9], [0.8, 0.2]], [1, 1])
    0.5
    """
    logits = np.asarray(logits)
    labels = _label_indices(labels, logits.shape[-1])
    return float(np.mean(logits.argmax(axis=-1) == labels))


def top_k_accuracy(logits: Any, labels: Any, k: int = 5) -> float:
    """Fraction of examples whose label is among the ``k`` highest-scoring classes.

    Examples
    --------
    >>> top_k_accuracy([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]], [1, 0], k=2)
    0.5
    """
    logits = np.asarray(logits)
    labels = _label_indices(labels, logits.shape[-1])
    if not 1 <= k <= logits.shape[-1]:
        raise ValueError(f"kenaz.nn.top_k_accuracy: k={k} must be in [1, {logits.shape[-1]}]")
    top = np.argpartition(-logits, k - 1, axis=-1)[..., :k]
    return float(np.mean(np.any(top == labels[..., None], axis=-1)))
