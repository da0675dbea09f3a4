"""``checkpoint(f)``: rematerialization, trading compute for memory in reverse mode.

Under ``grad``/``vjp`` a checkpointed function runs its forward pass one level
out, so none of its intermediates are recorded: the tape keeps one entry that
holds only the function's inputs. The backward pass runs the function again
under a fresh reverse handler and pulls the cotangent back through that.
Everything else (``jvp``, ``vmap``, ``debug``) sees through it.

Tensors the function closes over (weights of a layer, say) are found by
running it and lifted into inputs of the call (:mod:`kenaz.call`), so they
are differentiated like arguments. Under a ``grad`` that run is the forward
pass itself (:class:`ForwardPass`): the function runs twice in all, forward
and recompute, as in JAX and PyTorch.

Under a ``vmap`` inside a ``grad``, the call's batching rule makes it a
checkpoint of the batched function one level out, whose own run finds what
it closes over (and is the forward pass). So the ``vmap``'s level runs no
discovery of its own: twice in all again. Only a per-example tensor of that
``vmap`` read through a closure needs one (it must be lifted where the
``vmap`` batches it): the run one level out meets it, stops
(:class:`ClosedOverView`), and the call is performed again with the
discovery run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar, overload

from .call import Call, CallFunction, CallInfo, ClosureGuard, Discovery, run_call
from .effects import (
    current_handlers,
    installed_stack,
    outside_innermost,
)
from .forward import ForwardHandler, LinearizeHandler
from .lifted import pull_back
from .mutation import ReadsRecorder
from .ops.axes import batch_size
from .ops.elementwise import alias
from .reverse import ReverseHandler
from .tensor import Tensor
from .vectorize import BatchedTensor, BatchHandler, batched_function

# The handlers under which a checkpoint is no op (no reverse mode to save memory for).
_SEES_THROUGH = (ForwardHandler, LinearizeHandler, BatchHandler)

# The vmap whose level performs a checkpoint with no discovery run (see the module doc),
# while it does so.
_undiscovered: ContextVar[BatchHandler | None] = ContextVar("undiscovered", default=None)


class ClosedOverView(Exception):
    """A checkpointed function read a per-example tensor of ``batcher`` (a ``vmap`` not
    installed where the function runs) that its call did not lift: the call at that
    ``vmap``'s level is performed again, after a discovery run that lifts it."""

    def __init__(self, batcher: BatchHandler) -> None:
        super().__init__(
            "kenaz.checkpoint: the function read a per-example tensor of a running vmap "
            "through a closure, outside that vmap, and no checkpoint call lifted it (a bug "
            "of kenaz's: please report it, with the function)"
        )
        self.batcher = batcher


