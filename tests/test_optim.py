"""Optimizers against hand-computed steps, schedules, clipping, chain and a convergence check."""

import math

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import optim

# Two steps on one parameter: p = 1, first gradient 2, then -1 (weight decay sees p).
P0, G1, G2 = 1.0, 2.0, -1.0
LR = 0.1


def two_steps(optimizer):
    """Updates of the first two steps (the parameter is moved by the first update)."""
    params = {"p": knp.array([P0])}
    state = optimizer.init(params)
    updates = []
    for g in (G1, G2):
        update, state = optimizer.update({"p": knp.array([g])}, state, params)
        params = optim.apply_updates(params, update)
        updates.append(float(update["p"][0]))
    return updates


def test_sgd():
    assert two_steps(optim.sgd(LR)) == pytest.approx([-LR * G1, -LR * G2])


def test_sgd_momentum():
    m1 = G1
    m2 = G2 + 0.9 * m1
    assert two_steps(optim.sgd(LR, momentum=0.9)) == pytest.approx([-LR * m1, -LR * m2])


def test_sgd_nesterov():
    m1 = G1
    m2 = G2 + 0.9 * m1
    expected = [-LR * (G1 + 0.9 * m1), -LR * (G2 + 0.9 * m2)]
    assert two_steps(optim.sgd(LR, momentum=0.9, nesterov=True)) == pytest.approx(expected)
    with pytest.raises(ValueError, match="nesterov"):
        optim.sgd(LR, nesterov=True)


def test_sgd_weight_decay():
    p1 = P0 - LR * (G1 + 0.01 * P0)
    assert two_steps(optim.sgd(LR, weight_decay=0.01)) == pytest.approx(
        [-LR * (G1 + 0.01 * P0), -LR * (G2 + 0.01 * p1)]
    )


def adam_directions(b1=0.9, b2=0.999, eps=1e-8):
    mu1, nu1 = (1 - b1) * G1, (1 - b2) * G1**2
    mu2, nu2 = b1 * mu1 + (1 - b1) * G2, b2 * nu1 + (1 - b2) * G2**2
    first = (mu1 / (1 - b1)) / (math.sqrt(nu1 / (1 - b2)) + eps)
    second = (mu2 / (1 - b1**2)) / (math.sqrt(nu2 / (1 - b2**2)) + eps)
    return first, second


def test_adam():
    first, second = adam_directions()
    assert two_steps(optim.adam(LR)) == pytest.approx([-LR * first, -LR * second], rel=1e-12)


def test_adamw():
    first, second = adam_directions()
    p1 = P0 - LR * (first + 0.1 * P0)
    expected = [-LR * (first + 0.1 * P0), -LR * (second + 0.1 * p1)]
    assert two_steps(optim.adamw(LR, weight_decay=0.1)) == pytest.approx(expected, rel=1e-12)


def test_rmsprop():
    nu1 = 0.1 * G1**2
    nu2 = 0.9 * nu1 + 0.1 * G2**2
    expected = [-LR * G1 / (math.sqrt(nu1) + 1e-8), -LR * G2 / (math.sqrt(nu2) + 1e-8)]
    assert two_steps(optim.rmsprop(LR, decay=0.9)) == pytest.approx(expected, rel=1e-12)
    m1 = G1 / (math.sqrt(nu1) + 1e-8)
    m2 = G2 / (math.sqrt(nu2) + 1e-8) + 0.5 * m1
    assert two_steps(optim.rmsprop(LR, decay=0.9, momentum=0.5)) == pytest.approx(
        [-LR * m1, -LR * m2], rel=1e-12
    )


def test_adagrad():
    expected = [
        -LR * G1 / (math.sqrt(0.1 + G1**2) + 1e-10),
        -LR * G2 / (math.sqrt(0.1 + G1**2 + G2**2) + 1e-10),
    ]
    assert two_steps(optim.adagrad(LR, initial_accumulator_value=0.1)) == pytest.approx(
        expected, rel=1e-12
    )


def test_lion():
    # Step 1: sign(0.1 * 2) = 1; m = 0.01 * 2 = 0.02. Step 2: sign(0.9 * 0.02 - 0.1) = -1.
    assert two_steps(optim.lion(LR)) == pytest.approx([-LR, LR])
    p1 = P0 - LR * (1 + 0.5 * P0)
    assert two_steps(optim.lion(LR, weight_decay=0.5)) == pytest.approx(
        [-LR * (1 + 0.5 * P0), -LR * (-1 + 0.5 * p1)]
    )


def test_optimizers_work_on_nested_params_and_keep_dtype():
    params = {
        "dense": [knp.ones((2, 3), dtype=np.float32), knp.zeros(3, dtype=np.float32)],
        "s": 1.0,
    }
    grads = kenaz.tree.map(lambda p: knp.ones_like(knp.asarray(p)), params)
    for optimizer in [
        optim.sgd(0.1, momentum=0.9),
        optim.adam(0.1),
        optim.adamw(0.1),
        optim.rmsprop(0.1),
        optim.adagrad(0.1),
        optim.lion(0.1),
    ]:
        state = optimizer.init(params)
        updates, state = optimizer.update(grads, state, params)
        new = optim.apply_updates(params, updates)
        assert new["dense"][0].dtype == np.float32 and new["dense"][0].shape == (2, 3)
        assert kenaz.tree.structure(new) == kenaz.tree.structure(params)


