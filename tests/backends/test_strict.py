"""Neutrality, proved on ``array-api-strict``: the primitives' rules run on a strict Array API
namespace (no NumPy functions, no mixing with NumPy arrays, no implicit conversions).

Every ``check_op`` case of ``tests/ops`` runs here with its array arguments made
``array_api_strict`` arrays: the op's output must be a strict array (no silent detour
through NumPy) equal to NumPy's, and ``check_op`` (finite differences, jvp against vjp,
batching against a loop) must pass on it. The cases the standard cannot express are
listed in ``NOT_IN_THE_STANDARD`` with the reason, and a test checks that each of them
still fails on strict arrays, so the list cannot go stale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kenaz
from kenaz.testing import check_op

from ..ops import (
    test_bits,
    test_decompositions,
    test_elementwise,
    test_fft,
    test_indexing,
    test_linalg,
    test_reduction,
    test_shape,
    test_sorting,
    test_special,
)
from ..ops.cases import OpCase, cast_args

xps = pytest.importorskip("array_api_strict")

FAMILIES = {
    "bits": test_bits.CASES,
    "decompositions": test_decompositions.CASES,
    "elementwise": test_elementwise.CASES,
    "fft": test_fft.CASES,
    "indexing": test_indexing.CASES,
    "linalg": test_linalg.CASES,
    "reduction": test_reduction.CASES,
    "shape": test_shape.CASES,
    "sorting": test_sorting.CASES,
    "special": test_special.CASES,
}
ALL_CASES = [(f"{family}/{case.id}", case) for family, cases in FAMILIES.items() for case in cases]

# What the Array API standard (2024.12) cannot express, by case id prefix: the reason.
NOT_IN_THE_STANDARD: dict[str, str] = {}


def _reason(case_id: str) -> str | None:
    for prefix, reason in NOT_IN_THE_STANDARD.items():
        if case_id.startswith(prefix):
            return reason
    return None


def to_strict(value: Any) -> Any:
    """NumPy arrays (and NumPy scalars) as strict arrays; everything else unchanged."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)
        return xps.asarray(value, dtype=getattr(xps, value.dtype.name))
    return value


def _as_tensors(args: tuple) -> tuple:
    """Array arguments as Tensors, as ``check_op`` passes them (``v[index]`` is kenaz's)."""
    return tuple(kenaz.Tensor(a) if hasattr(a, "shape") else a for a in args)


def _is_strict(value: Any) -> bool:
    return type(value).__module__.startswith("array_api_strict")


def _leaves(out: Any) -> list[Any]:
    return [leaf for leaf in kenaz.tree.leaves(out) if isinstance(leaf, kenaz.Tensor)]


def _run_on_strict(case: OpCase, dtype: Any) -> None:
    numpy_args = cast_args(case.args, dtype)
    strict_args = tuple(to_strict(a) for a in numpy_args)
    expected = case.fn(*_as_tensors(numpy_args), **case.params)
    got = case.fn(*_as_tensors(strict_args), **case.params)
    for g, e in zip(_leaves(got), _leaves(expected), strict=True):
        assert _is_strict(g._value), f"{case.id}: the output is a {type(g._value)}, not strict"
        np.testing.assert_allclose(
            np.asarray(g._value), e.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12
        )
    check_op(
        case.fn,
        strict_args,
        case.params,
        order=case.order,
        finite_differences=case.finite_differences,
    )


EXPRESSIBLE = [
    pytest.param(case, id=case_id) for case_id, case in ALL_CASES if _reason(case_id) is None
]
INEXPRESSIBLE = [
    pytest.param(case, id=case_id) for case_id, case in ALL_CASES if _reason(case_id) is not None
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", EXPRESSIBLE)
def test_check_op_on_array_api_strict(case: OpCase, dtype: Any) -> None:
    _run_on_strict(case, dtype)


@pytest.mark.parametrize("case", INEXPRESSIBLE)
def test_what_the_standard_cannot_express_still_fails_on_strict(case: OpCase) -> None:
    with pytest.raises((NotImplementedError, TypeError, AttributeError, AssertionError)):
        _run_on_strict(case, np.float64)
