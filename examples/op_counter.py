"""A user-written handler: count the ops a function performs, by name.

    >>> import kenaz, kenaz.numpy as knp
    >>> counter = OpCounter()
    >>> with kenaz.handler(counter):
    ...     _ = kenaz.grad(lambda x: knp.sum(knp.sin(x) * x))(knp.ones(3))
    >>> counter.counts["sin"], counter.counts["cos"]  # cos: sin's backward rule
    (1, 1)

Run: ``.venv/bin/python examples/op_counter.py``
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import kenaz


class OpCounter(kenaz.Handler):
    """Counts every op that reaches it, then forwards the op unchanged.

    Installed *outside* a transformation (``with handler(counter): grad(f)(x)``)
    it sees everything the transformation performs: the forward pass and the
    backward arithmetic. Installed *inside* one (``grad(counting(f, counter))``)
    it sees the function's own ops, which the transformation then handles as
    usual.
    """

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def handle(self, op: kenaz.Op, args: tuple, params: dict) -> Any:
        self.counts[op.name] += 1
        return kenaz.perform(op, *args, **params)  # one level out, unchanged

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def counting(f: Callable, counter: OpCounter) -> Callable:
    """``f`` with ``counter`` installed around each call."""

    @functools.wraps(f)
    def counted(*args: Any, **kwargs: Any) -> Any:
        with kenaz.handler(counter):
            return f(*args, **kwargs)

    return counted


def main() -> None:
    import kenaz.numpy as knp

    def loss(w, x):
        return knp.sum(knp.tanh(x @ w) ** 2)

    w, x = knp.ones((3, 2)) * 0.1, knp.ones((4, 3))
    forward, everything = OpCounter(), OpCounter()
    kenaz.grad(counting(loss, forward))(w, x)
    counting(kenaz.grad(loss), everything)(w, x)
    print(f"forward pass:           {dict(forward.counts)}")
    print(f"forward + backward:     {dict(everything.counts)}")


if __name__ == "__main__":
    main()
