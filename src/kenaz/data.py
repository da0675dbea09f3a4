"""Minibatches, train/test splits, and the small datasets the examples use.

A dataset is a pytree of arrays that share their first axis (the example
axis), e.g. ``(images, labels)``. Batches have the same structure.
Shuffling is driven by an explicit seed, so two runs see the same batches.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import tree

__all__ = ["Batches", "minibatches", "num_examples", "train_test_split", "load_digits"]


def num_examples(data: Any) -> int:
    """The common length of the first axis of every leaf of ``data``.

    Examples
    --------
    >>> num_examples((np.zeros((5, 2)), np.zeros(5)))
    5
    """
    leaves = tree.leaves(data)
    if not leaves:
        raise ValueError("kenaz.data: the dataset has no arrays")
    if any(np.ndim(leaf) == 0 for leaf in leaves):
        raise ValueError(
            "kenaz.data: every leaf of a dataset must be an array whose first axis indexes the "
            "examples, but one is a scalar (a Python list of numbers is a pytree of scalars: "
            "wrap it in numpy.array)"
        )
    lengths = {int(np.shape(leaf)[0]) for leaf in leaves}
    if len(lengths) != 1:
        raise ValueError(
            "kenaz.data: every array of a dataset needs the same number of examples along "
            f"its first axis, got lengths {sorted(lengths)}"
        )
    return lengths.pop()


def _take(data: Any, index: np.ndarray) -> Any:
    return tree.map(lambda leaf: np.asarray(leaf)[index], data)


class Batches:
    """Minibatches of ``data``; iterate once per epoch, reshuffled each time.

    Parameters
    ----------
    data : pytree of arrays
        Arrays with the same first-axis length.
    batch_size : int
    shuffle : bool, optional
        Visit the examples in a random order (a new one each epoch).
    seed : int, optional
        Epoch ``e`` is shuffled with ``numpy.random.default_rng([seed, e])``,
        so the order depends only on the seed and the epoch.
    drop_last : bool, optional
        Skip the final batch when it is smaller than ``batch_size``.

    Examples
    --------
    >>> x, y = np.arange(10.0).reshape(5, 2), np.arange(5)
    >>> batches = Batches((x, y), batch_size=2, shuffle=False)
    >>> len(batches), [b[1].tolist() for b in batches]
    (3, [[0, 1], [2, 3], [4]])
    >>> len(Batches((x, y), batch_size=2, drop_last=True))
    2
    """

    def __init__(
        self,
        data: Any,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"kenaz.data.Batches: batch_size must be positive, got {batch_size}")
        self.data = tree.map(np.asarray, data)
        self.size = num_examples(self.data)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0

    def __len__(self) -> int:
        if self.drop_last:
            return self.size // self.batch_size
        return math.ceil(self.size / self.batch_size)

    def order(self, epoch: int) -> np.ndarray:
        """The example order of ``epoch``."""
        if not self.shuffle:
            return np.arange(self.size)
        return np.random.default_rng([self.seed, epoch]).permutation(self.size)

    def __iter__(self) -> Iterator[Any]:
        order = self.order(self.epoch)
        self.epoch += 1
        for batch in range(len(self)):
            yield _take(self.data, order[batch * self.batch_size : (batch + 1) * self.batch_size])


def minibatches(
    data: Any, batch_size: int, shuffle: bool = True, seed: int = 0, drop_last: bool = False
) -> Iterator[Any]:
    """One epoch of minibatches of ``data`` (see :class:`Batches`).

    Examples
    --------
    >>> x = np.arange(6)
    >>> [b.tolist() for b in minibatches(x, 4, seed=0, drop_last=True)]
    [[3, 2, 5, 4]]
    """
    return iter(Batches(data, batch_size, shuffle, seed, drop_last))


def train_test_split(data: Any, test_fraction: float = 0.2, seed: int = 0) -> tuple[Any, Any]:
    """Split ``data`` at random into ``(train, test)`` with ``test_fraction`` of the examples.

    Examples
    --------
    >>> train, test = train_test_split(np.arange(10), test_fraction=0.3)
    >>> len(train), len(test), sorted(train.tolist() + test.tolist()) == list(range(10))
    (7, 3, True)
    """
    if not 0 < test_fraction < 1:
        raise ValueError(
            f"kenaz.data.train_test_split: test_fraction must be in (0, 1), got {test_fraction}"
        )
    data = tree.map(np.asarray, data)
    size = num_examples(data)
    order = np.random.default_rng(seed).permutation(size)
    n_test = max(1, round(size * test_fraction))
    return _take(data, order[n_test:]), _take(data, order[:n_test])


def load_digits(
    test_fraction: float = 0.2, seed: int = 0, images: bool = False, dtype: Any = np.float64
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """scikit-learn's bundled 8x8 handwritten digits (1797 images; no download).

    Needs the optional extra ``kenaz[data]`` (scikit-learn).

    Parameters
    ----------
    test_fraction : float, optional
    seed : int, optional
        Seed of the random train/test split.
    images : bool, optional
        Return images of shape ``(n, 1, 8, 8)`` (NCHW) instead of rows of 64 pixels.
    dtype : dtype, optional
        Pixels are scaled to ``[0, 1]``.

    Returns
    -------
    ((x_train, y_train), (x_test, y_test))
        Integer labels 0-9.

    Examples
    --------
    >>> (x_train, y_train), (x_test, y_test) = load_digits()  # doctest: +SKIP
    >>> x_train.shape, x_test.shape  # doctest: +SKIP
    ((1438, 64), (359, 64))
    """
    try:
        from sklearn.datasets import load_digits as sklearn_load_digits
    except ImportError:
        raise ImportError(
            "kenaz.data.load_digits needs scikit-learn: pip install 'kenaz[data]'"
        ) from None
    digits = sklearn_load_digits()
    x = (digits.data / 16.0).astype(dtype)
    if images:
        x = x.reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    return train_test_split((x, y), test_fraction, seed)
