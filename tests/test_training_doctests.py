"""The examples in the docstrings of kenaz.nn, optim, data, train and io run as written."""

import doctest
import importlib

import pytest

MODULES = [
    "kenaz.nn",
    "kenaz.nn.activations",
    "kenaz.nn.attention",
    "kenaz.nn.conv",
    "kenaz.nn.dense",
    "kenaz.nn.initializers",
    "kenaz.nn.losses",
    "kenaz.nn.metrics",
    "kenaz.nn.modules",
    "kenaz.nn.normalization",
    "kenaz.nn.regularization",
    "kenaz.optim",
    "kenaz.data",
    "kenaz.train",
    "kenaz.io",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
