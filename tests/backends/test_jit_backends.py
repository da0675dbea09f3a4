"""``kenaz.jit`` on other libraries' arrays: compiled programs call NumPy, so such calls run
the function eagerly (with one warning), never NumPy's code on a converted copy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

xps = pytest.importorskip("array_api_strict")


def _f(x):
    return knp.sum(knp.sin(x) * 2.0 + x * x)


def test_strict_arrays_run_eagerly_with_one_warning():
    jitted = kenaz.jit(_f)
    value = np.array([0.5, -1.0, 2.0])
    jitted(value)  # a NumPy signature traced and cached first: it must not serve strict arrays
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        out = jitted(kenaz.Tensor(xps.asarray(value)))
    assert type(out._value).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(out._value._array), _f(value).numpy(), rtol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per jitted function
        raw = jitted(xps.asarray(value))
    assert type(raw._value).__module__.startswith("array_api_strict")
    assert jitted.cache_info().traces == 1


def test_grad_of_jit_on_strict_arrays():
    value = np.array([0.5, -1.0, 2.0])
    with pytest.warns(RuntimeWarning):
        g = kenaz.grad(kenaz.jit(_f))(kenaz.Tensor(xps.asarray(value)))
    assert type(g._value).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(
        np.asarray(g._value._array), kenaz.grad(_f)(value).numpy(), rtol=1e-14
    )


def test_dask_arrays_stay_lazy_under_jit():
    da = pytest.importorskip("dask.array")
    value = np.array([0.5, -1.0, 2.0])
    with pytest.warns(RuntimeWarning):
        out = kenaz.jit(_f)(da.from_array(value, chunks=2))
    assert type(out._value).__module__.startswith("dask")
    np.testing.assert_allclose(out._value.compute(), _f(value).numpy(), rtol=1e-15)
