"""Exceptions: a function raising at any op, inside any nesting of transformations,
leaves no handler installed, keeps no tape alive and does not disturb the next
computation.

The raising is done by a handler (:class:`RaiseAtOp`) that raises at its n-th op,
installed at a random depth of the nesting: innermost it interrupts the user's
function, outermost it sees every op of every level (tangents, backward passes)
and so can interrupt a backward pass or a jvp rule half-way.
``KENAZ_EXCEPTION_TRIALS`` (default 1200, so that each of the 1,110 nestings runs)
sets the number of trials.
"""

from __future__ import annotations

import gc
import io
import itertools
import os
import random
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, handler
from kenaz.effects import current_handlers, current_scopes
from kenaz.ops import batching

from ._support import Boom, CountOps, RaiseAtOp, env_int

TRIALS = env_int("KENAZ_EXCEPTION_TRIALS", 1200)

X = np.array([0.3, -0.7, 1.1])
TANGENT = np.array([0.5, -1.0, 0.25])
WEIGHTS = np.array([1.0, 2.0, -1.5])

Scalar = Callable[[Any], Any]


def base(x: Any) -> Any:
    """A scalar function of a 3-vector touching several op families."""
    y = knp.sin(x) * knp.exp(x / 3.0) + x**2
    z = knp.concatenate([y, knp.tanh(y[:2])])
    return knp.sum(z * knp.cumsum(z)) / knp.max(knp.abs(z) + 1.0)


# Each lift turns a scalar function of a 3-vector into another one, through one
# transformation, so that any sequence of lifts is a valid nesting.
LIFTS: dict[str, Callable[[Scalar], Scalar]] = {
    "grad": lambda f: lambda x: knp.sum(kenaz.grad(f)(x) * WEIGHTS),
    "value_and_grad": lambda f: lambda x: (lambda vg: vg[0] + knp.sum(vg[1]))(
        kenaz.value_and_grad(f)(x)
    ),
    "jvp": lambda f: lambda x: kenaz.jvp(f, (x,), (TANGENT,))[1],
    "vjp": lambda f: lambda x: knp.sum(kenaz.vjp(f, x)[1](1.0)[0] * WEIGHTS),
    "linearize": lambda f: lambda x: kenaz.linearize(f, x)[1](TANGENT),
    "debug": lambda f: kenaz.debug(f, file=io.StringIO()),
    "vmap": lambda f: lambda x: knp.sum(kenaz.vmap(f)(knp.stack([x, 2.0 * x]))),
    "vmap(loop)": lambda f: lambda x: knp.sum(
        kenaz.vmap(f, method="loop")(knp.stack([x, 2.0 * x]))
    ),
    "checkpoint": lambda f: kenaz.checkpoint(f),  # re-runs f in the backward pass
    "graph": lambda f: lambda x: kenaz.graph(f)(x).result,
}

NESTINGS: list[tuple[str, ...]] = [
    nesting for depth in (1, 2, 3) for nesting in itertools.product(LIFTS, repeat=depth)
]


def build(nesting: tuple[str, ...], at: int, make_handler: Callable[[], Handler] | None) -> Scalar:
    """The nested function ``lift_0(lift_1(...lift_k(base)))``, with a fresh handler from
    ``make_handler`` installed inside the first ``at`` lifts (``at == 0``: around the whole
    computation; ``at == len(nesting)``: around ``base`` only)."""

    def with_handler(f: Scalar) -> Scalar:
        def wrapped(x: Any) -> Any:
            context: AbstractContextManager[Any] = (
                handler(make_handler()) if make_handler else nullcontext()
            )
            with context:
                return f(x)

        return wrapped

    f: Scalar = base
    for depth, name in enumerate(reversed(nesting)):
        if len(nesting) - depth == at:
            f = with_handler(f)
        f = LIFTS[name](f)
    if at == 0:
        f = with_handler(f)
    return f


def kenaz_handlers_alive() -> list[Handler]:
    """Every transformation handler object still alive (after a full collection)."""
    gc.collect()
    return [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, Handler) and type(obj).__module__.startswith("kenaz.")
    ]


def test_nestings_cover_every_transformation_at_every_depth() -> None:
    """The trial loop below runs every ordered nesting of depth 1 to 3 at least once."""
    assert len(NESTINGS) == sum(len(LIFTS) ** d for d in (1, 2, 3))
    assert TRIALS >= len(NESTINGS) or "KENAZ_EXCEPTION_TRIALS" in os.environ