def _check_views(tensors: Sequence[Any]) -> None:
    """Raise :class:`ClosedOverView` for a view among ``tensors`` of a running ``vmap``
    that is not installed here (its batching rule is running one level out). A view of a
    finished ``vmap`` is left to raise its own error when used."""
    for tensor in tensors:
        if type(tensor) is BatchedTensor:
            batcher = tensor._batcher
            if batcher.alive and all(h is not batcher for h in current_handlers()):
                raise ClosedOverView(batcher)


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
    reads_views = False  # whether it was seen reading a vmap's view through a closure

    def make_op(self, name: str) -> Call:
        return Call(name, run_call, reverse=_reverse, batch=_batch)

    def transparent_here(self) -> bool:
        """With no ``grad``/``vjp`` running, a checkpoint saves nothing: under ``jvp``,
        ``linearize`` and ``vmap`` alone the function just runs (what each would do with
        the call: run it, or batch it whole), with no discovery run."""
        return all(type(h) in _SEES_THROUGH for h in current_handlers())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        stack = installed_stack()
        batcher = stack[1] if stack else None
        if type(batcher) is not BatchHandler or self.reads_views:
            return super().__call__(*args, **kwargs)
        # Under a vmap: first with no discovery run at its level (see the module doc).
        token = _undiscovered.set(batcher)
        try:
            return super().__call__(*args, **kwargs)
        except ClosedOverView as stopped:
            if stopped.batcher is not batcher:
                raise
        finally:
            _undiscovered.reset(token)
        # A view of this vmap is closed over: lifted by a discovery run here, now and at
        # the function's later calls (a layer's, in a loop: stopped once, not at each).
        self.reads_views = True
        return super().__call__(*args, **kwargs)

    def discover(self, call: CallInfo, leaves: list[Any]) -> Discovery:
        """Under a ``grad``/``vjp`` (the innermost handler) that tracks an argument, the
        discovery run is the forward pass: run one level out, as the reverse rule would run
        it, noting the tensors of that ``grad`` the function reads without being given
        them (:class:`ForwardPass`). Under a ``vmap`` that batches an argument, none at
        first (see the module doc). Elsewhere, a run on plain values (CallFunction's)."""
        stack = installed_stack()
        innermost = stack[1]
        if innermost is _undiscovered.get() and any(
            type(x) is BatchedTensor and x._batcher is innermost for x in leaves
        ):
            # Its batching rule runs next: a checkpoint of the batched function, one level
            # out, whose discovery finds what it closes over (or stops at a view of this
            # vmap, which __call__ then lifts with a discovery run here).
            return Discovery([], [], leaves, None, None)
        level = getattr(innermost, "level", None)
        if type(innermost) is not ReverseHandler or not any(
            isinstance(x, Tensor) and x._trace and level in x._trace for x in leaves
        ):
            # (under a grad that tracks no argument, it passes the op on: no rule runs)
            found = super().discover(call, leaves)
            _check_views(found.captured)  # (a view of a vmap running its rule: run again)
            return found
        with outside_innermost():
            # Fresh identities one level out (the outer transformations record each as the
            # tensor it stands for), so that reading an argument through a closure as well
            # is told from reading it as the argument: each use has a derivative of its own.
            fresh = [
                alias(x) if isinstance(x, Tensor) and x._trace and level in x._trace else x
                for x in leaves
            ]
            forward = ForwardPass(innermost, fresh)
            with forward:
                output = self.fun(*call.arguments(fresh))
            outside = stack[0] or ()  # Discovery's empty stack is `()`; the stack's own, None
            return Discovery(forward.captured, forward.read, leaves, output, outside)


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

    The discovery run that found the closed-over tensors computed the primal
    already when it ran on ``args`` on the stack this rule runs on (besides the
    rule's :class:`~kenaz.call.ClosureGuard`, which the discovery run satisfied
    by lifting every tensor of this level it read): one level out, as the
    :class:`ForwardPass`, or on plain values with no transformation outside.
    Its output is then the primal, and the function runs twice in all (the
    forward pass, and the recomputation), as in JAX and PyTorch.
    """
    found = call.discovered
    if found is not None and found.on_stack is not None and found.ran_on(args):
        outside, innermost = installed_stack()
        if type(innermost) is ClosureGuard and (
            outside is found.on_stack or not (outside or found.on_stack)
        ):
            return tuple(call.outputs(found.output, "the function")), tuple(found.read)
    reads = ReadsRecorder(args)
    with reads:
        outs = tuple(call.run_primal(args))
    return outs, tuple(reads.read)


class ForwardPass(ReadsRecorder):
    """Passes every op one level out of a ``grad``'s handler (what its reverse rule would
    run on), noting the tensors the run reads that it was not given and did not make:
    ``captured``, those the ``grad`` tracks (closed over: lifted into inputs of the
    call), and ``read``, the others (constants the recomputation reads too).

    It stands in for the ``grad`` while it runs: ``level`` and ``differentiates`` are
    the grad's, so conversions and in-place writes of the grad's tensors are refused as
    they are while it runs, and a call's discovery run inside lifts them. With no
    handler outside it, a call inside runs its function here (``sees_through_calls``):
    passed on, it would run on plain values out of sight.
    """

    sees_through_calls = True

    def __init__(self, grad: ReverseHandler, given: list[Any]) -> None:
        super().__init__(given)
        self.level = grad.level
        self.differentiates = grad.differentiates
        self.captured: list[Tensor] = []

    def _found(self, tensor: Tensor) -> None:
        _check_views((tensor,))  # (a view of a vmap running its rule: run again, see above)
        trace = tensor._trace
        tracked = trace is not None and self.level in trace
        (self.captured if tracked else self.read).append(tensor)


def _batch(op: Call, values: list, axes: list, *, call: CallInfo) -> tuple:
    """A checkpoint of the batched function: reverse mode outside the vmap still recomputes."""
    size = batch_size(values, axes)

    batched_fun = batched_function(lambda *leaves: call.run_primal(leaves), axes, size)
    batched = Checkpointed(batched_fun)
    batched.rename(f"vmap({call.function.__name__})")
    outs = batched(*values)
    return outs, (0,) * len(outs)
