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

from .custom import CallInfo, CustomCall, _CustomFunction, register_rule, zeros_for
from .custom_rules import ClosureGuard, fresh_outputs, inline, nodes_at, record_on_tape
from .effects import handler
from .forward import ForwardHandler, LinearizeHandler
from .reverse import ReverseHandler
from .tensor import Tensor

__all__ = ["checkpoint"]


class Checkpointed(_CustomFunction):
    """A function whose forward pass is recomputed, not stored, under reverse mode."""

    kind = "checkpoint"

    def _check_ready(self) -> None:
        pass


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


@register_rule(ReverseHandler, "checkpoint")
def _reverse_checkpoint(rev: ReverseHandler, op: CustomCall, leaves: list, call: CallInfo):
    level = rev.level
    parents = nodes_at(leaves, level)
    # Forward pass one level out; the guard collects tracked tensors used by closure.
    guard = ClosureGuard(level, leaves, f"checkpointed {call.function.__name__!r}", capture=True)
    with handler(guard):
        outs = call.run_primal(leaves)
    captured = guard.captured
    if all(p is None for p in parents) and not captured:
        return outs
    outs = fresh_outputs(outs, level, leaves)

    def backward(g: tuple[Tensor, ...]) -> list[Any]:
        return _recompute_and_pull_back(call, leaves, captured, list(g))

    record_on_tape(rev, outs, [*parents, *nodes_at(captured, level)], backward)
    return outs


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
        in_nodes = nodes_at([*watched, *captured], level)
        seeds: dict[int, Tensor] = {}
        for o, g in zip(outs, cotangents):
            node = o._trace.get(level) if o._trace is not None else None
            if node is not None and o.dtype.kind in "fc":
                seeds[node] = g if node not in seeds else seeds[node] + g
        grads = rev.backward(seeds, in_nodes)
    finally:
        for c in captured:
            c._trace.pop(level, None)
    return [zeros_for(x) if g is None else g for g, x in zip(grads, [*leaves, *captured])]


register_rule(ForwardHandler, "checkpoint")(inline)
register_rule(LinearizeHandler, "checkpoint")(inline)
