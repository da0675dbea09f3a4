"""The worked example of docs/extending.md: a primitive from scratch, checked by check_op."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.testing import check_op

PATH = Path(__file__).resolve().parents[1] / "examples" / "custom_primitive.py"
spec = importlib.util.spec_from_file_location("kenaz_example_custom_primitive", PATH)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("shape", "axis"), [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1)])
def test_check_op(dtype, shape, axis):
    x = np.random.default_rng(0).normal(size=shape).astype(dtype)
    check_op(example.logsumexp_op, [x], {"axis": axis}, order=2)


def test_stable_values_and_transformations():
    x = knp.array([[1000.0, 1000.0], [-1000.0, -1000.0]])
    np.testing.assert_allclose(example.logsumexp(x).numpy(), [1000 + np.log(2), -1000 + np.log(2)])
    g = kenaz.grad(lambda x: knp.sum(example.logsumexp(x)))(x)
    np.testing.assert_allclose(g.numpy(), np.full((2, 2), 0.5))
    h = kenaz.hessian(lambda v: example.logsumexp(v))(knp.array([0.0, 0.0]))
    np.testing.assert_allclose(h.numpy(), [[0.25, -0.25], [-0.25, 0.25]])
    rows = kenaz.vmap(lambda row: example.logsumexp(row, 0), in_axes=1)(x)
    np.testing.assert_allclose(rows.numpy(), [np.log(np.exp(0.0) + np.exp(-2000.0)) + 1000] * 2)


def test_example_runs(capsys):
    example.main()
    assert "check_op" in capsys.readouterr().out
