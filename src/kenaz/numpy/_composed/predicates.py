"""Predicates on arrays and dtypes that return Python bools: ``isrealobj``,
``iscomplexobj``, ``can_cast``, ``isdtype``, ``isscalar``, ``array_equal`` and ``array_equiv``.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ...convert import read_value as _read_value
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _t

__all__ = [
    "isrealobj", "iscomplexobj", "can_cast", "isdtype", "array_equal", "array_equiv",
    "isscalar",
]  # fmt: skip


@_composite
def isrealobj(x: Any) -> bool:
    return _t(x).dtype.kind != "c"


@_composite
def iscomplexobj(x: Any) -> bool:
    return _t(x).dtype.kind == "c"


@_composite
def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    source = from_.dtype if isinstance(from_, Tensor) else from_
    return bool(_np.can_cast(source, to, casting))


@_composite
def isdtype(dtype: Any, kind: Any) -> bool:
    return bool(_np.isdtype(_np.dtype(dtype), kind))


@_composite
def isscalar(element: Any) -> bool:
    """True for Python and NumPy scalars (a 0-d Tensor is an array, as in NumPy)."""
    return bool(_np.isscalar(element))


@_composite
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    return bool(_np.array_equal(_read_value(a1), _read_value(a2), equal_nan=equal_nan))


@_composite
def array_equiv(a1: Any, a2: Any) -> bool:
    return bool(_np.array_equiv(_read_value(a1), _read_value(a2)))