@pytest.mark.parametrize(
    "optimizer",
    [
        optim.sgd(0.1, momentum=0.9),
        optim.adam(0.1),
        optim.rmsprop(0.01),
        optim.adagrad(0.5),
        optim.lion(0.01, b2=0.9),  # the default b2 = 0.99 overshoots for longer
        optim.adamw(0.1, weight_decay=0.0),
    ],
    ids=["sgd", "adam", "rmsprop", "adagrad", "lion", "adamw"],
)
def test_optimizers_minimize_a_quadratic(optimizer):
    target = knp.array([3.0, -2.0])
    loss = lambda w: knp.sum((w - target) ** 2)  # noqa: E731
    w = knp.zeros(2)
    state = optimizer.init(w)
    for _ in range(500):
        updates, state = optimizer.update(kenaz.grad(loss)(w), state, w)
        w = optim.apply_updates(w, updates)
    assert float(loss(w)) < 1e-2


def test_clip_by_global_norm():
    clip = optim.clip_by_global_norm(1.0)
    grads = {"a": knp.array([3.0]), "b": knp.array([[4.0]])}
    clipped, _ = clip.update(grads, clip.init(grads))
    assert float(optim.global_norm(clipped)) == pytest.approx(1.0)
    np.testing.assert_allclose(clipped["a"].numpy(), [0.6])
    small = {"a": knp.array([0.3])}
    assert float(clip.update(small, ())[0]["a"][0]) == pytest.approx(0.3)
    f32 = {"a": knp.array([30.0], dtype=np.float32)}
    assert clip.update(f32, ())[0]["a"].dtype == np.float32


def test_chain_composes_in_order_and_checks_state():
    optimizer = optim.chain(optim.clip_by_global_norm(1.0), optim.scale(-2.0))
    state = optimizer.init(knp.zeros(()))
    updates, _ = optimizer.update(knp.array(10.0), state)
    assert float(updates) == -2.0
    with pytest.raises(ValueError, match="2 parts"):
        optim.chain(optim.scale(1.0)).update(knp.array(1.0), state)
    with pytest.raises(ValueError, match="params"):
        optim.add_decayed_weights(0.1).update(knp.array(1.0), ())


def test_a_step_is_differentiable():
    # The learning rate's effect on the loss after one step: d/d lr of f(w - lr f'(w)).
    def loss_after_step(lr):
        w = knp.array(2.0)
        update, _ = optim.sgd(lr).update(2 * w, optim.sgd(lr).init(w), w)
        return optim.apply_updates(w, update) ** 2

    # w1 = 2 - 4 lr, loss = w1^2, derivative -8 w1 = -8 (2 - 4 * 0.1)
    assert float(kenaz.grad(loss_after_step)(0.1)) == pytest.approx(-8 * 1.6)


def test_schedules():
    assert optim.constant_schedule(0.3)(99) == 0.3
    linear = optim.linear_schedule(1.0, 0.0, 4)
    assert [linear(s) for s in (0, 1, 4, 10)] == [1.0, 0.75, 0.0, 0.0]
    cosine = optim.cosine_decay_schedule(2.0, 10, alpha=0.1)
    assert cosine(0) == pytest.approx(2.0)
    assert cosine(5) == pytest.approx(2.0 * (0.9 * 0.5 + 0.1))
    assert cosine(10) == cosine(20) == pytest.approx(0.2)
    exponential = optim.exponential_decay(1.0, 10, 0.5)
    assert exponential(5) == pytest.approx(0.5**0.5)
    assert optim.exponential_decay(1.0, 10, 0.5, staircase=True)(19) == 0.5
    assert optim.exponential_decay(1.0, 10, 0.5, end_value=0.3)(100) == 0.3
    warmup = optim.warmup_cosine_decay_schedule(
        0.0, 1.0, warmup_steps=4, decay_steps=14, end_value=0.1
    )
    assert [warmup(s) for s in (0, 2, 4)] == pytest.approx([0.0, 0.5, 1.0])
    assert warmup(9) == pytest.approx(0.55)
    assert warmup(14) == pytest.approx(0.1)
    joined = optim.join_schedules(
        [optim.constant_schedule(1.0), optim.linear_schedule(1.0, 0.0, 2)], [3]
    )
    assert [joined(s) for s in (2, 3, 4, 5)] == [1.0, 1.0, 0.5, 0.0]


def test_learning_rate_schedule_drives_the_step():
    optimizer = optim.sgd(optim.linear_schedule(1.0, 0.0, 2))
    w = knp.array(0.0)
    state = optimizer.init(w)
    steps = []
    for _ in range(3):
        updates, state = optimizer.update(knp.array(1.0), state, w)
        steps.append(float(updates))
    assert steps == [-1.0, -0.5, 0.0]
