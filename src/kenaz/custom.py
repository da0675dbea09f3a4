"""Custom derivative rules: ``custom_jvp`` and ``custom_vjp``.

Calling a custom function under a handler performs one effect, a
:class:`CustomCall` op whose arguments are the leaves of the differentiable
arguments. Each transformation handles that effect with the user's rule
(``kenaz.custom_rules`` says how, per transformation); any other
handler (``debug``, a user's op counter) sees a single op named
``custom_jvp[f]`` and forwards it like any other. With no handler installed
the function simply runs.

The rules call the user's functions, which perform ordinary ops one level out,
so outer transformations differentiate, batch or trace the rule itself: that
is how ``grad(grad(f))``, ``jvp(grad(f))`` and ``hessian(f)`` work through a
custom rule.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import tree
from .effects import Handler, Op, _handlers, perform_args
from .tensor import Tensor
from .transform import as_tensor

__all__ = ["custom_jvp", "custom_vjp", "CustomCall"]


class CustomCall(Op):
    """The op performed when a function with a custom rule is called under a handler.

    Its positional arguments are the leaves of the function's differentiable
    arguments and its one parameter, ``call``, holds the rest (see
    :class:`CallInfo`). It has multiple results: the leaves of the output.
    ``function`` is the ``custom_jvp``/``custom_vjp`` object (or checkpoint).
    """

    __slots__ = ("function", "kind")

    def __init__(self, name: str, function: Any, kind: str) -> None:
        super().__init__(name, self._run_eagerly, multiple_results=True)
        self.function = function
        self.kind = kind

    def _run_eagerly(self, *values: Any, call: CallInfo) -> tuple[Any, ...]:
        """Backend implementation: run the original function on plain values, no handlers."""
        token = _handlers.set(())
        try:
            leaves = call.run_primal([Tensor(v) for v in values])
        finally:
            _handlers.reset(token)
        return tuple(leaf._value for leaf in leaves)


class CallInfo:
    """What a :class:`CustomCall` needs besides its tensor leaves.

    ``nondiff`` maps positions to the non-differentiable arguments,
    ``in_tree`` is the structure of the differentiable ones, and ``out_tree``
    the output's structure, known once the function or a rule has run.
    """

    __slots__ = ("function", "nondiff", "in_tree", "nargs", "out_tree")

    def __init__(self, function: Any, nondiff: dict[int, Any], in_tree: Any, nargs: int) -> None:
        self.function = function
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.nargs = nargs
        self.out_tree: Any = None

    def diff_args(self, leaves: Sequence[Any]) -> tuple[Any, ...]:
        """The differentiable arguments rebuilt from ``leaves``."""
        return tree.unflatten(self.in_tree, list(leaves))

    def arguments(self, leaves: Sequence[Any]) -> list[Any]:
        """All positional arguments, in order, with the non-differentiable ones put back."""
        diff = iter(self.diff_args(leaves))
        return [self.nondiff[i] if i in self.nondiff else next(diff) for i in range(self.nargs)]

    def nondiff_values(self) -> list[Any]:
        return [self.nondiff[i] for i in sorted(self.nondiff)]

    def outputs(self, out: Any, where: str) -> list[Tensor]:
        """Flatten a function's or rule's output, remembering (and checking) its structure."""
        leaves, out_tree = tree.flatten(out)
        if self.out_tree is None:
            self.out_tree = out_tree
        elif out_tree != self.out_tree:
            raise TypeError(
                f"kenaz.{self.function.kind}: {where} of {self.function.__name__!r} returned "
                f"structure {out_tree}, but the function returns {self.out_tree}"
            )
        return [as_tensor(leaf, where) for leaf in leaves]

    def run_primal(self, leaves: Sequence[Any]) -> list[Tensor]:
        """Run the original function on the current handler stack; its output leaves."""
        return self.outputs(self.function.fun(*self.arguments(leaves)), "the function")

    def __repr__(self) -> str:
        nondiff = ", ".join(f"{i}={v!r}" for i, v in sorted(self.nondiff.items()))
        return f"<{self.function.__name__}{f' nondiff {nondiff}' if nondiff else ''}>"


# -- dispatch: which handler deals with a custom call --------------------------------------
# (handler class, CustomCall.kind) -> rule(handler, op, leaves, call) -> output leaves.
# Filled by `kenaz.custom_rules` for the built-in transformations.
RULES: dict[tuple[type, str], Callable[..., list[Tensor]]] = {}
# The same, resolved through subclassing, for each handler class met so far.
_resolved: dict[tuple[type, str], Callable[..., list[Tensor]] | None] = {}


def register_rule(handler_type: type, kind: str):
    """Decorator: how ``handler_type`` (and subclasses) handles custom calls of ``kind``."""

    def register(rule: Callable[..., list[Tensor]]) -> Callable[..., list[Tensor]]:
        RULES[handler_type, kind] = rule
        _resolved.clear()
        return rule

    return register


def _rule_for(handler: Handler, kind: str) -> Callable[..., list[Tensor]] | None:
    key = (type(handler), kind)
    try:
        return _resolved[key]
    except KeyError:
        pass
    rule = None
    for cls in type(handler).__mro__:
        rule = RULES.get((cls, kind))
        if rule is not None:
            break
    _resolved[key] = rule
    return rule


def dispatch(op: CustomCall, leaves: Sequence[Any], call: CallInfo) -> list[Tensor]:
    """Perform the custom call ``op`` on ``leaves``: the effect a custom function raises.

    The innermost handler handles it, with the stack set to the handlers
    outside it, exactly as :func:`kenaz.perform` does for primitives. A
    transformation applies the user's rule; a handler that knows nothing of
    custom calls receives ``op`` through its ordinary ``handle``, and when it
    forwards the op with ``perform``, a router sends it on to the next handler
    through this function again.
    """
    stack = _handlers.get()
    if not stack:
        return call.run_primal(leaves)
    outside, innermost = stack
    rule = _rule_for(innermost, op.kind)
    if rule is not None:
        token = _handlers.set(outside)
        try:
            return rule(innermost, op, list(leaves), call)
        finally:
            _handlers.reset(token)
    token = _handlers.set((outside, _Router()))
    try:
        return list(innermost.handle(op, tuple(leaves), {"call": call}))
    finally:
        _handlers.reset(token)


class _Router(Handler):
    """Sits under a handler that does not know custom calls; sends them on through ``dispatch``."""

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        if isinstance(op, CustomCall):
            return tuple(dispatch(op, args, params["call"]))
        return perform_args(op, args, params)


def run_with_stack(stack: tuple, fn: Callable[[], Any]) -> Any:
    """Call ``fn()`` with the handler stack set to ``stack`` (see ``effects._handlers``)."""
    token = _handlers.set(stack)
    try:
        return fn()
    finally:
        _handlers.reset(token)


# -- the decorators ----------------------------------------------------------------------
class _CustomFunction:
    """Shared by ``custom_jvp`` and ``custom_vjp``: argument binding and the call."""

    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        self.__name__ = getattr(fun, "__name__", type(fun).__name__)
        try:
            self.signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):  # builtins without a signature
            self.signature = None
        # Only then are arguments bound by name (the common case skips it).
        self.has_defaults = self.signature is not None and any(
            p.default is not p.empty for p in self.signature.parameters.values()
        )
        self.op = CustomCall(f"{self.kind}[{self.__name__}]", self, self.kind)

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        if self.signature is None or (not kwargs and not self.has_defaults):
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(
                f"kenaz.{self.kind}: {self.__name__!r} takes keyword-only arguments "
                f"{sorted(bound.kwargs)}; custom functions take positional arguments only"
            )
        return bound.args

    def _check_ready(self) -> None:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._positional(args, kwargs)
        if not _handlers.get():  # no transformation: just run the function
            return self.fun(*args)
        self._check_ready()
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise ValueError(
                    f"kenaz.{self.kind}: nondiff_argnums={self.nondiff_argnums} names argument "
                    f"{i}, but {self.__name__!r} was called with {len(args)} arguments"
                )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree.flatten(diff)
        call = CallInfo(self, nondiff, in_tree, len(args))
        out_leaves = dispatch(self.op, leaves, call)
        return tree.unflatten(call.out_tree, out_leaves)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Used as a method: bind like a function would.
        return self if instance is None else functools.partial(self, instance)


class custom_jvp(_CustomFunction):  # noqa: N801 - a decorator, named like JAX's
    """A function with a hand-written forward-mode (jvp) rule.

    Define the rule with :meth:`defjvp`. Every transformation uses it:
    ``jvp`` calls it directly, ``grad``/``vjp`` transpose it (by reverse mode
    through the rule's tangent computation, which must be linear in the
    tangents), ``vmap`` batches it, and higher-order transformations
    differentiate the rule itself.

    Parameters
    ----------
    fun : callable
        The function, written with kenaz ops. It runs as is when no
        transformation is active.
    nondiff_argnums : sequence of int, optional
        Positions of arguments that are not differentiated (Python values,
        callables, static configuration). The rule receives them first.

    Examples
    --------
    A numerically stable ``log(1 + exp(x))``:

    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> @kenaz.custom_jvp
    ... def log1pexp(x):
    ...     return knp.maximum(x, 0.0) + knp.log1p(knp.exp(-knp.abs(x)))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * knp.expit(x)
    >>> kenaz.grad(log1pexp)(1000.0)
    Tensor(1.)
    >>> kenaz.grad(kenaz.grad(log1pexp))(0.0)
    Tensor(0.25)
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp_rule: Callable | None = None

    def defjvp(self, rule: Callable) -> Callable:
        """Set the rule ``rule(*nondiff_args, primals, tangents) -> (out, tangent_out)``.

        ``primals`` and ``tangents`` are tuples with one entry per
        differentiable argument; ``tangent_out`` has the structure of ``out``.
        Returns ``rule``, so it can be used as a decorator.
        """
        self.jvp_rule = rule
        return rule

    def defjvps(self, *rules: Callable | None) -> None:
        """Set the rule from one rule per differentiable argument (JAX's ``defjvps``).

        ``rules[i](tangent_i, out, *primals)`` is argument ``i``'s contribution
        to the output tangent (``None``: the output does not depend on it);
        the contributions are summed.

        Examples
        --------
        >>> import kenaz
        >>> import kenaz.numpy as knp
        >>> f = kenaz.custom_jvp(lambda x, y: knp.sin(x) * y)
        >>> f.defjvps(lambda tx, out, x, y: knp.cos(x) * y * tx,
        ...           lambda ty, out, x, y: knp.sin(x) * ty)
        >>> kenaz.grad(f, argnums=(0, 1))(0.0, 2.0)
        (Tensor(2.), Tensor(0.))
        """

        def rule(*arguments: Any) -> tuple[Any, Any]:
            *nondiff, primals, tangents = arguments
            if len(rules) != len(primals):
                raise TypeError(
                    f"kenaz.custom_jvp: defjvps got {len(rules)} rules for "
                    f"{len(primals)} differentiable arguments of {self.__name__!r}"
                )
            values, diff = iter(nondiff), iter(primals)
            positions = range(len(nondiff) + len(primals))
            out = self(
                *[next(values) if i in self.nondiff_argnums else next(diff) for i in positions]
            )
            total = None
            for arg_rule, t in zip(rules, tangents):
                if arg_rule is not None:
                    term = arg_rule(t, out, *primals)
                    total = term if total is None else tree.map(lambda a, b: a + b, total, term)
            return out, total

        self.jvp_rule = rule

    def _check_ready(self) -> None:
        if self.jvp_rule is None:
            raise TypeError(
                f"kenaz.custom_jvp: {self.__name__!r} has no rule yet; define one with "
                f"@{self.__name__}.defjvp before transforming it"
            )


