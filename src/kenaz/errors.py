"""Exceptions raised by kenaz.

Every error kenaz raises on purpose derives from :class:`KenazError`, so user
code can catch them all at once; the subclasses say what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "KenazError",
    "ConcretizationError",
    "TrackedConversionError",
    "EscapedTracerError",
    "ShapeError",
]


class KenazError(Exception):
    """Base class of kenaz's own exceptions."""


class ConcretizationError(KenazError, TypeError):
    """A concrete value was asked of a tensor that stands for many values.

    Inside ``vmap`` a tensor is a per-example view of a whole batch: it has no
    single value for ``bool``, ``float``, ``int``, ``.numpy()`` or an ``if``
    to use. The message names the fix, ``vmap(f, method="loop")``.
    """

    _write: Callable[[], str] | None = None

    @classmethod
    def written_when_read(cls, write: Callable[[], str]) -> ConcretizationError:
        """This error with its message ``write()``, written when first read.

        Some callers catch the error at once (``kenaz.backend.value_of`` asks a traced
        tensor for a value only if it has one, once per ``grad`` under ``jit``), and
        writing the message (naming the tensor's type) costs more than the check.
        """
        error = cls()
        error._write = write
        return error

    @property  # type: ignore[override]
    def args(self) -> tuple:
        write = self._write
        if write is not None:
            self._write = None
            _set_args(self, (write(),))
        return _get_args(self)

    @args.setter
    def args(self, value: tuple) -> None:
        self._write = None
        _set_args(self, value)

    # BaseException's own methods read the stored arguments: write them first.
    def __str__(self) -> str:
        self.args  # noqa: B018 - writes a deferred message
        return super().__str__()

    def __repr__(self) -> str:
        self.args  # noqa: B018
        return super().__repr__()

    def __reduce__(self) -> Any:
        self.args  # noqa: B018
        return super().__reduce__()


_get_args = BaseException.args.__get__  # type: ignore[attr-defined]
_set_args = BaseException.args.__set__  # type: ignore[attr-defined]


class TrackedConversionError(ConcretizationError):
    """A tensor being differentiated or batched was converted to a plain value.

    Converting a tensor that a running ``grad``, ``vjp``, ``jvp`` or
    ``linearize`` tracks into a NumPy array (``numpy.asarray(t)``,
    ``t.numpy()``) or a Python or NumPy number (``float(t)``, ``t.item()``,
    ``t.tolist()``, ``numpy.float64(t)``, ``math.exp(t)``) would make it a
    constant, so every derivative through it would silently be zero (under
    ``vmap``: one example would stand for the batch). The message names the
    conversion, the line of user code and the fix: a ``kenaz.numpy`` function
    instead, or ``kenaz.stop_gradient(t)`` first when a constant is meant.
    ``int(t)``, ``bool(t)``, comparisons and formatting stay allowed.
    """


class EscapedTracerError(KenazError):
    """A tensor internal to a finished transformation was used after it returned.

    For example a per-example tensor of ``vmap`` stored in a global variable:
    outside its ``vmap`` it has no meaning, so using it is an error rather
    than a wrong number.
    """


class ShapeError(KenazError, ValueError):
    """Operands whose shapes do not fit the op (they do not broadcast, or do not align).

    The message names the kenaz op and every operand's shape.
    """


def explain_backend_error(op_name: str, operands: tuple[Any, ...], error: ValueError) -> Exception:
    """NumPy's ``error`` from an op's implementation, restated when it is a failure
    to broadcast the operands: NumPy's own message names neither the op nor the call."""
    if isinstance(error, KenazError) or "broadcast" not in str(error):
        return error
    return broadcast_error(op_name, [np.shape(operand) for operand in operands]) or error


def broadcast_error(
    op_name: str, shapes: list[tuple[int, ...]], where: str = ""
) -> ShapeError | None:
    """The error naming ``op_name`` and every shape, if ``shapes`` do not broadcast together."""
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        listed = " and ".join(str(s) for s in shapes)
        return ShapeError(
            f"kenaz.{op_name}{where}: operands of {'per-example ' if where else ''}shapes "
            f"{listed} do not broadcast together (aligned from the right, each pair of axes "
            "must be equal or contain a 1)"
        )
    return None
