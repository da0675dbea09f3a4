"""2-d convolution and pooling over batched NCHW images.

All three are built from kenaz primitives the im2col way: for each of the
``kh * kw`` kernel offsets take one strided slice of the padded input (a loop
over the kernel, never over pixels), stack the slices into patches, and then
either contract them with the weight in a single matrix product (``conv2d``)
or reduce them (``max_pool2d``, ``avg_pool2d``). The derivatives, batching
rules and higher-order derivatives all come from the primitives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as knp
from ..tensor import Tensor

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "conv_output_size"]

IntPair = int | tuple[int, int]
Padding = int | tuple[int, int] | tuple[tuple[int, int], tuple[int, int]] | str


def _pair(value: IntPair, name: str) -> tuple[int, int]:
    if isinstance(value, (int, np.integer)):
        pair = (int(value), int(value))
    else:
        pair = tuple(int(v) for v in value)
    if len(pair) != 2 or min(pair) < 1:
        raise ValueError(
            f"kenaz.nn: {name} must be a positive int or a pair of them, got {value!r}"
        )
    return pair  # type: ignore[return-value]


def _padding(
    padding: Padding, kernel: tuple[int, int], dilation: tuple[int, int], stride: tuple[int, int]
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Normalize ``padding`` to ``((top, bottom), (left, right))``."""
    if isinstance(padding, str):
        if padding.lower() == "valid":
            return (0, 0), (0, 0)
        if padding.lower() == "same":
            if stride != (1, 1):
                raise ValueError("kenaz.nn: padding='same' needs stride 1; give explicit padding")
            totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=False)]
            return tuple((t // 2, t - t // 2) for t in totals)  # type: ignore[return-value]
        raise ValueError(f"kenaz.nn: padding must be 'valid', 'same', or ints, got {padding!r}")
    if isinstance(padding, (int, np.integer)):
        return (int(padding),) * 2, (int(padding),) * 2
    rows, cols = padding  # type: ignore[misc]
    rows = (int(rows),) * 2 if isinstance(rows, (int, np.integer)) else tuple(int(p) for p in rows)
    cols = (int(cols),) * 2 if isinstance(cols, (int, np.integer)) else tuple(int(p) for p in cols)
    if min(rows + cols) < 0:
        raise ValueError(f"kenaz.nn: padding must not be negative, got {padding!r}")
    return rows, cols  # type: ignore[return-value]


def conv_output_size(
    size: int, kernel: int, stride: int = 1, padding: tuple[int, int] = (0, 0), dilation: int = 1
) -> int:
    """Output length of a convolution or pooling along one spatial axis.

    Examples
    --------
    >>> conv_output_size(8, 3, padding=(1, 1))
    8
    >>> conv_output_size(8, 2, stride=2)
    4
    """
    return (size + sum(padding) - dilation * (kernel - 1) - 1) // stride + 1


def _as_batched_images(x: Any, name: str) -> tuple[Tensor, bool]:
    x = knp.asarray(x)
    if x.ndim == 3:
        return knp.expand_dims(x, 0), True
    if x.ndim != 4:
        raise ValueError(
            f"kenaz.nn.{name}: expected images of shape (batch, channels, height, width) "
            f"or (channels, height, width), got shape {x.shape}"
        )
    return x, False


def _windows(
    x: Tensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    spatial_axes: tuple[int, int],
) -> tuple[list[Tensor], int, int]:
    """One strided slice of ``x`` per kernel offset, each of the output's spatial size."""
    row_axis, col_axis = spatial_axes
    out_h = conv_output_size(x.shape[row_axis], kernel[0], stride[0], dilation=dilation[0])
    out_w = conv_output_size(x.shape[col_axis], kernel[1], stride[1], dilation=dilation[1])
    if out_h < 1 or out_w < 1:
        raise ValueError(
            f"kenaz.nn: the (padded) input of spatial size {x.shape[row_axis]}x{x.shape[col_axis]} "
            f"is smaller than the dilated kernel {kernel} (dilation {dilation})"
        )
    slices = []
    for i in range(kernel[0]):
        row = slice(i * dilation[0], i * dilation[0] + stride[0] * (out_h - 1) + 1, stride[0])
        for j in range(kernel[1]):
            col = slice(j * dilation[1], j * dilation[1] + stride[1] * (out_w - 1) + 1, stride[1])
            index = [slice(None)] * x.ndim
            index[row_axis], index[col_axis] = row, col
            slices.append(x[tuple(index)])
    return slices, out_h, out_w


def _pad_spatial(x: Tensor, pads, value: float = 0.0) -> Tensor:
    if not any(p for pair in pads for p in pair):
        return x
    return knp.pad(x, ((0, 0), (0, 0), *pads), constant_values=value)


def conv2d(
    x: Any,
    weight: Any,
    bias: Any = None,
    stride: IntPair = 1,
    padding: Padding = 0,
    dilation: IntPair = 1,
) -> Tensor:
    """2-d cross-correlation (what deep-learning libraries call convolution), NCHW layout.

    Parameters
    ----------
    x : tensor of shape ``(batch, in_channels, height, width)``
        Input images (a single image ``(in_channels, height, width)`` also works).
    weight : tensor of shape ``(out_channels, in_channels, kh, kw)``
    bias : tensor of shape ``(out_channels,)``, optional
    stride, dilation : int or pair of ints, optional
    padding : int, pair, ``((top, bottom), (left, right))``, "valid" or "same", optional
        Zero padding of the spatial axes.

    Returns
    -------
    Tensor of shape ``(batch, out_channels, out_height, out_width)``

    Examples
    --------
    >>> x = knp.ones((1, 1, 4, 4))
    >>> conv2d(x, knp.ones((2, 1, 3, 3)), padding=1)[0, 0]
    Tensor([[4., 6., 6., 4.],
            [6., 9., 9., 6.],
            [6., 9., 9., 6.],
            [4., 6., 6., 4.]])
    """
    x, unbatched = _as_batched_images(x, "conv2d")
    weight = knp.asarray(weight)
    if weight.ndim != 4 or weight.shape[1] != x.shape[1]:
        raise ValueError(
            f"kenaz.nn.conv2d: weight must have shape (out_channels, {x.shape[1]}, kh, kw) "
            f"for inputs with {x.shape[1]} channels, got {weight.shape}"
        )
    out_channels, in_channels, kh, kw = weight.shape
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    pads = _padding(padding, (kh, kw), dilation, stride)
    # Channels last, so that each patch row (kh * kw offsets x channels) is contiguous.
    channels_last = knp.transpose(_pad_spatial(x, pads), (0, 2, 3, 1))
    slices, out_h, out_w = _windows(channels_last, (kh, kw), stride, dilation, (1, 2))
    patches = knp.stack(slices, axis=3)  # (batch, out_h, out_w, kh * kw, in_channels)
    batch = x.shape[0]
    patches = knp.reshape(patches, (batch * out_h * out_w, kh * kw * in_channels))
    kernel = knp.reshape(knp.transpose(weight, (2, 3, 1, 0)), (kh * kw * in_channels, out_channels))
    out = patches @ kernel
    if bias is not None:
        out = out + bias
    out = knp.transpose(knp.reshape(out, (batch, out_h, out_w, out_channels)), (0, 3, 1, 2))
    return out[0] if unbatched else out


def _pool(x, kernel_size, stride, padding, pad_value, reduce, name) -> Tensor:
    x, unbatched = _as_batched_images(x, name)
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    pads = _padding(padding, kernel, (1, 1), stride)
    batch, channels, height, width = x.shape
    tiles = stride == kernel and height % kernel[0] == 0 and width % kernel[1] == 0
    if tiles and not any(p for pair in pads for p in pair):
        # Non-overlapping windows that tile the image: a reshape, then one reduction.
        blocks = (batch, channels, height // kernel[0], kernel[0], width // kernel[1], kernel[1])
        out = reduce(knp.reshape(x, blocks), axis=(3, 5))
        return out[0] if unbatched else out
    slices, _, _ = _windows(_pad_spatial(x, pads, pad_value), kernel, stride, (1, 1), (2, 3))
    out = reduce(knp.stack(slices, axis=-1), axis=-1)
    return out[0] if unbatched else out


def max_pool2d(
    x: Any, kernel_size: IntPair, stride: IntPair | None = None, padding: Padding = 0
) -> Tensor:
    """Maximum over ``kernel_size`` windows of NCHW images (stride defaults to the kernel).

    Padding uses ``-inf``, so it never wins; ties share the derivative.

    Examples
    --------
    >>> x = knp.arange(16.0).reshape(1, 1, 4, 4)
    >>> max_pool2d(x, 2)
    Tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _pool(x, kernel_size, stride, padding, -np.inf, knp.max, "max_pool2d")


def avg_pool2d(
    x: Any, kernel_size: IntPair, stride: IntPair | None = None, padding: Padding = 0
) -> Tensor:
    """Mean over ``kernel_size`` windows of NCHW images (stride defaults to the kernel).

    Zero padding is counted in the mean (PyTorch's ``count_include_pad=True``).

    Examples
    --------
    >>> x = knp.arange(16.0).reshape(1, 1, 4, 4)
    >>> avg_pool2d(x, 2)
    Tensor([[[[ 2.5,  4.5],
              [10.5, 12.5]]]])
    """
    return _pool(x, kernel_size, stride, padding, 0.0, knp.mean, "avg_pool2d")
