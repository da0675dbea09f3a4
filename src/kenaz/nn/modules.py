"""A small module convenience over the pure layer functions.

A module holds only hyperparameters (sizes, strides, initializers). Its
parameters live outside it, in a pytree that ``init(key)`` creates and that
every call receives: ``params = layer.init(key)``, ``y = layer(params, x)``.
So a model's parameters are plain nested dicts and lists of tensors, which
``grad``, optimizers and ``kenaz.io.save`` all take as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import numpy as knp
from ..tensor import Tensor
from .activations import relu
from .attention import multi_head_attention
from .conv import IntPair, Padding, _pair, avg_pool2d, conv2d, max_pool2d
from .dense import embedding, linear
from .initializers import (
    Initializer,
    Key,
    glorot_uniform,
    he_uniform,
    normal,
    split,
    variance_scaling,
)
from .initializers import ones as ones_init
from .initializers import zeros as zeros_init
from .normalization import batch_norm, layer_norm
from .regularization import dropout

# Initializer defaults, made once (not in argument defaults).
CONV_HE_UNIFORM = variance_scaling(2.0, "fan_in", "uniform", in_axis=1, out_axis=0)
STANDARD_NORMAL = normal(1.0)

__all__ = [
    "Module",
    "Linear",
    "MLP",
    "Sequential",
    "Conv2d",
    "MaxPool2d",
    "AvgPool2d",
    "Flatten",
    "Embedding",
    "LayerNorm",
    "BatchNorm",
    "Dropout",
    "MultiHeadAttention",
    "Attention",
    "count_parameters",
]


class Module:
    """Base class: ``init(key) -> params`` and ``__call__(params, x, ...) -> y``.

    Subclasses set their hyperparameters in ``__init__`` and implement
    ``init`` and ``__call__``; a module never stores parameters.

    Examples
    --------
    >>> class Scale(Module):
    ...     def init(self, key):
    ...         return {"factor": knp.ones(())}
    ...     def __call__(self, params, x):
    ...         return params["factor"] * x
    >>> layer = Scale()
    >>> layer(layer.init(0), 3.0)
    Tensor(3.)
    """

    def init(self, key: Key) -> Any:
        """Create this module's parameters from the random ``key``."""
        raise NotImplementedError

    def __call__(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def apply(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        """Same as calling the module."""
        return self(params, *args, **kwargs)

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{k}={v!r}" for k, v in vars(self).items() if not callable(v) and not k.startswith("_")
        )
        return f"{type(self).__name__}({fields})"


class Linear(Module):
    """Dense layer ``x @ weight + bias`` with ``weight`` of shape ``(in_features, out_features)``.

    Examples
    --------
    >>> layer = Linear(3, 2)
    >>> params = layer.init(0)
    >>> params["weight"].shape, params["bias"].shape
    ((3, 2), (2,))
    >>> layer(params, knp.ones((5, 3))).shape
    (5, 2)
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        weight_init: Initializer = glorot_uniform,
        bias_init: Initializer = zeros_init,
        dtype: Any = np.float64,
    ) -> None:
        self.in_features = in_features
        self.out_features = out_features
        self.bias = bias
        self.weight_init = weight_init
        self.bias_init = bias_init
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, Tensor]:
        weight_key, bias_key = split(key)
        params = {
            "weight": self.weight_init(
                weight_key, (self.in_features, self.out_features), self.dtype
            )
        }
        if self.bias:
            params["bias"] = self.bias_init(bias_key, (self.out_features,), self.dtype)
        return params

    def __call__(self, params: dict[str, Any], x: Any) -> Tensor:
        return linear(params, x)


class Sequential(Module):
    """Layers applied in order; plain functions (activations) have no parameters.

    The parameters are a list with one entry per layer (``None`` for a
    function).

    Examples
    --------
    >>> from kenaz.nn import relu
    >>> model = Sequential([Linear(4, 8), relu, Linear(8, 2)])
    >>> params = model.init(0)
    >>> model(params, knp.ones((3, 4))).shape
    (3, 2)
    """

    def __init__(self, layers: Sequence[Module | Callable[[Any], Any]]) -> None:
        self.layers = list(layers)

    def init(self, key: Key) -> list[Any]:
        keys = split(key, len(self.layers))
        return [
            layer.init(k) if isinstance(layer, Module) else None
            for layer, k in zip(self.layers, keys, strict=True)
        ]

    def __call__(self, params: Sequence[Any], x: Any) -> Any:
        if len(params) != len(self.layers):
            raise ValueError(
                f"kenaz.nn.Sequential: got parameters for {len(params)} layers, but the model "
                f"has {len(self.layers)}"
            )
        for layer, layer_params in zip(self.layers, params, strict=True):
            x = layer(layer_params, x) if isinstance(layer, Module) else layer(x)
        return x


class MLP(Sequential):
    """Multi-layer perceptron: ``Linear`` layers with ``activation`` between them.

    Parameters
    ----------
    sizes : sequence of int
        ``[in_features, hidden..., out_features]``.
    activation : callable, optional
        Applied after every layer but the last.
    weight_init : initializer, optional
        ``he_uniform`` suits ReLU; ``glorot_uniform`` suits tanh.
    dtype : dtype, optional

    Examples
    --------
    >>> model = MLP([64, 32, 10])
    >>> params = model.init(0)
    >>> model(params, knp.ones((5, 64))).shape
    (5, 10)
    """

    def __init__(
        self,
        sizes: Sequence[int],
        activation: Callable[[Any], Any] = relu,
        weight_init: Initializer = he_uniform,
        dtype: Any = np.float64,
    ) -> None:
        if len(sizes) < 2:
            raise ValueError(
                f"kenaz.nn.MLP: sizes needs at least input and output sizes, got {sizes}"
            )
        self.sizes = list(sizes)
        layers: list[Any] = []
        for n_in, n_out in zip(self.sizes[:-1], self.sizes[1:], strict=False):
            layers += [Linear(n_in, n_out, weight_init=weight_init, dtype=dtype), activation]
        super().__init__(layers[:-1])


class Conv2d(Module):
    """2-d convolution layer over NCHW images (see :func:`kenaz.nn.conv2d`).

    ``weight`` has shape ``(out_channels, in_channels, kh, kw)``; He-uniform
    initialization by default.

    Examples
    --------
    >>> layer = Conv2d(1, 4, kernel_size=3, padding=1)
    >>> params = layer.init(0)
    >>> layer(params, knp.ones((2, 1, 8, 8))).shape
    (2, 4, 8, 8)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: Padding = 0,
        dilation: IntPair = 1,
        bias: bool = True,
        weight_init: Initializer = CONV_HE_UNIFORM,
        dtype: Any = np.float64,
    ) -> None:
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.bias = bias
        self.weight_init = weight_init
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, Tensor]:
        shape = (self.out_channels, self.in_channels, *self.kernel_size)
        params = {"weight": self.weight_init(key, shape, self.dtype)}
        if self.bias:
            params["bias"] = knp.zeros(self.out_channels, dtype=self.dtype)
        return params

    def __call__(self, params: dict[str, Any], x: Any) -> Tensor:
        return conv2d(
            x, params["weight"], params.get("bias"), self.stride, self.padding, self.dilation
        )