@pytest.mark.slow  # 1,200 nested transformations: 15-30 s
def test_raise_at_a_random_op_in_every_nesting() -> None:
    """TRIALS times: pick a nesting (each of them once, then at random) and a handler position,
    count the ops seen there, raise at a random one of them. The exception comes out
    unchanged, the handler stack and the phase marks are empty afterwards, the same
    nested computation then gives its reference value, and no transformation handler
    (so no tape) survives the trials.

    Handlers alive before the trials (kept by an earlier test in this process, which pytest
    or pytest-xdist may have run first) are set aside: the trials must leave none of their own."""
    rng = random.Random(8)
    before = kenaz_handlers_alive()
    counts: dict[tuple[tuple[str, ...], int], int] = {}
    references: dict[tuple[str, ...], float] = {}
    order = rng.sample(NESTINGS, len(NESTINGS))  # every nesting once, in random order,
    order += [rng.choice(NESTINGS) for _ in range(TRIALS - len(order))]  # then at random
    for trial in range(TRIALS):
        nesting = order[trial]
        at = rng.randint(0, len(nesting))
        if nesting not in references:
            references[nesting] = float(build(nesting, 0, None)(X))
        key = (nesting, at)
        if key not in counts:
            counter = CountOps()
            build(nesting, at, lambda counter=counter: counter)(X)
            counts[key] = counter.total
        n = rng.randrange(counts[key])
        raiser = RaiseAtOp(n)  # one instance: f may run several times (loops, recomputation)
        with pytest.raises(Boom, match=f"op #{n} "):
            build(nesting, at, lambda raiser=raiser: raiser)(X)
        assert current_handlers() == (), (trial, nesting, at, n, current_handlers())
        assert current_scopes() == (), (trial, nesting, at, n, current_scopes())
        again = float(build(nesting, 0, None)(X))
        assert again == references[nesting], (trial, nesting, at, n)
    survivors = [h for h in kenaz_handlers_alive() if not any(h is old for old in before)]
    assert survivors == [], survivors


@pytest.mark.parametrize("name", sorted(LIFTS))
def test_exception_from_a_rule_during_the_backward_or_tangent_pass(name: str) -> None:
    """An op whose derivative rule raises (in a pullback or a jvp rule, i.e. after the
    forward pass succeeded) propagates its exception and leaves the stack empty."""

    def bad_rule(*args: Any, **params: Any) -> Any:
        raise Boom("rule failed")

    fragile = kenaz.Op(
        "fragile",
        lambda x: x * 1.0,
        jvp=[lambda t, ans, x: bad_rule()],
        vjp=[lambda ans, x: lambda g: bad_rule()],
        batch=batching.elementwise,
    )
    f = LIFTS[name](lambda x: knp.sum(fragile(x) ** 2))
    if name in ("debug", "vmap", "vmap(loop)", "checkpoint", "graph"):  # no derivative taken
        plain = LIFTS[name](lambda x: knp.sum(x**2))
        assert float(f(X)) == pytest.approx(float(plain(X)))
    else:
        with pytest.raises(Boom, match="rule failed"):
            f(X)
    assert current_handlers() == ()
    assert current_scopes() == ()
    assert float(kenaz.grad(lambda x: knp.sum(x**2))(2.0)) == 4.0


def test_exception_inside_a_pullback_call_keeps_the_pullback_usable() -> None:
    """A pullback whose call fails (bad cotangent) can be called again correctly."""
    out, pullback = kenaz.vjp(lambda x: knp.sin(x) * 2.0, X)
    with pytest.raises(ValueError, match="cotangent of shape"):
        pullback(np.ones(4))
    (g,) = pullback(np.ones(3))
    np.testing.assert_allclose(np.asarray(g), 2.0 * np.cos(X))
    assert current_handlers() == ()


class RaiseBaseException(Handler):
    """Raises ``error`` (a BaseException such as KeyboardInterrupt) at its ``n``-th op."""

    def __init__(self, n: int, error: type[BaseException]) -> None:
        self.n, self.error, self.seen = n, error, 0

    def handle(self, op: Any, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
        if self.seen == self.n:
            raise self.error("interrupted")
        self.seen += 1
        return kenaz.perform(op, *args, **params)


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("at", [0, 3])
def test_base_exceptions_also_unwind_every_handler(error: type[BaseException], at: int) -> None:
    """Ctrl-C (KeyboardInterrupt) or SystemExit in the middle of grad(vmap(jvp(f))), at every
    op and at both ends of the nesting, leaves the stack empty (restoration is in
    ``finally``, not ``except Exception``)."""
    nesting = ("grad", "vmap", "jvp")
    counter = CountOps()
    build(nesting, at, lambda: counter)(X)
    reference = float(build(nesting, 0, None)(X))
    for n in range(0, counter.total, max(counter.total // 25, 1)):
        raiser = RaiseBaseException(n, error)
        with pytest.raises(error):
            build(nesting, at, lambda raiser=raiser: raiser)(X)
        assert current_handlers() == () and current_scopes() == ()
    assert float(build(nesting, 0, None)(X)) == reference
