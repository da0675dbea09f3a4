"""The workloads of issue 7, in table order.

Each module builds its contenders for a size ("full" or "smoke"); the NumPy
reference comes first and every other result is checked against it.
"""

from __future__ import annotations

from ..harness.workload import Workload
from . import (
    w1_sin_chain,
    w2_scalar_expression,
    w3_mlp_loss,
    w4_per_example_grads,
    w5_hvp,
    w6_long_chain,
    w7_jacobian,
    w8_small_ops,
)

ALL_WORKLOADS: list[Workload] = [
    w1_sin_chain.WORKLOAD,
    w2_scalar_expression.WORKLOAD,
    w3_mlp_loss.WORKLOAD,
    w4_per_example_grads.WORKLOAD,
    w5_hvp.WORKLOAD,
    w6_long_chain.WORKLOAD,
    w7_jacobian.WORKLOAD,
    *w8_small_ops.WORKLOADS,
]