class _Stateless(Module):
    """A module without parameters: ``init`` gives None, a call ignores ``params``."""

    def init(self, key: Key) -> None:
        return None


class MaxPool2d(_Stateless):
    """:func:`kenaz.nn.max_pool2d` as a module, for :class:`Sequential`.

    Examples
    --------
    >>> MaxPool2d(2)(None, knp.ones((1, 3, 8, 8))).shape
    (1, 3, 4, 4)
    """

    def __init__(
        self, kernel_size: IntPair, stride: IntPair | None = None, padding: Padding = 0
    ) -> None:
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def __call__(self, params: None, x: Any) -> Tensor:
        return max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(MaxPool2d):
    """:func:`kenaz.nn.avg_pool2d` as a module, for :class:`Sequential`.

    Examples
    --------
    >>> AvgPool2d(2)(None, knp.ones((1, 3, 8, 8))).shape
    (1, 3, 4, 4)
    """

    def __call__(self, params: None, x: Any) -> Tensor:
        return avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class Flatten(_Stateless):
    """Flatten every axis after the first (the batch axis) into one.

    Examples
    --------
    >>> model = Sequential([Conv2d(1, 4, 3, padding=1), relu, MaxPool2d(2), Flatten(),
    ...                     Linear(4 * 4 * 4, 10)])
    >>> model(model.init(0), knp.ones((2, 1, 8, 8))).shape
    (2, 10)
    """

    def __call__(self, params: None, x: Any) -> Tensor:
        x = knp.asarray(x)
        return knp.reshape(x, (x.shape[0], -1))


class Embedding(Module):
    """Lookup table of ``num_embeddings`` vectors of size ``dim``.

    Examples
    --------
    >>> layer = Embedding(10, 4)
    >>> layer(layer.init(0), knp.array([[1, 2, 3]])).shape
    (1, 3, 4)
    """

    def __init__(
        self,
        num_embeddings: int,
        dim: int,
        weight_init: Initializer = STANDARD_NORMAL,
        dtype: Any = np.float64,
    ) -> None:
        self.num_embeddings = num_embeddings
        self.dim = dim
        self.weight_init = weight_init
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, Tensor]:
        return {"weight": self.weight_init(key, (self.num_embeddings, self.dim), self.dtype)}

    def __call__(self, params: dict[str, Any], ids: Any) -> Tensor:
        return embedding(params, ids)


