"""Helpers shared by the distributions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops import elementwise as ew
from ...tensor import Tensor


def as_float(x: Any) -> Tensor:
    """``x`` as a float (or complex) tensor; integers become float64."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else ew.astype(x, np.float64)


def standardize(x: Any, loc: Any, scale: Any) -> tuple[Tensor, Tensor]:
    """``(x - loc) / scale`` and ``scale`` as tensors."""
    scale = as_float(scale)
    return (as_float(x) - loc) / scale, scale


def outside(condition: Any, value: Tensor, fill: float) -> Tensor:
    """``value`` where ``condition`` is False, ``fill`` where it is True."""
    return ew.where(condition, fill, value)
