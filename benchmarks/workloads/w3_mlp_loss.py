"""W3: ``value_and_grad`` of the softmax cross-entropy of a 784-512-512-10 tanh MLP.

Batch 128, float32. The arrays are large enough that NumPy's matmuls should
dominate: the target is kenaz within 10% of a hand-written forward+backward,
and within 30% of its peak memory.
"""

from __future__ import annotations

import numpy as np

from ..harness.peers import Peers
from ..harness.workload import (
    Case,
    Contender,
    Workload,
    all_of,
    jit_targets,
    kenaz_jit,
    ratio_to,
    unavailable,
)

SIZES = {"full": (128, (784, 512, 512, 10)), "smoke": (4, (6, 5, 4, 3))}  # (batch, widths)


def make_inputs(size: str) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
    """Parameters ``(W1, b1, W2, b2, W3, b3)``, a batch of inputs and one-hot labels."""
    batch, widths = SIZES[size]
    rng = np.random.default_rng(3)
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:], strict=True):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
        params.append((0.1 * rng.standard_normal(fan_out)).astype(np.float32))
    x = rng.standard_normal((batch, widths[0])).astype(np.float32)
    labels = rng.integers(0, widths[-1], size=batch)
    one_hot = np.eye(widths[-1], dtype=np.float32)[labels]
    return tuple(params), x, one_hot


def numpy_value_and_grad(params, x, one_hot):
    """Hand-written forward and backward pass."""
    w1, b1, w2, b2, w3, b3 = params
    batch = x.shape[0]
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -(one_hot * log_probs).sum() / batch

    d_logits = (np.exp(log_probs) - one_hot) / batch
    d_z2 = (d_logits @ w3.T) * (1 - h2 * h2)
    d_z1 = (d_z2 @ w2.T) * (1 - h1 * h1)
    grads = (x.T @ d_z1, d_z1.sum(0), h1.T @ d_z2, d_z2.sum(0), h2.T @ d_logits, d_logits.sum(0))
    return loss, grads


def mlp_loss(tanh, logsumexp, sum_all, params, x, one_hot):
    """The loss, written once for every library given its ``tanh``, ``logsumexp`` and ``sum``."""
    w1, b1, w2, b2, w3, b3 = params
    h = tanh(x @ w1 + b1)
    h = tanh(h @ w2 + b2)
    logits = h @ w3 + b3
    log_probs = logits - logsumexp(logits)
    return -sum_all(one_hot * log_probs) / x.shape[0]


def _flat(result) -> list:
    loss, grads = result
    return [np.asarray(loss), *(np.asarray(g) for g in grads)]


def build(peers: Peers, size: str) -> Case:
    params, x, one_hot = make_inputs(size)
    return Case(
        [
            Contender("numpy", lambda: numpy_value_and_grad(params, x, one_hot), _flat),
            _kenaz(params, x, one_hot),
            _kenaz_jit(params, x, one_hot),
            *_torch(peers, params, x, one_hot),
            *_jax(peers, params, x, one_hot),
            _autograd(peers, params, x, one_hot),
        ],
        rtol=2e-3,
        atol=2e-5,
    )


def _kenaz(params, x, one_hot) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    def loss(params, x, one_hot):
        logsumexp = lambda z: knp.logsumexp(z, axis=1, keepdims=True)
        return mlp_loss(knp.tanh, logsumexp, knp.sum, params, x, one_hot)

    value_and_grad = kenaz.value_and_grad(loss)
    args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(one_hot))
    return Contender("kenaz", lambda: value_and_grad(*args), _flat)


def _kenaz_jit(params, x, one_hot) -> Contender:
    import kenaz
    import kenaz.numpy as knp

    def loss(params, x, one_hot):
        logsumexp = lambda z: knp.logsumexp(z, axis=1, keepdims=True)
        return mlp_loss(knp.tanh, logsumexp, knp.sum, params, x, one_hot)

    args = (tuple(knp.asarray(p) for p in params), knp.asarray(x), knp.asarray(one_hot))
    return kenaz_jit(lambda: kenaz.jit(kenaz.value_and_grad(loss)), args, _flat)


def _torch(peers: Peers, params, x, one_hot) -> list[Contender]:
    torch = peers.torch
    if torch is None:
        return [unavailable("torch", peers.why_missing("torch"))]
    logsumexp = lambda z: torch.logsumexp(z, dim=1, keepdim=True)
    t_params = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    t_x, t_one_hot = torch.from_numpy(x), torch.from_numpy(one_hot)

    def run():
        loss = mlp_loss(torch.tanh, logsumexp, torch.sum, t_params, t_x, t_one_hot)
        return loss.detach(), torch.autograd.grad(loss, t_params)

    return [Contender("torch", run, _flat)]


def _jax(peers: Peers, params, x, one_hot) -> list[Contender]:
    jax = peers.jax
    if jax is None:
        return [unavailable("jax", peers.why_missing("jax"))]
    jnp = jax.numpy
    logsumexp = lambda z: jax.nn.logsumexp(z, axis=1, keepdims=True)
    loss = lambda params, x, one_hot: mlp_loss(jnp.tanh, logsumexp, jnp.sum, params, x, one_hot)
    args = (tuple(jnp.asarray(p) for p in params), jnp.asarray(x), jnp.asarray(one_hot))
    eager = jax.value_and_grad(loss)
    jitted = jax.jit(eager)
    return [
        Contender("jax (no jit)", lambda: jax.block_until_ready(eager(*args)), _flat),
        Contender("jax (jit)", lambda: jax.block_until_ready(jitted(*args)), _flat),
    ]


def _autograd(peers: Peers, params, x, one_hot) -> Contender:
    autograd = peers.autograd
    if autograd is None:
        return unavailable("autograd", peers.why_missing("autograd"))
    anp = autograd.numpy
    special = autograd.scipy.special
    logsumexp = lambda z: special.logsumexp(z, axis=1, keepdims=True)
    loss = lambda params: mlp_loss(anp.tanh, logsumexp, anp.sum, params, x, one_hot)
    value_and_grad = autograd.value_and_grad(loss)
    return Contender("autograd", lambda: value_and_grad(params), _flat)


WORKLOAD = Workload(
    key="W3",
    title="MLP 784-512-512-10 tanh, batch 128 f32: value_and_grad of cross-entropy",
    build=build,
    targets=all_of(ratio_to("numpy", 1.10), ratio_to("numpy", 1.3, measure="peak_bytes")),
    jit_targets=jit_targets(1.0),
    measure_memory=True,
)
