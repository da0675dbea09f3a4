"""Parameter initializers, each drawing from an explicit random generator.

An initializer is a function ``init(key, shape, dtype=numpy.float64) -> Tensor``
where ``key`` is a ``numpy.random.Generator`` or an integer seed: the same key
always gives the same parameters, and nothing reads global random state.

``variance_scaling`` is the general form (as in JAX and Keras); the named
initializers are its common cases. For a weight of shape ``(fan_in, fan_out)``
(a ``Linear`` weight) or ``(out_channels, in_channels, kh, kw)`` (a ``Conv2d``
weight) the fans are computed from ``in_axis`` and ``out_axis``, and every
other axis counts as receptive field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from ..tensor import Tensor

__all__ = [
    "Key",
    "Initializer",
    "as_generator",
    "split",
    "fans",
    "variance_scaling",
    "glorot_uniform",
    "glorot_normal",
    "he_uniform",
    "he_normal",
    "lecun_uniform",
    "lecun_normal",
    "normal",
    "uniform",
    "constant",
    "zeros",
    "ones",
]

Key = np.random.Generator | int
Initializer = Callable[..., Tensor]


def as_generator(key: Key) -> np.random.Generator:
    """Return ``key`` as a ``numpy.random.Generator`` (an int is a seed).

    Examples
    --------
    >>> float(as_generator(0).random()) == float(as_generator(0).random())
    True
    """
    if isinstance(key, np.random.Generator):
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return np.random.default_rng(int(key))
    raise TypeError(
        f"kenaz.nn: a random key must be a numpy.random.Generator or an int seed, "
        f"got {type(key).__name__}; pass e.g. numpy.random.default_rng(0) or 0"
    )


def split(key: Key, num: int = 2) -> list[np.random.Generator]:
    """Derive ``num`` independent generators from ``key`` (like ``jax.random.split``).

    Examples
    --------
    >>> first, second = split(0)
    >>> float(first.random()) != float(second.random())
    True
    """
    return list(as_generator(key).spawn(num))


def fans(shape: Sequence[int], in_axis: int = -2, out_axis: int = -1) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a weight of ``shape``; other axes are receptive field.

    Examples
    --------
    >>> fans((64, 10))
    (64.0, 10.0)
    >>> fans((8, 3, 5, 5), in_axis=1, out_axis=0)
    (75.0, 200.0)
    """
    shape = tuple(shape)
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    in_axis, out_axis = in_axis % len(shape), out_axis % len(shape)
    receptive = float(np.prod([n for i, n in enumerate(shape) if i not in (in_axis, out_axis)]))
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(
    scale: float,
    mode: Literal["fan_in", "fan_out", "fan_avg"],
    distribution: Literal["normal", "truncated_normal", "uniform"],
    in_axis: int = -2,
    out_axis: int = -1,
) -> Initializer:
    """An initializer with variance ``scale / fan`` (fan chosen by ``mode``).

    Parameters
    ----------
    scale : float
        Target variance times the fan.
    mode : {"fan_in", "fan_out", "fan_avg"}
        Which fan divides ``scale``.
    distribution : {"normal", "truncated_normal", "uniform"}
        ``truncated_normal`` cuts at two standard deviations and rescales so
        the variance is still ``scale / fan``.
    in_axis, out_axis : int, optional
        Axes of the weight that hold the input and output features.

    Returns
    -------
    callable
        ``init(key, shape, dtype=numpy.float64) -> Tensor``.

    Examples
    --------
    >>> init = variance_scaling(2.0, "fan_in", "normal")
    >>> init(0, (256, 512)).shape
    (256, 512)
    """
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"kenaz.nn.initializers: unknown mode {mode!r}")
    if distribution not in ("normal", "truncated_normal", "uniform"):
        raise ValueError(f"kenaz.nn.initializers: unknown distribution {distribution!r}")

    def init(key: Key, shape: Sequence[int], dtype: Any = np.float64) -> Tensor:
        fan_in, fan_out = fans(shape, in_axis, out_axis)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = scale / max(fan, 1.0)
        rng = as_generator(key)
        if distribution == "uniform":
            limit = np.sqrt(3.0 * variance)
            values = rng.uniform(-limit, limit, size=tuple(shape))
        elif distribution == "normal":
            values = rng.normal(0.0, np.sqrt(variance), size=tuple(shape))
        else:
            values = _truncated_normal(rng, tuple(shape)) * np.sqrt(variance) / 0.87962566103423978
        return Tensor(values.astype(dtype))

    return init


