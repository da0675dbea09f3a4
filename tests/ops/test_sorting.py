"""check_op for kenaz.ops.sorting (argsort: integer output, batching)."""

from __future__ import annotations

from kenaz.ops import sorting

from .cases import OpCase, make_check_op_test, uniform

_x = uniform((3, 4), -1, 1)

CASES = [
    OpCase("argsort", sorting.argsort, (_x,), {"axis": 1, "descending": False}),
    OpCase("argsort-0", sorting.argsort, (_x,), {"axis": 0, "descending": True}),
]

test_check_op = make_check_op_test(CASES)
