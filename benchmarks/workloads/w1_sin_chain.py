"""W1: per-op overhead on a long chain of small elementwise ops.

``steps`` times ``x = sin(x) * 1.01 + 0.1`` on 16 float64 elements, then the
gradient of ``sum(x)``: three ops per step, each on an array so small that
the time is almost all bookkeeping.
"""

from __future__ import annotations

import numpy as np

from ..harness.peers import Peers
from ..harness.workload import (
    PER_OP_TARGETS,
    Case,
    Contender,
    Workload,
    jit_targets,
    kenaz_jit,
    unavailable,
)

SIZES = {"full": (1000, 16), "smoke": (5, 4)}  # (steps, elements)


def chain(sin, x, steps: int):
    """The forward computation, for any library's ``sin``."""
    for _ in range(steps):
        x = sin(x) * 1.01 + 0.1
    return x


def numpy_gradient(x0: np.ndarray, steps: int) -> np.ndarray:
    """Hand-written reverse mode: keep each step's input, then multiply the derivatives back."""
    inputs = []
    x = x0
    for _ in range(steps):
        inputs.append(x)
        x = np.sin(x) * 1.01 + 0.1
    cotangent = np.ones_like(x)
    for x_in in reversed(inputs):
        cotangent = cotangent * (np.cos(x_in) * 1.01)
    return cotangent


def build(peers: Peers, size: str) -> Case:
    steps, elements = SIZES[size]
    x0 = np.linspace(-1.0, 1.0, elements)
    return Case(
        [
            Contender("numpy", lambda: numpy_gradient(x0, steps)),
            _kenaz(x0, steps),
            _kenaz_jit(x0, steps),
            _torch(peers, x0, steps),
            _jax(peers, x0, steps),
            _jax_jit(peers, x0, steps),
            _autograd(peers, x0, steps),
        ],
        ops=3 * steps,
        rtol=1e-9,
        atol=1e-12,
    )


def _kenaz(x0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    x = knp.asarray(x0)
    gradient = kenaz.grad(lambda x: knp.sum(chain(knp.sin, x, steps)))
    return Contender("kenaz", lambda: gradient(x), lambda g: [g.numpy()])


def _kenaz_jit(x0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    make = lambda: kenaz.jit(kenaz.grad(lambda x: knp.sum(chain(knp.sin, x, steps))))
    return kenaz_jit(make, (knp.asarray(x0),), lambda g: [g.numpy()])


def _jax_jit(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax (jit)", peers.why_missing("jax"))
    jnp = jax.numpy
    x = jnp.asarray(x0)
    gradient = jax.jit(jax.grad(lambda x: jnp.sum(chain(jnp.sin, x, steps))))
    gradient(x).block_until_ready()
    run = lambda: gradient(x).block_until_ready()
    return Contender("jax (jit)", run, lambda g: [np.asarray(g)])


def _torch(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch", peers.why_missing("torch"))
    x = torch.from_numpy(x0.copy()).requires_grad_()

    def run():
        (g,) = torch.autograd.grad(chain(torch.sin, x, steps).sum(), x)
        return g

    return Contender("torch", run, lambda g: [g.numpy()])


def _jax(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax", peers.why_missing("jax"))
    jnp = jax.numpy
    x = jnp.asarray(x0)
    gradient = jax.grad(lambda x: jnp.sum(chain(jnp.sin, x, steps)))
    return Contender(
        "jax (no jit)", lambda: gradient(x).block_until_ready(), lambda g: [np.asarray(g)]
    )


def _autograd(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    anp = autograd.numpy
    gradient = autograd.grad(lambda x: anp.sum(chain(anp.sin, x, steps)))
    return Contender("autograd", lambda: gradient(x0), lambda g: [g])


WORKLOAD = Workload(
    key="W1",
    title="1000 x (sin, *, +) on 16 f64, grad of sum",
    build=build,
    targets=PER_OP_TARGETS,
    jit_targets=jit_targets(1.3),
)
