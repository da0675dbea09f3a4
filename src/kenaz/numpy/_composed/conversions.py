"""Conversions: kenaz has one array type, so ``asanyarray``, ``ascontiguousarray``,
``asfortranarray``, ``require`` and ``asarray_chkfinite`` are ``asarray`` (differentiable),
and ``copy`` is a differentiable copy.
"""

from __future__ import annotations

from typing import Any

from ...ops import elementwise as _ew
from ...tensor import Tensor
from .._namespace import composite as _composite
from ._arguments import _knp

__all__ = [
    "copy", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
    "asarray_chkfinite",
]  # fmt: skip


@_composite
def copy(a: Any, order: str = "K", subok: bool = False) -> Tensor:
    """A copy of ``a`` with its own memory (differentiable)."""
    return _ew.copy(a)


@_composite
def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: Any = None, like: Any = None) -> Tensor:  # fmt: skip
    """``asarray``: Tensor is kenaz's only array type."""
    return _knp().asarray(a, dtype, order, device=device, copy=copy, like=like)


@_composite
def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``asarray`` (memory layout is NumPy's business; the values are the same)."""
    return _knp().asarray(a, dtype=dtype, like=like)


@_composite
def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``asarray`` (memory layout is NumPy's business; the values are the same)."""
    return _knp().asarray(a, dtype=dtype, like=like)


@_composite
def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Tensor:
    """``asarray``; the layout requirements do not change the values."""
    return _knp().asarray(a, dtype=dtype, like=like)


@_composite
def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Tensor:
    """``asarray``, raising ``ValueError`` if ``a`` holds infs or NaNs (as NumPy)."""
    a = _knp().asarray(a, dtype=dtype)
    if a.dtype.kind in "fc" and not bool(_knp().all(_ew.isfinite(a))):
        raise ValueError("array must not contain infs or NaNs")
    return a
