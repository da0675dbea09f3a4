"""An op's rule tables as the handlers read them: its rules per argument, and what each
argument's rule keeps (``Op(jvp=, vjp=, saves=)``, see :class:`kenaz.effects.Op`).

A table is indexed by argument position: a tuple, or for a variadic op
(``concatenate``) an :class:`each_argument` that binds the position into one rule.
``saves`` tables say which values a pullback keeps, so that the tape can check them
for in-place changes before the backward pass (:mod:`kenaz.mutation`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["each_argument", "rule_table", "saves_table"]


def rule_table(rules: Any) -> Any:
    """``Op.jvp``/``Op.vjp`` as handlers index them: a tuple, ``each_argument`` or None."""
    if rules is None or isinstance(rules, each_argument):
        return rules
    return tuple(rules)


def saves_table(saves: Any) -> Any:
    """``Op.saves`` as the tape reads it, per argument: None (nothing kept), an int (the one
    value kept: argument ``i``, or ``-1`` for the output: one subscript on the tape's path),
    or a function ``keep(ans, args)`` returning the tuple of values kept."""
    if saves is None:
        return _SavesAll()
    if isinstance(saves, each_argument):
        return _SavesEach(saves.rule)
    # Arguments past the declared entries keep nothing (an index, say): padded, so that the
    # tape's lookup is one subscript (no op has 16 positional arguments; variadic ones use
    # `each_argument`).
    keepers = tuple(_keeper(positions) for positions in saves)
    return keepers + (None,) * (16 - len(keepers))


def _keeper(positions: Sequence[int | slice]) -> int | Callable[[Any, tuple], tuple] | None:
    if not positions:
        return None
    if len(positions) == 1 and type(positions[0]) is int:
        return positions[0]
    picks = tuple(positions)

    def keep(ans: Any, args: tuple) -> tuple:
        kept: list[Any] = []
        for p in picks:
            if type(p) is int:
                kept.append(ans if p == -1 else args[p])
            else:  # a slice of arguments (a variadic op's index arrays)
                kept.extend(args[p])
        return tuple(kept)

    return keep


def _keep_all(ans: Any, args: tuple) -> tuple:
    return (ans, *args)


class _SavesAll:
    """The table of an op that states nothing: every pullback may keep all its inputs."""

    __slots__ = ()

    def __getitem__(self, index: int) -> Callable[[Any, tuple], tuple]:
        return _keep_all


class _SavesEach:
    """The table of a variadic op: ``rule(i)`` is argument ``i``'s positions."""

    __slots__ = ("rule",)

    def __init__(self, rule: Callable[[int], Sequence[int]]) -> None:
        self.rule = rule

    def __getitem__(self, index: int) -> int | Callable[[Any, tuple], tuple] | None:
        return _keeper(self.rule(index))


class each_argument:  # noqa: N801 - used like a function in rule tables
    """Rules for a variadic op: ``rules[i]`` is ``rule`` with the argument index bound first.

    ``Op("concatenate", ..., vjp=each_argument(lambda i, ans, *xs, axis: ...))``.
    """

    __slots__ = ("rule",)

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule

    def __getitem__(self, index: int) -> Callable[..., Any]:
        return functools.partial(self.rule, index)
