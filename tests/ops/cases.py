"""Shared machinery of the per-family ``check_op`` tests.

A case names a primitive (or a thin function performing one), its arguments
as float64/complex128/int/bool NumPy values, and its parameters. Each test
module holds a ``CASES`` list and runs every case at float64 and float32:
float arguments are cast to the dtype under test, the others are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from kenaz.testing import check_op

DTYPES = [np.float64, np.float32]
DTYPE_IDS = ["float64", "float32"]
COMPLEX_OF = {np.dtype(np.float64): np.complex128, np.dtype(np.float32): np.complex64}


@dataclass(frozen=True)
class OpCase:
    """One ``check_op`` call: ``fn(*args, **params)``."""

    id: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    params: dict[str, Any] = field(default_factory=dict)
    finite_differences: bool = True
    order: int = 2


def uniform(shape: Sequence[int], low: float, high: float, seed: int = 0) -> np.ndarray:
    """Deterministic float64 values in ``[low, high)``."""
    return np.random.default_rng(seed).uniform(low, high, size=tuple(shape))


def away_from_integers(shape: Sequence[int], seed: int = 0) -> np.ndarray:
    """Values ``k + 0.3`` or ``k + 0.7``: far from the jumps of floor, ceil and round."""
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 3, size=tuple(shape)) + rng.choice([0.3, 0.7], size=tuple(shape))


def cast_args(args: Sequence[Any], dtype: Any) -> tuple[Any, ...]:
    """Cast float arguments to ``dtype`` and complex ones to its complex counterpart."""
    dtype = np.dtype(dtype)

    def cast(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return value.astype(dtype)
        if isinstance(value, np.ndarray) and value.dtype.kind == "c":
            return value.astype(COMPLEX_OF[dtype])
        return value

    return tuple(cast(a) for a in args)


def as_params(cases: Sequence[OpCase]) -> list[Any]:
    ids = [case.id for case in cases]
    duplicated = {i for i in ids if ids.count(i) > 1}
    assert not duplicated, f"duplicate case ids: {duplicated}"
    return [pytest.param(case, id=case.id) for case in cases]


def run_case(case: OpCase, dtype: Any) -> None:
    check_op(
        case.fn,
        cast_args(case.args, dtype),
        case.params,
        order=case.order,
        finite_differences=case.finite_differences,
    )


def make_check_op_test(cases: Sequence[OpCase]) -> Callable[..., None]:
    """The parametrized test function of a family: every case at float64 and float32."""

    @pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
    @pytest.mark.parametrize("case", as_params(cases))
    def test_check_op(case: OpCase, dtype: Any) -> None:
        run_case(case, dtype)

    return test_check_op
