"""A user-written handler: count the floating-point operations of matmul and einsum.

    >>> import kenaz, kenaz.numpy as knp
    >>> flops = FlopCounter()
    >>> with kenaz.handler(flops):
    ...     _ = knp.ones((8, 4)) @ knp.ones((4, 5))
    >>> flops.total                # 2 * 8 * 4 * 5
    320

Run: ``.venv/bin/python examples/flop_counter.py``
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

import kenaz


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, kenaz.Tensor) else np.shape(x)


def matmul_flops(x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> int:
    """2 n k m per matrix product, times the broadcast stack size (vectors count as n=1, m=1)."""
    x_matrix = x_shape if len(x_shape) > 1 else (1,) + x_shape
    y_matrix = y_shape if len(y_shape) > 1 else y_shape + (1,)
    stack = np.broadcast_shapes(x_matrix[:-2], y_matrix[:-2])
    n, k = x_matrix[-2:]
    m = y_matrix[-1]
    return 2 * n * k * m * math.prod(stack)


def einsum_flops(spec: str, shapes: list[tuple[int, ...]]) -> int:
    """2 x the product of all index sizes: one multiply-add per term of the sum."""
    inputs = spec.split("->")[0].split(",")
    sizes: dict[str, int] = {}
    for letters, shape in zip(inputs, shapes):
        sizes.update(zip(letters, shape))
    return 2 * math.prod(sizes.values())


class FlopCounter(kenaz.Handler):
    """Adds up the FLOPs of every ``matmul`` and ``einsum`` it sees, then forwards the op.

    Outside a transformation it counts the forward and backward products of
    ``grad``; outside ``vmap`` it sees the batched products (the whole batch's
    FLOPs); inside ``vmap`` it sees one example's.
    """

    def __init__(self) -> None:
        self.by_op: Counter[str] = Counter()

    def handle(self, op: kenaz.Op, args: tuple, params: dict) -> Any:
        if op.name == "matmul":
            self.by_op["matmul"] += matmul_flops(_shape(args[0]), _shape(args[1]))
        elif op.name == "einsum":
            self.by_op["einsum"] += einsum_flops(params["spec"], [_shape(a) for a in args])
        return kenaz.perform(op, *args, **params)

    @property
    def total(self) -> int:
        return sum(self.by_op.values())


def main() -> None:
    import kenaz.numpy as knp

    def loss(w, x):
        return knp.sum(knp.tanh(x @ w) ** 2)

    w, x = knp.ones((256, 128)) * 0.01, knp.ones((64, 256))
    forward, both = FlopCounter(), FlopCounter()
    with kenaz.handler(forward):
        loss(w, x)
    with kenaz.handler(both):
        kenaz.grad(loss)(w, x)
    print(f"forward:            {forward.total / 1e6:.1f} MFLOP")
    print(f"gradient (fwd+bwd): {both.total / 1e6:.1f} MFLOP")


if __name__ == "__main__":
    main()
