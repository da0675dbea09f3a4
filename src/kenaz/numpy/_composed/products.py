"""Products beyond ``kenaz.ops.linalg``'s: ``kron``, the Array API's ``vecdot`` and
``matrix_transpose``, and NumPy 2.2's ``matvec`` and ``vecmat``.
"""

from __future__ import annotations

import string
from typing import Any

from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.linalg import einsum as _einsum
from ...ops.linalg import matmul as _matmul
from ...tensor import Tensor
from .. import linalg as _linalg
from .._namespace import composite as _composite
from ._arguments import _t

__all__ = ["kron", "vecdot", "matrix_transpose", "matvec", "vecmat"]


@_composite
def kron(a: Any, b: Any) -> Tensor:
    """Kronecker product."""
    a, b = _t(a), _t(b)
    ndim = max(a.ndim, b.ndim)
    a = _shape.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = _shape.reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    left, right = string.ascii_lowercase[:ndim], string.ascii_uppercase[:ndim]
    interleaved = "".join(x + y for x, y in zip(left, right, strict=True))
    product = _einsum(f"{left},{right}->{interleaved}", a, b)
    return _shape.reshape(product, tuple(m * n for m, n in zip(a.shape, b.shape, strict=True)))


vecdot = _linalg.vecdot
matrix_transpose = _linalg.matrix_transpose


@_composite
def matvec(x1: Any, x2: Any) -> Tensor:
    """``x1 @ x2`` for stacks of matrices ``x1`` and vectors ``x2``."""
    return _matmul(x1, _shape.expand_dims(_t(x2), -1))[..., 0]


@_composite
def vecmat(x1: Any, x2: Any) -> Tensor:
    """``conj(x1) @ x2`` for stacks of vectors ``x1`` and matrices ``x2``."""
    return _matmul(_shape.expand_dims(_ew.conjugate(_t(x1)), -2), x2)[..., 0, :]
