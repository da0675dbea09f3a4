"""``kenaz.numpy.fft``: NumPy's discrete Fourier transforms, differentiable.

Built on three linear primitives (:mod:`kenaz.ops.fft`); ``n=``/``s=``
padding and truncation are done with differentiable ``pad`` and slicing, so
every function here has jvp, vjp and batching rules. ``norm`` is
``"backward"`` (default), ``"ortho"`` or ``"forward"``, as in NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as _np
from numpy.fft import fftfreq, rfftfreq  # noqa: F401  (constants: re-exported)

from ..ops import elementwise as _ew
from ..ops import fft as _fft
from ..ops import shape as _shape
from ..tensor import Tensor
from ._namespace import assembled as _assembled
from ._namespace import composite_of as _composite_of

_composite = _composite_of("kenaz.numpy.fft")  # marks its composites (see _namespace)

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "fftshift",
    "ifftshift",
    "fftfreq",
    "rfftfreq",
]

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _tensor(x: Any) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


def _norm(norm: str | None) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"kenaz.fft: norm must be one of {_NORMS} or None, got {norm!r}")
    return norm


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"kenaz.fft.{name}: out= is not supported; use the returned value")


def _resize(x: Tensor, axis: int, length: int) -> Tensor:
    """Truncate or zero-pad ``x`` along ``axis`` to ``length`` (NumPy's ``n=``)."""
    current = x.shape[axis]
    if length < 1:
        raise ValueError(f"kenaz.fft: invalid number of data points ({length}) specified")
    if length < current:
        return _shape.slice_axis(x, axis, 0, length)
    if length > current:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, length - current)
        return _shape.pad(x, widths)
    return x


def _axes_and_lengths(
    x: Tensor, s: Sequence[int] | None, axes: Sequence[int] | None, default_all: bool
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    if axes is None:
        if s is not None:
            axes = range(x.ndim - len(s), x.ndim)
        else:
            axes = range(x.ndim) if default_all else (x.ndim - 1,)
    axes = tuple(int(a) % x.ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"kenaz.fft: repeated axes {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError("kenaz.fft: s and axes must have the same length")
    return axes, None if s is None else tuple(int(n) for n in s)


def _complex_nd(x, s, axes, norm, inverse: bool) -> Tensor:
    x = _tensor(x)
    axes, lengths = _axes_and_lengths(x, s, axes, default_all=True)
    if lengths is not None:
        for axis, length in zip(axes, lengths, strict=True):
            x = _resize(x, axis, length)
    return _fft.fftn(x, axes=axes, norm=_norm(norm), inverse=inverse)


def _real_nd(x, s, axes, norm) -> Tensor:
    x = _tensor(x)
    if x.dtype.kind == "c":
        raise TypeError("kenaz.fft.rfft: the input must be real; use fft for complex input")
    axes, lengths = _axes_and_lengths(x, s, axes, default_all=True)
    if lengths is not None:
        for axis, length in zip(axes, lengths, strict=True):
            x = _resize(x, axis, length)
    return _fft.rfftn(x, axes=axes, norm=_norm(norm))


def _inverse_real_nd(y, s, axes, norm) -> Tensor:
    y = _tensor(y)
    axes, lengths = _axes_and_lengths(y, s, axes, default_all=True)
    if lengths is None:
        lengths = tuple(y.shape[a] for a in axes[:-1]) + (2 * (y.shape[axes[-1]] - 1),)
    for axis, length in zip(axes[:-1], lengths[:-1], strict=True):
        y = _resize(y, axis, length)
    y = _resize(y, axes[-1], lengths[-1] // 2 + 1)
    return _fft.irfftn(y, axes=axes, norm=_norm(norm), lengths=lengths)


def _one_axis(n: int | None, axis: int) -> tuple[list[int] | None, list[int]]:
    return (None if n is None else [n]), [axis]


# -- one dimension -----------------------------------------------------------------------------
@_composite
def fft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """1-d discrete Fourier transform along ``axis``.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> knp.fft.fft(knp.array([1.0, 0.0, 0.0, 0.0]))
    Tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex128)
    """
    _no_out(out, "fft")
    return _complex_nd(a, *_one_axis(n, axis), norm, inverse=False)


@_composite
def ifft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """1-d inverse discrete Fourier transform."""
    _no_out(out, "ifft")
    return _complex_nd(a, *_one_axis(n, axis), norm, inverse=True)


@_composite
def rfft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """1-d transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    _no_out(out, "rfft")
    return _real_nd(a, *_one_axis(n, axis), norm)


@_composite
def irfft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """Inverse of :func:`rfft`: real output of length ``n`` (default ``2 * (m - 1)``)."""
    _no_out(out, "irfft")
    return _inverse_real_nd(a, *_one_axis(n, axis), norm)


@_composite
def hfft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half (real output)."""
    _no_out(out, "hfft")
    return irfft(_ew.conjugate(_tensor(a)), n, axis, _SWAPPED[_norm(norm)])


@_composite
def ihfft(
    a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Tensor:
    """Inverse of :func:`hfft` (real input, half-spectrum output)."""
    _no_out(out, "ihfft")
    return _ew.conjugate(rfft(a, n, axis, _SWAPPED[_norm(norm)]))


# -- two and n dimensions ------------------------------------------------------------------------
@_composite
def fftn(
    a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None
) -> Tensor:
    """n-d discrete Fourier transform (over all axes by default)."""
    _no_out(out, "fftn")
    return _complex_nd(a, s, axes, norm, inverse=False)


@_composite
def ifftn(
    a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None
) -> Tensor:
    """n-d inverse discrete Fourier transform."""
    _no_out(out, "ifftn")
    return _complex_nd(a, s, axes, norm, inverse=True)


@_composite
def rfftn(
    a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None
) -> Tensor:
    """n-d transform of real input (half spectrum along the last axis)."""
    _no_out(out, "rfftn")
    return _real_nd(a, s, axes, norm)


@_composite
def irfftn(
    a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None
) -> Tensor:
    """Inverse of :func:`rfftn`."""
    _no_out(out, "irfftn")
    return _inverse_real_nd(a, s, axes, norm)


@_composite
def fft2(
    a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None
) -> Tensor:
    """2-d discrete Fourier transform over ``axes``."""
    return fftn(a, s, axes, norm, out)


@_composite
def ifft2(
    a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None
) -> Tensor:
    """2-d inverse discrete Fourier transform."""
    return ifftn(a, s, axes, norm, out)


@_composite
def rfft2(
    a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None
) -> Tensor:
    """2-d transform of real input."""
    return rfftn(a, s, axes, norm, out)


@_composite
def irfft2(
    a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None
) -> Tensor:
    """Inverse of :func:`rfft2`."""
    return irfftn(a, s, axes, norm, out)


# -- shifts ---------------------------------------------------------------------------------------
def _shift(x: Any, axes: Any, sign: int) -> Tensor:
    roll = _assembled().roll  # kenaz.numpy's, which imports this module: see _namespace
    x = x if isinstance(x, Tensor) else Tensor(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, _np.integer)):
        axes = (axes,)
    for axis in axes:
        n = x.shape[axis]
        x = roll(x, sign * (n // 2), axis=axis)
    return x


@_composite
def fftshift(x: Any, axes: Any = None) -> Tensor:
    """Move the zero-frequency term to the center."""
    return _shift(x, axes, +1)


@_composite
def ifftshift(x: Any, axes: Any = None) -> Tensor:
    """Inverse of :func:`fftshift`."""
    return _shift(x, axes, -1)
