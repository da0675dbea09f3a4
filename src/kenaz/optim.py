"""Optimizers as pure gradient transformations, in optax's convention.

An optimizer is a pair of functions, ``init(params) -> state`` and
``update(grads, state, params) -> (updates, state)``; ``apply_updates(params,
updates)`` adds the updates to the parameters. Parameters, gradients, updates
and states are pytrees, and nothing is mutated, so a training step is

>>> import kenaz
>>> from kenaz import optim
>>> loss = lambda w: (w - 3.0) ** 2
>>> opt = optim.sgd(learning_rate=0.1)
>>> w = kenaz.numpy.array(0.0)
>>> state = opt.init(w)
>>> for _ in range(100):
...     updates, state = opt.update(kenaz.grad(loss)(w), state, w)
...     w = optim.apply_updates(w, updates)
>>> round(float(w), 4)
3.0

Optimizers are built by ``chain``-ing small transformations (``scale_by_adam``,
``add_decayed_weights``, ``scale_by_learning_rate``, ``clip_by_global_norm``,
...), exactly as in optax, and the arithmetic is kenaz tensor arithmetic, so an
optimizer step can itself be differentiated. A learning rate is a number or a
*schedule*: a function from the step count to a number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from . import numpy as knp
from . import tree
from .tensor import Tensor

__all__ = [
    "GradientTransformation",
    "Schedule",
    "apply_updates",
    "global_norm",
    "chain",
    "identity",
    "scale",
    "scale_by_learning_rate",
    "scale_by_schedule",
    "trace",
    "scale_by_adam",
    "scale_by_rms",
    "scale_by_rss",
    "scale_by_lion",
    "add_decayed_weights",
    "clip_by_global_norm",
    "sgd",
    "adam",
    "adamw",
    "rmsprop",
    "adagrad",
    "lion",
    "constant_schedule",
    "linear_schedule",
    "cosine_decay_schedule",
    "exponential_decay",
    "warmup_cosine_decay_schedule",
    "join_schedules",
]

Schedule = Callable[[int], float]
ScalarOrSchedule = float | Schedule


class GradientTransformation(NamedTuple):
    """An optimizer or one stage of one: ``init(params)`` and ``update(grads, state, params)``.

    Write your own stage the same way:

    Examples
    --------
    >>> def scale_by_sign():
    ...     def update(grads, state, params=None):
    ...         return tree.map(knp.sign, grads), state
    ...     return GradientTransformation(lambda params: (), update)
    >>> signsgd = chain(scale_by_sign(), scale_by_learning_rate(0.1))
    >>> signsgd.update(knp.array([-3.0, 2.0]), signsgd.init(knp.zeros(2)))[0]
    Tensor([ 0.1, -0.1])
    """

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


# -- helpers ------------------------------------------------------------------------------
def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leaf by leaf, keeping each parameter's dtype.

    Examples
    --------
    >>> apply_updates({"w": 1.0}, {"w": -0.5})
    {'w': Tensor(0.5)}
    """

    def add(p: Any, u: Any) -> Tensor:
        p = knp.asarray(p)
        out = p + u
        return out.astype(p.dtype) if out.dtype != p.dtype and p.dtype.kind in "fc" else out

    return tree.map(add, params, updates)


def global_norm(updates: Any) -> Tensor:
    """The L2 norm of all leaves of ``updates`` together.

    Examples
    --------
    >>> global_norm([knp.array([3.0]), knp.array(4.0)])
    Tensor(5.)
    """
    leaves = tree.leaves(updates)
    if not leaves:
        return knp.asarray(0.0)
    return knp.sqrt(sum(knp.sum(knp.square(knp.asarray(leaf))) for leaf in leaves))


def _zeros_like_tree(params: Any) -> Any:
    return tree.map(lambda p: knp.zeros_like(p), params)


def _as_schedule(value: ScalarOrSchedule) -> Schedule:
    return value if callable(value) else constant_schedule(value)


