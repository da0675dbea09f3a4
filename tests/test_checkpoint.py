"""checkpoint: same values and derivatives, fewer stored intermediates, recomputation."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import checkpoint, grad, jvp


def layer(w, b, h):
    return knp.tanh(h @ w + b)


def make_params(n=4, width=3, seed=0):
    rng = np.random.default_rng(seed)
    return [
        (knp.array(rng.normal(size=(width, width)) * 0.5), knp.array(rng.normal(size=width)))
        for _ in range(n)
    ]


def net(params, x, wrap=lambda f: f):
    step = wrap(layer)
    for w, b in params:
        x = step(w, b, x)
    return knp.sum(x**2)


def assert_trees_close(a, b):
    for u, v in zip(kenaz.tree.leaves(a), kenaz.tree.leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-12)


def test_no_transformation_and_values():
    params, x = make_params(), knp.ones((2, 3))
    assert float(net(params, x, checkpoint)) == pytest.approx(float(net(params, x)))


def test_gradient_matches_plain_reverse_mode():
    params, x = make_params(), knp.ones((2, 3))
    expected = grad(net, argnums=(0, 1))(params, x)
    got = grad(lambda p, x: net(p, x, checkpoint), argnums=(0, 1))(params, x)
    assert_trees_close(got, expected)


def test_backward_pass_recomputes_the_function():
    calls = []

    @checkpoint
    def f(x):
        calls.append(1)
        return knp.sin(x) * x

    g = grad(lambda x: knp.sum(f(x)))(knp.array([0.1, 0.2]))
    np.testing.assert_allclose(g.numpy(), np.cos([0.1, 0.2]) * [0.1, 0.2] + np.sin([0.1, 0.2]))
    # once forward (the run that finds what it closes over: nothing runs outside the grad,
    # so its output is the primal), once in the backward pass
    assert len(calls) == 2


_W = knp.array([0.5, -1.0, 2.0])


def _counted():
    """A checkpointed function that counts its runs and closes over a tensor, and a list
    whose length is the count."""
    runs = []

    @checkpoint
    def f(x):
        runs.append(1)
        return knp.sin(x) * x * _W

    return f, runs


def _sum_of(f):
    return lambda x: knp.sum(f(x))


# How many times each transformation runs a checkpointed function: the fewest the design
# allows. `expected` is the count, `why` what each run is.
_RUNS = {
    "eager": (lambda f, x: f(x), 1, "the function"),
    "grad": (lambda f, x: grad(_sum_of(f))(x), 2, "forward, recompute"),
    "vjp without pullback": (lambda f, x: kenaz.vjp(f, x), 1, "forward"),
    "jvp": (lambda f, x: jvp(f, (x,), (x,)), 1, "under the jvp, as if not there"),
    "linearize": (lambda f, x: kenaz.linearize(f, x)[1](x), 1, "under linearize"),
    "vmap": (lambda f, x: kenaz.vmap(f)(knp.stack([x, x])), 1, "batched, as if not there"),
    "grad of grad": (
        lambda f, x: grad(lambda y: knp.sum(grad(_sum_of(f))(y)))(x),
        2,
        "forward (recorded by the outer grad), recompute",
    ),
    "jvp of grad": (
        lambda f, x: jvp(grad(_sum_of(f)), (x,), (x,)),
        2,
        "forward (seen by the jvp), recompute",
    ),
    "vmap of grad": (
        lambda f, x: kenaz.vmap(grad(_sum_of(f)))(knp.stack([x, x])),
        2,
        "the batched forward, the batched recompute",
    ),
    "grad of vmap": (
        lambda f, x: grad(lambda y: knp.sum(kenaz.vmap(f)(knp.stack([y, y]))))(x),
        2,
        "the batched forward (which finds what it closes over), the batched recompute",
    ),
    "checkpoint in checkpoint": (
        lambda f, x: grad(checkpoint(lambda y: knp.sum(f(y) * 2.0)))(x),
        3,
        "the outer forward, then the recompute's forward and its recompute",
    ),
}


@pytest.mark.parametrize("case", list(_RUNS))
def test_runs_of_a_checkpointed_function(case):
    transform, expected, why = _RUNS[case]
    f, runs = _counted()
    x = knp.array([0.1, 0.2, 0.3])
    transform(f, x)
    assert len(runs) == expected, why


def test_fewer_runs_give_the_same_derivatives():
    f, _ = _counted()
    plain = lambda x: knp.sin(x) * x * _W  # noqa: E731
    x = knp.array([0.1, 0.2, 0.3])
    second = lambda g: grad(lambda y: knp.sum(grad(_sum_of(g))(y)))  # noqa: E731
    for wrap in (lambda g: grad(_sum_of(g)), second):
        np.testing.assert_allclose(wrap(f)(x).numpy(), wrap(plain)(x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(
        jvp(f, (x,), (x,))[1].numpy(), jvp(plain, (x,), (x,))[1].numpy(), rtol=1e-13
    )
    np.testing.assert_allclose(
        kenaz.vmap(f)(knp.stack([x, -x])).numpy(), kenaz.vmap(plain)(knp.stack([x, -x])).numpy()
    )
    for outer in (lambda g: jvp(g, (x,), (x,))[1], lambda g: kenaz.vmap(g)(knp.stack([x, -x]))):
        np.testing.assert_allclose(
            outer(grad(_sum_of(f))).numpy(), outer(grad(_sum_of(plain))).numpy(), rtol=1e-13
        )
    inner = checkpoint(lambda y: knp.sum(f(y) * 2.0))
    np.testing.assert_allclose(
        grad(inner)(x).numpy(), grad(lambda y: knp.sum(plain(y) * 2.0))(x).numpy(), rtol=1e-13
    )


def test_nested_checkpoints():
    params, x = make_params(6), knp.ones((2, 3))
    inner = checkpoint(layer)

    @checkpoint
    def block(ps, h):
        for w, b in ps:
            h = inner(w, b, h)
        return h

    def loss(params, x):
        return knp.sum(block(params[3:], block(params[:3], x)) ** 2)

    assert_trees_close(grad(loss)(params, x), grad(net)(params, x))


def test_closed_over_tensors_are_differentiated():
    params, x = make_params(), knp.ones((2, 3))

    def checkpointed_layer(w, b):  # not a lambda in the loop: the recomputation runs later
        return checkpoint(lambda h: knp.tanh(h @ w + b))

    def loss(params, x):
        for w, b in params:
            x = checkpointed_layer(w, b)(x)
        return knp.sum(x**2)

    assert_trees_close(grad(loss, argnums=(0, 1))(params, x), grad(net, argnums=(0, 1))(params, x))


def test_higher_order_and_forward_mode():
    f = checkpoint(lambda x: knp.sin(x) ** 2)
    for x in [0.3, 1.2]:
        assert float(grad(grad(f))(x)) == pytest.approx(2 * np.cos(2 * x))
        assert float(jvp(grad(f), (x,), (1.0,))[1]) == pytest.approx(2 * np.cos(2 * x))
        assert float(jvp(f, (x,), (1.0,))[1]) == pytest.approx(np.sin(2 * x))
        assert float(grad(lambda y: jvp(f, (y,), (1.0,))[1])(x)) == pytest.approx(2 * np.cos(2 * x))


def test_static_argnums_and_pytree_outputs():
    @checkpoint(static_argnums=(1,))
    def f(x, power):
        return {"a": x**power, "b": [knp.sin(x)]}

    g = grad(lambda x: knp.sum(f(x, 3)["a"]) + knp.sum(f(x, 3)["b"][0]))(knp.array([0.5, 1.0]))
    np.testing.assert_allclose(g.numpy(), 3 * np.array([0.5, 1.0]) ** 2 + np.cos([0.5, 1.0]))


def test_identity_and_unused_outputs():
    f = checkpoint(lambda x, y: (x, y * 2))
    assert float(grad(lambda x: f(x, 1.0)[0] * 3)(2.0)) == 3.0
    assert float(grad(lambda y: f(1.0, y)[1])(2.0)) == 2.0


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_tape_keeps_only_inputs():
    # A block with many intermediates: checkpointing each block saves most of them.
    def block(h):
        for _ in range(12):
            h = knp.sin(h) * 1.01
        return h

    def chain(f, x):
        for _ in range(6):
            x = f(x)
        return knp.sum(x)

    x = knp.array(np.random.default_rng(0).normal(size=20_000))
    plain = grad(lambda x: chain(block, x))
    remat = grad(lambda x: chain(checkpoint(block), x))
    np.testing.assert_allclose(remat(x).numpy(), plain(x).numpy())
    # 72 stored sin inputs against 6 block inputs + 12 recomputed ones.
    assert _peak(lambda: remat(x)) * 2.5 < _peak(lambda: plain(x))


def test_checkpoint_under_vmap():
    params = make_params()
    xs = knp.array(np.random.default_rng(1).normal(size=(5, 2, 3)))
    per_example = kenaz.vmap(grad(lambda p, x: net(p, x, checkpoint)), in_axes=(None, 0))
    expected = kenaz.vmap(grad(net), in_axes=(None, 0))(params, xs)
    assert_trees_close(per_example(params, xs), expected)
    batch_loss = lambda p, f: knp.sum(kenaz.vmap(lambda x: net(p, x, f))(xs))
    assert_trees_close(
        grad(lambda p: batch_loss(p, checkpoint))(params),
        grad(lambda p: batch_loss(p, lambda f: f))(params),
    )


def test_jacobians_of_checkpointed_functions():
    f = lambda x: knp.sum(knp.sin(x) * x)  # noqa: E731
    x = knp.array([0.1, 0.5, 1.0])
    expected = kenaz.hessian(f)(x).numpy()
    np.testing.assert_allclose(kenaz.hessian(checkpoint(f))(x).numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(kenaz.jacfwd(grad(checkpoint(f)))(x).numpy(), expected, atol=1e-12)
    _, f_jvp = kenaz.linearize(checkpoint(f), x)
    assert float(f_jvp(knp.ones(3))) == pytest.approx(float(jvp(f, (x,), (knp.ones(3),))[1]))


def test_an_argument_also_read_through_a_closure():
    # x is passed (as y) and read through the closure: each use has a derivative of its
    # own, also when the forward pass runs one level out of the grad (nested, batched).
    def loss(x):
        return knp.sum(checkpoint(lambda y: knp.sin(y) * x)(x))

    plain = lambda x: knp.sum(knp.sin(x) * x)  # noqa: E731
    x = knp.array([0.3, 0.6])
    xs = knp.stack([x, 2.0 * x])
    for transform in (
        grad,
        lambda f: grad(lambda y: knp.sum(grad(f)(y))),
        lambda f: lambda y: jvp(grad(f), (y,), (knp.ones(2),))[1],
    ):
        np.testing.assert_allclose(transform(loss)(x).numpy(), transform(plain)(x).numpy())
    np.testing.assert_allclose(
        kenaz.vmap(grad(loss))(xs).numpy(), kenaz.vmap(grad(plain))(xs).numpy()
    )


def test_grad_of_vmap_of_a_checkpoint_that_reads_a_view_of_the_vmap():
    """A per-example tensor of the vmap read through a closure is lifted by a discovery run
    at the vmap's level: the batched forward stops at it once (the function remembers)."""
    runs = []

    def make(wrap):
        @wrap
        def f(y, h):
            runs.append(1)
            return knp.sin(y) * h() * _W

        def loss(xs, hs):
            per = lambda x, h: f(x, lambda: h * 2.0)  # noqa: E731 - h closed over, a view
            return knp.sum(kenaz.vmap(per)(xs, hs))

        return loss

    xs, hs = knp.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]), knp.array([[1.0, 2.0, 3.0]] * 2)
    expected = grad(make(lambda f: f), argnums=(0, 1))(xs, hs)
    checkpointed = make(lambda f: checkpoint(f, static_argnums=(1,)))
    counts = []
    for _ in range(2):
        runs.clear()
        assert_trees_close(grad(checkpointed, argnums=(0, 1))(xs, hs), expected)
        counts.append(len(runs))
    # stopped at the view, the example run that lifts it, the forward, the recompute; then
    # the same function lifts at once
    assert counts == [4, 3]


def test_checkpoint_of_a_function_with_an_integer_output() -> None:
    """The recomputing pullback seeds an integer output with float0 (the tape may hold
    None or integer zeros for it, which vjp refuses): the float output's derivative is
    the same as without checkpoint, to second order."""

    def f(x):
        return knp.sin(x), knp.argmax(x)

    x = np.array([0.1, 0.5, 0.2])
    _, pullback = kenaz.vjp(kenaz.checkpoint(f), x)
    (g,) = pullback((np.ones(3), np.zeros((), kenaz.float0)))
    np.testing.assert_allclose(np.asarray(g), np.cos(x))

    def loss(v):
        y, i = kenaz.checkpoint(f)(v)
        return knp.sum(y * y) + i

    def second(v):
        return knp.sum(kenaz.grad(loss)(v))

    np.testing.assert_allclose(np.asarray(kenaz.grad(loss)(x)), np.sin(2 * x))
    np.testing.assert_allclose(np.asarray(kenaz.grad(second)(x)), 2 * np.cos(2 * x))
