"""Results are writable exactly where NumPy's are (issue 26, item 2).

Every public function of kenaz.numpy, kenaz.numpy.linalg and kenaz.numpy.fft that
NumPy also has is called, outside transformations, with the sample calls of the
argument sweep (tests/sweep/_sweep_samples.py) or the creation calls below, and so is
NumPy's function of that name: each array result is writable exactly where NumPy's
is. Creation functions return fresh writable memory whatever their fill values are
(a tensor fill value included); views NumPy marks read-only (``diagonal``) are
read-only. 0-d results are left out: NumPy returns scalars there, which are no
memory (issue 26.3).
"""

from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

import numpy as np
import optree
import pytest

import kenaz
import kenaz.numpy as knp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sweep"))
from _sweep_samples import calls, mask, mat, vec, vec2  # noqa: E402

# Calls for the functions the float sweep has none for (or needs more of).
CREATION = {
    "zeros": [((3,), {}), (((2, 2),), {"dtype": np.int32})],
    "ones": [((3,), {})],
    "empty": [((3,), {})],
    "full": [(((3,), 0.7), {}), (((3,), knp.array(0.7)), {}), (((2, 3), vec[:3]), {})],
    "zeros_like": [((vec,), {})],
    "ones_like": [((vec,), {})],
    "empty_like": [((vec,), {})],
    "full_like": [((vec, 0.7), {}), ((vec, knp.array(0.7)), {})],
    "eye": [((3,), {}), ((3, 4), {"k": 1})],
    "identity": [((3,), {})],
    "tri": [((3,), {})],
    "arange": [((5,), {}), ((0.0, 1.0, 0.25), {})],
    "linspace": [((0.0, 1.0, 5), {})],
    "logspace": [((0.0, 1.0, 5), {})],
    "geomspace": [((1.0, 8.0, 4), {})],
    "tile": [((vec, 2), {})],
    "repeat": [((vec, 2), {})],
    "indices": [(((2, 3),), {})],
    "diag": [((vec,), {}), ((mat,), {})],
    "diagflat": [((vec,), {})],
    "diagonal": [((mat,), {})],
    "tril": [((mat,), {})],
    "triu": [((mat,), {})],
    "vander": [((vec,), {})],
    "meshgrid": [((vec, vec2), {})],
    "copy": [((vec,), {})],
    "array": [((vec,), {}), (([1.0, 2.0],), {})],
    "asarray": [(([1.0, 2.0],), {})],
    "broadcast_to": [((vec, (2, 4)), {})],
    "transpose": [((mat,), {})],
    "reshape": [((vec, (2, 2)), {})],
    "ravel": [((mat,), {})],
    "squeeze": [((mat[None],), {})],
    "expand_dims": [((vec, 0), {})],
    "swapaxes": [((mat, 0, 1), {})],
    "moveaxis": [((mat, 0, 1), {})],
    "flip": [((vec,), {})],
    "split": [((vec, 2), {})],
    "array_split": [((vec, 2), {})],
    "nonzero": [((vec,), {})],
    "where": [((mask,), {})],
}

# Where kenaz's result is deliberately not writable as NumPy's is, and why.
EXCEPTIONS = {
    "numpy.broadcast_arrays": "read-only, as numpy.broadcast_to's: NumPy's are writable "
    "only with a FutureWarning (they will not be), since their elements share memory",
}


def _leaves(x):
    return optree.tree_leaves(x, is_leaf=lambda v: isinstance(v, kenaz.Tensor))


def _plain(x):
    return optree.tree_map(
        lambda v: np.asarray(v._value) if isinstance(v, kenaz.Tensor) else v,
        x,
        is_leaf=lambda v: isinstance(v, kenaz.Tensor),
    )


def _writable(value):
    if isinstance(value, kenaz.Tensor):
        value = value._value
    if isinstance(value, np.ndarray) and value.ndim:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # broadcast_arrays' FutureWarning on reading it
            return bool(value.flags.writeable)
    return None  # 0-d, or not an array: no memory to compare


def _cases():
    modules = [
        (knp, np, "numpy"),
        (knp.linalg, np.linalg, "numpy.linalg"),
        (knp.fft, np.fft, "numpy.fft"),
    ]
    for module, numpy_module, prefix in modules:
        for name in sorted(dir(module)):
            function = getattr(module, name)
            reference = getattr(numpy_module, name, None)
            if (
                name.startswith("_")
                or isinstance(function, type)
                or inspect.ismodule(function)
                or not callable(function)
                or not callable(reference)
            ):
                continue
            samples = CREATION.get(name) if prefix == "numpy" else None
            for args, kwargs in samples or calls(f"{prefix}.{name}", function):
                yield f"{prefix}.{name}", function, reference, args, kwargs


CASES = list(_cases())


def _compare(function, reference, args, kwargs):
    """(kenaz's flag, NumPy's flag) per array result; None if either call refuses."""
    try:
        ours = function(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a call NumPy accepts and kenaz refuses: not this test's
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = reference(*_plain(args), **_plain(kwargs))
    ours_leaves = [ours] if isinstance(ours, kenaz.Tensor) else _leaves(ours)
    theirs_leaves = [theirs] if isinstance(theirs, np.ndarray) else _leaves(theirs)
    if len(ours_leaves) != len(theirs_leaves):
        return None
    return [(_writable(a), _writable(b)) for a, b in zip(ours_leaves, theirs_leaves, strict=True)]


def test_result_writable_equals_numpys():
    compared, functions, differ = 0, set(), []
    for name, function, reference, args, kwargs in CASES:
        flags = _compare(function, reference, args, kwargs)
        if flags is None:
            continue
        for ours, theirs in flags:
            if theirs is None or ours is None:
                continue
            compared += 1
            functions.add(name)
            if ours != theirs and name not in EXCEPTIONS:
                differ.append(f"{name}: kenaz writable={ours}, NumPy writable={theirs}")
    assert not differ, "\n".join(differ)
    # The sweep's size (quoted in the note): calls compared, and functions.
    assert compared >= 300 and len(functions) >= 250, (compared, len(functions))


@pytest.mark.parametrize("fill", [0.7, knp.array(0.7)], ids=["number", "tensor"])
def test_full_with_any_fill_value_is_fresh_and_writable(fill):
    x = knp.full((2, 4), fill)
    x[0, 1:3] = 5.0  # the failing write: a read-only broadcast before
    assert x.numpy().tolist() == [[0.7, 5.0, 5.0, 0.7], [0.7] * 4]
    y = knp.full_like(np.zeros(3), fill)
    y[0] = 1.0
    assert y.numpy().tolist() == [1.0, 0.7, 0.7]


def test_full_stays_differentiable_in_its_fill_value():
    g = kenaz.grad(lambda v: knp.sum(knp.full((2, 3), v) * knp.arange(6.0).reshape(2, 3)))(0.5)
    assert float(g) == 15.0


def test_diagonal_is_read_only_as_numpys():
    with pytest.raises(ValueError):
        np.diagonal(np.eye(3))[0] = 1.0
    d = knp.diagonal(knp.eye(3))
    with pytest.raises((ValueError, TypeError)):
        d[0] = 1.0