def chain(*transformations: GradientTransformation) -> GradientTransformation:
    """Apply ``transformations`` one after another; the state is a tuple of their states.

    Examples
    --------
    >>> opt = chain(clip_by_global_norm(1.0), scale_by_adam(), scale_by_learning_rate(1e-3))
    >>> state = opt.init({"w": knp.zeros(3)})
    >>> len(state)
    3
    """

    def init(params: Any) -> tuple[Any, ...]:
        return tuple(t.init(params) for t in transformations)

    def update(
        grads: Any, state: tuple[Any, ...], params: Any = None
    ) -> tuple[Any, tuple[Any, ...]]:
        if len(state) != len(transformations):
            raise ValueError(
                f"kenaz.optim.chain: the state has {len(state)} parts but the chain has "
                f"{len(transformations)} transformations; was it made by this optimizer's init?"
            )
        new_state = []
        for transformation, part in zip(transformations, state, strict=True):
            grads, part = transformation.update(grads, part, params)
            new_state.append(part)
        return grads, tuple(new_state)

    return GradientTransformation(init, update)


def identity() -> GradientTransformation:
    """A transformation that leaves the updates as they are.

    Examples
    --------
    >>> identity().update(1.0, identity().init(0.0))
    (1.0, ())
    """
    return GradientTransformation(
        lambda params: (), lambda grads, state, params=None: (grads, state)
    )


# -- stateless scalings -------------------------------------------------------------------
def scale(factor: float) -> GradientTransformation:
    """Multiply the updates by ``factor``.

    Examples
    --------
    >>> scale(-2.0).update(knp.array(1.5), ())[0]
    Tensor(-3.)
    """

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return tree.map(lambda g: factor * g, grads), state

    return GradientTransformation(lambda params: (), update)


class ScheduleState(NamedTuple):
    """The number of updates made so far."""

    count: int


def scale_by_schedule(schedule: Schedule) -> GradientTransformation:
    """Multiply the updates by ``schedule(step)``, counting steps from 0.

    Examples
    --------
    >>> t = scale_by_schedule(lambda step: 0.5 ** step)
    >>> state = t.init(None)
    >>> _, state = t.update(knp.array(1.0), state)
    >>> t.update(knp.array(1.0), state)[0]
    Tensor(0.5)
    """

    def update(grads: Any, state: ScheduleState, params: Any = None) -> tuple[Any, ScheduleState]:
        count = int(state.count)  # a plain int, also after a checkpoint made it an array
        factor = float(schedule(count))
        return tree.map(lambda g: factor * g, grads), ScheduleState(count + 1)

    return GradientTransformation(lambda params: ScheduleState(0), update)


def scale_by_learning_rate(learning_rate: ScalarOrSchedule) -> GradientTransformation:
    """Multiply the updates by ``-learning_rate`` (a number or a schedule): descent.

    Examples
    --------
    >>> scale_by_learning_rate(0.1).update(knp.array(2.0), ())[0]
    Tensor(-0.2)
    """
    if callable(learning_rate):
        schedule = learning_rate
        return scale_by_schedule(lambda step: -schedule(step))
    return scale(-learning_rate)


