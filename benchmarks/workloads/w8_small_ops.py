"""W8: the cost of ``kenaz.numpy`` ops with no transformation running, on tiny arrays.

Each op is its own row group: the same call through kenaz (on Tensors) and
through NumPy (on arrays), on 16-element vectors and 4x4 matrices, so the
time is the per-call overhead. The peers' eager ops are shown for context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..harness.peers import Peers
from ..harness.workload import Case, Contender, Workload, ratio_to, unavailable

SIZES = {"full": 16, "smoke": 16}


@dataclass(frozen=True)
class SmallOp:
    """One op: its name in the table and how to call it given a namespace and the operands."""

    name: str
    call: Callable[[Any, Any, Any, Any, Any], Any]  # (namespace, x, y, m, n) -> result


SMALL_OPS = (
    SmallOp("sin(x)", lambda ns, x, y, m, n: ns.sin(x)),
    SmallOp("x + y", lambda ns, x, y, m, n: x + y),
    SmallOp("x * y", lambda ns, x, y, m, n: x * y),
    SmallOp("sum(x)", lambda ns, x, y, m, n: ns.sum(x)),
    SmallOp("m @ n (4x4)", lambda ns, x, y, m, n: m @ n),
    SmallOp("x[3]", lambda ns, x, y, m, n: x[3]),
    SmallOp("x[2:10]", lambda ns, x, y, m, n: x[2:10]),
)


def make_inputs(size: str) -> tuple[np.ndarray, ...]:
    """``x``, ``y`` (16 float64 elements) and ``m``, ``n`` (4 x 4 float64)."""
    rng = np.random.default_rng(8)
    elements = SIZES[size]
    return (
        rng.standard_normal(elements),
        rng.standard_normal(elements),
        rng.standard_normal((4, 4)),
        rng.standard_normal((4, 4)),
    )


def build(op: SmallOp, peers: Peers, size: str) -> Case:
    operands = make_inputs(size)
    return Case(
        [
            Contender("numpy", partial(op.call, np, *operands)),
            _kenaz(op, operands),
            _torch(op, peers, operands),
            _jax(op, peers, operands),
            _autograd(op, peers, operands),
        ],
        ops=1,
        rtol=1e-12,
        atol=1e-14,
    )


def _kenaz(op: SmallOp, operands) -> Contender:
    import kenaz.numpy as knp

    tensors = [knp.asarray(a) for a in operands]
    return Contender("kenaz", partial(op.call, knp, *tensors), lambda t: [t.numpy()])


def _torch(op: SmallOp, peers: Peers, operands) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch", peers.why_missing("torch"))
    tensors = [torch.from_numpy(a) for a in operands]
    return Contender("torch", partial(op.call, torch, *tensors), lambda t: [t.numpy()])


def _jax(op: SmallOp, peers: Peers, operands) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax", peers.why_missing("jax"))
    arrays = [jax.numpy.asarray(a) for a in operands]

    def run():
        return op.call(jax.numpy, *arrays).block_until_ready()

    return Contender("jax", run, lambda a: [np.asarray(a)])


def _autograd(op: SmallOp, peers: Peers, operands) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    return Contender("autograd", partial(op.call, autograd.numpy, *operands))


WORKLOADS = [
    Workload(
        key=f"W8 {op.name}",
        title=f"no-handler call: {op.name}",
        build=partial(build, op),
        targets=ratio_to("numpy", 1.5),
        budget_share=0.5,  # microsecond calls: a few seconds give plenty of samples
    )
    for op in SMALL_OPS
]
