"""Derivative checks for the namespace tests, and the record behind docs/coverage.md.

``check(name, f, *args)`` compares jvp and vjp against central finite
differences (to second order by default) and records which columns
(fwd / rev / vmap / complex) passed for ``name``. ``scripts/coverage.py``
runs these tests and renders the record.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

import kenaz
from kenaz import tree

RECORD: dict[str, set[str]] = defaultdict(set)
rng = np.random.default_rng(0)


def record(name: str, *columns: str) -> None:
    RECORD[name].update(columns)


def random_like(x, rng=rng):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
    return rng.standard_normal(x.shape).astype(x.dtype)


def _flat(out):
    return [np.asarray(leaf) for leaf in tree.leaves(out)]


def _pairing(a, b) -> float:
    """The real pairing Re(sum(a * b)) under which kenaz's vjp is the adjoint of its jvp."""
    return float(sum(np.real(np.sum(x * y)) for x, y in zip(a, b, strict=False)))


def _numerical_jvp(f, args, tangents, eps):
    plus = f(*[a + eps * t for a, t in zip(args, tangents, strict=False)])
    minus = f(*[a - eps * t for a, t in zip(args, tangents, strict=False)])
    return [(p - m) / (2 * eps) for p, m in zip(_flat(plus), _flat(minus), strict=False)]


def _close(actual, expected, rtol, atol, what):
    for a, e in zip(actual, expected, strict=False):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol, err_msg=what)


def check_grads(f, args, order=2, modes=("fwd", "rev"), eps=1e-5, rtol=1e-4, atol=1e-6):
    """jvp and vjp of ``f`` at ``args`` against finite differences, up to ``order``."""
    args = [np.asarray(a) for a in args]
    tangents = [random_like(a) for a in args]
    numerical = _numerical_jvp(f, args, tangents, eps)
    if "fwd" in modes:
        _, tangent_out = kenaz.jvp(f, tuple(args), tuple(tangents))
        _close(_flat(tangent_out), numerical, rtol, atol, "jvp vs finite differences")
    if "rev" in modes:
        out, pullback = kenaz.vjp(f, *args)
        cotangent = tree.map(lambda o: random_like(o), out)
        cotangent_in = pullback(cotangent)
        lhs = _pairing(_flat(cotangent_in), tangents)
        rhs = _pairing(_flat(cotangent), numerical)
        scale = max(1.0, abs(lhs), abs(rhs))
        assert abs(lhs - rhs) <= (rtol * scale + atol * 10), f"vjp dot test: {lhs} != {rhs}"
    if order > 1:
        if "fwd" in modes:
            def f_jvp(*primals):
                return kenaz.jvp(f, primals, tuple(tangents))[1]

            check_grads(f_jvp, args, order - 1, modes, eps, rtol, atol)
        if "rev" in modes:
            out_value = f(*args)
            cotangent = tree.map(lambda o: random_like(o), out_value)

            def f_vjp(*primals):
                return kenaz.vjp(f, *primals)[1](cotangent)

            check_grads(f_vjp, args, order - 1, modes, eps, rtol, atol)


def check(name, f, *args, order=2, modes=("fwd", "rev"), **tolerances):
    """``check_grads`` and record the passing columns for ``name``."""
    check_grads(f, args, order=order, modes=modes, **tolerances)
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