def add_decayed_weights(weight_decay: float) -> GradientTransformation:
    """Add ``weight_decay * params`` to the updates (decoupled weight decay, as in AdamW).

    Examples
    --------
    >>> add_decayed_weights(0.1).update(knp.array(1.0), (), knp.array(2.0))[0]
    Tensor(1.2)
    """

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError("kenaz.optim.add_decayed_weights: update needs the params argument")
        if weight_decay == 0:
            return grads, state
        return tree.map(lambda g, p: g + weight_decay * p, grads, params), state

    return GradientTransformation(lambda params: (), update)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scale all updates down together so that their global L2 norm is at most ``max_norm``.

    Examples
    --------
    >>> clip_by_global_norm(1.0).update([knp.array(3.0), knp.array(4.0)], ())[0]
    [Tensor(0.6), Tensor(0.8)]
    """

    def update(grads: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        # max_norm / max(norm, max_norm): 1 when the norm is small enough.
        factor = max_norm / knp.maximum(global_norm(grads), max_norm)
        return tree.map(lambda g: (factor * g).astype(knp.asarray(g).dtype), grads), state

    return GradientTransformation(lambda params: (), update)


# -- stateful scalings ----------------------------------------------------------------------
class TraceState(NamedTuple):
    """Momentum buffers, one per parameter."""

    momentum: Any


def trace(decay: float, nesterov: bool = False) -> GradientTransformation:
    """Momentum: ``m = g + decay * m``; the update is ``m`` (or ``g + decay * m`` with Nesterov).

    Examples
    --------
    >>> t = trace(0.9)
    >>> state = t.init(knp.zeros(()))
    >>> updates, state = t.update(knp.array(1.0), state)
    >>> t.update(knp.array(1.0), state)[0]
    Tensor(1.9)
    """

    def init(params: Any) -> TraceState:
        return TraceState(_zeros_like_tree(params))

    def update(grads: Any, state: TraceState, params: Any = None) -> tuple[Any, TraceState]:
        momentum = tree.map(lambda g, m: g + decay * m, grads, state.momentum)
        if nesterov:
            updates = tree.map(lambda g, m: g + decay * m, grads, momentum)
        else:
            updates = momentum
        return updates, TraceState(momentum)

    return GradientTransformation(init, update)


class AdamState(NamedTuple):
    """Step count and the first and second moment estimates."""

    count: int
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> GradientTransformation:
    """Adam's scaling: bias-corrected ``mu / (sqrt(nu) + eps)``.

    Examples
    --------
    >>> t = scale_by_adam()
    >>> t.update(knp.array(-4.0), t.init(knp.zeros(())))[0]  # the first step is sign(g)
    Tensor(-1.)
    """

    def init(params: Any) -> AdamState:
        return AdamState(0, _zeros_like_tree(params), _zeros_like_tree(params))

    def update(grads: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        count = int(state.count) + 1  # a plain int: Python scalars keep float32 float32
        mu = tree.map(lambda g, m: b1 * m + (1 - b1) * g, grads, state.mu)
        nu = tree.map(lambda g, v: b2 * v + (1 - b2) * (g * g), grads, state.nu)
        mu_correction, nu_correction = 1 - b1**count, 1 - b2**count
        updates = tree.map(
            lambda m, v: (m / mu_correction) / (knp.sqrt(v / nu_correction) + eps), mu, nu
        )
        return updates, AdamState(count, mu, nu)

    return GradientTransformation(init, update)


class RmsState(NamedTuple):
    """Running mean of squared gradients."""

    nu: Any


def scale_by_rms(decay: float = 0.9, eps: float = 1e-8) -> GradientTransformation:
    """RMSProp's scaling: ``g / (sqrt(nu) + eps)`` with ``nu`` a running mean of ``g**2``.

    Examples
    --------
    >>> t = scale_by_rms(decay=0.75, eps=0.0)
    >>> t.update(knp.array(2.0), t.init(knp.zeros(())))[0]  # 2 / sqrt(0.25 * 4)
    Tensor(2.)
    """

    def init(params: Any) -> RmsState:
        return RmsState(_zeros_like_tree(params))

    def update(grads: Any, state: RmsState, params: Any = None) -> tuple[Any, RmsState]:
        nu = tree.map(lambda g, v: decay * v + (1 - decay) * (g * g), grads, state.nu)
        updates = tree.map(lambda g, v: g / (knp.sqrt(v) + eps), grads, nu)
        return updates, RmsState(nu)

    return GradientTransformation(init, update)


class RssState(NamedTuple):
    """Sum of squared gradients."""

    sum_of_squares: Any


def scale_by_rss(
    initial_accumulator_value: float = 0.0, eps: float = 1e-10
) -> GradientTransformation:
    """Adagrad's scaling: ``g / (sqrt(sum of g**2) + eps)``.

    Examples
    --------
    >>> t = scale_by_rss(eps=0.0)
    >>> t.update(knp.array(-3.0), t.init(knp.zeros(())))[0]
    Tensor(-1.)
    """

    def init(params: Any) -> RssState:
        return RssState(tree.map(lambda p: knp.full_like(p, initial_accumulator_value), params))

    def update(grads: Any, state: RssState, params: Any = None) -> tuple[Any, RssState]:
        total = tree.map(lambda g, s: s + g * g, grads, state.sum_of_squares)
        updates = tree.map(lambda g, s: g / (knp.sqrt(s) + eps), grads, total)
        return updates, RssState(total)

    return GradientTransformation(init, update)


class LionState(NamedTuple):
    """Lion's momentum."""

    momentum: Any


