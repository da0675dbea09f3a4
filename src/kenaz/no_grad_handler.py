"""``no_grad()``: make a block's results constants for the transformations around it.

It is a handler, not a global flag. Installed when the block is entered, it
sits *inside* the transformations that were running at that moment, so only
they are affected: before each op it passes the op's arguments through
``stop_gradient`` (performed outward, so outer differentiation sees constants
and outer ``vmap`` still batches). A transformation started inside the block
installs its handler inside ``no_grad``'s, so it differentiates normally.
"""

from __future__ import annotations

from contextlib import ContextDecorator
from typing import Any

from .effects import Handler, Op, handler, handlers_installed, perform_args
from .ops.elementwise import stop_gradient
from .tensor import Tensor

__all__ = ["no_grad", "NoGradHandler"]


class NoGradHandler(Handler):
    """Cuts every op's arguments off from the differentiating handlers outside it."""

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        if op.differentiable:
            # Only tensors some transformation tracks need cutting off: those with
            # records, and views (vmap's), whose batches may have records.
            args = tuple(
                stop_gradient(a)
                if isinstance(a, Tensor) and (a._trace or type(a) is not Tensor)
                else a
                for a in args
            )
        return perform_args(op, args, params)


class no_grad(ContextDecorator):  # noqa: N801 - used like a function, as in PyTorch
    """Treat everything computed in a block as a constant by the transformations around it.

    Inside ``with kenaz.no_grad():`` ops still run (and ``vmap`` around the
    block still batches them), but ``grad``, ``jvp`` and the other
    differentiating transformations that were running when the block was
    entered see its results as constants, exactly as if each input had gone
    through :func:`kenaz.stop_gradient`. Transformations started inside the
    block work as usual. Also usable as a decorator: ``@kenaz.no_grad()``.

    Examples
    --------
    >>> import kenaz
    >>> def f(x):
    ...     with kenaz.no_grad():
    ...         scale = x * x          # a constant for the grad outside
    ...     return scale * x
    >>> kenaz.grad(f)(3.0)             # d/dx (c * x) with c = 9
    Tensor(9.)
    >>> def g(x):
    ...     with kenaz.no_grad():      # a grad started inside still works
    ...         slope = kenaz.grad(lambda y: y**3)(x)
    ...     return slope * x
    >>> kenaz.grad(g)(2.0)             # slope = 12, a constant for the outer grad
    Tensor(12.)
    """

    def __init__(self) -> None:
        self._installed: list[handler | None] = []

    def __enter__(self) -> no_grad:
        # With nothing running there is nothing to cut off: no handler, no cost.
        installed = handler(NoGradHandler()) if handlers_installed() else None
        if installed is not None:
            installed.__enter__()
        self._installed.append(installed)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        installed = self._installed.pop()
        if installed is not None:
            installed.__exit__(*exc_info)
