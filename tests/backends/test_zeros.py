"""Zero gradients and tangents live on their input's backend (never a NumPy array of zeros).

Zeros appear where nothing flows: an argument the output does not use, a ``None`` returned
by a custom rule, an input a checkpointed function ignores, a transposed jvp rule's unused
tangent. Each must be an array of the input's own library, on strict arrays and on Dask.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp


def _strict(value: np.ndarray) -> Any:
    xps = pytest.importorskip("array_api_strict")
    return xps.asarray(value)


def _dask(value: np.ndarray) -> Any:
    da = pytest.importorskip("dask.array")
    return da.from_array(value, chunks=2)


BACKENDS = {"array-api-strict": (_strict, "array_api_strict"), "dask": (_dask, "dask")}


@kenaz.custom_vjp
def _scaled_first(x, y):
    return x * 2.0


_scaled_first.defvjp(lambda x, y: (x * 2.0, None), lambda _, g: (g * 2.0, None))


@kenaz.custom_jvp
def _sum_of_both(x, y):
    return knp.sum(x) + knp.sum(y)


@_sum_of_both.defjvp
def _sum_of_both_jvp(primals, tangents):
    return _sum_of_both(*primals), knp.sum(tangents[0])  # y's tangent ignored: a zero


ZEROS = {  # each gives the zero derivative belonging to y (x is used, y is not)
    "grad of an unused argument": lambda x, y: kenaz.grad(lambda x, y: knp.sum(x), argnums=(0, 1))(
        x, y
    )[1],
    "vjp of an unused argument": lambda x, y: kenaz.vjp(lambda x, y: knp.sum(x), x, y)[1](1.0)[1],
    "custom_vjp rule returning None": lambda x, y: kenaz.grad(
        lambda x, y: knp.sum(_scaled_first(x, y)), argnums=(0, 1)
    )(x, y)[1],
    "custom_jvp rule transposed": lambda x, y: kenaz.grad(_sum_of_both, argnums=(0, 1))(x, y)[1],
    "checkpoint of an unused argument": lambda x, y: kenaz.grad(
        kenaz.checkpoint(lambda x, y: knp.sum(x * x)), argnums=(0, 1)
    )(x, y)[1],
    "vmap of grad of an unused argument": lambda x, y: kenaz.vmap(
        kenaz.grad(lambda x, y: knp.sum(x), argnums=1), in_axes=(None, 0)
    )(x, knp.stack([y, y])),
    "jvp of a constant output": lambda x, y: kenaz.jvp(lambda x: (knp.sum(x), y * 2.0), (x,), (x,))[
        1
    ][1],
}


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("case", list(ZEROS))
def test_zero_derivatives_are_arrays_of_the_inputs_backend(case: str, backend: str) -> None:
    make, module = BACKENDS[backend]
    x = make(np.arange(1.0, 4.0))
    y = make(np.arange(1.0, 5.0).astype(np.float32))
    zero = ZEROS[case](x, y)
    assert isinstance(zero, kenaz.Tensor)
    assert type(zero._value).__module__.startswith(module), (
        f"{case}: a {type(zero._value).__module__} array, not {module}"
    )
    assert zero.dtype == np.float32 and zero.shape[-1] == 4
    np.testing.assert_array_equal(kenaz.materialize(zero).numpy(), 0.0)
