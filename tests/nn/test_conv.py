"""conv2d, max_pool2d and avg_pool2d against direct NumPy loops, and their derivatives."""

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import nn
from kenaz.testing import check_grads


def conv2d_reference(x, w, b, stride, padding, dilation):
    """The definition of cross-correlation, one output pixel at a time."""
    (sh, sw), (dh, dw) = stride, dilation
    (pt, pb), (pl, pr) = padding
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out_h = (h - dh * (kh - 1) - 1) // sh + 1
    out_w = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            patch = x[
                :,
                :,
                i * sh : i * sh + dh * (kh - 1) + 1 : dh,
                j * sw : j * sw + dw * (kw - 1) + 1 : dw,
            ]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out + (0 if b is None else b[None, :, None, None])


def pool_reference(x, kernel, stride, padding, reduce, fill):
    (kh, kw), (sh, sw) = kernel, stride
    (pt, pb), (pl, pr) = padding
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
    out_h = (x.shape[2] - kh) // sh + 1
    out_w = (x.shape[3] - kw) // sw + 1
    out = np.zeros(x.shape[:2] + (out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            out[:, :, i, j] = reduce(
                x[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw], axis=(2, 3)
            )
    return out


CONV_CASES = [
    # stride, padding argument, normalized padding, dilation, kernel
    ((1, 1), 0, ((0, 0), (0, 0)), (1, 1), (3, 3)),
    ((1, 1), 1, ((1, 1), (1, 1)), (1, 1), (3, 3)),
    ((2, 2), 1, ((1, 1), (1, 1)), (1, 1), (3, 3)),
    ((2, 1), (1, 2), ((1, 1), (2, 2)), (1, 1), (3, 2)),
    ((1, 1), 2, ((2, 2), (2, 2)), (2, 2), (3, 3)),
    ((1, 2), ((0, 1), (2, 0)), ((0, 1), (2, 0)), (2, 1), (2, 3)),
    ((1, 1), "same", ((2, 2), (1, 1)), (2, 1), (3, 3)),
]


@pytest.mark.parametrize("stride, padding, pads, dilation, kernel", CONV_CASES)
def test_conv2d_matches_direct_loop(stride, padding, pads, dilation, kernel):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 8))
    w = rng.normal(size=(4, 3, *kernel))
    b = rng.normal(size=4)
    out = nn.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation)
    expected = conv2d_reference(x, w, b, stride, pads, dilation)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_conv2d_single_image_and_float32():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 6, 6)).astype(np.float32)
    w = rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
    out = nn.conv2d(x, w, padding=1)
    assert out.shape == (3, 6, 6) and out.dtype == np.float32
    expected = conv2d_reference(
        x[None].astype(float), w.astype(float), None, (1, 1), ((1, 1),) * 2, (1, 1)
    )
    np.testing.assert_allclose(out.numpy(), expected[0], rtol=1e-4, atol=1e-4)


def test_conv2d_gradients():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 2, 5, 5))
    w = rng.normal(size=(3, 2, 3, 3))
    b = rng.normal(size=3)
    check_grads(
        lambda x, w, b: nn.conv2d(x, w, b, stride=2, padding=1, dilation=1), (x, w, b), order=1
    )
    check_grads(
        lambda x, w: nn.conv2d(x, w, padding=2, dilation=2), (x, w), order=2, modes=("rev",)
    )


def test_conv2d_errors():
    with pytest.raises(ValueError, match="weight must have shape"):
        nn.conv2d(np.zeros((1, 3, 5, 5)), np.zeros((4, 2, 3, 3)))
    with pytest.raises(ValueError, match="expected images of shape"):
        nn.conv2d(np.zeros((5, 5)), np.zeros((1, 1, 3, 3)))
    with pytest.raises(ValueError, match="smaller than the dilated kernel"):
        nn.conv2d(np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 3, 3)), dilation=2)
    with pytest.raises(ValueError, match="stride 1"):
        nn.conv2d(np.zeros((1, 1, 6, 6)), np.zeros((1, 1, 3, 3)), stride=2, padding="same")


POOL_CASES = [
    # kernel, stride, padding argument, normalized padding
    ((2, 2), None, 0, ((0, 0), (0, 0))),  # tiles the image: the reshape fast path
    ((3, 3), (2, 2), 1, ((1, 1), (1, 1))),
    ((2, 3), (1, 2), 0, ((0, 0), (0, 0))),
    ((3, 3), (1, 1), "same", ((1, 1), (1, 1))),
]


@pytest.mark.parametrize("kernel, stride, padding, pads", POOL_CASES)
def test_pools_match_direct_loop(kernel, stride, padding, pads):
    x = np.random.default_rng(3).normal(size=(2, 3, 6, 8))
    step = kernel if stride is None else stride
    got_max = nn.max_pool2d(x, kernel, stride, padding)
    np.testing.assert_allclose(
        got_max.numpy(), pool_reference(x, kernel, step, pads, np.max, -np.inf)
    )
    got_avg = nn.avg_pool2d(x, kernel, stride, padding)
    np.testing.assert_allclose(got_avg.numpy(), pool_reference(x, kernel, step, pads, np.mean, 0.0))


@pytest.mark.parametrize("kernel, stride, padding, pads", POOL_CASES)
def test_pool_gradients(kernel, stride, padding, pads):
    # Distinct values, so that the max is never tied and finite differences are exact.
    x = np.random.default_rng(4).permutation(2 * 6 * 8).reshape(1, 2, 6, 8) / 10.0
    check_grads(lambda x: nn.max_pool2d(x, kernel, stride, padding), (x,), order=1)
    check_grads(lambda x: nn.avg_pool2d(x, kernel, stride, padding), (x,), order=1)


def test_max_pool_gradient_goes_to_the_maximum():
    x = knp.array([[[[1.0, 5.0], [3.0, 2.0]]]])
    grad = kenaz.grad(lambda x: knp.sum(nn.max_pool2d(x, 2)))(x)
    np.testing.assert_array_equal(grad.numpy(), [[[[0.0, 1.0], [0.0, 0.0]]]])


def test_conv2d_under_vmap_matches_batched_call():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 2, 6, 6))
    w = rng.normal(size=(3, 2, 3, 3))
    per_image = kenaz.vmap(lambda image: nn.conv2d(image, w, padding=1))(x)
    np.testing.assert_allclose(per_image.numpy(), nn.conv2d(x, w, padding=1).numpy(), atol=1e-12)