def scale_by_lion(b1: float = 0.9, b2: float = 0.99) -> GradientTransformation:
    """Lion's scaling: ``sign(b1 * m + (1 - b1) * g)``, then ``m = b2 * m + (1 - b2) * g``.

    Examples
    --------
    >>> t = scale_by_lion()
    >>> t.update(knp.array([-0.3, 2.0]), t.init(knp.zeros(2)))[0]
    Tensor([-1.,  1.])
    """

    def init(params: Any) -> LionState:
        return LionState(_zeros_like_tree(params))

    def update(grads: Any, state: LionState, params: Any = None) -> tuple[Any, LionState]:
        updates = tree.map(lambda g, m: knp.sign(b1 * m + (1 - b1) * g), grads, state.momentum)
        momentum = tree.map(lambda g, m: b2 * m + (1 - b2) * g, grads, state.momentum)
        return updates, LionState(momentum)

    return GradientTransformation(init, update)


# -- the usual optimizers -----------------------------------------------------------------
def sgd(
    learning_rate: ScalarOrSchedule,
    momentum: float = 0.0,
    nesterov: bool = False,
    weight_decay: float = 0.0,
) -> GradientTransformation:
    """Stochastic gradient descent, optionally with (Nesterov) momentum and weight decay.

    ``m = g + momentum * m``; ``params -= learning_rate * m`` (or
    ``learning_rate * (g + momentum * m)`` with Nesterov), as in PyTorch.

    Examples
    --------
    >>> opt = sgd(0.1, momentum=0.9)
    >>> updates, _ = opt.update(knp.array(1.0), opt.init(knp.zeros(())), knp.zeros(()))
    >>> updates
    Tensor(-0.1)
    """
    stages = []
    if weight_decay:
        stages.append(add_decayed_weights(weight_decay))
    if momentum:
        stages.append(trace(momentum, nesterov))
    elif nesterov:
        raise ValueError("kenaz.optim.sgd: nesterov=True needs a nonzero momentum")
    stages.append(scale_by_learning_rate(learning_rate))
    return chain(*stages)


def adam(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> GradientTransformation:
    """Adam (Kingma and Ba, 2015).

    Examples
    --------
    >>> opt = adam(0.01)
    >>> opt.update(knp.array(5.0), opt.init(knp.zeros(())), knp.zeros(()))[0]
    Tensor(-0.01)
    """
    return chain(scale_by_adam(b1, b2, eps), scale_by_learning_rate(learning_rate))


def adamw(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 1e-4,
) -> GradientTransformation:
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019).

    ``params -= learning_rate * (adam_direction + weight_decay * params)``.

    Examples
    --------
    >>> opt = adamw(0.1, weight_decay=0.5)
    >>> opt.update(knp.array(1.0), opt.init(knp.zeros(())), knp.array(2.0))[0]
    Tensor(-0.2)
    """
    return chain(
        scale_by_adam(b1, b2, eps),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )


def rmsprop(
    learning_rate: ScalarOrSchedule, decay: float = 0.9, eps: float = 1e-8, momentum: float = 0.0
) -> GradientTransformation:
    """RMSProp (Hinton), optionally with momentum.

    Examples
    --------
    >>> opt = rmsprop(0.1, decay=0.75, eps=0.0)
    >>> opt.update(knp.array(2.0), opt.init(knp.zeros(())), knp.zeros(()))[0]
    Tensor(-0.2)
    """
    stages = [scale_by_rms(decay, eps)]
    if momentum:
        stages.append(trace(momentum))
    return chain(*stages, scale_by_learning_rate(learning_rate))


def adagrad(
    learning_rate: ScalarOrSchedule, initial_accumulator_value: float = 0.0, eps: float = 1e-10
) -> GradientTransformation:
    """Adagrad (Duchi et al., 2011).

    Examples
    --------
    >>> opt = adagrad(0.5, eps=0.0)
    >>> opt.update(knp.array(4.0), opt.init(knp.zeros(())), knp.zeros(()))[0]
    Tensor(-0.5)
    """
    return chain(
        scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(learning_rate)
    )


def lion(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.99, weight_decay: float = 0.0
) -> GradientTransformation:
    """Lion (Chen et al., 2023): sign updates with momentum; use a small learning rate.

    Examples
    --------
    >>> opt = lion(0.01)
    >>> opt.update(knp.array(-3.0), opt.init(knp.zeros(())), knp.zeros(()))[0]
    Tensor(0.01)
    """
    return chain(
        scale_by_lion(b1, b2),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(learning_rate),
    )


# -- learning-rate schedules: step -> value -------------------------------------------------
def constant_schedule(value: float) -> Schedule:
    """Always ``value``.

    Examples
    --------
    >>> constant_schedule(0.1)(1000)
    0.1
    """
    return lambda step: value


def linear_schedule(init_value: float, end_value: float, transition_steps: int) -> Schedule:
    """From ``init_value`` to ``end_value`` linearly over ``transition_steps``, then constant.

    Examples
    --------
    >>> schedule = linear_schedule(0.0, 1.0, 10)
    >>> schedule(0), schedule(5), schedule(20)
    (0.0, 0.5, 1.0)
    """

    def schedule(step: int) -> float:
        if transition_steps <= 0:
            return end_value
        fraction = min(max(step, 0), transition_steps) / transition_steps
        return init_value + fraction * (end_value - init_value)

    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over ``decay_steps``.

    Examples
    --------
    >>> schedule = cosine_decay_schedule(1.0, 100)
    >>> schedule(0), schedule(50), schedule(100)
    (1.0, 0.5, 0.0)
    """
    if decay_steps <= 0:
        raise ValueError(
            f"kenaz.optim.cosine_decay_schedule: decay_steps must be positive, got {decay_steps}"
        )

    def schedule(step: int) -> float:
        fraction = min(max(step, 0), decay_steps) / decay_steps
        cosine = 0.5 * (1 + math.cos(math.pi * fraction))
        return round(init_value * ((1 - alpha) * cosine + alpha), 15)

    return schedule


