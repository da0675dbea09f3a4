"""W5: Hessian-vector product of ``f(x) = sum(tanh(A @ x) ** 2)``, A 500 x 500, float64.

kenaz computes it with ``kenaz.hvp``: forward-over-reverse, ``jvp(grad(f))``, as
PyTorch (``torch.func``) and JAX do; HIPS autograd has
``hessian_vector_product`` (reverse-over-reverse). The reference is the
analytic ``A.T @ (2 s (1 - 3 t^2) * (A @ v))`` with ``t = tanh(A x)``, ``s = 1 - t^2``.
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

SIZES = {"full": 500, "smoke": 6}


def make_inputs(size: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``A``, the point ``x`` and the direction ``v``."""
    n = SIZES[size]
    rng = np.random.default_rng(5)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)


def numpy_hvp(a: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The analytic Hessian-vector product."""
    t = np.tanh(a @ x)
    s = 1 - t * t
    return a.T @ (2 * s * (1 - 3 * t * t) * (a @ v))


def objective(tanh, sum_all, a, x):
    """``sum(tanh(A @ x) ** 2)`` for any library."""
    return sum_all(tanh(a @ x) ** 2)


def build(peers: Peers, size: str) -> Case:
    a, x, v = make_inputs(size)
    return Case(
        [
            Contender("numpy", lambda: numpy_hvp(a, x, v)),
            _kenaz(a, x, v),
            _kenaz_jit(a, x, v),
            _torch(peers, a, x, v),
            *_jax(peers, a, x, v),
            _autograd(peers, a, x, v),
        ],
        rtol=1e-8,
        atol=1e-10,
    )


def _kenaz(a, x, v) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    k_a = knp.asarray(a)
    f = lambda x: objective(knp.tanh, knp.sum, k_a, x)
    args = ((knp.asarray(x),), (knp.asarray(v),))
    if hasattr(kenaz, "hvp"):
        run = lambda: kenaz.hvp(f, *args)
    else:  # what kenaz.hvp does: forward over reverse
        gradient = kenaz.grad(f)
        run = lambda: kenaz.jvp(gradient, *args)[1]
    return Contender("kenaz", run, lambda h: [h.numpy()])


def _kenaz_jit(a, x, v) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    k_a = knp.asarray(a)
    f = lambda x: objective(knp.tanh, knp.sum, k_a, x)
    make = lambda: kenaz.jit(lambda x, v: kenaz.hvp(f, (x,), (v,)))
    return kenaz_jit(make, (knp.asarray(x), knp.asarray(v)), lambda h: [h.numpy()])


def _torch(peers: Peers, a, x, v) -> Contender:
    torch = peers.torch
    if torch is None:
        return unavailable("torch (func)", peers.why_missing("torch"))
    t_a = torch.from_numpy(a)
    gradient = torch.func.grad(lambda x: objective(torch.tanh, torch.sum, t_a, x))
    args = ((torch.from_numpy(x),), (torch.from_numpy(v),))
    hvp = lambda: torch.func.jvp(gradient, *args)[1]
    return Contender("torch (func)", hvp, lambda h: [h.numpy()])


def _jax(peers: Peers, a, x, v) -> list[Contender]:
    jax = peers.jax
    if jax is None:
        return [unavailable("jax", peers.why_missing("jax"))]
    jnp = jax.numpy
    j_a = jnp.asarray(a)
    gradient = jax.grad(lambda x: objective(jnp.tanh, jnp.sum, j_a, x))
    eager = lambda x, v: jax.jvp(gradient, (x,), (v,))[1]
    jitted = jax.jit(eager)
    args = (jnp.asarray(x), jnp.asarray(v))
    to_numpy = lambda h: [np.asarray(h)]
    return [
        Contender("jax (no jit)", lambda: eager(*args).block_until_ready(), to_numpy),
        Contender("jax (jit)", lambda: jitted(*args).block_until_ready(), to_numpy),
    ]


def _autograd(peers: Peers, a, x, v) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    anp = autograd.numpy
    hvp = autograd.hessian_vector_product(lambda x: objective(anp.tanh, anp.sum, a, x))
    return Contender("autograd", lambda: hvp(x, v))


WORKLOAD = Workload(
    key="W5",
    title="Hessian-vector product of sum(tanh(A @ x)**2), A 500x500 f64",
    build=build,
    targets=ratio_to("numpy", 3.0),
    jit_targets=jit_targets(1.6),
)
