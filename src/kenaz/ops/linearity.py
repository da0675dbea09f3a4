"""Linear ops state it, and their jvp rules follow: the op itself, on the tangent.

An op linear in an argument (the others held fixed: ``reshape`` in ``x``, ``mul``
in each factor, ``matmul``, ``sum``, ``fft``) has, as that argument's jvp rule,
the op with the tangent in the argument's place: ``reshape(t, shape)``,
``mul(x, t)``. So such an op writes one rule, its transpose (the vjp, which no
generic machinery can derive for it: transposing ``reshape(t)`` by reverse mode
needs reshape's own vjp), and declares the linearity, as JAX's ``deflinear`` and
``defbilinear`` do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..effects import Op, each_argument, perform_args

__all__ = ["linear", "linear_in_each"]


def _on_tangent(op: Op, index: int) -> Callable[..., Any]:
    """The jvp rule of argument ``index`` of an op linear in it: the op, ``t`` in its place.

    Written out for the first two positions (every op but a variadic one): a rule runs
    for every op under ``jvp``, and the general form (a list of the arguments, a
    ``partial``'s merged arguments) cost W5's Hessian-vector products 1 % of their
    instructions over the hand-written rules it replaced.
    """
    if index == 0:

        def rule(t: Any, ans: Any, x: Any, *rest: Any, **params: Any) -> Any:
            return perform_args(op, (t, *rest) if rest else (t,), params)

    elif index == 1:

        def rule(t: Any, ans: Any, x: Any, y: Any, *rest: Any, **params: Any) -> Any:
            return perform_args(op, (x, t, *rest), params)

    else:
        rule = functools.partial(_in_place_of, op, index)
    return rule


def _in_place_of(op: Op, index: int, t: Any, ans: Any, *args: Any, **params: Any) -> Any:
    """The op on its arguments with ``t`` in place of argument ``index``: the general
    form of :func:`_on_tangent`'s rules (a variadic op's)."""
    replaced = list(args)
    replaced[index] = t
    return perform_args(op, tuple(replaced), params)


def linear(op: Op, arguments: Sequence[int] = (0,)) -> Op:
    """Declare ``op`` linear in each of ``arguments``: their jvp rules are the op itself
    applied to the tangent. Rules of other arguments (``op.jvp``) stay. Returns ``op``.

    Examples
    --------
    >>> import numpy as np
    >>> from kenaz import Op, jvp
    >>> double = linear(Op("double", lambda x: 2 * x, vjp=[lambda ans, x: lambda g: 2 * g]))
    >>> jvp(double, (np.ones(2),), (np.arange(2.0),))[1]
    Tensor([0., 2.])
    """
    size = max([*arguments, len(op.jvp or ()) - 1]) + 1
    rules: list[Any] = [None] * size
    for i, rule in enumerate(op.jvp or ()):
        rules[i] = rule
    for i in arguments:
        rules[i] = _on_tangent(op, i)
    op.jvp = tuple(rules)
    return op


def linear_in_each(op: Op) -> Op:
    """Declare the variadic ``op`` linear in each argument (``einsum``). Returns ``op``."""
    op.jvp = each_argument(functools.partial(_in_place_of, op))
    return op
