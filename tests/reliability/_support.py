"""Helpers shared by the reliability tests: knobs, small handlers, reference functions."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

import kenaz.numpy as knp
from kenaz import Handler, Op, perform


def env_int(name: str, default: int) -> int:
    """An integer knob from the environment, for longer runs (``KENAZ_DEEP_OPS=1000000``)."""
    return int(os.environ.get(name, default))


def env_float(name: str, default: float) -> float:
    """A float knob from the environment (``KENAZ_STRESS_SECONDS=30``)."""
    return float(os.environ.get(name, default))


class CountOps(Handler):
    """Counts the ops it sees, by name, and forwards them unchanged."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def handle(self, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        self.counts[op.name] += 1
        return perform(op, *args, **params)


class Boom(Exception):
    """The exception :class:`RaiseAtOp` raises; no kenaz code raises it."""


class RaiseAtOp(Handler):
    """Forwards ops until the ``n``-th (0-based), where it raises :class:`Boom` instead."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0

    def handle(self, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        if self.seen == self.n:
            raise Boom(f"raised at op #{self.n} ({op.name})")
        self.seen += 1
        return perform(op, *args, **params)


def init_mlp(seed: int = 0, sizes: tuple[int, ...] = (4, 16, 16, 1)) -> dict[str, list[Any]]:
    """Weights of a small tanh MLP as a pytree of NumPy arrays."""
    rng = np.random.default_rng(seed)
    shapes = zip(sizes[:-1], sizes[1:], strict=True)
    return {
        "w": [rng.normal(size=(m, n)) / np.sqrt(m) for m, n in shapes],
        "b": [np.zeros(n) for n in sizes[1:]],
    }


def mlp_loss(params: dict[str, list[Any]], x: Any, y: Any) -> Any:
    """Mean squared error of a tanh MLP: matmul, broadcasting add, tanh, reductions."""
    h = x
    last = len(params["w"]) - 1
    for i, (w, b) in enumerate(zip(params["w"], params["b"], strict=True)):
        h = h @ w + b
        if i < last:
            h = knp.tanh(h)
    return knp.mean((h[:, 0] - y) ** 2)


def mlp_data(seed: int = 1, batch: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, 4)), rng.normal(size=batch)


def as_numpy_tree(tree: Any) -> list[np.ndarray]:
    """The leaves of a result pytree as NumPy arrays (for exact comparisons)."""
    from kenaz import tree as ktree

    return [np.asarray(leaf) for leaf in ktree.leaves(tree)]


def trees_equal(a: Any, b: Any) -> bool:
    """Bitwise equality of two result pytrees (same leaves, shapes, dtypes and values)."""
    la, lb = as_numpy_tree(a), as_numpy_tree(b)
    return len(la) == len(lb) and all(
        x.dtype == y.dtype
        and x.shape == y.shape
        and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
        for x, y in zip(la, lb, strict=False)
    )
