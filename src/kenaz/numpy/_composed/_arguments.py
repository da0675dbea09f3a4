"""Reading the arguments of the composed functions of ``kenaz.numpy``.

As tensors (``_t``), as floating tensors (``_float``), as one normalized axis
(``_axis``), and the namespace itself (``_knp``) for the functions that call its
public names.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...convert import as_tensor as _as_tensor
from ...ops import elementwise as _ew
from ...ops import reduction as _reduction
from ...tensor import Tensor
from .._namespace import assembled

# kenaz.numpy, which the composites here are part of, when they run (see numpy/_namespace).
_knp = assembled


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _as_tensor(x)


def _float(x: Any) -> Tensor:
    x = _t(x)
    return x if x.dtype.kind in "fc" else _ew.astype(x, _np.float64)


def _axis(axis: int, ndim: int) -> int:
    return _reduction.normalize_axes(axis, ndim, "axis")[0]