def exponential_decay(
    init_value: float,
    transition_steps: int,
    decay_rate: float,
    staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """``init_value * decay_rate ** (step / transition_steps)``, optionally in whole steps.

    ``end_value`` bounds the value (below when decaying, above when growing).

    Examples
    --------
    >>> schedule = exponential_decay(1.0, transition_steps=10, decay_rate=0.5)
    >>> schedule(10), schedule(20)
    (0.5, 0.25)
    >>> exponential_decay(1.0, 10, 0.5, staircase=True)(15)
    0.5
    """
    if transition_steps <= 0:
        raise ValueError(
            "kenaz.optim.exponential_decay: transition_steps must be positive, "
            f"got {transition_steps}"
        )

    def schedule(step: int) -> float:
        exponent = step / transition_steps
        value = init_value * decay_rate ** (math.floor(exponent) if staircase else exponent)
        if end_value is not None:
            value = max(value, end_value) if decay_rate < 1 else min(value, end_value)
        return value

    return schedule


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """Follow ``schedules[i]`` between ``boundaries``; each restarts its step count at 0.

    Examples
    --------
    >>> schedule = join_schedules([constant_schedule(1.0), constant_schedule(0.1)], [5])
    >>> schedule(4), schedule(5)
    (1.0, 0.1)
    """
    if len(schedules) != len(boundaries) + 1:
        raise ValueError("kenaz.optim.join_schedules: need one more schedule than boundaries")

    def schedule(step: int) -> float:
        start = 0
        for boundary, part in zip(boundaries, schedules, strict=False):
            if step < boundary:
                return part(step - start)
            start = boundary
        return schedules[-1](step - start)

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float,
    peak_value: float,
    warmup_steps: int,
    decay_steps: int,
    end_value: float = 0.0,
) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value``, then cosine decay to ``end_value``.

    ``decay_steps`` counts the whole schedule, warmup included (as in optax).

    Examples
    --------
    >>> schedule = warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=10, decay_steps=110)
    >>> schedule(0), schedule(5), schedule(10), schedule(60), schedule(110)
    (0.0, 0.5, 1.0, 0.5, 0.0)
    """
    alpha = end_value / peak_value if peak_value else 0.0
    return join_schedules(
        [
            linear_schedule(init_value, peak_value, warmup_steps),
            cosine_decay_schedule(peak_value, max(decay_steps - warmup_steps, 1), alpha),
        ],
        [warmup_steps],
    )
