"""W6: gradient through 100,000 scalar ops: time per op and peak memory of the tape.

25,000 steps of ``x = (x + sin(x) * 1e-4) * 0.99999`` on a 0-d float64
value: four ops per step. The derivative of each step is close to 1, so the
gradient neither vanishes nor explodes and the check means something.
"""

from __future__ import annotations

import numpy as np

from ..harness.peers import Peers
from ..harness.workload import (
    PER_OP_TARGETS,
    Case,
    Contender,
    Workload,
    kenaz_jit,
    unavailable,
)

SIZES = {"full": 25_000, "smoke": 5}  # steps of four ops
X0 = 0.5


def long_chain(sin, x, steps: int):
    """The forward computation, for any library's ``sin``."""
    for _ in range(steps):
        x = (x + sin(x) * 1e-4) * 0.99999
    return x


def numpy_gradient(x0: np.ndarray, steps: int) -> np.ndarray:
    """Hand-written reverse mode: each step's derivative is ``(1 + 1e-4 cos x) * 0.99999``."""
    inputs = []
    x = x0
    for _ in range(steps):
        inputs.append(x)
        x = (x + np.sin(x) * 1e-4) * 0.99999
    cotangent = np.ones_like(x0)
    for x_in in reversed(inputs):
        cotangent = cotangent * ((1 + np.cos(x_in) * 1e-4) * 0.99999)
    return cotangent


def build(peers: Peers, size: str) -> Case:
    steps = SIZES[size]
    x0 = np.asarray(X0)
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
        ops=4 * steps,
        rtol=1e-8,
        atol=1e-12,
    )


def _kenaz(x0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    x = knp.asarray(x0)
    gradient = kenaz.grad(lambda x: long_chain(knp.sin, x, steps))
    return Contender("kenaz", lambda: gradient(x), lambda g: [g.numpy()])


def _kenaz_jit(x0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    make = lambda: kenaz.jit(kenaz.grad(lambda x: long_chain(knp.sin, x, steps)))
    return kenaz_jit(make, (knp.asarray(x0),), lambda g: [g.numpy()])


def _jax_jit(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax (jit)", peers.why_missing("jax"))
    jnp = jax.numpy
    x = jnp.asarray(x0)
    gradient = jax.jit(jax.grad(lambda x: long_chain(jnp.sin, x, steps)))
    run = lambda: gradient(x).block_until_ready()
    slow = "" if steps < 1000 else "XLA compiles the unrolled chain for minutes, in over 8 GB"
    return Contender("jax (jit)", run, lambda g: [np.asarray(g)], slow=slow)


def _torch(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch", peers.why_missing("torch"))
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)

    def run():
        (g,) = torch.autograd.grad(long_chain(torch.sin, x, steps), x)
        return g

    return Contender("torch", run, lambda g: [g.numpy()])


def _jax(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax", peers.why_missing("jax"))
    jnp = jax.numpy
    x = jnp.asarray(x0)
    gradient = jax.grad(lambda x: long_chain(jnp.sin, x, steps))
    return Contender(
        "jax (no jit)",
        lambda: gradient(x).block_until_ready(),
        lambda g: [np.asarray(g)],
        slow="eager jax.grad costs ~250 µs/op (W1, W2): about 25 s for one call",
    )


def _autograd(peers: Peers, x0: np.ndarray, steps: int) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    gradient = autograd.grad(lambda x: long_chain(autograd.numpy.sin, x, steps))
    return Contender("autograd", lambda: gradient(x0))


WORKLOAD = Workload(
    key="W6",
    title="grad through 100,000 scalar ops",
    build=build,
    targets=PER_OP_TARGETS,
    measure_memory=True,
)
