"""``custom_jvp``: a function with a hand-written forward-mode rule, as one call op.

The op's rules (see :class:`kenaz.call.Call`):

- forward: call the user's rule, one level out;
- reverse: the primal one level out (outer transformations see the call), and
  a pullback that is the transpose of the rule's tangent map, obtained by
  reverse mode through the rule (which is linear in the tangents);
- batching: a ``custom_jvp`` of the batched function with the batched rule, so
  transformations outside the ``vmap`` still use the rule.

The rule calls the user's functions, which perform ordinary ops one level out,
so outer transformations differentiate or batch the rule itself: that is how
``grad(grad(f))``, ``jvp(grad(f))`` and ``hessian(f)`` work through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import tree
from .call import Call, CallFunction, CallInfo, metas, run_call, tangent_leaves, zeros_for
from .effects import perform_args
from .lifted import push_forward
from .ops.axes import batch_size
from .reverse import transpose
from .vectorize import batch_first, batched_function, vmap_flat

__all__ = ["custom_jvp"]


class custom_jvp(CallFunction):  # noqa: N801 - a decorator, named like JAX's
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

    def make_op(self, name: str) -> Call:
        return Call(name, run_call, forward=self._forward, reverse=self._reverse, batch=_batch)

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

    # -- the op's rules -------------------------------------------------------------------
    def _forward(self, args: tuple, tangents: tuple, *, call: CallInfo) -> tuple:
        n = call.n_declared
        declared = [zeros_for(x) if t is None else t for x, t in zip(args[:n], tangents[:n])]
        lifted = [(i, t) for i, t in enumerate(tangents) if i >= n and t is not None]
        out, t_outs = _tangents(call, args, [*declared, *(None for _ in args[n:])])
        if lifted:
            t_outs = _plus_closed_over(call, args, lifted, t_outs)
        return tuple(out), tuple(t_outs)

    def _reverse(self, args: tuple, *, call: CallInfo) -> tuple:
        outs = perform_args(self.op, args, {"call": call})  # outer handlers see the call
        n = call.n_declared

        def pullback(g: tuple) -> list:
            # The transpose of the linear map t -> the output tangent: reverse mode through
            # that map (at t = 0: any point gives the same); `None` in g is a zero.
            def tangent_map(*tangents: Any) -> list:
                _, t_outs = _tangents(call, args, tangents)
                lifted = list(enumerate(tangents))[n:]
                return _plus_closed_over(call, args, lifted, t_outs) if lifted else t_outs

            return transpose(tangent_map, [zeros_for(x) for x in args], g)

        return outs, pullback


def _tangents(call: CallInfo, args: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """The rule's outputs and output tangents (leaves) for the declared arguments' tangents."""
    with call.substituting(args):
        out, t_out = _call_rule(call, args, tangents)
    outs = call.outputs(out, "the jvp rule")
    what = f"the jvp rule of {call.function.__name__!r}"
    return outs, tangent_leaves(t_out, call, metas(outs), what)


def _plus_closed_over(call: CallInfo, args: Sequence[Any], lifted: list, t_outs: list) -> list:
    """``t_outs`` plus the tangent that the lifted tensors' tangents give, through the function.

    The user's rule covers the declared arguments; a tensor the function
    closes over is differentiated through the function itself.
    """
    positions = [i for i, _ in lifted]
    extra = push_forward(call, args, positions, [t for _, t in lifted])
    return [t + e for t, e in zip(t_outs, extra)]


def _call_rule(call: CallInfo, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """The user's rule on flat leaves: ``(out, tangent_out)``, checked to be a pair."""
    function = call.function
    result = function.jvp_rule(
        *call.nondiff_values(), call.diff_args(primals), call.diff_args(tangents)
    )  # `diff_args` takes the declared leaves: the rule never sees the lifted ones
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(
            f"kenaz.custom_jvp: the jvp rule of {function.__name__!r} must return a pair "
            "(out, tangent_out)"
        )
    return result[0], result[1]


def _batch(op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
    """A ``custom_jvp`` of the batched function whose rule is the batched rule.

    The batched lifted leaves are closed over by the batched function and rule,
    so the new call lifts them in turn (when a transformation outside tracks them).
    """
    size = batch_size(values, axes)
    function = call.function
    n = call.n_declared
    lifted = list(values[n:])

    everything = batched_function(lambda *leaves: call.run_primal(leaves), axes, size)

    def batched_fun(*declared: Any) -> tuple:
        return everything(*declared, *lifted)

    def batched_rule(primals: tuple, tangents: tuple) -> tuple:
        def rule(*leaves: Any) -> list:
            example = [*leaves[:n], *leaves[2 * n :]]  # the primals and the lifted leaves
            outs, t_outs = _tangents(call, example, leaves[n : 2 * n])
            return [*outs, *t_outs]

        results = vmap_flat(
            rule, [*primals, *tangents, *lifted], [*axes[:n], *axes[:n], *axes[n:]], size
        )
        results = [batch_first(o, a, size) for o, a in results]
        half = len(results) // 2
        return tuple(results[:half]), tuple(results[half:])

    batched = custom_jvp(batched_fun)
    batched.defjvp(batched_rule)
    batched.rename(f"vmap({function.__name__})")
    outs = batched(*values[:n])
    return outs, (0,) * len(outs)
