"""``debug(f)``: print every op that ``f`` performs, as the handlers inside it see it."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Container
from typing import Any, TextIO

import numpy as np

from .effects import Handler, Op, current_scopes, handler, perform
from .tensor import Tensor

__all__ = ["debug"]


def _describe(x: Any) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_describe(v) for v in x) + ")"
    if isinstance(x, Tensor):
        return f"{x.dtype}{list(x.shape)}"
    if isinstance(x, np.ndarray):
        return f"ndarray:{x.dtype}{list(x.shape)}"
    return type(x).__name__


def _summary(x: Any) -> str:
    if isinstance(x, tuple):
        return "".join(_summary(v) for v in x)
    try:
        value = np.asarray(x)
    except Exception:  # a batched view inside vmap has no single value
        return ""
    if value.size == 0 or value.dtype.kind not in "biufc":
        return ""
    finite = value[np.isfinite(value)] if value.dtype.kind in "fc" else value
    nans = int(np.isnan(value).sum()) if value.dtype.kind in "fc" else 0
    if finite.size == 0:
        return f"  (nan={nans})"
    stats = f"min={finite.min():.4g} max={finite.max():.4g} mean={finite.mean():.4g}"
    return f"  ({stats}{f' nan={nans}' if nans else ''})"


class DebugHandler(Handler):
    """Prints each op with its input and output shapes and dtypes, then performs it."""

    def __init__(
        self,
        file: TextIO | None = None,
        values: bool = False,
        ops: Container[str] | None = None,
    ) -> None:
        self.file = file
        self.values = values
        self.ops = ops
        self.base_depth = len(current_scopes())
        self.last_scopes: tuple[str, ...] = current_scopes()

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        out = perform(op, *args, **params)
        if self.ops is not None and op.name not in self.ops:
            return out
        file = self.file or sys.stdout
        scopes = current_scopes()
        depth = len(scopes) - self.base_depth
        if scopes != self.last_scopes:
            if len(scopes) > self.base_depth:
                print("  " * (depth - 1) + f"[{scopes[-1]}]", file=file)
            self.last_scopes = scopes
        inputs = ", ".join(_describe(a) for a in args)
        shown = {k: v for k, v in params.items() if k != "spec"}
        extra = "".join(f", {k}={v!r}" for k, v in shown.items())
        summary = _summary(out) if self.values else ""
        print(f"{'  ' * depth}{op.name}({inputs}{extra}) -> {_describe(out)}{summary}", file=file)
        return out


def debug(
    f: Callable,
    *,
    file: TextIO | None = None,
    values: bool = False,
    ops: Container[str] | None = None,
) -> Callable:
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
        Also print a summary of each output: min, max, mean, NaN count.
    ops : container of str, optional
        Print only ops with these names (``{"matmul", "tanh"}``).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import debug
    >>> y = debug(lambda x: knp.sin(x) * 2)(knp.ones(3))
    sin(float64[3]) -> float64[3]
    mul(float64[3], int) -> float64[3]
    """

    @functools.wraps(f)
    def debugged(*args: Any, **kwargs: Any) -> Any:
        with handler(DebugHandler(file=file, values=values, ops=ops)):
            return f(*args, **kwargs)

    return debugged
