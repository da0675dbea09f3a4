"""Selecting elements: by conditions (``select``, ``compress``, ``extract``), by index
(``choose``), and partial sorts (``partition``, ``argpartition``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as _np

from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.indexing import getitem as _getitem
from ...tensor import Tensor
from .._namespace import composite as _composite
from .._out import into_out
from ._arguments import _knp, _t
from .shape_manipulation import broadcast_arrays

__all__ = ["partition", "argpartition", "select", "choose", "compress", "extract"]


@_composite
def partition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
              order: Any = None) -> Tensor:  # fmt: skip
    """A partition around ``kth``: here the fully sorted array, which is one (``kind`` does
    not change it; ``order`` names fields of structured arrays, which a Tensor is not)."""
    if order is not None:
        raise ValueError("kenaz.numpy.partition: order= needs a structured array")
    return _knp().sort(a, axis=axis)


@_composite
def argpartition(a: Any, kth: Any, axis: int = -1, kind: str = "introselect",
                 order: Any = None) -> Tensor:  # fmt: skip
    """Indices of a partition around ``kth``: those of the full sort, which is one."""
    if order is not None:
        raise ValueError("kenaz.numpy.argpartition: order= needs a structured array")
    return _knp().argsort(a, axis=axis)  # a full sort is a valid partition


@_composite
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tensor:
    """The first choice whose condition holds, elementwise; ``default`` where none does."""
    if len(condlist) != len(choicelist):
        raise ValueError("kenaz.select: condlist and choicelist must have the same length")
    result = _t(default)
    for condition, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        result = _ew.where(condition, choice, result)
    return result


@_composite
def choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Tensor:
    """``choices[a[i]][i]`` elementwise (``mode="raise"`` only)."""
    index = _t(a)
    stacked = _shape.stack(list(broadcast_arrays(index, *choices))[1:])
    result = _knp().take_along_axis(stacked, _np.asarray(index)[None], 0)[0]
    return into_out(out, result, "choose", casting="same_kind")


@_composite
def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> Tensor:
    """The slices of ``a`` along ``axis`` where ``condition`` is True."""
    picked = _np.nonzero(_np.asarray(condition))[0]
    if axis is None:
        result = _getitem(_shape.ravel(_t(a)), picked)
    else:
        result = _knp().take(a, picked, axis=axis)
    return into_out(out, result, "compress")


@_composite
def extract(condition: Any, arr: Any) -> Tensor:
    """The elements of ``arr`` where ``condition`` is True."""
    return _getitem(_shape.ravel(_t(arr)), _np.nonzero(_np.ravel(_np.asarray(condition)))[0])
