"""Reverse mode: ``vjp``, ``grad`` and ``value_and_grad``.

The handler appends one entry to a tape (a Wengert list) for each op with a
tracked input: the output's node number and, for each tracked input, its node
number and its pullback. Tape order is execution order, so walking it
backwards is a reverse topological order, with no recursion. The backward
pass runs after the handler is uninstalled, so the handlers outside record it:
that is how higher-order derivatives work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, overload

import numpy as np

from . import tree
from .backend import namespace_of, one_like, zeros_on
from .call import Call, ClosureGuard, fresh_outputs
from .checks import (
    check_complex_inputs,
    check_inputs,
    check_integer_cotangent,
    check_tangent,
    grad_complex_error,
    grad_output_error,
    normalize_argnums,
    select,
)
from .convert import leaf_tensor, perform_stacked
from .effects import (
    Handler,
    Op,
    enter_phase,
    handler,
    identity,
    leave_phase,
    perform_args,
    run_in,
)
from .mutation import check_saved
from .rule_tables import kept_by
from .tensor import Tensor, _make, holds_tensor, tracked_records
from .transform import (
    TapeHandler,
    distinct,
    forget_level,
    gc_pause,
    no_context,
    pause_gc,
    placed,
    resume_gc,
    wraps,
    zero_derivative,
    zeros_like,
)

__all__ = ["vjp", "grad", "value_and_grad", "record", "pull_back"]

SEQUENCES = (list, tuple)  # what may hold tensors as an op's argument (kenaz.convert)

P = ParamSpec("P")  # the user function's parameters, kept by grad and value_and_grad
Out = TypeVar("Out")
Aux = TypeVar("Aux")
First = TypeVar("First")  # the type of the first argument: the gradient's, for argnums=0
Pullback = Callable[[Any], tuple[Any, ...]]


class ReverseHandler(TapeHandler):
    """Records a tape of the ops that depend on the watched inputs."""

    # self.tape (made by TapeHandler): (output node(s), [(input node, pullback, saved)], op)
    tape: list[tuple[Any, list[tuple[int, Callable, Any]], Op]]
    # Noted by `record`: the input and output leaves, structures and nodes (None: constant)
    inputs: list[Any]
    outputs: list[Any]
    in_tree: Any
    out_tree: Any
    in_nodes: list[int | None]
    out_nodes: list[int | None]
    aux: Any  # f's auxiliary value (has_aux)

    def handle(self, op: Op, args: tuple, params: dict) -> Any:
        if op.reverse is not None:  # a joint rule: outputs and pullback together
            return self.handle_joint(op, args, params)
        if not op.differentiable:
            return perform_args(op, args, params)
        level = self.level
        if len(args) == 2:  # binary, and below unary: unrolled (no loop, no pairs to build)
            x, y = args
            if isinstance(x, Tensor):
                trace = x._trace
                node_x = trace.get(level) if trace else None
            elif isinstance(x, SEQUENCES) and holds_tensor(x):  # a constant: no tuple built
                return perform_stacked(self, op, args, params)  # kenaz.convert's one rule
            else:
                node_x = None
            if isinstance(y, Tensor):
                trace = y._trace
                node_y = trace.get(level) if trace else None
            elif isinstance(y, SEQUENCES) and holds_tensor(y):
                return perform_stacked(self, op, args, params)
            else:
                node_y = None
            out = perform_args(op, args, params)  # after the scan: a list must be stacked first
            if node_x is None and node_y is None:
                return out  # nothing here depends on the watched inputs
            if op.multiple_results:
                if not _any_float(out):
                    return out
            elif out.dtype.kind not in "fc":
                return out  # integer and boolean outputs carry no gradient
            makers, saves = op.vjp, op.saves
            if makers is None:  # a jvp rule only: transposed
                makers = _transposed_jvp_makers(op)
            # The loop's triples below, for x and y (no `**params` when empty: a dict per
            # edge; `kept_by` called only for a rule that keeps something)
            edges = []
            if node_x is not None and (maker := makers[0]) is not None:
                kept = None if saves[0] is None else kept_by(saves, 0, out, args)
                pullback = maker(out, x, y, **params) if params else maker(out, x, y)
                edges.append((node_x, pullback, kept))
            if node_y is not None and (maker := makers[1]) is not None:
                kept = None if saves[1] is None else kept_by(saves, 1, out, args)
                pullback = maker(out, x, y, **params) if params else maker(out, x, y)
                edges.append((node_y, pullback, kept))
        elif len(args) == 1:
            x = args[0]
            if isinstance(x, Tensor):
                trace = x._trace
                node_x = trace.get(level) if trace else None
            elif isinstance(x, SEQUENCES) and holds_tensor(x):
                return perform_stacked(self, op, args, params)
            else:
                node_x = None
            out = perform_args(op, args, params)
            if node_x is None:
                return out
            if op.multiple_results:
                if not _any_float(out):
                    return out
            elif out.dtype.kind not in "fc":
                return out
            makers = op.vjp
            maker = (_transposed_jvp_makers(op) if makers is None else makers)[0]
            edges = []
            if maker is not None:
                saves = op.saves
                kept = None if saves[0] is None else kept_by(saves, 0, out, args)
                pullback = maker(out, x, **params) if params else maker(out, x)
                edges.append((node_x, pullback, kept))
        else:
            # `tracked_records(op.name, args, level)`, inlined: the (position, node) pairs
            # of the tracked arguments. The call alone was 3% of grad's time per op.
            tracked = []
            position = 0
            for a in args:
                if isinstance(a, Tensor):
                    trace = a._trace
                    if trace:
                        node = trace.get(level)
                        if node is not None:
                            tracked.append((position, node))
                elif isinstance(a, SEQUENCES) and holds_tensor(a):
                    return perform_stacked(self, op, args, params)
                position += 1
            out = perform_args(op, args, params)
            if not tracked:
                return out
            if op.multiple_results:
                if not _any_float(out):
                    return out
            elif out.dtype.kind not in "fc":
                return out
            makers, saves = op.vjp, op.saves
            if makers is None:  # a jvp rule only: transposed
                makers = _transposed_jvp_makers(op)
            # One (parent node, pullback, kept) triple per tracked argument with a rule; an
            # argument without one (an index, a condition) gets no cotangent. `kept` is what
            # the pullback keeps as the op states it (`Op.saves`: None, one value, or a
            # tuple of them): what kenaz.mutation checks for in-place changes before a
            # backward pass.
            edges = []
            for i, parent in tracked:  # a loop, not a comprehension: no frame of its own
                maker = makers[i]
                if maker is not None:
                    kept = None if saves[i] is None else kept_by(saves, i, out, args)
                    pullback = maker(out, *args, **params) if params else maker(out, *args)
                    edges.append((parent, pullback, kept))
        if op.multiple_results:
            self.record(out, edges, op)
            return out
        node = self.node_count  # `track(out)`, inlined: this runs for every op
        self.node_count = node + 1
        if out._trace is None:
            out._trace = {level: node}
        else:
            out._trace[level] = node
        self.tape.append((node, edges, op))
        return out

    def handle_joint(self, op: Op, args: tuple, params: dict, guard: Handler | None = None):
        """An op's joint rule, run one level out (under ``guard``, for a call's); the tape
        gets one entry whose pullback is the rule's."""
        parents = tracked_records(op.name, args, self.level)
        if not parents:
            return perform_args(op, args, params)  # outer handlers see the op
        with handler(guard) if guard is not None else no_context:
            out, pullback = op.reverse(args, **params)
        return self.record_joint(op, out, pullback, args, parents)

    def handle_call(self, call: Call, args: tuple, params: dict) -> Any:
        """A call: its reverse rule, or (without one) its function under this handler.

        The call's arguments include the tensors its function closes over
        (lifted: see :mod:`kenaz.call`); the rule runs under a
        :class:`~kenaz.call.ClosureGuard`, which refuses any other tensor of
        this level it reads. (The pullback needs no guard: what it reads is a
        constant to this level, whose derivatives the rule's inputs carry.)
        """
        if call.reverse is None:
            return self.run_call(call, args, params)
        guard = ClosureGuard(self.level, args, f"the reverse rule of {call.name}")
        return self.handle_joint(call, args, params, guard)

    def record_joint(
        self, op: Op, out: Any, pullback: Callable, inputs: Sequence[Any], parents: list
    ) -> Any:
        """One tape entry for the outputs ``out`` of a joint rule, pulled back by ``pullback``."""
        outs = fresh_outputs(out if op.multiple_results else (out,), self.level, inputs)
        if not any(o.dtype.kind in "fc" for o in outs):
            return tuple(outs) if op.multiple_results else outs[0]
        shared = SharedPullback(pullback, [(i, inputs[i]) for i, _ in parents])
        # A joint rule keeps what it was given and what it returned, and what its pullback
        # states it keeps besides (`pullback.keeps`: what checkpoint's recomputation reads):
        # kenaz.mutation checks them for in-place changes.
        kept = (*inputs, *outs, *getattr(pullback, "keeps", ()))
        edges = [(node, shared.part(k), kept) for k, (_, node) in enumerate(parents)]
        if op.multiple_results:
            self.record(outs, edges, op)
            return tuple(outs)
        self.tape.append((self.track(outs[0]), edges, op))
        return outs[0]

    def record(
        self, outs: Sequence[Tensor], edges: list[tuple[int, Callable, Any]], op: Op
    ) -> None:
        """Append a tape entry for several outputs ``outs`` of ``op``.

        ``edges`` pairs each parent's node number with its pullback (and what it
        keeps, for :mod:`kenaz.mutation`), which
        receives the tuple of the outputs' cotangents, ``None`` for an output
        that received none (a symbolic zero: never an array of zeros, so a rule
        skips the terms it would multiply, which may be infinite). The entry is
        skipped when no output received a cotangent. Multiple-result ops and
        calls record their entries this way.
        """
        nodes = []  # (a loop: a generator would make `self` a cell)
        for o in outs:
            nodes.append(self.track(o))
        self.tape.append((tuple(nodes), edges, op))

    def backward(
        self, seeds: dict[int, Tensor], nodes: Sequence[int | None], consume: bool = False
    ) -> list[Tensor | None]:
        """Propagate cotangents from ``seeds`` (node -> cotangent) back to ``nodes``.

        With ``consume``, each entry is dropped from the tape once used, so its
        residuals are freed during the pass (for a pullback called only once).
        """
        if self.mutations:  # a Tensor changed in place while this tape lived
            check_saved(self.tape, self.mutations)
        # Node numbers are dense, so the cotangents live in a list indexed by node.
        cotangents: list[Any] = [None] * self.node_count
        for node, g in seeds.items():
            cotangents[node] = g
        tape = self.tape
        position = len(tape)
        while position:
            position -= 1
            node, edges, _ = tape.pop() if consume else tape[position]
            if type(node) is tuple:
                g = _take_cotangents(cotangents, node)
            else:
                g = cotangents[node]
                cotangents[node] = None  # used once: free it as the walk goes on
            if g is None:
                continue
            for parent, pullback, _ in edges:
                contribution = g if pullback is identity else pullback(g)
                previous = cotangents[parent]
                if previous is not None:  # several paths lead here: sum them
                    contribution = previous + contribution
                cotangents[parent] = contribution
        if len(nodes) == 1:  # one input, the common case: no comprehension's frame
            node = nodes[0]
            return [None if node is None else cotangents[node]]
        found = []  # (a loop: a comprehension would make `cotangents` a cell, read per entry)
        for n in nodes:
            found.append(None if n is None else cotangents[n])
        return found


