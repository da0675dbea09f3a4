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

__all__ = ["each_argument", "rule_table", "saves_table", "kept_by"]


def rule_table(rules: Any) -> Any:
    """``Op.jvp``/``Op.vjp`` as handlers index them: a tuple, ``each_argument`` or None."""
    if rules is None or isinstance(rules, each_argument):
        return rules
    return tuple(rules)


def saves_table(saves: Any) -> Any:
    """``Op.saves`` as the tape reads it: per argument, None (its rule keeps nothing) or an
    int, so that the tape's common case is a comparison and a subscript (see
    :func:`kept_by`): ``k >= 0`` for argument ``k`` alone, ``-1`` for the output alone,
    and for several values ``k <= -2``, where ``table[k]`` (from the table's end) is a
    function ``keep(ans, args)`` returning the tuple of them."""
    if saves is None:
        return _SavesAll()
    if isinstance(saves, each_argument):
        return _SavesEach(saves.rule)
    # Arguments past the declared entries keep nothing (an index, say): padded, so that the
    # tape's lookup is one subscript (no op has 16 positional arguments; variadic ones use
    # `each_argument`). The functions follow, last first, then a None: so `-2` is the
    # first function, `-3` the next.
    keepers = [_keeper(positions) for positions in saves]
    functions = [k for k in keepers if callable(k)]
    codes = tuple(-2 - functions.index(k) if callable(k) else k for k in keepers)
    return codes + (None,) * (16 - len(codes)) + tuple(reversed(functions)) + (None,)


def kept_by(saves: Any, index: int, ans: Any, args: tuple) -> Any:
    """What argument ``index``'s rule keeps, by the op's ``saves`` table: None, one value
    (an argument or the output ``ans``) or a tuple of them. (Inlined on the tape's path,
    ``kenaz.reverse.ReverseHandler.handle``.)"""
    kept = saves[index]
    if kept is None:
        return None
    if kept >= 0:
        return args[kept]
    if kept == -1:
        return ans
    return saves[kept](ans, args)


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
    """The table of an op that states nothing: every pullback may keep all its inputs (the
    function at ``-2``)."""

    __slots__ = ()

    def __getitem__(self, index: int) -> int | Callable[[Any, tuple], tuple]:
        return -2 if index >= 0 else _keep_all


class _SavesEach:
    """The table of a variadic op: ``rule(i)`` is argument ``i``'s positions (its
    functions numbered from ``-2`` down as they are first asked for)."""

    __slots__ = ("rule", "codes", "functions")

    def __init__(self, rule: Callable[[int], Sequence[int]]) -> None:
        self.rule = rule
        self.codes: dict[int, int | None] = {}
        self.functions: list[Callable[[Any, tuple], tuple]] = []

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            return self.functions[-2 - index]
        code = self.codes.get(index, False)
        if code is False:
            keeper = _keeper(self.rule(index))
            if callable(keeper):
                self.functions.append(keeper)
                keeper = -1 - len(self.functions)  # -2 for the first
            code = self.codes[index] = keeper
        return code


class each_argument:  # noqa: N801 - used like a function in rule tables
    """Rules for a variadic op: ``rules[i]`` is ``rule`` with the argument index bound first.

    ``Op("concatenate", ..., vjp=each_argument(lambda i, ans, *xs, axis: ...))``.
    """

    __slots__ = ("rule",)

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule

    def __getitem__(self, index: int) -> Callable[..., Any]:
        return functools.partial(self.rule, index)
