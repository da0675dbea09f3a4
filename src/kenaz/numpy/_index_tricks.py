"""``r_`` and ``c_``: NumPy's index-expression concatenation, differentiable in the pieces.

``knp.r_[x, 0.0, y]`` joins along the first axis, ``knp.c_[x, y]`` stacks
1-d pieces as columns; slices become ranges (``r_[0:1:5j]`` a linspace),
and a leading string ``"axis,ndmin,trans1d"`` sets the layout, as in NumPy.
The tensors given are joined with ``concatenate``, so derivatives flow.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ..convert import as_tensor
from ..ops import shape as _shape
from ..tensor import Tensor

__all__ = ["r_", "c_"]


def _range(item: slice) -> _np.ndarray:
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, complex):  # a count, as in NumPy: 0:1:5j is linspace(0, 1, 5)
        return _np.linspace(start, item.stop, int(abs(step)))
    return _np.arange(start, item.stop, step)


def _with_ndmin(x: Tensor, ndmin: int, trans1d: int) -> Tensor:
    """``numpy.array(x, ndmin=ndmin)``, then NumPy's ``trans1d`` placement of the old axes."""
    old = x.ndim
    if old >= ndmin:
        return x
    x = _shape.reshape(x, (1,) * (ndmin - old) + x.shape)
    if trans1d != -1:
        k2 = ndmin - old
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        x = _shape.transpose(x, axes[:k1] + axes[k2:] + axes[k1:k2])
    return x


class AxisConcatenator:
    """The object behind ``r_`` (axis 0, ndmin 1) and ``c_`` (axis -1, ndmin 2, trans1d 0)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int) -> None:
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Tensor:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                raise NotImplementedError("kenaz.r_: the matrix directives 'r' and 'c'")
            numbers = [int(v) for v in directive.split(",")]
            axis = numbers[0]
            ndmin = numbers[1] if len(numbers) > 1 else ndmin
            trans1d = numbers[2] if len(numbers) > 2 else trans1d
        pieces = []
        for item in items:
            value = as_tensor(_range(item)) if isinstance(item, slice) else as_tensor(item)
            pieces.append(_with_ndmin(value, max(ndmin, 1), trans1d))
        if not pieces:
            return Tensor(_np.array([]))
        dtype = _np.result_type(*[p.dtype for p in pieces])
        pieces = [p if p.dtype == dtype else p.astype(dtype) for p in pieces]
        return _shape.concatenate(pieces, axis=axis)

    def __len__(self) -> int:
        return 0


r_ = AxisConcatenator(0, 1, -1)
c_ = AxisConcatenator(-1, 2, 0)