def _any_float(outs: Sequence[Tensor]) -> bool:
    """Whether any of a multiple-result op's outputs is float or complex (integer and
    boolean outputs carry no gradient)."""
    return any(o.dtype.kind in "fc" for o in outs)


class SharedPullback:
    """One call of a joint pullback, shared by the per-input pullbacks of a tape entry.

    The tape calls one pullback per tracked input with the same cotangent;
    the joint function runs once and each input takes its part (zeros for a
    ``None``). The result is dropped once every consumer has taken its part.
    """

    __slots__ = ("backward", "inputs", "remaining", "cotangent", "result")

    def __init__(self, backward: Callable[[Any], Sequence[Any]], inputs: list[tuple[int, Any]]):
        self.backward = backward
        # (position, shape, dtype, backend) of each consumer's input: not the input itself,
        # which the tape must not keep alive (backend: None for NumPy).
        self.inputs = [(i, x.shape, x.dtype, namespace_of(x)) for i, x in inputs]
        self.remaining = 0
        self.cotangent: Any = None
        self.result: Sequence[Any] | None = None

    def part(self, consumer: int) -> Callable[[Any], Any]:
        return lambda g: self._take(g, consumer)

    def _take(self, g: Any, consumer: int) -> Any:
        if self.result is None or self.cotangent is not g:
            self.cotangent, self.result, self.remaining = g, self.backward(g), len(self.inputs)
        position, shape, dtype, xp = self.inputs[consumer]
        part = self.result[position]
        self.remaining -= 1
        if self.remaining <= 0:
            self.cotangent = self.result = None
        return Tensor(zeros_on(xp, shape, dtype)) if part is None else part


