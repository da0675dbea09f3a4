"""``checkpoint(f)``: rematerialization, trading compute for memory in reverse mode.

Under ``grad``/``vjp`` a checkpointed function runs its forward pass one level
out, so none of its intermediates are recorded: the tape keeps one entry that
holds only the function's inputs. The backward pass runs the function again
under a fresh reverse handler and pulls the cotangent back through that.
Everything else (``jvp``, ``vmap``, ``debug``) sees through it.

Tensors the function closes over (weights of a layer, say) are found by
running it and lifted into inputs of the call (:func:`kenaz.call.find_closed_over`), so they
are differentiated like arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar, overload

from .call import Call, CallFunction, CallInfo, ClosureGuard, run_call
from .effects import current_handlers
from .forward import ForwardHandler, LinearizeHandler
from .lifted import pull_back
from .mutation import ReadsRecorder
from .ops.axes import batch_size
from .vectorize import batched_function

P = ParamSpec("P")  # the function's parameters: checkpoint keeps its signature
R = TypeVar("R")

__all__ = ["checkpoint"]


class Checkpointed(CallFunction):
    """A function whose forward pass is recomputed, not stored, under reverse mode.

    Its op has a reverse rule (run the function one level out, keep only the
    inputs, recompute in the pullback) and a batching rule (a checkpoint of
    the batched function); forward mode runs the function itself.
    """

    kind = "checkpoint"
    keeps_discovery = True  # its output is the primal when nothing runs outside (_primal)

    def make_op(self, name: str) -> Call:
        return Call(name, run_call, reverse=_reverse, batch=_batch)

    def lifts_closures(self) -> bool:
        """No discovery run under forward mode alone: with no forward rule of its own, the
        call's function runs under each ``jvp``/``linearize`` handler, which sees its ops."""
        return not all(
            isinstance(h, (ForwardHandler, LinearizeHandler)) for h in current_handlers()
        )


@overload
def checkpoint(fun: Callable[P, R], *, static_argnums: Sequence[int] = ()) -> Callable[P, R]: ...
@overload
def checkpoint(
    fun: None = None, *, static_argnums: Sequence[int] = ()
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...
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


def _reverse(args: tuple, *, call: CallInfo) -> tuple:
    """The function one level out (its ops are not recorded); the pullback recomputes it.

    ``args`` are the arguments' leaves and then the tensors the function
    closes over (lifted, see :mod:`kenaz.call`): the pullback returns the
    cotangents of all of them. When no transformation is running one level
    out, the discovery run already computed the primal (see :func:`_primal`).
    """
    outs, read = _primal(args, call)

    def pullback(g: tuple) -> list:
        return pull_back(call, args, g, range(len(args)))

    pullback.keeps = read  # type: ignore[attr-defined]  # for kenaz.mutation
    return outs, pullback


def _primal(args: tuple, call: CallInfo) -> tuple[tuple, tuple]:
    """The function's outputs on ``args`` one level out, and the constants it read (which
    the recomputation will read too).

    The discovery run that found the closed-over tensors (:mod:`kenaz.call`)
    computed on plain values; when it ran on the very values of ``args`` and
    no transformation is running one level out (only the rule's
    :class:`~kenaz.call.ClosureGuard`, which the discovery run has satisfied
    by lifting every tracked tensor), no handler would see the primal run
    either: its output is the primal, and the function runs twice in all
    (here, and in the backward pass), as in JAX and PyTorch.
    """
    found = call.discovered
    if (
        found is not None
        and found.exact
        and found.ran_on(args)
        and all(type(h) is ClosureGuard for h in current_handlers())
    ):
        return tuple(call.outputs(found.output, "the function")), tuple(found.read)
    reads = ReadsRecorder(args)
    with reads:
        outs = tuple(call.run_primal(args))
    return outs, tuple(reads.read)


def _batch(op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
    """A checkpoint of the batched function: reverse mode outside the vmap still recomputes."""
    size = batch_size(values, axes)

    batched_fun = batched_function(lambda *leaves: call.run_primal(leaves), axes, size)
    batched = Checkpointed(batched_fun)
    batched.rename(f"vmap({call.function.__name__})")
    outs = batched(*values)
    return outs, (0,) * len(outs)
