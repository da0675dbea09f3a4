"""Each op's ``saves`` (what its derivative rules read: ``kenaz.effects.Op``) is the truth.

The tape keeps only the values an op states its rules read, and the mutation check
(:mod:`kenaz.mutation`) looks only at those. A rule that read a value it does not state
would miss an in-place change to it. So, for every ``check_op`` case: each pullback is
made, called, then every input (and output) the op does not state is overwritten in
place, and the pullback must give the same result: the rule never read it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kenaz import Handler, Op, Tensor, handler, perform_args
from kenaz.mutation import stated_saves
from kenaz.reverse import _transposed_jvp_makers
from kenaz.rule_tables import _SavesAll

from . import (
    test_decompositions,
    test_elementwise,
    test_fft,
    test_indexing,
    test_linalg,
    test_matrix_equations,
    test_reduction,
    test_shape,
    test_special,
)
from .cases import OpCase, as_params, cast_args

# The families whose ops state their saves (the others keep everything: nothing to test).
_CASES = [
    case
    for family in (
        test_decompositions, test_elementwise, test_fft, test_indexing, test_linalg,
        test_matrix_equations, test_reduction, test_shape, test_special,
    )
    for case in family.CASES
]


class _FirstOps(Handler):
    """Notes the ops a case performs at its own level, with their arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[Op, tuple, dict]] = []

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        self.calls.append((op, args, params))
        return perform_args(op, args, params)


def _fresh(value: Any) -> Any:
    """A copy with memory of its own that can be overwritten (a 0-d array, not a scalar)."""
    if isinstance(value, Tensor) and type(value) is Tensor:
        return Tensor(np.array(value._value, copy=True))
    if isinstance(value, (np.ndarray, np.generic)):  # a float one: the tensor a rule gets
        copied = np.array(value, copy=True)
        return Tensor(copied) if copied.dtype.kind in "fc" else copied
    return value


def _scribble(value: Any, rng: np.random.Generator) -> None:
    """Overwrite the memory of ``value`` (a Tensor or an array) with other numbers."""
    array = value._value if isinstance(value, Tensor) else value
    if not isinstance(array, np.ndarray) or not array.flags.writeable:
        return
    if array.dtype.kind in "fc":
        array[...] = rng.uniform(2.0, 3.0, array.shape)
    elif array.dtype.kind in "iu":
        array[...] = 0
    elif array.dtype.kind == "b":
        array[...] = ~array


def _declared(op: Op) -> bool:
    return not isinstance(op.saves, _SavesAll)


def _cotangent(out: Tensor, rng: np.random.Generator, several: bool) -> Tensor | None:
    """A random cotangent for ``out`` (None, a symbolic zero, for an integer output among
    several: lu's permutation)."""
    if several and out.dtype.kind not in "fc":
        return None
    return Tensor(rng.uniform(-1.0, 1.0, out.shape).astype(out.dtype))


def _check_saves(op: Op, args: tuple, params: dict) -> None:
    makers = op.vjp if op.vjp is not None else _transposed_jvp_makers(op)
    rng = np.random.default_rng(0)
    for i, a in enumerate(args):
        if not (isinstance(a, Tensor) and a.dtype.kind in "fc") or makers[i] is None:
            continue
        inputs = [_fresh(b) for b in args]
        # One output, or for a decomposition (eigh, svd, qr, lu) a tuple of them.
        out = op(*inputs, **params)
        outs = tuple(_fresh(o) for o in (out if op.multiple_results else (out,)))
        out = outs if op.multiple_results else outs[0]
        pullback = makers[i](out, *inputs, **params)
        cotangents = tuple(_cotangent(o, rng, op.multiple_results) for o in outs)
        g = cotangents if op.multiple_results else cotangents[0]
        before = np.array(pullback(g)._value, copy=True)
        kept = stated_saves(op, i, out, tuple(inputs))
        kept = [k for item in kept for k in (item if item is outs else (item,))]
        for value in (*outs, *inputs):
            if not any(value is k for k in kept):
                _scribble(value, rng)
        after = np.asarray(pullback(g)._value)
        np.testing.assert_array_equal(
            after, before, err_msg=f"{op.name}: argument {i}'s rule reads what it does not state"
        )


@pytest.mark.parametrize("case", as_params(_CASES))
def test_each_rule_reads_only_what_its_op_states(case: OpCase) -> None:
    recorder = _FirstOps()
    with handler(recorder):
        case.fn(*cast_args(case.args, "float64"), **case.params)
    checked = [
        (op, args, params)
        for op, args, params in recorder.calls
        if _declared(op) and op.differentiable and op.reverse is None
    ]
    for op, args, params in checked:
        _check_saves(op, tuple(_fresh(a) for a in args), params)