def _take_cotangents(cotangents: list, nodes: tuple[int, ...]) -> tuple | None:
    """The cotangents of a multiple-result op's outputs, ``None`` for unused ones (or None)."""
    found = tuple([cotangents[n] for n in nodes])
    for n in nodes:
        cotangents[n] = None
    for g in found:  # not `.count(None)`: that calls Tensor.__eq__
        if g is not None:
            return found
    return None


# -- reverse mode of a linear map: the vjp of an op with only a jvp rule -----------------------
def _transposed_jvp_makers(op: Op) -> _Derived:
    """Vjp makers for an op that has jvp rules only: each is the transpose of its rule.

    A jvp rule is linear in the tangent, so its transpose is reverse mode
    through it (at a zero tangent: any point gives the same).
    """
    if op.jvp is None:
        raise NotImplementedError(
            f"kenaz: op {op.name!r} has no vjp rule (nor a jvp rule to transpose), so it "
            "cannot be used under grad/vjp"
        )
    return _Derived(op, op.jvp, _transposed_maker)


class _Derived:
    """``rules[i]``: the rule of argument ``i`` derived, by ``derive(op, rule, i)``, from the
    op's own rule ``i`` of the other mode (``None`` stays ``None``). Built per use, so an op
    keeps no derived state."""

    __slots__ = ("op", "rules", "derive")

    def __init__(self, op: Op, rules: Any, derive: Callable[[Op, Callable, int], Callable]):
        self.op = op
        self.rules = rules
        self.derive = derive

    def __getitem__(self, index: int) -> Callable | None:
        rule = self.rules[index]
        return None if rule is None else self.derive(self.op, rule, index)


