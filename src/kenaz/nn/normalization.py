"""Layer normalization and batch normalization (with explicit running statistics)."""

from __future__ import annotations

from typing import Any

from .. import numpy as knp
from ..tensor import Tensor

__all__ = ["layer_norm", "batch_norm"]


def layer_norm(
    x: Any,
    scale: Any = None,
    bias: Any = None,
    axis: int | tuple[int, ...] = -1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize ``x`` to zero mean and unit variance over ``axis``, then scale and shift.

    Parameters
    ----------
    x : tensor
    scale, bias : tensors broadcastable against the normalized axes, optional
    axis : int or tuple of ints, optional
        The feature axes (the last one by default).
    eps : float, optional
        Added to the variance before the square root.

    Examples
    --------
    >>> y = layer_norm(knp.array([[1.0, 2.0, 3.0]]))
    >>> [round(v, 4) for v in y[0].tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    x = knp.asarray(x)
    mean = knp.mean(x, axis=axis, keepdims=True)
    centered = x - mean
    variance = knp.mean(centered * centered, axis=axis, keepdims=True)
    out = centered / knp.sqrt(variance + eps)
    if scale is not None:
        out = out * scale
    if bias is not None:
        out = out + bias
    return out


def batch_norm(
    x: Any,
    scale: Any,
    bias: Any,
    state: dict[str, Any],
    training: bool,
    momentum: float = 0.9,
    eps: float = 1e-5,
    axis: int = 1,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Batch normalization over every axis but the feature ``axis``.

    In training the batch's statistics normalize ``x`` and the running
    statistics move towards them; in evaluation the running statistics
    normalize ``x`` and are returned unchanged. The running statistics are
    explicit state, never hidden in the layer: pass ``state`` in and keep the
    state that comes out.

    Parameters
    ----------
    x : tensor, e.g. ``(batch, features)`` or NCHW images
    scale, bias : tensors of shape ``(features,)``, or None
    state : dict
        ``{"mean": (features,), "var": (features,)}`` running statistics.
    training : bool
    momentum : float, optional
        ``running = momentum * running + (1 - momentum) * batch_statistic``.
    eps : float, optional
    axis : int, optional
        The feature axis (1: channels of NCHW images, or features of 2-d input).

    Returns
    -------
    (Tensor, dict)
        The normalized ``x`` and the new state. The running statistics carry
        no gradient (the biased batch variance is used for both).

    Examples
    --------
    >>> state = {"mean": knp.zeros(2), "var": knp.ones(2)}
    >>> x = knp.array([[0.0, 10.0], [2.0, 30.0]])
    >>> y, state = batch_norm(x, None, None, state, training=True)
    >>> state["mean"]
    Tensor([0.1, 2. ])
    """
    x = knp.asarray(x)
    axis = axis % x.ndim
    reduced = tuple(a for a in range(x.ndim) if a != axis)
    feature_shape = [1] * x.ndim
    feature_shape[axis] = x.shape[axis]

    def along_features(v: Any) -> Tensor:
        return knp.reshape(v, feature_shape)

    if training:
        mean = knp.mean(x, axis=reduced)
        centered = x - along_features(mean)
        variance = knp.mean(centered * centered, axis=reduced)
        new_state = {
            "mean": momentum * knp.asarray(state["mean"])
            + (1 - momentum) * knp.stop_gradient(mean),
            "var": momentum * knp.asarray(state["var"])
            + (1 - momentum) * knp.stop_gradient(variance),
        }
    else:
        mean, variance = knp.asarray(state["mean"]), knp.asarray(state["var"])
        centered = x - along_features(mean)
        new_state = dict(state)
    out = centered / knp.sqrt(along_features(variance) + eps)
    if scale is not None:
        out = out * along_features(scale)
    if bias is not None:
        out = out + along_features(bias)
    return out, new_state
