"""``debug(f)``: print every op that ``f`` performs, as the handlers inside it see it."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Container
from typing import Any, ParamSpec, TextIO, TypeVar

import numpy as np

from .effects import Handler, Op, current_scopes, handler, perform_args, read_scopes
from .tensor import Tensor
from .type_names import type_name

__all__ = ["debug"]


def _describe(x: Any) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_describe(v) for v in x) + ")"
    if isinstance(x, Tensor):
        return type_name(x.dtype, x.shape)
    if isinstance(x, np.ndarray):
        return f"ndarray:{type_name(x.dtype, x.shape)}"
    return type(x).__name__


def _summary(x: Any) -> str:
    """``  (min=.. max=.. mean=.. nan=k inf=k)`` over the finite values; NaN and inf counted."""
    if isinstance(x, tuple):
        return "".join(_summary(v) for v in x)
    try:
        value = np.asarray(x)
    except Exception:  # a batched view inside vmap has no single value
        return ""
    if value.size == 0 or value.dtype.kind not in "biufc":
        return ""
    counts = ""
    if value.dtype.kind in "fc":
        nans, infs = int(np.isnan(value).sum()), int(np.isinf(value).sum())
        counts = f"{f' nan={nans}' if nans else ''}{f' inf={infs}' if infs else ''}"
        value = value[np.isfinite(value)]
    if value.size == 0:
        return f"  ({counts.strip()})"
    stats = f"min={value.min():.4g} max={value.max():.4g} mean={value.mean():.4g}"
    return f"  ({stats}{counts})"


class DebugHandler(Handler):
    """Prints each op with its input and output shapes and dtypes, then performs it."""

    def __init__(
        self,
        file: TextIO | None = None,
        values: bool = False,
        ops: Container[str] | Callable[[Op], bool] | None = None,
    ) -> None:
        self.file = file
        self.values = values
        self.ops = ops if ops is None or callable(ops) else _named(ops)
        self.last_scopes: tuple[str, ...] = read_scopes(self)
        self.base_depth = len(self.last_scopes)

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        out = perform_args(op, args, params)
        if self.ops is not None and not self.ops(op):
            return out
        file = self.file or sys.stdout
        scopes = current_scopes()
        depth = len(scopes) - self.base_depth
        if scopes != self.last_scopes:
            # A header for each phase entered since the last printed op.
            shared = 0
            for now, before in zip(scopes, self.last_scopes):
                if now != before:
                    break
                shared += 1
            for level in range(max(shared, self.base_depth), len(scopes)):
                print("  " * (level - self.base_depth) + f"[{scopes[level]}]", file=file)
            self.last_scopes = scopes
        inputs = ", ".join(_describe(a) for a in args)
        shown = {k: v for k, v in params.items() if k != "spec"}
        extra = "".join(f", {k}={v!r}" for k, v in shown.items())
        summary = _summary(out) if self.values else ""
        print(f"{'  ' * depth}{op.name}({inputs}{extra}) -> {_describe(out)}{summary}", file=file)
        return out


def _named(names: Container[str]) -> Callable[[Op], bool]:
    return lambda op: op.name in names


P = ParamSpec("P")
Out = TypeVar("Out")


def debug(
    f: Callable[P, Out],
    *,
    file: TextIO | None = None,
    values: bool = False,
    ops: Container[str] | Callable[[Op], bool] | None = None,
) -> Callable[P, Out]:
    """Wrap ``f`` so that every op it performs is printed.

    Each line shows the op's name, its inputs' dtypes and shapes, its
    parameters and its output; lines are indented by how many
    transformations inside ``debug`` are running, with a header when a phase
    starts, so ``debug(grad(f))`` shows the forward pass, then the backward pass.

    Parameters
    ----------
    f : callable
        The function (possibly transformed) to trace.
    file : text stream, optional
        Where to print (standard output by default).
    values : bool, optional
        Also print a summary of each output: min, max and mean of its finite
        values, and how many are NaN and infinite (when any are).
    ops : container of str, or callable, optional
        Print only ops with these names (``{"matmul", "tanh"}``), or those
        for which ``ops(op)`` is true (``lambda op: op.name.startswith("scatter")``).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import debug
    >>> y = debug(lambda x: knp.sin(x) * 2)(knp.ones(3))
    sin(float64[3]) -> float64[3]
    mul(float64[3], int) -> float64[3]
    """

    @functools.wraps(f)
    def debugged(*args: P.args, **kwargs: P.kwargs) -> Out:
        with handler(DebugHandler(file=file, values=values, ops=ops)):
            return f(*args, **kwargs)

    return debugged
