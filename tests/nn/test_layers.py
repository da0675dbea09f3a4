"""Linear, Embedding, LayerNorm, BatchNorm, Dropout, attention and the module classes."""

import math

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import nn
from kenaz.testing import check_grads


def softmax_reference(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# -- linear and embedding ----------------------------------------------------------------
def test_linear_and_mlp():
    layer = nn.Linear(3, 2)
    params = layer.init(0)
    x = np.random.default_rng(0).normal(size=(5, 3))
    expected = x @ params["weight"].numpy() + params["bias"].numpy()
    np.testing.assert_allclose(layer(params, x).numpy(), expected)
    assert "bias" not in nn.Linear(3, 2, bias=False).init(0)

    model = nn.MLP([3, 8, 8, 2], activation=nn.tanh)
    params = model.init(1)
    assert [p is None for p in params] == [False, True, False, True, False]
    h = x
    for p in params[::2][:-1]:
        h = np.tanh(h @ p["weight"].numpy() + p["bias"].numpy())
    h = h @ params[-1]["weight"].numpy() + params[-1]["bias"].numpy()
    np.testing.assert_allclose(model(params, x).numpy(), h)
    assert nn.count_parameters(params) == 3 * 8 + 8 + 8 * 8 + 8 + 8 * 2 + 2


def test_parameters_depend_only_on_the_key():
    model = nn.MLP([4, 5, 3])
    first, second, other = model.init(7), model.init(np.random.default_rng(7)), model.init(8)
    leaves = kenaz.tree.leaves
    assert all(np.array_equal(a, b) for a, b in zip(leaves(first), leaves(second)))
    assert not np.array_equal(first[0]["weight"], other[0]["weight"])
    with pytest.raises(TypeError, match="random key"):
        model.init(None)


def test_sequential_checks_parameter_count():
    model = nn.Sequential([nn.Linear(2, 2), nn.relu])
    with pytest.raises(ValueError, match="parameters for 1 layers"):
        model([model.init(0)[0]], np.ones((1, 2)))


def test_mlp_gradients():
    model = nn.MLP([3, 4, 2], activation=nn.tanh)
    x = np.random.default_rng(0).normal(size=(5, 3))
    check_grads(lambda params: model(params, x), (model.init(0),), order=2)


def test_embedding():
    layer = nn.Embedding(5, 3)
    params = layer.init(0)
    ids = np.array([[0, 4], [4, 1]])
    np.testing.assert_array_equal(layer(params, ids).numpy(), params["weight"].numpy()[ids])
    grad = kenaz.grad(lambda p: knp.sum(layer(p, ids)))(params)["weight"].numpy()
    np.testing.assert_array_equal(grad[:, 0], [1, 1, 0, 0, 2])
    with pytest.raises(TypeError, match="integers"):
        layer(params, np.array([0.5]))


# -- normalization -------------------------------------------------------------------------
def test_layer_norm_matches_numpy_and_differentiates():
    rng = np.random.default_rng(0)
    x, scale, bias = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=6)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(
        x.var(-1, keepdims=True) + 1e-5
    ) * scale + bias
    np.testing.assert_allclose(nn.layer_norm(x, scale, bias).numpy(), expected, rtol=1e-12)
    layer = nn.LayerNorm(6)
    np.testing.assert_allclose(
        layer(layer.init(0), x).numpy(), nn.layer_norm(x).numpy(), rtol=1e-12
    )
    check_grads(nn.layer_norm, (x, scale, bias), order=2)
    over_two_axes = nn.layer_norm(x.reshape(2, 2, 6), axis=(-2, -1)).numpy()
    flat = x.reshape(2, 12)
    reference = (flat - flat.mean(-1, keepdims=True)) / np.sqrt(flat.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(over_two_axes.reshape(2, 12), reference, rtol=1e-12)


def test_batch_norm_training_and_evaluation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3, 2, 2)) * 3 + 1
    layer = nn.BatchNorm(3, momentum=0.9)
    params, state = layer.init(0), layer.init_state()
    y, new_state = layer(params, state, x, training=True)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    expected = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(new_state["mean"].numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(new_state["var"].numpy(), 0.9 + 0.1 * var, rtol=1e-12)
    y_eval, same_state = layer(params, new_state, x, training=False)
    running_mean, running_var = new_state["mean"].numpy(), new_state["var"].numpy()
    expected_eval = (x - running_mean[None, :, None, None]) / np.sqrt(
        running_var[None, :, None, None] + 1e-5
    )
    np.testing.assert_allclose(y_eval.numpy(), expected_eval, rtol=1e-10)
    assert same_state["mean"] is new_state["mean"]


def test_batch_norm_gradients_and_no_gradient_into_state():
    rng = np.random.default_rng(1)
    x, scale, bias = rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=3)
    state = {"mean": np.zeros(3), "var": np.ones(3)}

    def normalized(x, scale, bias):
        return nn.batch_norm(x, scale, bias, state, training=True)[0]

    check_grads(normalized, (x, scale, bias), order=2)
    state_grad = kenaz.grad(
        lambda x: knp.sum(nn.batch_norm(x, None, None, state, training=True)[1]["mean"])
    )(x)
    np.testing.assert_array_equal(state_grad.numpy(), 0)


