"""W7: the full Jacobian of a 100 -> 100 function, ``tanh(W2 @ tanh(W1 @ x + b1) + b2)``.

The reference is the analytic Jacobian ``diag(1 - t2^2) W2 diag(1 - t1^2) W1``.
kenaz is measured with ``jacrev`` and ``jacfwd`` once they exist; until then
with one ``vjp`` pullback per output row, labelled as such.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..harness.peers import Peers
from ..harness.workload import (
    Case,
    Contender,
    Workload,
    jit_targets,
    kenaz_jit,
    ratio_to,
    unavailable,
)

SIZES = {"full": 100, "smoke": 4}


def make_inputs(size: str):
    """``(W1, b1, W2, b2)`` and the point ``x``."""
    n = SIZES[size]
    rng = np.random.default_rng(7)
    params = (
        rng.standard_normal((n, n)) / np.sqrt(n),
        0.1 * rng.standard_normal(n),
        rng.standard_normal((n, n)) / np.sqrt(n),
        0.1 * rng.standard_normal(n),
    )
    return params, rng.standard_normal(n)


def two_layers(tanh, params, x):
    """The function whose Jacobian is taken, for any library's ``tanh``."""
    w1, b1, w2, b2 = params
    return tanh(w2 @ tanh(w1 @ x + b1) + b2)


def numpy_jacobian(params, x) -> np.ndarray:
    """The analytic Jacobian."""
    w1, b1, w2, b2 = params
    t1 = np.tanh(w1 @ x + b1)
    t2 = np.tanh(w2 @ t1 + b2)
    return ((1 - t2 * t2)[:, None] * w2 * (1 - t1 * t1)[None, :]) @ w1


def build(peers: Peers, size: str) -> Case:
    params, x = make_inputs(size)
    return Case(
        [
            Contender("numpy", lambda: numpy_jacobian(params, x)),
            *_kenaz(params, x),
            _kenaz_jit(params, x),
            _torch(peers, params, x),
            *_jax(peers, params, x),
            _autograd(peers, params, x),
        ],
        rtol=1e-8,
        atol=1e-10,
    )


def _kenaz(params, x) -> list[Contender]:
    import kenaz
    import kenaz.numpy as knp

    k_params = tuple(knp.asarray(p) for p in params)
    k_x = knp.asarray(x)
    f = lambda x: two_layers(knp.tanh, k_params, x)
    to_numpy = lambda jacobian: [jacobian.numpy()]
    contenders = []
    for name in ("jacrev", "jacfwd"):
        if hasattr(kenaz, name):
            jacobian = getattr(kenaz, name)(f)
            contenders.append(Contender(f"kenaz {name}", partial(jacobian, k_x), to_numpy))
    if contenders:
        return contenders

    def rows_by_vjp():
        out, pullback = kenaz.vjp(f, k_x)
        basis = np.eye(out.shape[0])
        return knp.stack([pullback(knp.asarray(row))[0] for row in basis])

    return [Contender("kenaz (vjp per row; no jacrev yet)", rows_by_vjp, to_numpy)]


def _kenaz_jit(params, x) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    k_params = tuple(knp.asarray(p) for p in params)
    f = lambda x: two_layers(knp.tanh, k_params, x)
    return kenaz_jit(lambda: kenaz.jit(kenaz.jacrev(f)), (knp.asarray(x),), lambda j: [j.numpy()])


def _torch(peers: Peers, params, x) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch (func)", peers.why_missing("torch"))
    t_params = tuple(torch.from_numpy(p) for p in params)
    jacobian = torch.func.jacrev(lambda x: two_layers(torch.tanh, t_params, x))
    t_x = torch.from_numpy(x)
    return Contender("torch (func)", lambda: jacobian(t_x), lambda j: [j.numpy()])


def _jax(peers: Peers, params, x) -> list[Contender]:
    jax = peers.jax
    if jax is None:
        return [unavailable("jax", peers.why_missing("jax"))]
    jnp = jax.numpy
    j_params = tuple(jnp.asarray(p) for p in params)
    eager = jax.jacrev(lambda x: two_layers(jnp.tanh, j_params, x))
    jitted = jax.jit(eager)
    j_x = jnp.asarray(x)
    to_numpy = lambda j: [np.asarray(j)]
    return [
        Contender("jax (no jit)", lambda: eager(j_x).block_until_ready(), to_numpy),
        Contender("jax (jit)", lambda: jitted(j_x).block_until_ready(), to_numpy),
    ]


def _autograd(peers: Peers, params, x) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    jacobian = autograd.jacobian(lambda x: two_layers(autograd.numpy.tanh, params, x))
    return Contender("autograd", lambda: jacobian(x))


WORKLOAD = Workload(
    key="W7",
    title="full Jacobian of tanh(W2 @ tanh(W1 @ x + b1) + b2), 100 -> 100 f64",
    build=build,
    targets=ratio_to("numpy", 10.0),
    jit_targets=jit_targets(3.0),
)
