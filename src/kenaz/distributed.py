"""Data-parallel gradients on a ``dask.distributed`` cluster (``kenaz.train.fit(client=...)``).

Each step splits the minibatch into one shard per worker, computes every
shard's loss and gradient with kenaz on its worker, and averages them
weighted by the shard sizes: for a loss that is a mean over the examples
(as ``fit`` expects) that is the minibatch's own loss and gradient, to
rounding. The shard tasks are submitted with retries, and a task whose
worker dies is run again elsewhere by the scheduler, so a lost worker costs
time, never a step.

Needs the ``dask`` extra: ``pip install 'kenaz[dask]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tree
from .backend import to_numpy
from .tensor import Tensor

__all__ = ["data_parallel_value_and_grad"]


def _plain(value: Any) -> Any:
    """A leaf as plain NumPy (what travels to and from the workers)."""
    return to_numpy(value._value) if isinstance(value, Tensor) else value


def _shard_value_and_grad(loss_fn: Callable[..., Any], params: Any, *shard: Any) -> tuple:
    """On a worker: the loss and gradient of one shard, as plain NumPy values."""
    from .reverse import value_and_grad

    loss, grads = value_and_grad(loss_fn)(params, *shard)
    return float(loss), tree.map(_plain, grads)


def data_parallel_value_and_grad(
    loss_fn: Callable[..., Any], client: Any, *, retries: int = 3
) -> Callable[..., tuple[Tensor, Any]]:
    """``value_and_grad(loss_fn)`` with each batch split across the workers of ``client``.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params, *batch) -> scalar``, a *mean* over the batch's examples
        (the shards' results are averaged weighted by their sizes). It is sent
        to the workers with cloudpickle.
    client : dask.distributed.Client
        The cluster; one shard per worker present at each step.
    retries : int, optional
        How many times a failing shard task is run again.

    Returns
    -------
    callable
        ``step(params, *batch) -> (loss, grads)``, as ``kenaz.value_and_grad(loss_fn)``.
    """

    def step(params: Any, *batch: Any) -> tuple[Tensor, Any]:
        batch = tuple(tree.map(_plain, part) for part in batch)
        size = len(tree.leaves(batch)[0])
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        bounds = np.linspace(0, size, min(workers, size) + 1).astype(int)
        plain_params = tree.map(_plain, params)
        futures = []
        for start, stop in zip(bounds[:-1], bounds[1:]):
            shard = tuple(tree.map(lambda leaf, a=start, b=stop: leaf[a:b], part) for part in batch)
            futures.append(
                client.submit(
                    _shard_value_and_grad,
                    loss_fn,
                    plain_params,
                    *shard,
                    pure=False,
                    retries=retries,
                )
            )
        results = client.gather(futures)
        weights = np.diff(bounds) / size
        loss = sum(w * shard_loss for w, (shard_loss, _) in zip(weights, results))
        grads = tree.map(
            lambda *shard_grads: Tensor(sum(w * g for w, g in zip(weights, shard_grads))),
            *[shard_grads for _, shard_grads in results],
        )
        return Tensor(np.asarray(loss)), grads

    return step
