"""``kenaz.nn``: layers, activations, losses and metrics over parameter pytrees.

Layers are pure functions of their parameters (``linear(params, x)``,
``conv2d(x, weight, bias, ...)``); the small module classes (``Linear``,
``MLP``, ``Conv2d``, ...) only hold hyperparameters and create parameters.
Randomness is always explicit: an initializer or dropout takes a
``numpy.random.Generator`` or an int seed as its key.

Examples
--------
>>> import kenaz
>>> import kenaz.numpy as knp
>>> from kenaz import nn
>>> model = nn.MLP([4, 16, 3])
>>> params = model.init(0)  # a list of {"weight", "bias"} dicts
>>> def loss(params, x, y):
...     return nn.softmax_cross_entropy(model(params, x), y)
>>> grads = kenaz.grad(loss)(params, knp.ones((2, 4)), knp.array([0, 2]))
>>> grads[0]["weight"].shape
(4, 16)
"""

from . import initializers
from .activations import (
    elu,
    gelu,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
    swish,
    tanh,
)
from .attention import causal_mask, dot_product_attention, multi_head_attention
from .conv import avg_pool2d, conv2d, conv_output_size, max_pool2d
from .dense import embedding, linear
from .initializers import as_generator, split
from .losses import binary_cross_entropy, huber, mae, mse, one_hot, softmax_cross_entropy
from .metrics import accuracy, top_k_accuracy
from .modules import (
    MLP,
    Attention,
    AvgPool2d,
    BatchNorm,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    LayerNorm,
    Linear,
    MaxPool2d,
    Module,
    MultiHeadAttention,
    Sequential,
    count_parameters,
)
from .normalization import batch_norm, layer_norm
from .regularization import dropout

__all__ = [
    "initializers",
    "as_generator",
    "split",
    # activations
    "relu",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "swish",
    "softplus",
    "sigmoid",
    "log_sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    # layer functions
    "linear",
    "embedding",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "conv_output_size",
    "layer_norm",
    "batch_norm",
    "dropout",
    "causal_mask",
    "dot_product_attention",
    "multi_head_attention",
    # modules
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
    # losses and metrics
    "mse",
    "mae",
    "huber",
    "binary_cross_entropy",
    "softmax_cross_entropy",
    "one_hot",
    "accuracy",
    "top_k_accuracy",
]
