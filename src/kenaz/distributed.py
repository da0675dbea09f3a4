"""Data-parallel gradients on a ``dask.distributed`` cluster (``kenaz.train.fit(client=...)``).

Each step splits the minibatch into shards (one per worker present when
training starts, fixed from then on), computes every shard's loss and
gradient with kenaz on a worker, and averages them weighted by the shard
sizes: for a loss that is a mean over the examples (as ``fit`` expects) that
is the minibatch's own loss and gradient, to rounding. The shard tasks are
submitted with retries, and a task whose worker dies is run again elsewhere
by the scheduler, so a lost worker costs time, never a step.

Randomness and state follow data-parallel training elsewhere (JAX's ``pmap``
with a key folded per device, PyTorch's DDP without SyncBatchNorm):

- ``key``: shard ``i`` of a step gets its own generator, ``split(step_key,
  shards)[i]`` (:func:`shard_keys`), so shards draw different dropout masks
  and a run is reproducible: the same key, data and shard count give the
  same result, whichever worker runs a shard and however often it is retried.
- ``state`` (batch-norm statistics): every shard starts from the same state
  and the states the shards return are averaged weighted by their sizes
  (floating leaves; any other leaf is taken from the first shard, as DDP
  broadcasts rank 0's buffers). A running mean therefore moves exactly as
  on the whole minibatch; each shard normalizes with its own batch statistics.

Both amount to one rule: distributed training with ``K`` shards equals local
training with a loss that splits the minibatch at :func:`shard_bounds`,
applies ``loss_fn`` to each shard (with its key from :func:`shard_keys`, from
the same starting state) and averages losses and states weighted by shard size.

Needs the ``dask`` extra: ``pip install 'kenaz[dask]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tree
from .backend import to_numpy
from .nn.initializers import Key, split
from .tensor import Tensor

__all__ = ["data_parallel_value_and_grad", "shard_bounds", "shard_keys", "average_states"]


def _plain(value: Any) -> Any:
    """A leaf as plain NumPy (what travels to and from the workers)."""
    return to_numpy(value._value) if isinstance(value, Tensor) else value


def shard_bounds(size: int, shards: int) -> np.ndarray:
    """Where a minibatch of ``size`` examples is cut into ``shards`` contiguous shards.

    Shard ``i`` is ``batch[bounds[i]:bounds[i + 1]]``; sizes differ by at most one,
    and there are never more shards than examples.

    Examples
    --------
    >>> shard_bounds(10, 3).tolist()
    [0, 3, 6, 10]
    """
    return np.linspace(0, size, min(shards, size) + 1).astype(int)


def shard_keys(key: Key, shards: int) -> list[np.random.Generator]:
    """The random generators of a step's shards: ``kenaz.nn.split(key, shards)``.

    Deterministic in ``key`` (a step's fresh generator, or an int seed): call it once
    per step key.

    Examples
    --------
    >>> first = [float(g.random()) for g in shard_keys(0, 2)]
    >>> first == [float(g.random()) for g in shard_keys(0, 2)] and first[0] != first[1]
    True
    """
    return split(key, shards)


def average_states(states: list[Any], weights: Any) -> Any:
    """The shards' states averaged leaf by leaf, weighted by ``weights`` (summing to 1).

    Floating and complex leaves are averaged; any other leaf (an integer step count,
    a flag) is the first shard's.

    Examples
    --------
    >>> average_states([{"mean": 1.0, "count": 3}, {"mean": 4.0, "count": 3}], [0.5, 0.5])
    {'mean': Tensor(2.5), 'count': 3}
    """

    def average(*leaves: Any) -> Any:
        values = [_plain(leaf) for leaf in leaves]
        if np.asarray(values[0]).dtype.kind not in "fc":
            return leaves[0]
        return Tensor(sum(w * np.asarray(v) for w, v in zip(weights, values)))

    return tree.map(average, *states)


def _shard_value_and_grad(
    loss_fn: Callable[..., Any], stateful: bool, shard_key: Any, params: Any, *shard: Any
) -> tuple:
    """On a worker: the loss, new state (or None) and gradient of one shard, as plain values.

    (The shard's key travels as an argument: ``client.submit`` keeps ``key=`` for itself.)
    """
    from .reverse import value_and_grad

    keyword = {} if shard_key is None else {"key": shard_key}
    if stateful:
        (loss, state), grads = value_and_grad(loss_fn, has_aux=True)(params, *shard, **keyword)
        state = tree.map(_plain, state)
    else:
        (loss, grads), state = value_and_grad(loss_fn)(params, *shard, **keyword), None
    return float(loss), state, tree.map(_plain, grads)


def data_parallel_value_and_grad(
    loss_fn: Callable[..., Any],
    client: Any,
    *,
    has_state: bool = False,
    shards: int | None = None,
    retries: int = 3,
) -> Callable[..., tuple[Any, Any]]:
    """``value_and_grad(loss_fn)`` with each batch split across the workers of ``client``.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params, *batch) -> scalar``, a *mean* over the batch's examples
        (the shards' results are averaged weighted by their sizes); with
        ``has_state``, ``loss_fn(params, state, *batch) -> (scalar, new_state)``.
        It is sent to the workers with cloudpickle.
    client : dask.distributed.Client
        The cluster.
    has_state : bool, optional
        ``loss_fn`` threads a model state (see the module's docstring for how the
        shards' states are combined).
    shards : int, optional
        How many shards each batch is split into; by default the number of workers
        present at the first step, kept for the whole run (so that a worker lost and
        replaced does not change how the batches, and the random keys, are split).
    retries : int, optional
        How many times a failing shard task is run again.

    Returns
    -------
    callable
        ``step(params, *batch, key=None) -> (loss, grads)``, as
        ``kenaz.value_and_grad(loss_fn)``; with ``has_state``,
        ``step(params, state, *batch, key=None) -> ((loss, state), grads)``, as
        ``kenaz.value_and_grad(loss_fn, has_aux=True)``. A ``key`` is split into one
        generator per shard (:func:`shard_keys`) passed to ``loss_fn`` as ``key=``.
    """
    fixed_shards = shards

    def step(params: Any, *arguments: Any, key: Key | None = None) -> tuple[Any, Any]:
        nonlocal fixed_shards
        if fixed_shards is None:
            fixed_shards = max(1, len(client.scheduler_info().get("workers", {})))
        state, batch = (arguments[0], arguments[1:]) if has_state else (None, arguments)
        batch = tuple(tree.map(_plain, part) for part in batch)
        size = len(tree.leaves(batch)[0])
        bounds = shard_bounds(size, fixed_shards)
        keys = [None] * (len(bounds) - 1) if key is None else shard_keys(key, fixed_shards)
        plain_params = tree.map(_plain, params)
        leading = (tree.map(_plain, state),) if has_state else ()
        futures = []
        for shard_key, start, stop in zip(keys, bounds[:-1], bounds[1:]):
            shard = tuple(tree.map(lambda leaf, a=start, b=stop: leaf[a:b], part) for part in batch)
            futures.append(
                client.submit(
                    _shard_value_and_grad,
                    loss_fn,
                    has_state,
                    shard_key,
                    plain_params,
                    *leading,
                    *shard,
                    pure=False,
                    retries=retries,
                )
            )
        results = client.gather(futures)
        weights = np.diff(bounds) / size
        loss = Tensor(np.asarray(sum(w * loss for w, (loss, _, _) in zip(weights, results))))
        grads = tree.map(
            lambda *shard_grads: Tensor(sum(w * g for w, g in zip(weights, shard_grads))),
            *[shard_grads for _, _, shard_grads in results],
        )
        if not has_state:
            return loss, grads
        return (loss, average_states([s for _, s, _ in results], weights)), grads

    return step
