"""check_grads (order 2, forward and reverse) for functions composed from many primitives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kenaz.numpy as knp
from kenaz.testing import check_grads

RNG = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


# -- the functions -------------------------------------------------------------------------------
def softmax_cross_entropy(logits, labels):
    log_probabilities = logits - knp.logsumexp(logits, axis=-1, keepdims=True)
    return -knp.mean(knp.sum(labels * log_probabilities, axis=-1))


def mlp_loss(params, inputs, targets):
    hidden = knp.tanh(inputs @ params["w1"] + params["b1"])
    outputs = hidden @ params["w2"] + params["b2"]
    return knp.mean((outputs - targets) ** 2)


def logsumexp(x):
    return knp.logsumexp(x, axis=0)


def vector_norm(x):
    return knp.sqrt(knp.sum(x * x))


def matrix_norms(a):
    frobenius = knp.sqrt(knp.sum(a**2))
    one_norm = knp.max(knp.sum(knp.abs(a), axis=0))
    return frobenius + one_norm


def polynomial(x):
    coefficients = [1.5, -2.0, 0.5, 3.0, -0.25]
    return sum(c * x**k for k, c in enumerate(coefficients))


def indexing_heavy(x):
    rows = np.array([0, 2, 2, 1])
    picked = x[rows, 1:] * x[rows[::-1], :2]
    masked = x[x[:, 0] > -10.0]  # all rows, chosen by a mask
    return knp.sum(picked) + knp.sum(masked[..., None, 1] ** 2) + x[-1, -1]


def at_updates(x, values):
    y = x.at[0].set(values[0])
    y = y.at[np.array([1, 1, 2])].add(values[1:4, None])
    y = y.at[2].multiply(values[4])
    return knp.sum(y * y)


def variance_and_std(x):
    return knp.var(x, axis=0) + knp.std(x, axis=1, ddof=1).sum()


def bilinear_einsum(x, a, y):
    return knp.einsum("i,ij,j->", x, a, y) + knp.einsum("ij,ij->i", a, a).sum()


def concat_stack_split(x, y):
    joined = knp.concatenate([x, y * 2], axis=0)
    first, second, third = knp.split(joined, 3, axis=0)
    stacked = knp.stack([first, knp.sin(second), third], axis=-1)
    return knp.sum(stacked**2 * knp.arange(3.0))


def where_relu_and_safe_log(x):
    relu = knp.where(x > 0, x, 0.01 * x)
    safe = knp.where(x > 0, x, 1.0)
    return relu * relu + knp.where(x > 0, knp.log(safe), 0.0)


def cumsum_and_cumprod(x):
    return knp.cumsum(x, axis=0) * knp.cumprod(x, axis=1)


def sort_and_top(x):
    ordered = knp.sort(x)
    return ordered * knp.arange(1.0, ordered.shape[-1] + 1)


def layer_norm(x, scale):
    centered = x - knp.mean(x, axis=-1, keepdims=True)
    return scale * centered / knp.sqrt(knp.var(x, axis=-1, keepdims=True) + 1e-5)


def attention(q, k, v):
    scores = q @ k.T / np.sqrt(q.shape[-1])
    weights = knp.exp(scores - knp.logsumexp(scores, axis=-1, keepdims=True))
    return weights @ v


def logistic_regression_loss(w, x, labels):
    margins = labels * (x @ w)
    return knp.mean(knp.logaddexp(0.0, -margins))


def convolution_1d(signal, kernel):
    padded = knp.pad(signal, (1, 1))
    windows = knp.stack([padded[i : i + signal.shape[0]] for i in range(kernel.shape[0])])
    return knp.flip(kernel, 0) @ windows


def max_pool(x):
    return knp.max(knp.reshape(x, (2, 2, 3)), axis=1)


def prod_and_outer(x, y):
    return knp.prod(x) * knp.outer(x, y) + knp.tensordot(x, y, axes=0)


def tile_repeat_roll(x):
    return knp.tile(x, 2) * knp.repeat(x, 2) + knp.roll(knp.repeat(x, 2), 1)


def trace_and_diagonal(a):
    return knp.trace(a @ a) + knp.sum(knp.diag(knp.diagonal(a)) @ a)


def polar_coordinates(x, y):
    return knp.stack([knp.hypot(x, y), knp.arctan2(y, x)])


def huber_loss(residual):
    small = knp.abs(residual) <= 1.0
    return knp.sum(knp.where(small, 0.5 * residual**2, knp.abs(residual) - 0.5))


def pytree_in_and_out(params):
    return {
        "energy": knp.sum(params["position"] ** 2) * params["mass"],
        "momentum": [params["mass"] * params["velocity"], None],
    }


def linspace_and_average(start, stop):
    points = knp.linspace(start, stop, 5)
    return knp.average(knp.exp(points), weights=np.arange(1.0, 6.0))


def cross_products(a, b):
    return knp.sum(knp.cross(a, b) * knp.cross(b, a + 1.0))


def transpose_reshape_chain(x):
    y = knp.transpose(knp.reshape(x, (2, 3, 2)), (2, 0, 1))
    return knp.swapaxes(knp.expand_dims(y, 0), 1, 3).squeeze(0) ** 3


def sinc_through_zero(x):
    return knp.sinc(x) * x


def differences_and_rolls(x):
    return knp.diff(x, n=2, axis=1) * knp.roll(x, 1, axis=0)[:, 2:] + knp.take(x, np.array([0, 3]))


def triangles(a):
    return knp.tril(a, -1) @ knp.triu(a, 1) + knp.fliplr(a)


# -- the cases -------------------------------------------------------------------------------------
def _labels() -> np.ndarray:
    return np.eye(4)[np.array([0, 3, 1])]


def _mlp_params() -> dict[str, np.ndarray]:
    return {"w1": normal(3, 4) / 2, "b1": normal(4), "w2": normal(4, 2) / 2, "b2": normal(2)}


def _away_from_zero(*shape: int) -> np.ndarray:
    values = normal(*shape)
    return values + np.sign(values) * 0.3


COMPOSITES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("softmax_cross_entropy", softmax_cross_entropy, (normal(3, 4), _labels())),
    ("mlp", mlp_loss, (_mlp_params(), normal(5, 3), normal(5, 2))),
    ("logsumexp", logsumexp, (normal(4, 3),)),
    ("vector_norm", vector_norm, (normal(5),)),
    ("matrix_norms", matrix_norms, (_away_from_zero(3, 3),)),
    ("polynomial", polynomial, (normal(4),)),
    ("indexing_heavy", indexing_heavy, (normal(3, 3),)),
    ("at_updates", at_updates, (normal(3, 2), normal(5))),
    ("var_std", variance_and_std, (normal(4, 3),)),
    ("einsum", bilinear_einsum, (normal(3), normal(3, 3), normal(3))),
    ("concat_stack_split", concat_stack_split, (normal(2, 2), normal(4, 2))),
    ("where", where_relu_and_safe_log, (_away_from_zero(6),)),
    ("cumsum_cumprod", cumsum_and_cumprod, (normal(3, 4),)),
    ("sort", sort_and_top, (normal(2, 5),)),
    ("layer_norm", layer_norm, (normal(3, 4), normal(4))),
    ("attention", attention, (normal(2, 4), normal(3, 4), normal(3, 2))),
    (
        "logistic_regression",
        logistic_regression_loss,
        (normal(3), normal(6, 3), np.sign(normal(6))),
    ),
    ("convolution_1d", convolution_1d, (normal(6), normal(3))),
    ("max_pool", max_pool, (normal(4, 3),)),
    ("prod_outer", prod_and_outer, (normal(3), normal(2))),
    ("tile_repeat_roll", tile_repeat_roll, (normal(3),)),
    ("trace_diagonal", trace_and_diagonal, (normal(3, 3),)),
    ("polar", polar_coordinates, (normal(3) + 2.0, normal(3))),
    ("huber", huber_loss, (np.array([-2.5, -0.4, 0.3, 1.7]),)),
    (
        "pytree",
        pytree_in_and_out,
        ({"position": normal(3), "velocity": normal(3), "mass": np.array(1.5)},),
    ),
    ("linspace_average", linspace_and_average, (np.array(0.3), np.array(1.2))),
    ("cross", cross_products, (normal(2, 3), normal(2, 3))),
    ("transpose_reshape", transpose_reshape_chain, (normal(12),)),
    ("sinc_through_zero", sinc_through_zero, (np.array([0.0, 0.05, -0.3, 1.7]),)),
    ("diff_roll_take", differences_and_rolls, (normal(3, 4),)),
    ("triangles", triangles, (normal(3, 3),)),
]


def _cast(tree: Any, dtype: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _cast(value, dtype) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_cast(value, dtype) for value in tree)
    if isinstance(tree, np.ndarray) and tree.dtype.kind == "f":
        return tree.astype(dtype)
    return tree


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize(("name", "f", "args"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_check_grads_order_2(name, f, args, dtype):
    check_grads(f, _cast(args, dtype), modes=("fwd", "rev"), order=2)


def test_there_are_at_least_20_composites():
    assert len(COMPOSITES) >= 20


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_heaviside_keeps_numpy_s_dtype_and_differentiates_in_h0(dtype):
    """A Python h0 does not promote (NEP 50): float32 stays float32, as numpy.heaviside
    (it gave float64; found by scripts/compare_with_jax.py)."""
    import kenaz

    x = np.array([-1.0, 0.0, 2.0], dtype)
    for h0 in (0.5, np.asarray(0.5, dtype)):
        ours = knp.heaviside(x, h0)
        assert ours.dtype == np.heaviside(x, h0).dtype == dtype
        np.testing.assert_array_equal(ours, np.heaviside(x, h0))
    assert knp.heaviside(x, np.float64(0.5)).dtype == np.float64  # a NumPy float64 promotes
    g = kenaz.grad(lambda h: knp.sum(knp.heaviside(x, h) * x))(np.asarray(0.3, dtype))
    assert g.dtype == dtype and float(g) == 0.0  # x == 0 where h0 is taken
    g = kenaz.grad(lambda h: knp.sum(knp.heaviside(x, h)))(np.asarray(0.3, dtype))
    assert float(g) == 1.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hypot_does_not_overflow_and_has_a_subgradient_at_zero(dtype):
    """hypot was sqrt(x*x + y*y): inf for large inputs, 0 for tiny ones, and a nan
    derivative at (0, 0) (JAX gives a finite one; found by compare_with_jax)."""
    import kenaz

    big, tiny = np.finfo(dtype).max / 4, np.finfo(dtype).tiny * 8
    x = np.array([0.0, 3.0, big, tiny, np.inf, -2.0], dtype)
    y = np.array([0.0, 4.0, big, tiny, np.nan, 0.0], dtype)
    ours = knp.hypot(x, y)
    assert ours.dtype == dtype
    rtol = 1e-6 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(ours, np.hypot(x, y), rtol=rtol)
    assert knp.hypot(dtype(3), 4.0).dtype == dtype  # a Python number does not promote
    gx, gy = kenaz.grad(lambda a, b: knp.sum(knp.hypot(a, b)), argnums=(0, 1))(x[:2], y[:2])
    np.testing.assert_allclose(gx, [0.0, 0.6], rtol=1e-6)
    np.testing.assert_allclose(gy, [0.0, 0.8], rtol=1e-6)
    assert gx.dtype == dtype
    tolerance = {"atol": 2e-3, "rtol": 2e-3} if dtype == np.float32 else {}
    check_grads(knp.hypot, (x[1:2], y[1:2]), order=2, **tolerance)
