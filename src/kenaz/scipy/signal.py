"""``kenaz.scipy.signal``: SciPy's convolutions, differentiable in both inputs.

``convolve`` and ``correlate`` work in any number of dimensions,
``convolve2d`` and ``correlate2d`` in two, with SciPy's modes (``"full"``,
``"same"``, ``"valid"``). They are composed from a gather of the sliding
windows and a product-sum (direct convolution, SciPy's ``method="direct"``),
so every transformation sees through them.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from .. import numpy as _knp
from ..convert import as_tensor
from ..numpy._namespace import composite_of as _composite_of
from ..ops import elementwise as _ew
from ..ops import reduction as _reduction
from ..ops import shape as _shape
from ..ops.indexing import getitem as _getitem
from ..tensor import Tensor

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.signal")

_MODES = ("full", "same", "valid")


def _full_convolution(a: Tensor, v: Tensor, fill: Any = 0.0) -> Tensor:
    """``sum_k a[n - k] v[k]`` for every ``n`` of the full output (shape ``a + v - 1``)."""
    ndim = a.ndim
    widths = [(m - 1, m - 1) for m in v.shape]
    padded = _shape.pad(a, widths, constant_values=fill)
    # Window indices per axis: out position n (axis i) and kernel offset k (axis ndim + i).
    index = []
    for axis, (n, m) in enumerate(zip(a.shape, v.shape, strict=True)):
        positions = _np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :]
        layout = [1] * (2 * ndim)
        layout[axis], layout[ndim + axis] = n + m - 1, m
        index.append(positions.reshape(layout))
    windows = _getitem(padded, tuple(index))  # shape: out..., kernel...
    flipped = _shape.flip(v, tuple(range(ndim)))
    return _reduction.sum(windows * flipped, axis=tuple(range(ndim, 2 * ndim)))


def _swap_needed(mode: str, a_shape: tuple, v_shape: tuple, name: str) -> bool:
    """SciPy's rule: in ``"valid"`` mode the larger input goes first (and one must be)."""
    if mode != "valid":
        return False
    a_larger = all(n >= m for n, m in zip(a_shape, v_shape, strict=True))
    v_larger = all(m >= n for n, m in zip(a_shape, v_shape, strict=True))
    if not (a_larger or v_larger):
        raise ValueError(
            f"kenaz.scipy.signal.{name}: in 'valid' mode one input must be at least as large "
            f"as the other in every dimension, got shapes {a_shape} and {v_shape}"
        )
    return not a_larger


def _crop(full: Tensor, a_shape: tuple, v_shape: tuple, mode: str, late: bool = False) -> Tensor:
    """The ``mode`` part of a full output; ``late``: SciPy's 2-d correlation centres an
    even kernel one step later in ``"same"`` mode."""
    if mode == "full":
        return full
    index = []
    for n, m in zip(a_shape, v_shape, strict=True):
        if mode == "same":  # centred on the full output, the size of the first input
            start = m // 2 if late else (m - 1) // 2
            index.append(slice(start, start + n))
        else:  # valid
            index.append(slice(m - 1, n))
    return _getitem(full, tuple(index))


def _inputs(in1: Any, in2: Any, mode: str, name: str) -> tuple[Tensor, Tensor]:
    if mode not in _MODES:
        raise ValueError(f"kenaz.scipy.signal.{name}: mode must be one of {_MODES}, got {mode!r}")
    a, v = as_tensor(in1), as_tensor(in2)
    if a.ndim != v.ndim:
        raise ValueError(
            f"kenaz.scipy.signal.{name}: in1 and in2 should have the same dimensionality, "
            f"got shapes {a.shape} and {v.shape}"
        )
    if a.size == 0 or v.size == 0:
        raise ValueError(f"kenaz.scipy.signal.{name}: empty input")
    return a, v


def _method(method: str, name: str) -> None:
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"kenaz.scipy.signal.{name}: unknown method {method!r}")


@_composite
def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Tensor:
    """N-dimensional convolution of ``in1`` and ``in2`` (SciPy's ``signal.convolve``).

    ``method`` is accepted for SciPy's signature; kenaz always convolves
    directly (its derivatives are exact for every method).

    Examples
    --------
    >>> import kenaz.scipy.signal as signal
    >>> signal.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    Tensor([0. , 1. , 2.5, 4. , 1.5])
    """
    _method(method, "convolve")
    a, v = _inputs(in1, in2, mode, "convolve")
    if a.ndim == 0:
        return a * v
    if _swap_needed(mode, a.shape, v.shape, "convolve"):
        a, v = v, a
    return _crop(_full_convolution(a, v), a.shape, v.shape, mode)


def _reverse_conjugate(v: Tensor) -> Tensor:
    v = _ew.conjugate(v) if v.dtype.kind == "c" else v
    return _shape.flip(v, tuple(range(v.ndim))) if v.ndim else v


@_composite
def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Tensor:
    """N-dimensional cross-correlation (SciPy's ``signal.correlate``):
    ``z[k] = sum_l in1[l] conj(in2[l - k + N - 1])`` in ``"full"`` mode."""
    _method(method, "correlate")
    a, v = _inputs(in1, in2, mode, "correlate")
    if a.ndim == 0:
        return a * _reverse_conjugate(v)
    if _swap_needed(mode, a.shape, v.shape, "correlate"):
        # SciPy: correlate(in2, in1) reversed and conjugated.
        swapped = _crop(_full_convolution(v, _reverse_conjugate(a)), v.shape, a.shape, mode)
        return _reverse_conjugate(swapped)
    return _crop(_full_convolution(a, _reverse_conjugate(v)), a.shape, v.shape, mode)


def _boundary(boundary: str, name: str) -> None:
    if boundary not in ("fill",):
        raise NotImplementedError(
            f"kenaz.scipy.signal.{name}: boundary={boundary!r} is not supported; use 'fill'"
        )


@_composite
def convolve2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0
) -> Tensor:
    """Two-dimensional convolution (SciPy's ``signal.convolve2d``; ``boundary="fill"``),
    differentiable in both inputs and in ``fillvalue``."""
    _boundary(boundary, "convolve2d")
    a, v = _inputs(in1, in2, mode, "convolve2d")
    if a.ndim != 2:
        raise ValueError(f"kenaz.scipy.signal.convolve2d: inputs must be 2-d, got {a.shape}")
    if _swap_needed(mode, a.shape, v.shape, "convolve2d"):
        a, v = v, a
    return _crop(_full_convolution(a, v, fillvalue), a.shape, v.shape, mode)


@_composite
def correlate2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue: Any = 0
) -> Tensor:
    """Two-dimensional cross-correlation (SciPy's ``signal.correlate2d``; ``boundary="fill"``)."""
    _boundary(boundary, "correlate2d")
    a, v = _inputs(in1, in2, mode, "correlate2d")
    if a.ndim != 2:
        raise ValueError(f"kenaz.scipy.signal.correlate2d: inputs must be 2-d, got {a.shape}")
    if _swap_needed(mode, a.shape, v.shape, "correlate2d"):
        # SciPy: the correlation of the swapped inputs, reversed (not conjugated).
        swapped = _crop(
            _full_convolution(v, _reverse_conjugate(a), fillvalue), v.shape, a.shape, mode
        )
        return _shape.flip(swapped, (0, 1))
    full = _full_convolution(a, _reverse_conjugate(v), fillvalue)
    return _crop(full, a.shape, v.shape, mode, late=True)


_ = _knp  # kenaz.numpy is imported first so that Tensor's methods are bound
