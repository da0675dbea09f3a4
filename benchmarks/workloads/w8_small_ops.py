"""W8: the cost of ``kenaz.numpy`` ops with no transformation running, on tiny arrays.

Each op is its own row group: the same call through kenaz (on Tensors) and
through NumPy (on arrays), on 16-element vectors and 4x4 matrices, so the
time is the per-call overhead. The floor row is the least any pure-Python wrapper pays:
NumPy's call, one Python frame and a Tensor, nothing tested. The peers' eager ops are
shown for context;
autograd's operators and indexing on plain arrays are NumPy's own (only its
wrapped functions, ``sin`` and ``sum``, add anything outside ``grad``).
"""

from __future__ import annotations

import operator
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
    """One op: its name in the table, its function in a namespace, and its arguments.

    ``arguments`` name operands ("x", "y": 16 elements; "m", "n": 4 x 4) or are
    literal values (an index). The timed callable is ``partial(function, *args)``,
    so no Python frame of the harness sits between the timer and the op.
    """

    name: str
    function: Callable[[Any], Callable[..., Any]]  # namespace -> the function to call
    arguments: tuple[Any, ...]


SMALL_OPS = (
    SmallOp("sin(x)", lambda ns: ns.sin, ("x",)),
    SmallOp("x + y", lambda ns: operator.add, ("x", "y")),
    SmallOp("x * y", lambda ns: operator.mul, ("x", "y")),
    SmallOp("sum(x)", lambda ns: ns.sum, ("x",)),
    SmallOp("m @ n (4x4)", lambda ns: operator.matmul, ("m", "n")),
    SmallOp("x[3]", lambda ns: operator.getitem, ("x", 3)),
    SmallOp("x[2:10]", lambda ns: operator.getitem, ("x", slice(2, 10))),
)


def make_inputs(size: str) -> dict[str, np.ndarray]:
    """``x``, ``y`` (16 float64 elements) and ``m``, ``n`` (4 x 4 float64)."""
    rng = np.random.default_rng(8)
    elements = SIZES[size]
    return {
        "x": rng.standard_normal(elements),
        "y": rng.standard_normal(elements),
        "m": rng.standard_normal((4, 4)),
        "n": rng.standard_normal((4, 4)),
    }


def bound_call(op: SmallOp, namespace: Any, operands: dict[str, Any]) -> Callable[[], Any]:
    """``op`` on ``operands`` (already the library's arrays), as a zero-argument callable."""
    arguments = [operands[a] if isinstance(a, str) else a for a in op.arguments]
    return partial(op.function(namespace), *arguments)


def build(op: SmallOp, peers: Peers, size: str) -> Case:
    operands = make_inputs(size)
    return Case(
        [
            Contender("numpy", bound_call(op, np, operands)),
            _kenaz(op, operands),
            _floor(op, operands) if size == "full" else unavailable(FLOOR, "full runs only"),
            _torch(op, peers, operands),
            _jax(op, peers, operands),
            _autograd(op, peers, operands),
        ],
        ops=1,
        rtol=1e-12,
        atol=1e-14,
    )


def _kenaz(op: SmallOp, operands: dict[str, np.ndarray]) -> Contender:
    import kenaz.numpy as knp

    tensors = {name: knp.asarray(value) for name, value in operands.items()}
    return Contender("kenaz", bound_call(op, knp, tensors), lambda t: [t.numpy()])


# -- the floor: what any Python wrapper of NumPy pays ------------------------------------
# The same NumPy call, wrapped by one Python frame that makes a Tensor of its result and
# tests nothing (no handler, no operand type): the least a kenaz op can cost in pure Python.
# The operators are a class's own dunders (Python calls them as it calls Tensor's), the
# functions plain functions (kenaz's are Op objects, whose call costs more than a function's).
FLOOR = "floor (frame + Tensor)"


def _floor(op: SmallOp, operands: dict[str, np.ndarray]) -> Contender:
    from kenaz import Tensor

    new = object.__new__

    class Unchecked:
        """Operands whose operators and indexing wrap NumPy's result in a Tensor, unchecked."""

        __slots__ = ("_value",)

        def __init__(self, value: np.ndarray) -> None:
            self._value = value

        def __add__(self, other: Unchecked) -> Tensor:
            out = new(Tensor)
            out._value = self._value + other._value
            out._trace = None
            return out

        def __mul__(self, other: Unchecked) -> Tensor:
            out = new(Tensor)
            out._value = self._value * other._value
            out._trace = None
            return out

        def __matmul__(self, other: Unchecked) -> Tensor:
            out = new(Tensor)
            out._value = self._value @ other._value
            out._trace = None
            return out

        def __getitem__(self, index: Any) -> Tensor:
            out = new(Tensor)
            out._value = self._value[index]
            out._trace = None
            return out

    class Functions:
        """``sin`` and ``sum`` of :class:`Unchecked` operands, as plain functions."""

        def __getattr__(self, name: str) -> Callable[[Unchecked], Tensor]:
            numpy_function = getattr(np, name)

            def unchecked(x: Unchecked) -> Tensor:
                out = new(Tensor)
                out._value = numpy_function(x._value)
                out._trace = None
                return out

            return unchecked

    unchecked = {name: Unchecked(value) for name, value in operands.items()}
    return Contender(FLOOR, bound_call(op, Functions(), unchecked), _values)


def _values(result: Any) -> list[np.ndarray]:
    return [result.numpy()]


def _torch(op: SmallOp, peers: Peers, operands: dict[str, np.ndarray]) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch", peers.why_missing("torch"))
    tensors = {name: torch.from_numpy(value) for name, value in operands.items()}
    return Contender("torch", bound_call(op, torch, tensors), lambda t: [t.numpy()])


def _jax(op: SmallOp, peers: Peers, operands: dict[str, np.ndarray]) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax", peers.why_missing("jax"))
    call = bound_call(op, jax.numpy, {n: jax.numpy.asarray(v) for n, v in operands.items()})
    return Contender("jax", lambda: call().block_until_ready(), lambda a: [np.asarray(a)])


def _autograd(op: SmallOp, peers: Peers, operands: dict[str, np.ndarray]) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    return Contender("autograd", bound_call(op, autograd.numpy, operands))


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
