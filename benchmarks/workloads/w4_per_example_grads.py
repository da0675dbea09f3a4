"""W4: per-example gradients of a 100 -> 32 -> 1 tanh MLP, batch 256, float32.

kenaz writes this as ``vmap(grad(loss))``; the reference is the gradient
vectorized by hand. PyTorch uses ``torch.func.vmap(grad)``; JAX ``jax.vmap(jax.grad)``,
eager (the fair comparison for an eager library) and jitted. HIPS autograd has
no vmap, so it loops over the examples.
"""

from __future__ import annotations

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

SIZES = {"full": (256, 100, 32), "smoke": (3, 5, 4)}  # (batch, inputs, hidden)


def make_inputs(size: str):
    """Parameters ``(W1, b1, W2, b2)``, inputs ``x`` (batch, inputs) and targets ``y`` (batch,)."""
    batch, inputs, hidden = SIZES[size]
    rng = np.random.default_rng(4)
    params = (
        (rng.standard_normal((inputs, hidden)) / np.sqrt(inputs)).astype(np.float32),
        (0.1 * rng.standard_normal(hidden)).astype(np.float32),
        (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
        (0.1 * rng.standard_normal(1)).astype(np.float32),
    )
    x = rng.standard_normal((batch, inputs)).astype(np.float32)
    y = rng.standard_normal(batch).astype(np.float32)
    return params, x, y


def example_loss(sum_all, tanh, params, x, y):
    """Squared error of one example ``x`` (inputs,) against ``y`` (a 0-d value)."""
    w1, b1, w2, b2 = params
    prediction = tanh(x @ w1 + b1) @ w2 + b2
    return sum_all((prediction - y) ** 2)


def numpy_per_example_grads(params, x, y):
    """Hand-vectorized: the backward pass with a leading batch axis on every cotangent."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)  # (batch, hidden)
    d_out = 2 * (h @ w2 + b2 - y[:, None])  # (batch, 1)
    d_z = (d_out @ w2.T) * (1 - h * h)  # (batch, hidden)
    return x[:, :, None] * d_z[:, None, :], d_z, h[:, :, None] * d_out[:, None, :], d_out


def _flat(grads) -> list:
    return [np.asarray(g) for g in grads]


def build(peers: Peers, size: str) -> Case:
    params, x, y = make_inputs(size)
    return Case(
        [
            Contender("numpy", lambda: numpy_per_example_grads(params, x, y), _flat),
            _kenaz(params, x, y),
            _kenaz_jit(params, x, y),
            _torch(peers, params, x, y),
            *_jax(peers, params, x, y),
            _autograd(peers, params, x, y),
        ],
        rtol=1e-4,
        atol=1e-5,
    )


def _kenaz(params, x, y) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    if not hasattr(kenaz, "vmap"):
        return unavailable("kenaz", "kenaz.vmap not available yet")
    loss = lambda params, x, y: example_loss(knp.sum, knp.tanh, params, x, y)
    per_example = kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0))
    args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(y))
    return Contender("kenaz", lambda: per_example(*args), _flat)


def _kenaz_jit(params, x, y) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    loss = lambda params, x, y: example_loss(knp.sum, knp.tanh, params, x, y)
    make = lambda: kenaz.jit(kenaz.vmap(kenaz.grad(loss), in_axes=(None, 0, 0)))
    args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(y))
    return kenaz_jit(make, args, _flat)


def _torch(peers: Peers, params, x, y) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch (func)", peers.why_missing("torch"))
    loss = lambda params, x, y: example_loss(torch.sum, torch.tanh, params, x, y)
    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    args = (tuple(torch.from_numpy(p) for p in params), torch.from_numpy(x), torch.from_numpy(y))
    return Contender("torch (func)", lambda: per_example(*args), _flat)


def _jax(peers: Peers, params, x, y) -> list[Contender]:
    jax = peers.jax
    if jax is None:
        return [unavailable("jax", peers.why_missing("jax"))]
    jnp = jax.numpy
    loss = lambda params, x, y: example_loss(jnp.sum, jnp.tanh, params, x, y)
    eager = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    jitted = jax.jit(eager)
    args = (tuple(jnp.asarray(p) for p in params), jnp.asarray(x), jnp.asarray(y))
    return [
        Contender("jax (no jit)", lambda: jax.block_until_ready(eager(*args)), _flat),
        Contender("jax (jit)", lambda: jax.block_until_ready(jitted(*args)), _flat),
    ]


def _autograd(peers: Peers, params, x, y) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd (loop)", peers.why_missing("autograd"))
    anp = autograd.numpy
    gradient = autograd.grad(lambda params, x, y: example_loss(anp.sum, anp.tanh, params, x, y))

    def run():
        grads = [gradient(params, x[i], y[i]) for i in range(x.shape[0])]
        return [np.stack(column) for column in zip(*grads, strict=True)]

    return Contender("autograd (loop)", run, _flat)


WORKLOAD = Workload(
    key="W4",
    title="per-example grads, MLP 100-32-1 tanh, batch 256 f32 (vmap of grad)",
    build=build,
    targets=ratio_to("numpy", 1.5),
    jit_targets=jit_targets(1.2),
)