def _transposed_maker(op: Op, rule: Callable, index: int) -> Callable:
    def maker(ans: Any, *args: Any, **params: Any) -> Callable:
        x = args[index]
        zero = zeros_like(x)

        def pullback(g: Any) -> Tensor:
            def linear(t: Tensor) -> Any:
                return rule(t, ans, *args, **params)

            if not op.multiple_results:
                return transpose(lambda t: (linear(t),), [zero], (g,))[0]
            return transpose(linear, [zero], g)[0]

        return pullback

    return maker


# -- forward mode of an op with only a vjp rule: the transpose of its pullback ----------------
def transposed_vjp_rules(op: Op) -> _Derived:
    """Jvp rules for an op that has vjp rules only: each is the transpose of its pullback.

    A pullback is linear in the cotangent, so the tangent it is the transpose
    of is reverse mode through it: the vjp of ``g -> pullback(g)`` (at a zero
    ``g``: any point gives the same) with the tangent as its cotangent. The
    transposition's own ops are performed outward, like every rule's, so the
    derived rule is differentiable to any order. (The mirror of
    :func:`_transposed_jvp_makers`; :mod:`kenaz.forward` asks for it.)
    """
    if op.vjp is None:
        raise NotImplementedError(
            f"kenaz: op {op.name!r} has no jvp rule (nor a vjp rule to transpose), so it "
            "cannot be used under jvp/linearize/jacfwd"
        )
    return _Derived(op, op.vjp, _transposed_pullback)


def _transposed_pullback(op: Op, maker: Callable, index: int) -> Callable:
    def rule(tangent: Any, ans: Any, *args: Any, **params: Any) -> Any:
        pullback = maker(ans, *args, **params)
        if not op.multiple_results:
            return transpose(lambda g: (pullback(g),), [zeros_like(ans)], (tangent,))[0]
        # One cotangent per float output (the others get None, as on the tape); the
        # transposition gives one tangent per output, None for the integer ones.
        floats = [k for k, o in enumerate(ans) if o.dtype.kind in "fc"]

        def linear(*cotangents: Tensor) -> tuple[Any]:
            return (pullback(placed(zip(floats, cotangents), len(ans))),)

        found = transpose(linear, [zeros_like(ans[k]) for k in floats], (tangent,))
        return placed(zip(floats, found), len(ans))

    return rule


