"""W2: a 100-op expression on 0-d (scalar) values, gradient with respect to both inputs.

``steps`` times ``a = sin(a) * b + cos(a)``: four ops per step, 25 steps.
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

SIZES = {"full": 25, "smoke": 3}  # steps of four ops
A0, B0 = 0.3, 0.9


def expression(sin, cos, a, b, steps: int):
    """The forward computation, for any library's ``sin`` and ``cos``."""
    for _ in range(steps):
        a = sin(a) * b + cos(a)
    return a


def numpy_gradient(a0: np.ndarray, b: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Hand-written reverse mode: d/da of a step is ``b cos(a) - sin(a)``, d/db is ``sin(a)``."""
    inputs = []
    a = a0
    for _ in range(steps):
        inputs.append(a)
        a = np.sin(a) * b + np.cos(a)
    grad_a, grad_b = np.ones_like(a0), np.zeros_like(b)
    for a_in in reversed(inputs):
        sin_a = np.sin(a_in)
        grad_b = grad_b + grad_a * sin_a
        grad_a = grad_a * (b * np.cos(a_in) - sin_a)
    return grad_a, grad_b


def build(peers: Peers, size: str) -> Case:
    steps = SIZES[size]
    a0, b0 = np.asarray(A0), np.asarray(B0)
    return Case(
        [
            Contender("numpy", lambda: numpy_gradient(a0, b0, steps), list),
            _kenaz(a0, b0, steps),
            _kenaz_jit(a0, b0, steps),
            _torch(peers, a0, b0, steps),
            _jax(peers, a0, b0, steps),
            _jax_jit(peers, a0, b0, steps),
            _autograd(peers, a0, b0, steps),
        ],
        ops=4 * steps,
        rtol=1e-9,
        atol=1e-12,
    )


def _kenaz(a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    a, b = knp.asarray(a0), knp.asarray(b0)
    gradient = kenaz.grad(lambda a, b: expression(knp.sin, knp.cos, a, b, steps), argnums=(0, 1))
    return Contender("kenaz", lambda: gradient(a, b), lambda gs: [g.numpy() for g in gs])


def _kenaz_jit(a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    def make():
        function = lambda a, b: expression(knp.sin, knp.cos, a, b, steps)
        return kenaz.jit(kenaz.grad(function, argnums=(0, 1)))

    args = (knp.asarray(a0), knp.asarray(b0))
    return kenaz_jit(make, args, lambda gs: [g.numpy() for g in gs])


def _jax_jit(peers: Peers, a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax (jit)", peers.why_missing("jax"))
    jnp = jax.numpy
    a, b = jnp.asarray(a0), jnp.asarray(b0)
    function = lambda a, b: expression(jnp.sin, jnp.cos, a, b, steps)
    gradient = jax.jit(jax.grad(function, argnums=(0, 1)))
    jax.block_until_ready(gradient(a, b))
    return Contender(
        "jax (jit)",
        lambda: jax.block_until_ready(gradient(a, b)),
        lambda gs: [np.asarray(g) for g in gs],
    )


def _torch(peers: Peers, a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch", peers.why_missing("torch"))
    a = torch.tensor(float(a0), dtype=torch.float64, requires_grad=True)
    b = torch.tensor(float(b0), dtype=torch.float64, requires_grad=True)

    def run():
        return torch.autograd.grad(expression(torch.sin, torch.cos, a, b, steps), (a, b))

    return Contender("torch", run, lambda gs: [g.numpy() for g in gs])


def _jax(peers: Peers, a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    jax = peers.jax
    if jax is None:
        return unavailable("jax", peers.why_missing("jax"))
    jnp = jax.numpy
    a, b = jnp.asarray(a0), jnp.asarray(b0)
    gradient = jax.grad(lambda a, b: expression(jnp.sin, jnp.cos, a, b, steps), argnums=(0, 1))
    return Contender(
        "jax (no jit)",
        lambda: jax.block_until_ready(gradient(a, b)),
        lambda gs: [np.asarray(g) for g in gs],
    )


def _autograd(peers: Peers, a0: np.ndarray, b0: np.ndarray, steps: int) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    anp = autograd.numpy
    gradient = autograd.grad(lambda ab: expression(anp.sin, anp.cos, ab[0], ab[1], steps))
    return Contender("autograd", lambda: gradient((a0, b0)), list)


WORKLOAD = Workload(
    key="W2",
    title="100-op scalar (0-d) expression, grad",
    build=build,
    targets=PER_OP_TARGETS,
    jit_targets=jit_targets(1.3),
)
