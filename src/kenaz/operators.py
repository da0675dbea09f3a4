"""Tensor's operators, with ``perform``'s eager path inlined: ``x + y`` and ``x @ y``.

Each operator equals ``perform_args(op, (x, y), {})``; with no handler installed and
NumPy operands it calls the op's own ufunc at once. Bound to Tensor where kenaz.numpy
assembles its methods (``numpy/_tensor_methods.py``). A reader of the core can skip
this module: it is ``kenaz.effects.perform_args`` made shorter for the common case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numpy import matmul as _numpy_matmul
from numpy import ndarray  # globals: `np.ndarray` is a slow read (module __getattr__)

from .backend import NUMPY_TYPES, ArrayLikeArgument
from .effects import Op, installed_stack, perform_args, reset_stack, set_stack
from .tensor import Tensor

__all__ = ["binary_operator", "matmul_operator"]

_new_object = object.__new__


# -- Tensor's operators: perform's eager path inlined ---------------------------------------
# With no handler, `x + y` on two tensors of 16 elements spent more than half its time in
# kenaz: the dunder's frame, then `perform_args`' and the impl's, each testing the operands
# again. The operators below run NumPy's own ufunc at once when no handler is installed and
# the operands are what that ufunc takes as the op's implementation would (a plain Tensor
# holding an ndarray; another one, an ndarray, or a Python float or int), which is the very
# call `op.impl` makes for them; anything else, and any error, goes to `perform_args`.
# What remains is near the floor of a Python operator: the dunder's frame and the result's
# allocation (about 1,900 machine instructions, where NumPy's `x + y` takes 3,600; W8's
# floor row), and the type tests that keep the result `perform`'s (about 800 more).
# Under a handler an operator hands the op to the innermost handler itself, as
# `perform_args`' first branch does (no call, no parameters), without a frame of its own.
def binary_operator(name: str, op: Op, reflected: bool = False) -> Callable[[Tensor, Any], Tensor]:
    """Tensor's operator ``name`` for the binary ``op``: ``x + y`` (``"__add__"``) for
    ``add``, or with ``reflected`` ``y + x`` (``"__radd__"``).

    Equal to ``perform_args(op, (self, other), {})`` (``(other, self)`` when reflected),
    with its eager path inlined for NumPy operands: ``op.numpy_impl``, or the ``ufunc``
    its implementation states (``kenaz.ops.elementwise._by_operator``), must compute ``op``
    on an ndarray and an ndarray or a Python number.
    """
    ufunc = op.numpy_impl or op.impl.ufunc
    impl = op.impl

    def forward(self: Tensor, other: Any) -> Tensor:
        stack = installed_stack()
        if stack is not None:  # perform_args' first branch (no parameters, no call), no frame
            outside, innermost = stack
            token = set_stack(outside)
            try:
                return innermost.handle(op, (self, other), {})
            finally:
                reset_stack(token)
        # `self` needs no test: a Tensor's subclass (a batched view that escaped its vmap, a
        # finished trace's tracer) raises reading `_value`, as it would in `perform_args`.
        if type(other) is Tensor:
            y = other._value
        elif type(other) is float or type(other) is int or type(other) in NUMPY_TYPES:
            y = other
        else:  # a list, a pandas value, a batched view...
            return perform_args(op, (self, other), {})
        x = self._value
        try:  # free until it raises
            if type(x) is ndarray and (type(y) is ndarray or type(y) in NUMPY_TYPES):
                value = ufunc(x, y)
            else:  # a NumPy scalar (an op on 0-d values gives one), another backend
                value = impl(x, y)
        except (ValueError, ArrayLikeArgument):  # perform's error names op and shapes
            return perform_args(op, (self, other), {})
        out = _new_object(Tensor)
        out._value = value
        out._trace = None
        return out

    def backward(self: Tensor, other: Any) -> Tensor:
        stack = installed_stack()
        if stack is not None:  # as in `forward`
            outside, innermost = stack
            token = set_stack(outside)
            try:
                return innermost.handle(op, (other, self), {})
            finally:
                reset_stack(token)
        if type(other) is float or type(other) is int or type(other) in NUMPY_TYPES:
            x = self._value  # a subclass raises here, as in `forward`
            try:
                value = ufunc(other, x) if type(x) is ndarray else impl(other, x)
            except (ValueError, ArrayLikeArgument):
                return perform_args(op, (other, self), {})
            out = _new_object(Tensor)
            out._value = value
            out._trace = None
            return out
        return perform_args(op, (other, self), {})

    operator = backward if reflected else forward
    operator.__name__ = name
    operator.__qualname__ = f"Tensor.{name}"
    return operator


def matmul_operator(matmul: Callable[[Any, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    """Tensor's ``x @ y``: ``matmul(x, y)`` (which checks the shapes, then performs the
    primitive), with NumPy's ``matmul`` run at once on two plain tensors holding ndarrays
    when no handler is installed. Any error (a 0-d operand, shapes that do not align)
    comes from ``matmul``, which names the op and the shapes."""

    def __matmul__(self: Tensor, other: Any) -> Tensor:  # noqa: N807 - the operator itself
        if installed_stack() is None and type(self) is Tensor and type(other) is Tensor:
            x = self._value
            y = other._value
            if type(x) is ndarray and type(y) is ndarray:
                try:
                    value = _numpy_matmul(x, y)
                except ValueError:
                    return matmul(self, other)
                out = _new_object(Tensor)
                out._value = value
                out._trace = None
                return out
        return matmul(self, other)

    __matmul__.__qualname__ = "Tensor.__matmul__"
    return __matmul__
