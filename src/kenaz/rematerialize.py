"""``checkpoint(f)``: rematerialization, trading compute for memory in reverse mode.

Under ``grad``/``vjp`` a checkpointed function runs its forward pass one level
out, so none of its intermediates are recorded: the tape keeps one entry that
holds only the function's inputs. The backward pass runs the function again
under a fresh reverse handler and pulls the cotangent back through that.
Everything else (``jvp``, ``vmap``, ``debug``) sees through it.

Tensors the function closes over (weights of a layer, say) are found while
the forward pass runs and differentiated like inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .call import Call, CallFunction, CallInfo, run_call, zeros_for
from .effects import handler
from .ops.axes import batch_size
from .reverse import ReverseHandler
from .tensor import Tensor
from .vectorize import batched_function

__all__ = ["checkpoint"]


class Checkpointed(CallFunction):
    """A function whose forward pass is recomputed, not stored, under reverse mode.

    Its op has a reverse rule (run the function one level out, keep only the
    inputs, recompute in the pullback) and a batching rule (a checkpoint of
    the batched function); forward mode runs the function itself.
    """

    kind = "checkpoint"

    def make_op(self, name: str) -> Call:
        return Call(name, run_call, reverse=_reverse, batch=_batch, captures=True)


def checkpoint(fun: Callable | None = None, *, static_argnums: Sequence[int] = ()) -> Callable:
    """Rematerialize ``fun``: its intermediates are recomputed in the backward pass.

    Under ``grad``/``vjp`` the forward pass of ``fun`` keeps only its inputs
    (and the tensors it closes over); the backward pass runs ``fun`` again and
    differentiates that run. Peak memory then grows with the number of
    checkpointed calls, not with the number of ops inside them, for about one
    more forward pass of compute. Checkpoints nest, and work under ``vmap``,
    ``jvp`` and higher-order derivatives (where outer levels differentiate the
    recomputation).

    Parameters
    ----------
    fun : callable
        The function to checkpoint. Used as ``checkpoint(fun)`` or as a
        decorator, with or without arguments.
    static_argnums : sequence of int, optional
        Positions of arguments that are not tensors (Python values, callables).

    Returns
    -------
    callable
        ``fun`` with the same results and derivatives.

    Examples
    --------
    >>> import kenaz
    >>> import kenaz.numpy as knp
    >>> @kenaz.checkpoint
    ... def layer(w, h):
    ...     return knp.tanh(h @ w)
    >>> def loss(w, x):
    ...     for _ in range(3):
    ...         x = layer(w, x)
    ...     return knp.sum(x)
    >>> w, x = knp.eye(2) * 0.5, knp.ones((1, 2))
    >>> kenaz.grad(loss)(w, x)
    Tensor([[0.62457646, 0.62457646],
            [0.62457646, 0.62457646]])
    """
    if fun is None:
        return lambda f: Checkpointed(f, static_argnums)
    return Checkpointed(fun, static_argnums)


remat = checkpoint


def _reverse(args: tuple, *, captured: list[Tensor], call: CallInfo) -> tuple:
    """The function one level out (its ops are not recorded); the pullback recomputes it.

    ``captured`` is filled, while the function runs, with the tensors it closes
    over that the reverse handler tracks; the pullback returns their cotangents
    after the arguments'.
    """
    outs = tuple(call.run_primal(args))

    def pullback(g: tuple) -> list:
        return _recompute_and_pull_back(call, list(args), captured, list(g))

    return outs, pullback


def _recompute_and_pull_back(
    call: CallInfo, leaves: list, captured: list[Tensor], cotangents: list[Tensor]
) -> list[Any]:
    """Run the function again under a fresh reverse handler; cotangents of leaves and captures."""
    rev = ReverseHandler()
    level = rev.level
    watched = [
        rev.watch(x) if isinstance(x, Tensor) and x.dtype.kind in "fc" else x for x in leaves
    ]
    for c in captured:  # closed-over tensors are watched in place, for this run only
        rev.track(c)
    try:
        with handler(rev):
            outs = call.run_primal(watched)
        in_nodes = [
            x._trace.get(level) if isinstance(x, Tensor) and x._trace else None
            for x in [*watched, *captured]
        ]
        seeds: dict[int, Tensor] = {}
        for o, g in zip(outs, cotangents):
            node = o._trace.get(level) if o._trace is not None else None
            if g is not None and node is not None and o.dtype.kind in "fc":
                seeds[node] = g if node not in seeds else seeds[node] + g
        grads = rev.backward(seeds, in_nodes)
    finally:
        for c in captured:
            c._trace.pop(level, None)
    return [zeros_for(x) if g is None else g for g, x in zip(grads, [*leaves, *captured])]


def _batch(op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
    """A checkpoint of the batched function: reverse mode outside the vmap still recomputes."""
    size = batch_size(values, axes)

    batched_fun = batched_function(lambda *leaves: call.run_primal(leaves), axes, size)
    batched = Checkpointed(batched_fun)
    batched.rename(f"vmap({call.function.__name__})")
    outs = batched(*values)
    return outs, (0,) * len(outs)
