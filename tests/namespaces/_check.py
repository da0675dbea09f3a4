"""Derivative checks for the namespace tests, and the record behind docs/coverage.md.

``check(name, f, *args)`` runs ``kenaz.testing.check_grads`` (jvp and vjp
against central finite differences, to second order by default) and
``check_vmap`` compares ``vmap`` with a loop; both record which columns
(fwd / rev / vmap / complex) passed for ``name``. ``scripts/coverage.py``
runs these tests and renders the record.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

import kenaz
from kenaz import tree
from kenaz.testing import check_grads

RECORD: dict[str, set[str]] = defaultdict(set)


def record(name: str, *columns: str) -> None:
    RECORD[name].update(columns)


def _flat(out):
    return [np.asarray(leaf) for leaf in tree.leaves(out)]


def _close(actual, expected, rtol, atol, what):
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol, err_msg=what)


def check(name, f, *args, order=2, modes=("fwd", "rev"), **tolerances):
    """``kenaz.testing.check_grads`` and record the passing columns for ``name``."""
    check_grads(f, args, modes=modes, order=order, **tolerances)
    columns = set(modes)
    if any(np.asarray(a).dtype.kind == "c" for a in args):
        columns.add("complex")
    record(name, *columns)


def check_vmap(name, f, *args, in_axes=0, rtol=1e-9, atol=1e-11):
    """``vmap(f)`` against a Python loop over the batch, and record the ``vmap`` column.

    Fails if any op falls back to the per-example loop (no batching rule).
    """
    import warnings

    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes, strict=True) if ax is not None)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule.*")
        batched = kenaz.vmap(f, in_axes=tuple(axes))(*args)
    for i in range(size):
        sliced = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes, strict=True)
        ]
        expected = _flat(f(*sliced))
        actual = [b[i] for b in _flat(batched)]
        _close(actual, expected, rtol, atol, f"vmap vs loop, example {i}")
    record(name, "vmap")
