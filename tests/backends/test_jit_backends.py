"""``kenaz.jit`` on other libraries' arrays: the signature holds the array's type, the function
is traced on those arrays, and the compiled program calls each op in the arrays' own namespace:
no eager fallback, no conversion to NumPy, results on the input's backend."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp

xps = pytest.importorskip("array_api_strict")

RUNS: list[int] = []


def _f(x):
    RUNS.append(1)  # counts the Python runs of the body: traces (and eager runs, if any)
    return knp.sum(knp.sin(x) * 2.0 + x * x)


def _compiled_calls(jitted, make, calls: int = 5):
    """Call ``jitted`` ``calls`` times on ``make()``; the body's runs and the last result."""
    RUNS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback, no purity warning
        for _ in range(calls):
            out = jitted(make())
    return len(RUNS), out


def test_strict_arrays_run_compiled():
    jitted = kenaz.jit(_f)
    value = np.array([0.5, -1.0, 2.0])
    jitted(value)  # a NumPy signature traced and cached first: it must not serve strict arrays
    runs, out = _compiled_calls(jitted, lambda: xps.asarray(value))
    assert runs == 2  # traced, checked at the second call, then 3 compiled runs: never eager
    assert jitted.cache_info().traces == 2  # the NumPy signature and the strict one
    assert type(out._value).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(out._value._array), _f(value).numpy(), rtol=1e-15)
    assert "sin_impl" in jitted.source(xps.asarray(value))  # the op's namespace-neutral impl
    runs, out = _compiled_calls(jitted, lambda: kenaz.Tensor(xps.asarray(value)))
    assert runs == 0  # a Tensor holding the same kind of array: the same signature


def test_grad_of_jit_and_jit_of_grad_on_strict_arrays():
    value = np.array([0.5, -1.0, 2.0])
    expected = kenaz.grad(_f)(value).numpy()
    jitted = kenaz.jit(_f)
    for gradient in (kenaz.grad(jitted), kenaz.jit(kenaz.grad(_f))):
        runs, g = _compiled_calls(gradient, lambda: kenaz.Tensor(xps.asarray(value)), 4)
        assert runs == 2
        assert type(g._value).__module__.startswith("array_api_strict")
        np.testing.assert_allclose(np.asarray(g._value._array), expected, rtol=1e-14)


def test_dask_arrays_stay_lazy_under_jit():
    da = pytest.importorskip("dask.array")
    value = np.array([0.5, -1.0, 2.0])
    runs, out = _compiled_calls(kenaz.jit(_f), lambda: da.from_array(value, chunks=2))
    assert runs == 2
    assert type(out._value).__module__.startswith("dask")
    np.testing.assert_allclose(out._value.compute(), _f(value).numpy(), rtol=1e-15)