# -- dropout ---------------------------------------------------------------------------------
def test_dropout():
    x = np.ones((200, 50))
    y = nn.dropout(x, 0.3, key=0).numpy()
    assert set(np.unique(y)) == {0.0, 1 / 0.7}
    assert abs((y == 0).mean() - 0.3) < 0.02
    np.testing.assert_array_equal(y, nn.dropout(x, 0.3, key=0).numpy())  # same key, same mask
    assert not np.array_equal(y, nn.dropout(x, 0.3, key=1).numpy())
    np.testing.assert_array_equal(nn.dropout(x, 0.3, key=None, training=False).numpy(), x)
    mask = y != 0
    grad = kenaz.grad(lambda x: knp.sum(nn.dropout(x, 0.3, key=0)))(x).numpy()
    np.testing.assert_allclose(grad, mask / 0.7)
    assert nn.Dropout(0.5)(None, x, key=0, training=False) is not None
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(x, 1.0, key=0)


# -- attention --------------------------------------------------------------------------------
def attention_reference(q, k, v, mask):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    scores = np.where(mask, scores, -1e300)
    return softmax_reference(scores) @ v


def test_dot_product_attention_matches_numpy_with_masks():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 6))
    everything = np.ones((4, 5), dtype=bool)
    np.testing.assert_allclose(
        nn.dot_product_attention(q, k, v).numpy(),
        attention_reference(q, k, v, everything),
        rtol=1e-12,
    )
    causal = nn.causal_mask(4, 5)
    np.testing.assert_array_equal(causal, np.tri(4, 5, k=1, dtype=bool))
    np.testing.assert_allclose(
        nn.dot_product_attention(q, k, v, causal=True).numpy(),
        attention_reference(q, k, v, causal),
        rtol=1e-12,
    )
    padding = rng.random((2, 1, 5)) > 0.3
    padding[:, :, 0] = True
    np.testing.assert_allclose(
        nn.dot_product_attention(q, k, v, mask=padding, causal=True).numpy(),
        attention_reference(q, k, v, padding & causal),
        rtol=1e-12,
    )


def test_causal_attention_ignores_the_future():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 6, 4))
    changed = x.copy()
    changed[0, 4:] += 10.0
    before = nn.dot_product_attention(x, x, x, causal=True).numpy()
    after = nn.dot_product_attention(changed, changed, changed, causal=True).numpy()
    np.testing.assert_allclose(before[0, :4], after[0, :4], rtol=1e-12)


def test_multi_head_attention_matches_numpy():
    rng = np.random.default_rng(2)
    layer = nn.MultiHeadAttention(embed_dim=8, num_heads=2)
    params = layer.init(0)
    x = rng.normal(size=(3, 5, 8))

    def project(name, inputs):
        return inputs @ params[name]["weight"].numpy() + params[name]["bias"].numpy()

    def heads(t):
        return t.reshape(3, 5, 2, 4).transpose(0, 2, 1, 3)

    q, k, v = (heads(project(name, x)) for name in ("query", "key", "value"))
    attended = attention_reference(q, k, v, nn.causal_mask(5))
    merged = attended.transpose(0, 2, 1, 3).reshape(3, 5, 8)
    expected = project("output", merged)
    np.testing.assert_allclose(layer(params, x, causal=True).numpy(), expected, rtol=1e-10)
    assert nn.Attention is nn.MultiHeadAttention
    with pytest.raises(ValueError, match="does not divide"):
        nn.MultiHeadAttention(embed_dim=6, num_heads=4)


def test_attention_gradients():
    rng = np.random.default_rng(3)
    layer = nn.MultiHeadAttention(embed_dim=4, num_heads=2)
    x = rng.normal(size=(2, 3, 4))
    check_grads(lambda p, x: layer(p, x, causal=True), (layer.init(0), x), order=1)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, causal=True), (q, k, v), order=2)


def test_sequential_cnn_with_pooling_and_flatten():
    model = nn.Sequential(
        [
            nn.Conv2d(1, 3, 3, padding=1),
            nn.relu,
            nn.MaxPool2d(2),
            nn.AvgPool2d(2),
            nn.Flatten(),
            nn.Linear(3 * 2 * 2, 5),
        ]
    )
    params = model.init(0)
    x = np.random.default_rng(0).normal(size=(2, 1, 8, 8))
    conv, linear = params[0], params[5]
    h = nn.relu(nn.conv2d(x, conv["weight"], conv["bias"], padding=1))
    h = nn.avg_pool2d(nn.max_pool2d(h, 2), 2).numpy().reshape(2, -1)
    expected = h @ linear["weight"].numpy() + linear["bias"].numpy()
    np.testing.assert_allclose(model(params, x).numpy(), expected, rtol=1e-12)
    assert params[2] is None and params[4] is None
