"""Helpers shared by the distributions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy._namespace import composite_of as _composite_of
from ...ops import elementwise as ew
from ...tensor import Tensor

# The distributions import these helpers under their public names, so that each module
# shows them too: marked here, where they are defined, as the distributions' functions
# are (they accept lists holding tensors: kenaz.convert.accepts_nested_lists).
_composite = _composite_of("kenaz.scipy.stats")


@_composite
def as_float(x: Any, like: Tensor | None = None) -> Tensor:
    """``x`` as a float (or complex) tensor; integers become float64.

    A Python number takes the real dtype of ``like`` when given, so that
    ``logpdf(x32, df=3.0)`` stays float32 (Python numbers are weak, as in NEP 50).
    """
    if like is not None and isinstance(x, (int, float)) and not isinstance(x, bool):
        return Tensor(np.asarray(x, dtype=np.zeros((), like.dtype).real.dtype))
    x = x if isinstance(x, Tensor) else Tensor(x)
    return x if x.dtype.kind in "fc" else ew.astype(x, np.float64)


@_composite
def standardize(x: Any, loc: Any, scale: Any) -> tuple[Tensor, Tensor]:
    """``(x - loc) / scale`` and ``scale`` as tensors."""
    x = as_float(x)
    scale = as_float(scale, like=x)
    return (x - as_float(loc, like=x)) / scale, scale


@_composite
def scaled(value: Any, factor: float) -> Any:
    """``value * factor``, keeping Python numbers weak (lists become arrays)."""
    return value * factor if isinstance(value, (int, float, Tensor)) else np.asarray(value) * factor


@_composite
def outside(condition: Any, value: Tensor, fill: float) -> Tensor:
    """``value`` where ``condition`` is False, ``fill`` where it is True."""
    return ew.where(condition, fill, value)