def _truncated_normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal samples redrawn until they lie in [-2, 2]."""
    values = rng.standard_normal(shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2
    return values


def _named(init: Initializer, name: str, summary: str) -> Initializer:
    """Give a ready-made initializer its name and a docstring with an example."""
    init.__name__ = init.__qualname__ = name
    init.__doc__ = (
        f"{summary}\n\n``{name}(key, shape, dtype=numpy.float64) -> Tensor``.\n\n"
        f"Examples\n--------\n>>> {name}(0, (64, 32)).shape\n(64, 32)\n"
    )
    return init


glorot_uniform = _named(
    variance_scaling(1.0, "fan_avg", "uniform"),
    "glorot_uniform",
    "Glorot (Xavier) uniform: variance ``1 / fan_avg``; suits tanh and linear layers.",
)
glorot_normal = _named(
    variance_scaling(1.0, "fan_avg", "truncated_normal"),
    "glorot_normal",
    "Glorot (Xavier) truncated normal: variance ``1 / fan_avg``.",
)
he_uniform = _named(
    variance_scaling(2.0, "fan_in", "uniform"),
    "he_uniform",
    "He (Kaiming) uniform: variance ``2 / fan_in``; suits ReLU layers.",
)
he_normal = _named(
    variance_scaling(2.0, "fan_in", "truncated_normal"),
    "he_normal",
    "He (Kaiming) truncated normal: variance ``2 / fan_in``; suits ReLU layers.",
)
lecun_uniform = _named(
    variance_scaling(1.0, "fan_in", "uniform"),
    "lecun_uniform",
    "LeCun uniform: variance ``1 / fan_in``.",
)
lecun_normal = _named(
    variance_scaling(1.0, "fan_in", "truncated_normal"),
    "lecun_normal",
    "LeCun truncated normal: variance ``1 / fan_in``; suits SELU layers.",
)


def normal(stddev: float = 1e-2, mean: float = 0.0) -> Initializer:
    """An initializer drawing from ``N(mean, stddev**2)``.

    Examples
    --------
    >>> normal(0.02)(0, (3, 4)).shape
    (3, 4)
    """

    def init(key: Key, shape: Sequence[int], dtype: Any = np.float64) -> Tensor:
        return Tensor(as_generator(key).normal(mean, stddev, size=tuple(shape)).astype(dtype))

    return init


def uniform(scale: float = 1e-2) -> Initializer:
    """An initializer drawing from ``U(-scale, scale)``.

    Examples
    --------
    >>> float(abs(uniform(0.1)(0, (100,))).max()) <= 0.1
    True
    """

    def init(key: Key, shape: Sequence[int], dtype: Any = np.float64) -> Tensor:
        return Tensor(as_generator(key).uniform(-scale, scale, size=tuple(shape)).astype(dtype))

    return init


def constant(value: float) -> Initializer:
    """An initializer filling with ``value`` (the key is accepted and ignored).

    Examples
    --------
    >>> constant(0.5)(0, (2,))
    Tensor([0.5, 0.5])
    """

    def init(key: Key | None, shape: Sequence[int], dtype: Any = np.float64) -> Tensor:
        return Tensor(np.full(tuple(shape), value, dtype=dtype))

    return init


zeros = _named(constant(0.0), "zeros", "Initializer filling with 0 (the key is ignored).")
ones = _named(constant(1.0), "ones", "Initializer filling with 1 (the key is ignored).")
