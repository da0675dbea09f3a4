"""Every parameter of NumPy's and SciPy's functions is in kenaz.numpy's and kenaz.scipy's,
or listed with its reason (scripts/signatures.py; the list is in docs/numpy_coverage.md)."""

import importlib.util
import inspect
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("signatures", ROOT / "scripts" / "signatures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


signatures = _script()
RESULT = signatures.compare()


def test_no_parameter_is_missing_without_a_reason():
    assert signatures.unlisted(RESULT) == [], "add the parameter, or list it with its reason"


def test_every_listed_reason_still_applies():
    assert signatures.stale(RESULT) == [], "remove the entries that are no longer missing"


def test_the_comparison_covers_both_namespaces():
    names = {q for q, _, _ in signatures._functions()}
    assert {"numpy.pad", "numpy.linalg.svd", "scipy.linalg.eigh", "scipy.special.gammainc",
            "scipy.stats.norm.logpdf", "scipy.linalg.solve"} <= names  # fmt: skip
    assert RESULT.compared > 2000


def test_the_rules_catch_a_missing_parameter():
    def ours(a, axis=None):  # NumPy's has `keepdims` too, and takes `x1` positionally
        return a

    def theirs(a, axis=None, keepdims=False):
        return a

    mine = list(inspect.signature(ours).parameters.values())
    reference = list(inspect.signature(theirs).parameters.values())
    assert [signatures._accepts(mine, i, p) for i, p in enumerate(reference)] == [True, True, False]
    positional = list(inspect.signature(np.add).parameters.values())[0]
    assert signatures._accepts(mine, 0, positional)  # a positional-only slot, any name