def transpose(
    linear: Callable[..., Sequence[Any]], zeros: Sequence[Tensor], cotangents: Sequence[Any]
) -> list[Tensor]:
    """Pull ``cotangents`` back through the linear function ``linear`` (evaluated at ``zeros``).

    ``linear(*inputs)`` returns a tuple of outputs (``None`` for an output that
    does not depend on the inputs); a ``None`` cotangent is a symbolic zero,
    so its output is never seeded and the terms that lead only to it are never
    pulled back. Returns one cotangent per input (zeros where none arrives).
    """
    rev = ReverseHandler()
    watched = [rev.watch(z) for z in zeros]
    # The map computes every output, also those whose cotangent is a symbolic zero: their
    # values (infinite ones included, like svd's singular vectors at repeated singular
    # values) are never pulled back, so NumPy's warnings about them are not the user's.
    quiet = any(g is None for g in cotangents)
    with handler(rev), np.errstate(divide="ignore", invalid="ignore") if quiet else no_context:
        outs = linear(*watched)
    level = rev.level
    seeds: dict[int, Tensor] = {}
    for o, g in zip(outs, cotangents):
        if g is None or not isinstance(o, Tensor) or not o._trace:
            continue
        node = o._trace.get(level)
        if node is not None:
            seeds[node] = g if node not in seeds else seeds[node] + g
    in_nodes = [w._trace.get(level) for w in watched]
    forget_level([o for o in outs if isinstance(o, Tensor)], level)
    grads = rev.backward(seeds, in_nodes, consume=True)
    return [zeros_like(z) if g is None else g for g, z in zip(grads, zeros)]


@overload
def vjp(
    f: Callable[..., Out], *primals: Any, has_aux: Literal[False] = False, allow_int: bool = False
) -> tuple[Out, Pullback]: ...
@overload
def vjp(
    f: Callable[..., tuple[Out, Aux]],
    *primals: Any,
    has_aux: Literal[True],
    allow_int: bool = False,
) -> tuple[Out, Pullback, Aux]: ...
def vjp(
    f: Callable[..., Any], *primals: Any, has_aux: bool = False, allow_int: bool = False
) -> Any:
    """Evaluate ``f(*primals)`` and return its vector-Jacobian product function.

    Parameters
    ----------
    f : callable
        Function of the pytrees ``primals`` returning a pytree of tensors
        (and an auxiliary value, with ``has_aux``).
    *primals
        Pytrees of tensors, arrays or numbers at which to differentiate.
    has_aux : bool, optional
        If True, ``f`` returns ``(output, aux)``; ``aux`` is returned as is.
    allow_int : bool, optional
        Accept integer and boolean primals, held constant: their cotangents
        are ``kenaz.float0`` arrays (no derivative; arithmetic refuses them).
        Without it they are refused, as by ``grad``. It also lets the
        pullback take any cotangent for an integer output (ignored); without
        it only a float0 one, as in JAX.

    Returns
    -------
    out, pullback[, aux]
        ``pullback(cotangent)`` takes a pytree shaped like ``out`` and returns
        a tuple of cotangents shaped like ``primals``. It can be called many
        times; the tape lives as long as it does.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import vjp
    >>> out, pullback = vjp(knp.sin, 0.0)
    >>> pullback(1.0)
    (Tensor(1.),)
    """
    rev = record(f, primals, has_aux, allow_int)
    out_flat, out_tree = rev.outputs, rev.out_tree

    def pullback(cotangent: Any) -> tuple[Any, ...]:
        ct_flat, ct_tree = tree.flatten(cotangent)
        if ct_tree != out_tree:
            raise ValueError(
                f"kenaz.vjp: the cotangent's structure {ct_tree} differs from the "
                f"output's {out_tree}"
            )
        checked: list[Tensor | None] = []
        for o, ct in zip(out_flat, ct_flat):
            if o.dtype.kind not in "fc":  # no derivative: only float0 (or allow_int) is taken
                check_integer_cotangent(o, ct, allow_int, "vjp")
                checked.append(None)
            else:
                checked.append(
                    check_tangent(o, leaf_tensor(ct, "vjp"), "vjp", "cotangent", "an output")
                )
        return tree.unflatten(rev.in_tree, pull_back(rev, checked, reusable=True))

    out = tree.unflatten(out_tree, out_flat)
    return (out, pullback, rev.aux) if has_aux else (out, pullback)