class custom_vjp(_CustomFunction):  # noqa: N801 - a decorator, named like JAX's
    """A function with a hand-written reverse-mode (vjp) rule.

    Define the rule with :meth:`defvjp`. ``grad``/``vjp`` run ``fwd`` in the
    forward pass and ``bwd`` in the backward pass; ``vmap`` batches both;
    higher-order reverse mode differentiates ``fwd`` and ``bwd`` themselves.

    Forward mode (``jvp``, ``jacfwd``, ``linearize``) cannot use a vjp rule;
    where JAX raises an error, kenaz differentiates the original function
    forward instead, so the rule is ignored there.

    Parameters
    ----------
    fun : callable
        The function, written with kenaz ops.
    nondiff_argnums : sequence of int, optional
        Positions of arguments that are not differentiated; ``bwd`` receives
        them first and returns no cotangent for them.

    Examples
    --------
    Clip the gradient flowing back through an identity:

    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> @kenaz.custom_vjp
    ... def clip_gradient(x, bound):
    ...     return x
    >>> def fwd(x, bound):
    ...     return x, bound
    >>> def bwd(bound, g):
    ...     return knp.clip(g, -bound, bound), None
    >>> _ = clip_gradient.defvjp(fwd, bwd)
    >>> kenaz.grad(lambda x: 10 * clip_gradient(x, 1.0))(3.0)
    Tensor(1.)
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> custom_vjp:
        """Set the rule: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff_args, residuals, cotangent) -> tuple of cotangents``.

        ``bwd`` returns one cotangent per differentiable argument, shaped like
        it (``None`` for zero). Residuals are any pytree.
        """
        self.fwd, self.bwd = fwd, bwd
        return self

    def _check_ready(self) -> None:
        if self.fwd is None or self.bwd is None:
            raise TypeError(
                f"kenaz.custom_vjp: {self.__name__!r} has no rule yet; define one with "
                f"{self.__name__}.defvjp(fwd, bwd) before transforming it"
            )


def zeros_for(leaf: Any) -> Tensor:
    """A zero tangent or cotangent for ``leaf`` (same shape and dtype)."""
    if isinstance(leaf, Tensor):
        return Tensor(np.zeros(leaf.shape, dtype=leaf.dtype))
    return Tensor(np.zeros_like(np.asarray(leaf)))
