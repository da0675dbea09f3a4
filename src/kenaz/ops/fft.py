"""Fourier transforms: three linear primitives over normalized axes.

- ``fftn``: complex to complex, forward or inverse (``inverse`` parameter).
- ``rfftn``: real to the half spectrum (last axis ``n // 2 + 1`` long).
- ``irfftn``: half spectrum to real, with the output ``lengths`` given.

Each is linear, so its jvp applies it to the tangent. Its vjp is its
transpose under kenaz's complex convention (the real pairing
``Re(sum(a * b))``): the DFT matrix is symmetric, so ``fftn`` is its own
transpose; ``rfftn``'s transpose pads the cotangent and takes the real part
of its ``fftn``; ``irfftn``'s weights the conjugated ``rfftn`` of the
cotangent by how many times each half-spectrum entry appears in the full one.
Padding and truncation (NumPy's ``n=``/``s=``) happen outside, with ``pad``
and slicing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend import NUMPY_TYPES, namespace
from ..effects import Op
from ..tensor import Tensor
from . import elementwise as ew
from . import shape
from .linearity import linear


def _scale(lengths: tuple[int, ...], norm: str, inverse: bool) -> float:
    """The factor NumPy applies for ``norm`` (relative to the unnormalized sums)."""
    total = math.prod(lengths)
    if norm == "ortho":
        return 1 / math.sqrt(total)
    return 1 / total if (norm == "forward") != inverse else 1.0


def _batch(op: Op, args: tuple, batch_axes: tuple, *, axes: tuple[int, ...], **params: Any):
    (x,), (b,) = args, batch_axes
    if b != 0:
        x = shape.moveaxis(x, b, 0)
    return op(x, axes=tuple(a + 1 for a in axes), **params), 0


def _real_if(x: Tensor, real: bool) -> Tensor:
    return ew.real(x) if real and x.dtype.kind == "c" else x


# -- complex to complex -----------------------------------------------------------------------
def _fftn_impl(x, axes, norm, inverse):
    if type(x) not in NUMPY_TYPES:  # the standard's fft extension
        xp = namespace(x)
        if not xp.isdtype(x.dtype, "complex floating"):  # NumPy's fftn takes real input too
            x = xp.astype(x, xp.complex64 if x.dtype == xp.float32 else xp.complex128)
        return (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    return transform(x, axes=axes, norm=norm)


def _fftn_vjp(ans, x, axes, norm, inverse):
    real_input = x.dtype.kind != "c"
    return lambda g: _real_if(fftn(g, axes=axes, norm=norm, inverse=inverse), real_input)


fftn = Op(
    "fftn",
    _fftn_impl,
    vjp=[_fftn_vjp],
    batch=_batch,
    saves=[],  # x's dtype only
)
linear(fftn)


# -- real to half spectrum ---------------------------------------------------------------------
def _rfftn_vjp(ans, x, axes, norm):
    last = axes[-1]
    n = x.shape[last]

    def pullback(g):
        widths = [(0, 0)] * g.ndim
        widths[last] = (0, n - g.shape[last])
        full = shape.pad(g, widths)
        return ew.real(fftn(full, axes=axes, norm=norm, inverse=False))

    return pullback


rfftn = Op(
    "rfftn",
    lambda x, axes, norm: (
        np.fft.rfftn(x, axes=axes, norm=norm)
        if type(x) in NUMPY_TYPES
        else namespace(x).fft.rfftn(x, axes=axes, norm=norm)
    ),
    vjp=[_rfftn_vjp],
    batch=_batch,
    saves=[],  # x's shape only
)
linear(rfftn)


# -- half spectrum to real ---------------------------------------------------------------------
def _irfftn_vjp(ans, y, axes, norm, lengths):
    last_length = lengths[-1]
    half = last_length // 2 + 1
    # Entry j of the half spectrum appears twice in the full one, except 0 and (even n) n/2.
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if last_length % 2 == 0:
        weights[-1] = 1.0
    factor = _scale(lengths, norm, inverse=True)
    real_dtype = np.zeros((), y.dtype).real.dtype
    trailing = (1,) * (y.ndim - 1 - axes[-1])
    weights = (weights * factor).astype(real_dtype, copy=False).reshape((half, *trailing))
    real_input = y.dtype.kind != "c"

    def pullback(g):
        unnormalized = rfftn(g, axes=axes, norm="backward")
        return _real_if(ew.conjugate(unnormalized) * weights, real_input)

    return pullback


irfftn = Op(
    "irfftn",
    lambda y, axes, norm, lengths: (
        np.fft.irfftn(y, s=lengths, axes=axes, norm=norm)
        if type(y) in NUMPY_TYPES
        else namespace(y).fft.irfftn(y, s=lengths, axes=axes, norm=norm)
    ),
    vjp=[_irfftn_vjp],
    batch=_batch,
    saves=[],  # y's dtype and shape only
)
linear(irfftn)
