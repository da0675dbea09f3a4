"""Scaled dot-product attention and multi-head attention with an optional causal mask."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as knp
from ..tensor import Tensor
from .activations import softmax
from .dense import linear

__all__ = ["causal_mask", "dot_product_attention", "multi_head_attention"]


def causal_mask(query_length: int, key_length: int | None = None) -> np.ndarray:
    """Boolean ``(query_length, key_length)`` mask: position ``i`` sees keys ``<= i``.

    When the keys are longer than the queries (a cache of earlier positions),
    the queries are the last ``query_length`` positions.

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    key_length = query_length if key_length is None else key_length
    return np.tri(query_length, key_length, k=key_length - query_length, dtype=bool)


def dot_product_attention(
    query: Any, key: Any, value: Any, mask: Any = None, causal: bool = False
) -> Tensor:
    """``softmax(query @ key.T / sqrt(d)) @ value`` over the last two axes.

    Parameters
    ----------
    query : tensor of shape ``(..., q_len, d)``
    key : tensor of shape ``(..., k_len, d)``
    value : tensor of shape ``(..., k_len, d_v)``
    mask : bool array broadcastable to ``(..., q_len, k_len)``, optional
        ``True`` where a query may attend to a key.
    causal : bool, optional
        Also mask out keys after each query's position.

    Examples
    --------
    >>> q = knp.ones((2, 4, 8))
    >>> dot_product_attention(q, q, q, causal=True).shape
    (2, 4, 8)
    """
    query, key, value = knp.asarray(query), knp.asarray(key), knp.asarray(value)
    scores = (query @ knp.swapaxes(key, -1, -2)) * (1 / math.sqrt(query.shape[-1]))
    allowed = None if mask is None else np.asarray(mask, dtype=bool)
    if causal:
        triangle = causal_mask(query.shape[-2], key.shape[-2])
        allowed = triangle if allowed is None else allowed & triangle
    if allowed is not None:
        # A large finite negative (not -inf): a fully masked row gives a uniform
        # average instead of NaN.
        scores = knp.where(allowed, scores, np.finfo(scores.dtype).min / 2)
    return softmax(scores, axis=-1) @ value


def _split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(..., length, heads * d)`` -> ``(..., heads, length, d)``."""
    head_dim = x.shape[-1] // num_heads
    x = knp.reshape(x, (*x.shape[:-1], num_heads, head_dim))
    return knp.moveaxis(x, -2, -3)


def _merge_heads(x: Tensor) -> Tensor:
    """``(..., heads, length, d)`` -> ``(..., length, heads * d)``."""
    x = knp.moveaxis(x, -3, -2)
    return knp.reshape(x, (*x.shape[:-2], x.shape[-2] * x.shape[-1]))


def multi_head_attention(
    params: dict[str, Any],
    inputs: Any,
    context: Any = None,
    num_heads: int = 1,
    mask: Any = None,
    causal: bool = False,
) -> Tensor:
    """Multi-head attention of ``inputs`` over ``context`` (self-attention by default).

    Parameters
    ----------
    params : dict
        ``{"query", "key", "value", "output"}``, each ``linear`` parameters
        (``weight`` of shape ``(embed_dim, embed_dim)``).
    inputs : tensor of shape ``(..., q_len, embed_dim)``
    context : tensor of shape ``(..., k_len, embed_dim)``, optional
        The sequence attended to; ``inputs`` itself when None.
    num_heads : int
        Must divide ``embed_dim``.
    mask, causal
        As in :func:`dot_product_attention`; ``mask`` broadcasts over heads.

    Examples
    --------
    >>> from kenaz.nn import MultiHeadAttention
    >>> layer = MultiHeadAttention(embed_dim=8, num_heads=2)
    >>> params = layer.init(0)
    >>> multi_head_attention(params, knp.ones((3, 5, 8)), num_heads=2, causal=True).shape
    (3, 5, 8)
    """
    inputs = knp.asarray(inputs)
    context = inputs if context is None else knp.asarray(context)
    embed_dim = inputs.shape[-1]
    if embed_dim % num_heads:
        raise ValueError(
            f"kenaz.nn.multi_head_attention: num_heads={num_heads} does not divide "
            f"the embedding size {embed_dim}"
        )
    query = _split_heads(linear(params["query"], inputs), num_heads)
    key = _split_heads(linear(params["key"], context), num_heads)
    value = _split_heads(linear(params["value"], context), num_heads)
    if mask is not None:
        mask = np.expand_dims(np.asarray(mask, dtype=bool), -3)  # broadcast over heads
    attended = dot_product_attention(query, key, value, mask=mask, causal=causal)
    return linear(params["output"], _merge_heads(attended))
