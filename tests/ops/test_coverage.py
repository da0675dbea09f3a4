"""Every primitive in ``kenaz.ops`` is exercised by some ``check_op`` case.

Ops are found by walking the modules of ``kenaz.ops``; cases are the
``CASES`` lists of the ``tests/ops/test_<module>.py`` files. A case covers
the ops its function performs, recorded by a handler, so a new primitive
without a case fails here with its name.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any

import kenaz.ops
from kenaz import Handler, Op, handler, perform

from .cases import OpCase, cast_args


def _op_modules() -> list[str]:
    return sorted(
        info.name for info in pkgutil.iter_modules(kenaz.ops.__path__) if info.name != "batching"
    )


def _ops_of(module: ModuleType) -> dict[str, Op]:
    """The primitives defined in ``module``: module-level ops and dicts of them."""
    found: dict[str, Op] = {}
    for value in vars(module).values():
        candidates = value.values() if isinstance(value, dict) else [value]
        for candidate in candidates:
            if isinstance(candidate, Op):
                found[candidate.name] = candidate
    return found


class _RecordOps(Handler):
    def __init__(self) -> None:
        self.performed: set[int] = set()

    def handle(self, op: Op, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        self.performed.add(id(op))
        return perform(op, *args, **params)


def _all_cases() -> list[OpCase]:
    cases: list[OpCase] = []
    for name in _op_modules():
        try:
            tests = importlib.import_module(f"{__package__}.test_{name}")
        except ModuleNotFoundError:
            continue
        cases += getattr(tests, "CASES", [])
    return cases


def _performed_by(cases: list[OpCase]) -> set[int]:
    recorder = _RecordOps()
    with handler(recorder):
        for case in cases:
            case.fn(*cast_args(case.args, "float64"), **case.params)
    return recorder.performed


def test_every_primitive_has_a_check_op_case():
    performed = _performed_by(_all_cases())
    missing = sorted(
        f"{module_name}.{name}"
        for module_name in _op_modules()
        for name, op in _ops_of(importlib.import_module(f"kenaz.ops.{module_name}")).items()
        if id(op) not in performed
    )
    assert not missing, (
        f"primitives without a check_op case: {missing}; add cases to CASES in "
        "tests/ops/test_<module>.py"
    )
