"""Dropout with an explicit random key (no hidden global random state)."""

from __future__ import annotations

from typing import Any

from .. import numpy as knp
from ..tensor import Tensor
from .initializers import Key, as_generator

__all__ = ["dropout"]


def dropout(x: Any, rate: float, key: Key | None, training: bool = True) -> Tensor:
    """Zero each element with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    Parameters
    ----------
    x : tensor
    rate : float in ``[0, 1)``
    key : numpy.random.Generator or int
        Where the mask comes from: the same int key gives the same mask. Use
        a fresh key per step (e.g. ``kenaz.nn.split`` or the step number).
        Ignored (and may be None) when not training.
    training : bool, optional
        With ``False`` this is the identity.

    Examples
    --------
    >>> y = dropout(knp.ones(1000), 0.5, key=0)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> dropout(knp.ones(3), 0.5, key=None, training=False)
    Tensor([1., 1., 1.])
    """
    x = knp.asarray(x)
    if not 0 <= rate < 1:
        raise ValueError(f"kenaz.nn.dropout: rate must be in [0, 1), got {rate}")
    if not training or rate == 0:
        return x
    keep = as_generator(key).random(x.shape) >= rate
    return knp.where(keep, x / (1 - rate), 0)
