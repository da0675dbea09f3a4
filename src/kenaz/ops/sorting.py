"""Sorting: ``argsort`` as a primitive (integer output, no derivative).

``sort`` and the quantiles are composed from it and a gather
(``take_along_axis``), so their derivatives follow the permutation; having
``argsort`` as an op (rather than a NumPy call on values) lets ``vmap`` batch it.
"""

from __future__ import annotations

import numpy as np

from ..backend import NUMPY_TYPES, namespace
from ..effects import Op
from . import batching


def _argsort_batch(op, args, batch_axes, *, axis: int, descending: bool):
    (x,), (b,) = args, batch_axes
    return op(x, axis=batching.shift_axis(axis, b), descending=descending), b


def _argsort_impl(x, axis: int, descending: bool):
    if type(x) not in NUMPY_TYPES:  # the standard's argsort is stable and sorts descending too
        return namespace(x).argsort(x, axis=axis, descending=descending, stable=True)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Stable descending: sort the reversed array ascending, read it backwards, and map the
    # positions back (equal values keep their input order).
    reversed_order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(reversed_order, axis)


argsort = Op("argsort", _argsort_impl, batch=_argsort_batch, differentiable=False)