class LayerNorm(Module):
    """Normalize the last axis (of size ``dim``), then scale and shift it.

    Examples
    --------
    >>> layer = LayerNorm(3)
    >>> y = layer(layer.init(0), knp.array([[1.0, 2.0, 3.0]]))
    >>> round(float(y.mean()), 6)
    0.0
    """

    def __init__(self, dim: int, eps: float = 1e-5, dtype: Any = np.float64) -> None:
        self.dim = dim
        self.eps = eps
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, Tensor]:
        return {
            "scale": ones_init(key, (self.dim,), self.dtype),
            "bias": zeros_init(key, (self.dim,), self.dtype),
        }

    def __call__(self, params: dict[str, Any], x: Any) -> Tensor:
        return layer_norm(x, params["scale"], params["bias"], axis=-1, eps=self.eps)


class BatchNorm(Module):
    """Batch normalization with explicit running statistics.

    ``init(key)`` gives the trainable ``{"scale", "bias"}``; ``init_state()``
    gives the running ``{"mean", "var"}``. A call takes and returns the state:
    ``y, state = layer(params, state, x, training=True)``.

    Examples
    --------
    >>> layer = BatchNorm(2)
    >>> params, state = layer.init(0), layer.init_state()
    >>> y, state = layer(params, state, knp.array([[0.0, 1.0], [2.0, 3.0]]), training=True)
    >>> y
    Tensor([[-0.999995, -0.999995],
            [ 0.999995,  0.999995]])
    """

    def __init__(
        self,
        num_features: int,
        momentum: float = 0.9,
        eps: float = 1e-5,
        axis: int = 1,
        dtype: Any = np.float64,
    ) -> None:
        self.num_features = num_features
        self.momentum = momentum
        self.eps = eps
        self.axis = axis
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, Tensor]:
        return {
            "scale": knp.ones(self.num_features, dtype=self.dtype),
            "bias": knp.zeros(self.num_features, dtype=self.dtype),
        }

    def init_state(self) -> dict[str, Tensor]:
        """Running statistics before any batch: mean 0, variance 1."""
        return {
            "mean": knp.zeros(self.num_features, dtype=self.dtype),
            "var": knp.ones(self.num_features, dtype=self.dtype),
        }

    def __call__(  # type: ignore[override]
        self, params: dict[str, Any], state: dict[str, Any], x: Any, training: bool
    ) -> tuple[Tensor, dict[str, Tensor]]:
        return batch_norm(
            x, params["scale"], params["bias"], state, training, self.momentum, self.eps, self.axis
        )


class Dropout(Module):
    """Dropout with rate ``rate``; it has no parameters: ``layer(None, x, key=..., training=...)``.

    Examples
    --------
    >>> layer = Dropout(0.5)
    >>> layer(None, knp.ones(4), key=0, training=False)
    Tensor([1., 1., 1., 1.])
    """

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def init(self, key: Key) -> None:
        return None

    def __call__(
        self, params: None, x: Any, key: Key | None = None, training: bool = True
    ) -> Tensor:
        return dropout(x, self.rate, key, training)


class MultiHeadAttention(Module):
    """Multi-head attention over ``(..., length, embed_dim)`` sequences.

    Examples
    --------
    >>> layer = MultiHeadAttention(embed_dim=8, num_heads=2)
    >>> params = layer.init(0)
    >>> layer(params, knp.ones((2, 5, 8)), causal=True).shape
    (2, 5, 8)
    """

    def __init__(self, embed_dim: int, num_heads: int, dtype: Any = np.float64) -> None:
        if embed_dim % num_heads:
            raise ValueError(
                f"kenaz.nn.MultiHeadAttention: num_heads={num_heads} does not divide "
                f"embed_dim={embed_dim}"
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dtype = np.dtype(dtype)

    def init(self, key: Key) -> dict[str, dict[str, Tensor]]:
        projection = Linear(self.embed_dim, self.embed_dim, dtype=self.dtype)
        names = ("query", "key", "value", "output")
        keys = split(key, len(names))
        return {name: projection.init(k) for name, k in zip(names, keys, strict=True)}

    def __call__(
        self,
        params: dict[str, Any],
        inputs: Any,
        context: Any = None,
        mask: Any = None,
        causal: bool = False,
    ) -> Tensor:
        return multi_head_attention(params, inputs, context, self.num_heads, mask, causal)


Attention = MultiHeadAttention


def count_parameters(params: Any) -> int:
    """Total number of scalar parameters in a pytree.

    Examples
    --------
    >>> count_parameters(MLP([64, 32, 10]).init(0))
    2410
    """
    # Imported at the call: the only pytree use in this module.
    from .. import tree

    return int(sum(np.size(leaf) for leaf in tree.leaves(params)))
