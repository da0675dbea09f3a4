"""``custom_vjp``: a function with a hand-written reverse-mode rule, as one call op.

The op's rules (see :class:`kenaz.call.Call`):

- reverse: ``fwd`` one level out gives the outputs and the residuals; the
  pullback calls ``bwd``;
- batching: a ``custom_vjp`` of the batched function with batched ``fwd`` and
  ``bwd``, so transformations outside the ``vmap`` still use the rule.
  Residuals keep whatever batch axis they have (or none), so one that does
  not depend on the batch is not repeated;
- forward: none, so forward mode runs the function itself (where JAX raises).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

import numpy as np

from . import tree
from .backend import namespace_of
from .call import Call, CallFunction, CallInfo, conform, cotangent_leaves, metas, run_call
from .lifted import pull_back
from .ops import reduction
from .ops import shape as shape_ops
from .ops.axes import batch_size
from .tensor import Tensor
from .vectorize import batch_first, batched_function, vmap_flat

__all__ = ["custom_vjp"]


P = ParamSpec("P")  # the decorated function's parameters, kept by the decorator
R = TypeVar("R")


class custom_vjp(CallFunction, Generic[P, R]):  # noqa: N801 - a decorator, named like JAX's
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

    if TYPE_CHECKING:  # calling it is calling the function (CallFunction.__call__)

        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def make_op(self, name: str) -> Call:
        return Call(name, run_call, reverse=self._reverse, batch=_batch)

    def defvjp(self, fwd: Callable, bwd: Callable) -> custom_vjp[P, R]:
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

    def _reverse(self, args: tuple, *, call: CallInfo) -> tuple:
        name = self.__name__
        with call.substituting(args):
            result = self.fwd(*call.arguments(args))
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(
                f"kenaz.custom_vjp: the fwd rule of {name!r} must return (out, residuals)"
            )
        out, residuals = result
        outs = call.outputs(out, "the fwd rule")
        n = call.n_declared
        nondiff, arg_metas = call.nondiff_values(), metas(args[:n])

        out_metas = metas(outs)

        def pullback(g: tuple) -> list:
            # bwd receives arrays: the symbolic zeros of unused outputs become zeros here.
            g = [conform(c, m, "a cotangent") if c is None else c for c, m in zip(g, out_metas)]
            with call.substituting(args):
                cts = self.bwd(*nondiff, residuals, tree.unflatten(call.out_tree, g))
            declared = cotangent_leaves(cts, call, arg_metas, f"the bwd rule of {name!r}")
            if n == len(args):
                return declared
            # The rule covers the declared arguments; the lifted tensors the function
            # closes over are differentiated through the function itself.
            return [*declared, *pull_back(call, args, g, range(n, len(args)))]

        # What bwd reads besides the call's inputs and outputs (which the tape keeps
        # anyway): the residuals, stated for kenaz.mutation, so that an in-place change to
        # one before the backward pass raises instead of changing the derivative.
        pullback.keeps = tuple(  # type: ignore[attr-defined]
            r for r in tree.leaves(residuals) if isinstance(r, (Tensor, np.ndarray))
        )
        return tuple(outs), pullback


def _example_meta(value: Any, axis: int | None) -> tuple:
    value = value if isinstance(value, Tensor) else Tensor(value)
    shape = value.shape if axis is None else value.shape[:axis] + value.shape[axis + 1 :]
    return shape, value.dtype, namespace_of(value)


def _to_input_layout(ct: Any, ct_axis: int | None, value: Any, axis: int | None) -> Tensor:
    """A batched cotangent laid out like the batched input it belongs to."""
    if axis is None:  # a shared input: its cotangent sums over the batch
        return ct if ct_axis is None else reduction.sum(ct, axis=ct_axis)
    if ct_axis is None:
        return shape_ops.broadcast_to(shape_ops.expand_dims(ct, axis), value.shape)
    return shape_ops.moveaxis(ct, ct_axis, axis) if ct_axis != axis else ct


def _batch(op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
    """A ``custom_vjp`` of the batched function whose ``fwd`` and ``bwd`` are batched.

    The batched lifted leaves are closed over by the batched functions, so the
    new call lifts them in turn (when a transformation outside tracks them).
    """
    size = batch_size(values, axes)
    function = call.function
    n = call.n_declared
    lifted, lifted_axes = list(values[n:]), list(axes[n:])
    layout: dict[str, Any] = {}  # where fwd's residuals are: set by fwd, read by bwd

    everything = batched_function(lambda *leaves: call.run_primal(leaves), axes, size)

    def batched_fun(*declared: Any) -> tuple:
        return everything(*declared, *lifted)

    def batched_fwd(*declared: Any) -> tuple:
        def forward(*example: Any) -> list:
            with call.substituting(example):
                out, residuals = function.fwd(*call.arguments(example))
            outs = call.outputs(out, "the fwd rule")
            res_leaves, res_tree = tree.flatten(residuals)
            is_tensor = [isinstance(r, Tensor) for r in res_leaves]
            layout.update(
                count=len(outs),
                tree=res_tree,
                is_tensor=is_tensor,
                static=[None if t else r for r, t in zip(res_leaves, is_tensor)],
            )
            return [*outs, *(r for r, t in zip(res_leaves, is_tensor) if t)]

        results = vmap_flat(forward, [*declared, *lifted], axes, size)
        count = layout["count"]
        outs = tuple(batch_first(o, a, size) for o, a in results[:count])
        layout["axes"] = [a for _, a in results[count:]]
        return outs, [r for r, _ in results[count:]]

    def batched_bwd(residual_values: list, cotangents: tuple) -> tuple:
        n_res, n_g = len(residual_values), len(cotangents)
        example_metas = [_example_meta(v, a) for v, a in zip(values[:n], axes[:n])]
        name = f"the bwd rule of {function.__name__!r}"

        def backward(*leaves: Any) -> list:
            tensors = iter(leaves[:n_res])
            res_leaves = [
                next(tensors) if t else s for t, s in zip(layout["is_tensor"], layout["static"])
            ]
            residuals = tree.unflatten(layout["tree"], res_leaves)
            g = tree.unflatten(call.out_tree, list(leaves[n_res : n_res + n_g]))
            with call.substituting([None] * n + list(leaves[n_res + n_g :])):
                cts = function.bwd(*call.nondiff_values(), residuals, g)
            return cotangent_leaves(cts, call, example_metas, name)

        g_axes = [0] * n_g
        results = vmap_flat(
            backward,
            [*residual_values, *cotangents, *lifted],
            [*layout["axes"], *g_axes, *lifted_axes],
            size,
        )
        return tuple(
            _to_input_layout(ct, ct_axis, value, axis)
            for (ct, ct_axis), value, axis in zip(results, values[:n], axes[:n])
        )

    batched = custom_vjp(batched_fun)
    batched.defvjp(batched_fwd, batched_bwd)
    batched.rename(f"vmap({function.__name__})")
    outs = batched(*values[:n])
    return outs, (0,) * len(outs)
