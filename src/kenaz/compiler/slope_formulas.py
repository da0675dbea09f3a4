"""A slope op's ``g * f'(r)`` as text, written by running its one formula on symbols.

Each slope op of :mod:`kenaz.ops.elementwise` states its product ``slope_times(xp, g, r)``
once, for every backend. Called with symbols for ``g`` and ``r`` and a namespace whose
functions write their own names, the formula spells itself: the text fused loops
compile (:mod:`kenaz.compiler.fusion`) and the diagonal-product rewrite reads
(:mod:`kenaz.compiler.diagonal_products`), with the same operations in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["UNARY", "slope_formula"]

UNARY = frozenset(
    getattr(np, name)
    for name in (
        "negative", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
        "tanh", "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log1p", "sqrt",
        "square", "absolute",
    )
)  # fmt: skip
"""The unary ufuncs numba compiles in a fused loop."""


class _Symbol:
    """A scalar in a formula: arithmetic on it writes the operation's text, parenthesized,
    so the text computes the same operations in the same order as the Python expression."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _binary(self, other: Any, operator: str, reflected: bool = False) -> _Symbol:
        if isinstance(other, _Symbol):
            right = other.text
        elif type(other) in (int, float):  # a Python number: weak, of the operands' dtype
            right = f"C({other!r})"
        else:
            raise TypeError(f"not a scalar formula: {other!r}")
        left, right = (right, self.text) if reflected else (self.text, right)
        return _Symbol(f"({left} {operator} {right})")

    def __add__(self, other: Any) -> _Symbol:
        return self._binary(other, "+")

    def __radd__(self, other: Any) -> _Symbol:
        return self._binary(other, "+", reflected=True)

    def __sub__(self, other: Any) -> _Symbol:
        return self._binary(other, "-")

    def __rsub__(self, other: Any) -> _Symbol:
        return self._binary(other, "-", reflected=True)

    def __mul__(self, other: Any) -> _Symbol:
        return self._binary(other, "*")

    def __rmul__(self, other: Any) -> _Symbol:
        return self._binary(other, "*", reflected=True)

    def __truediv__(self, other: Any) -> _Symbol:
        return self._binary(other, "/")

    def __rtruediv__(self, other: Any) -> _Symbol:
        return self._binary(other, "/", reflected=True)

    def __neg__(self) -> _Symbol:
        return _Symbol(f"(-{self.text})")


class _SymbolNamespace:
    """The ``xp`` a slope formula is written in, on symbols: ``xp.cos(r)`` is
    ``np.cos(...)``, for the unary functions numba compiles (:data:`UNARY`)."""

    def __getattr__(self, name: str) -> Callable[[_Symbol], _Symbol]:
        if getattr(np, name, None) not in UNARY:
            raise AttributeError(f"{name} is not fused")
        return lambda x: _Symbol(f"np.{name}({x.text})")


_slope_formulas: dict[Callable, str | None] = {}


def slope_formula(impl: Callable) -> str | None:
    """The template (operands ``{0}``: g and ``{1}``: r) of a slope op's ``slope_times``,
    written by calling it on symbols; ``None`` for other ops, or a formula that is not
    plain arithmetic and :data:`UNARY` functions (it is then not fused)."""
    slope_times = getattr(impl, "slope_times", None)
    if slope_times is None:
        return None
    if slope_times not in _slope_formulas:
        try:
            text = slope_times(_SymbolNamespace(), _Symbol("{0}"), _Symbol("{1}")).text
        except (TypeError, AttributeError):
            text = None
        _slope_formulas[slope_times] = text
    return _slope_formulas[slope_times]
