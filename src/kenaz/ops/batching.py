"""Batching-rule helpers shared by op families (used by ``vmap``).

A batching rule is ``rule(op, args, axes, **params) -> (out, out_axis)``:
``args`` are the batched values one level out, ``axes[i]`` the batch axis of
``args[i]`` (``None`` when that argument is not batched). The rule performs
ops, so it runs once over the whole batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor


def ndim_of(x: Any) -> int:
    return x.ndim if isinstance(x, Tensor) else np.ndim(x)


def move_batch_to_front(x: Tensor, axis: int | None, rank: int | None = None) -> Any:
    """Move the batch axis of ``x`` to 0; with ``rank``, insert unit axes after it so
    that the per-example part has ``rank`` dimensions (right-aligned broadcasting)."""
    if axis is None:
        return x
    from . import shape

    if axis != 0:
        x = shape.moveaxis(x, axis, 0)
    if rank is not None and x.ndim - 1 < rank:
        x = shape.reshape(x, (x.shape[0],) + (1,) * (rank - x.ndim + 1) + x.shape[1:])
    return x


def elementwise(op, args, axes, **params):
    """Batching rule for broadcasting elementwise ops: batch axes to the front."""
    rank = max(ndim_of(a) - (ax is not None) for a, ax in zip(args, axes))
    moved = [move_batch_to_front(a, ax, rank) for a, ax in zip(args, axes)]
    return op(*moved, **params), 0