def record(
    f: Callable,
    primals: tuple[Any, ...],
    has_aux: bool,
    allow_int: bool,
    where: str = "vjp",
    positions: Sequence[int] | None = None,
    pause_gc: bool = True,
) -> ReverseHandler:
    """Run ``f(*primals)`` under a new reverse level, returned with its inputs and outputs
    noted on it: the forward pass of ``vjp``, ``grad`` and ``jacrev``. Input errors name
    ``where`` and the arguments by ``positions``; ``pause_gc``: pause the collector."""
    rev = ReverseHandler()
    rev.inputs, rev.in_tree, rev.in_nodes, rev.outputs, rev.out_tree, rev.out_nodes, rev.aux = (
        rev.run(f, primals, allow_int, where, positions, "vjp", has_aux, pause_gc)
    )
    return rev


def pull_back(rev: ReverseHandler, cotangents: Sequence[Any], reusable: bool) -> list[Any]:
    """The backward pass of the level ``rev`` that :func:`record` ran, from the output
    ``cotangents`` (None for none): the inputs' cotangents (distinct; zeros where nothing
    arrives). Not ``reusable``: consumes the tape, inside its caller's pause of the collector
    (a reusable one pauses it itself for a long tape)."""
    seeds: dict[int, Tensor] = {}
    for node, ct in zip(rev.out_nodes, cotangents):
        if node is not None and ct is not None:
            seeds[node] = ct if node not in seeds else seeds[node] + ct
    arguments = (seeds, rev.in_nodes, not reusable)
    if reusable and len(rev.tape) > 64:  # a pause costs as much as a few entries' pullbacks
        with gc_pause:
            grads = run_in("vjp: backward", rev.backward, arguments)
    else:  # a short tape, or inside the caller's pause
        grads = run_in("vjp: backward", rev.backward, arguments)
    if len(grads) == 1:  # one input, the common case: no comprehension's frame
        if grads[0] is None:
            grads[0] = zero_derivative(rev.inputs[0])
        return grads
    grads = [zero_derivative(x) if g is None else g for g, x in zip(grads, rev.inputs)]
    return distinct(grads)


# Types: with the default argnums=0 the gradient has the first argument's type (a
# Tensor, a dict of them...) and the value the output's; other argnums keep the
# parameters and give the gradients as Any (a tuple for a sequence of argnums).
@overload
def value_and_grad(
    f: Callable[Concatenate[First, P], Out],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[First, P], tuple[Out, First]]: ...
@overload
def value_and_grad(
    f: Callable[Concatenate[First, P], tuple[Out, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[First, P], tuple[tuple[Out, Aux], First]]: ...
@overload
def value_and_grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: Literal[False] = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[Tensor, Any]]: ...
@overload
def value_and_grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    *,
    has_aux: Literal[True],
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[tuple[Tensor, Any], Any]]: ...
@overload
def value_and_grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[Any, Any]]: ...
def value_and_grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, tuple[Any, Any]]:
    """Return a function computing both ``f`` and its gradient.

    Parameters
    ----------
    f : callable
        Function returning a real scalar (0-d) tensor, or ``(scalar, aux)``
        with ``has_aux``.
    argnums : int or tuple of ints, optional
        Which positional arguments to differentiate with respect to.
    has_aux : bool, optional
        ``f`` returns a pair ``(output, aux)``.
    allow_int : bool, optional
        Accept integer and boolean inputs, held constant: their gradient is a
        ``kenaz.float0`` array of their shape (JAX's marker for "no
        derivative", which arithmetic refuses), never a zero that looks
        like an answer.
    holomorphic : bool, optional
        ``f`` is a holomorphic function of complex inputs with a complex
        output; the gradient is its complex derivative ``f'(z)``. Without it
        the output must be real, and the gradient with respect to a complex
        input ``z = x + iy`` is ``df/dx - i df/dy`` (JAX's convention).

    Returns
    -------
    callable
        ``g(*args, **kwargs) -> (value, gradient)`` or
        ``((value, aux), gradient)``; ``gradient`` has the structure of the
        differentiated argument(s): a tuple when ``argnums`` is a tuple.

    Examples
    --------
    >>> from kenaz import value_and_grad
    >>> value_and_grad(lambda x: x**2 + 3 * x + 2)(5.0)
    (Tensor(42.), Tensor(13.))
    """

    vg = value_and_grad_of(f, argnums, has_aux, allow_int, holomorphic, "value_and_grad")
    return wraps(f, vg)


