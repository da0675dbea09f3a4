"""``kenaz.scipy.linalg``'s special matrices: ``block_diag``, ``toeplitz``, ``hankel``,
``circulant`` (gathers and concatenations of their arguments: differentiable) and
``hilbert`` (a constant)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...ops import shape
from ...ops.indexing import getitem
from ...tensor import Tensor

# Marks each public function where it is defined: it accepts lists holding tensors as
# array-likes (kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.linalg")


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


@_composite
def block_diag(*arrs: Any) -> Tensor:
    """The block diagonal matrix of ``arrs`` (each at most 2-d; a 1-d one is a row).

    Examples
    --------
    >>> import kenaz.scipy.linalg as ksl
    >>> ksl.block_diag([[1.0]], [2.0, 3.0])
    Tensor([[1., 0., 0.],
            [0., 2., 3.]])
    """
    if not arrs:
        return Tensor(np.zeros((1, 0)))
    blocks = []
    for a in arrs:
        a = _tensor(a)
        if a.ndim > 2:
            raise ValueError(
                f"kenaz.scipy.linalg.block_diag: arguments must be at most 2-d, got shape {a.shape}"
            )
        blocks.append(shape.reshape(a, (1, -1)) if a.ndim < 2 else a)
    dtype = np.result_type(*(b.dtype for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        after = width - start - b.shape[1]
        padded = shape.pad(b, ((0, 0), (start, after)))
        rows.append(padded if padded.dtype == dtype else ew.astype(padded, dtype))
        start += b.shape[1]
    return shape.concatenate(rows, axis=0)


@_composite
def toeplitz(c: Any, r: Any = None) -> Tensor:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored);
    ``r`` defaults to ``conj(c)``. Leading axes are batches (SciPy 1.17)."""
    c = _tensor(c)
    c = shape.reshape(c, (-1,)) if c.ndim == 0 else c
    if r is None:
        r = ew.conjugate(c) if c.dtype.kind == "c" else c
    r = _tensor(r)
    r = shape.reshape(r, (-1,)) if r.ndim == 0 else r
    m, n = c.shape[-1], r.shape[-1]
    dtype = np.result_type(c.dtype, r.dtype)
    c, r = (x if x.dtype == dtype else ew.astype(x, dtype) for x in (c, r))
    # values = [c[m-1], ..., c[0], r[1], ..., r[n-1]]; a[i, j] = values[m - 1 - i + j]
    values = shape.concatenate([shape.flip(c, -1), shape.slice_axis(r, r.ndim - 1, 1, n)], -1)
    index = m - 1 - np.arange(m)[:, None] + np.arange(n)[None, :]
    return getitem(values, (Ellipsis, index))


@_composite
def hankel(c: Any, r: Any = None) -> Tensor:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored);
    ``r`` defaults to zeros."""
    c = _tensor(c)
    m = c.shape[-1]
    r = Tensor(np.zeros(m, dtype=c.dtype)) if r is None else _tensor(r)
    n = r.shape[-1]
    dtype = np.result_type(c.dtype, r.dtype)
    c, r = (x if x.dtype == dtype else ew.astype(x, dtype) for x in (c, r))
    values = shape.concatenate([c, shape.slice_axis(r, r.ndim - 1, 1, n)], -1)
    index = np.arange(m)[:, None] + np.arange(n)[None, :]
    return getitem(values, (Ellipsis, index))


@_composite
def circulant(c: Any) -> Tensor:
    """The circulant matrix with first column ``c``: ``a[i, j] = c[(i - j) % n]``."""
    c = _tensor(c)
    n = c.shape[-1]
    index = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return getitem(c, (Ellipsis, index))


@_composite
def hilbert(n: int) -> Tensor:
    """The Hilbert matrix ``1 / (i + j + 1)`` of order ``n`` (a constant)."""
    i = np.arange(n)
    return Tensor(1.0 / (i[:, None] + i[None, :] + 1.0))
