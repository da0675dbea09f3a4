"""Dense layers and embeddings as pure functions of their parameters."""

from __future__ import annotations

from typing import Any

from .. import numpy as knp
from ..tensor import Tensor

__all__ = ["linear", "embedding"]


def linear(params: dict[str, Any], x: Any) -> Tensor:
    """``x @ weight + bias`` over the last axis of ``x``.

    Parameters
    ----------
    params : dict
        ``{"weight": (in_features, out_features), "bias": (out_features,)}``;
        ``"bias"`` may be missing or ``None``.
    x : tensor of shape ``(..., in_features)``

    Examples
    --------
    >>> params = {"weight": knp.ones((3, 2)), "bias": knp.array([0.0, 1.0])}
    >>> linear(params, knp.ones((4, 3))).shape
    (4, 2)
    """
    out = knp.asarray(x) @ params["weight"]
    bias = params.get("bias")
    return out if bias is None else out + bias


def embedding(params: dict[str, Any], ids: Any) -> Tensor:
    """Rows of ``params["weight"]`` (``(num_embeddings, dim)``) at the integer ``ids``.

    Examples
    --------
    >>> params = {"weight": knp.arange(6.0).reshape(3, 2)}
    >>> embedding(params, [2, 0])
    Tensor([[4., 5.],
            [0., 1.]])
    """
    weight = knp.asarray(params["weight"])
    ids = knp.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"kenaz.nn.embedding: ids must be integers, got dtype {ids.dtype}")
    return weight[ids]