def value_and_grad_of(
    f: Callable[P, Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    allow_int: bool,
    holomorphic: bool,
    where: str,
    value: bool = True,
) -> Callable[P, Any]:
    """:func:`value_and_grad` (or, without ``value``, :func:`grad`), its errors naming
    ``where``, without ``f``'s name and documentation (copying them costs a few
    microseconds: for a caller that makes one per call, as ``hvp`` does)."""
    # For each number of arguments seen: argnums, and whether they are all of them in order
    normalized: dict[int, tuple[tuple[int, ...], bool]] = {}
    if type(argnums) is tuple and argnums and argnums == tuple(range(len(argnums))):
        normalized[len(argnums)] = (argnums, True)  # all of them, in order (`hvp`'s, per call)
    single = isinstance(argnums, (int, np.integer))

    def value_and_grad_f(*args: Any, **kwargs: Any):
        known = normalized.get(len(args))
        if known is None:
            nums = normalize_argnums(argnums, len(args), where)
            known = normalized[len(args)] = (nums, nums == tuple(range(len(args))))
        nums, every = known
        if holomorphic:  # the integer inputs' error first, as for any other input
            check_inputs([(n, args[n]) for n in nums], allow_int, where)
            check_complex_inputs([(n, args[n]) for n in nums], where)
        if every and not kwargs:
            function, selected = f, args
        else:
            function, selected = select(f, args, kwargs, nums)
        # `with scope("grad"), gc_pause:` without its two objects and four calls
        phase = enter_phase("grad")
        pause_gc()
        try:
            rev = record(function, selected, has_aux, allow_int, where, nums, pause_gc=False)
            out = tree.unflatten(rev.out_tree, rev.outputs)
            if not isinstance(out, Tensor) or out.shape != () or out.dtype.kind not in "fc":
                raise TypeError(grad_output_error(out, where))
            if (out.dtype.kind == "c") != holomorphic:
                raise TypeError(grad_complex_error(out, holomorphic, where))
            one = _make(one_like(out, out.dtype))  # on out's backend
            grads = tree.unflatten(rev.in_tree, pull_back(rev, [one], reusable=False))
            # The tape consumed and freed inside the pause: its objects then leave no debt
            # that would make the collector traverse them on resuming.
            aux = rev.aux
            del rev
        finally:
            resume_gc()
            leave_phase(phase)
        gradient = grads[0] if single else grads
        if not value:
            return (gradient, aux) if has_aux else gradient
        return ((out, aux) if has_aux else out), gradient

    return value_and_grad_f


@overload
def grad(
    f: Callable[Concatenate[First, P], Any],
    argnums: Literal[0] = 0,
    has_aux: Literal[False] = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[First, P], First]: ...
@overload
def grad(
    f: Callable[Concatenate[First, P], tuple[Any, Aux]],
    argnums: Literal[0] = 0,
    *,
    has_aux: Literal[True],
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[Concatenate[First, P], tuple[First, Aux]]: ...
@overload
def grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, Any]: ...
def grad(
    f: Callable[P, Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable[P, Any]:
    """Return a function computing the gradient of the scalar function ``f``.

    Same parameters as :func:`value_and_grad`; returns only the gradient
    (and ``aux`` with ``has_aux``: ``(gradient, aux)``).

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> from kenaz import grad
    >>> grad(knp.sin)(0.0)
    Tensor(1.)
    >>> grad(grad(grad(grad(knp.sin))))(0.5) == knp.sin(0.5)
    Tensor(True)
    """
    grad_f = value_and_grad_of(f, argnums, has_aux, allow_int, holomorphic, "grad", False)
    return wraps(f, grad_f)
