"""Derivatives of a call's own function with respect to some of its leaves.

A hand-written rule (``custom_vjp``'s ``bwd``, ``custom_jvp``'s jvp rule)
covers the declared arguments. The tensors its function closes over, lifted
into the call's trailing leaves (see :mod:`kenaz.call`), are differentiated
through the function itself: :func:`pull_back` by reverse mode, recomputing
the function, and :func:`push_forward` by forward mode. Both run the function
with ``call.run_primal``, which puts the leaves being differentiated in place of
the tensors they stand for, and both perform their ops outward, so the
transformations outside differentiate them again (higher orders) or batch them.
``checkpoint`` pulls back through all of its leaves with the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .call import CallInfo
from .checks import float0
from .forward import jvp
from .reverse import vjp
from .tensor import Tensor
from .transform import zeros_like

__all__ = ["pull_back", "push_forward"]


def _on(call: CallInfo, leaves: Sequence[Any], positions: Sequence[int]):
    """The call's function as a function of the leaves at ``positions`` (the others fixed)."""

    def function(*chosen: Any) -> list[Tensor]:
        full = list(leaves)
        for i, value in zip(positions, chosen):
            full[i] = value
        return call.run_primal(full)

    return function


def pull_back(
    call: CallInfo, leaves: Sequence[Any], cotangents: Sequence[Any], positions: Sequence[int]
) -> list[Tensor]:
    """Cotangents of ``leaves[i]`` for ``i`` in ``positions``, given the outputs' ``cotangents``.

    Runs the function again (a ``vjp`` of it); ``None`` cotangents are zeros. An
    integer or boolean output carries no derivative: its seed is a float0 array
    whatever the tape held for it (the only cotangent ``vjp`` takes for one).
    """
    outs, pullback = vjp(_on(call, leaves, positions), *[leaves[i] for i in positions])
    seeds = [
        np.zeros(np.shape(o), float0) if not _inexact(o) else zeros_like(o) if g is None else g
        for o, g in zip(outs, cotangents)
    ]
    return list(pullback(seeds))


def _inexact(value: Any) -> bool:
    return np.dtype(getattr(value, "dtype", np.float64)).kind in "fc"


def push_forward(
    call: CallInfo, leaves: Sequence[Any], positions: Sequence[int], tangents: Sequence[Any]
) -> list[Tensor]:
    """The outputs' tangents for ``tangents`` of the leaves at ``positions`` (a ``jvp``)."""
    _, tangents_out = jvp(_on(call, leaves, positions), [leaves[i] for i in positions], tangents)
    return list(tangents_out)
