"""Neutrality, proved on ``array-api-strict``: the primitives' rules run on a strict Array API
namespace (no NumPy functions, no mixing with NumPy arrays, no implicit conversions).

Every ``check_op`` case of ``tests/ops`` runs here with its array arguments made
``array_api_strict`` arrays: the op's output must be a strict array (no silent detour
through NumPy) equal to NumPy's, and ``check_op`` (finite differences, jvp against vjp,
batching against a loop) must pass on it. The cases the standard cannot express are
listed in ``NOT_IN_THE_STANDARD`` with the reason (and kenaz's own gaps in ``NOT_YET``),
and a test checks that each of them still fails on strict arrays, so the lists cannot go
stale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kenaz
from kenaz.testing import check_op

from ..ops import (
    test_bits,
    test_decompositions,
    test_elementwise,
    test_fft,
    test_indexing,
    test_linalg,
    test_reduction,
    test_shape,
    test_sorting,
    test_special,
)
from ..ops.cases import OpCase, cast_args

xps = pytest.importorskip("array_api_strict")

FAMILIES = {
    "bits": test_bits.CASES,
    "decompositions": test_decompositions.CASES,
    "elementwise": test_elementwise.CASES,
    "fft": test_fft.CASES,
    "indexing": test_indexing.CASES,
    "linalg": test_linalg.CASES,
    "reduction": test_reduction.CASES,
    "shape": test_shape.CASES,
    "sorting": test_sorting.CASES,
    "special": test_special.CASES,
}
ALL_CASES = [(f"{family}/{case.id}", case) for family, cases in FAMILIES.items() for case in cases]

# What does not run on a strict namespace, by case id prefix: the reason. First what the
# Array API standard (2024.12) cannot express; then what it could, that kenaz does not do
# yet (its own gap, named as such).
NOT_IN_THE_STANDARD: dict[str, str] = {
    "bits/spacing": "no spacing (ULP) function in the standard",
    "bits/frexp_exponent": "no frexp in the standard",
    "bits/gcd": "no gcd in the standard",
    "bits/lcm": "no lcm in the standard",
    "elementwise/erf": "no special functions in the standard (CuPy and Dask have erf)",
    "special/": "no special functions in the standard (SciPy's, on NumPy only)",
    "indexing/scatter_set-int-array": "no scatter in the standard (setitem with index arrays)",
    "indexing/scatter_set-bool-mask": "no scatter in the standard (setitem with a mask array)",
    "indexing/scatter_set-broadcast-scalar": "no scatter in the standard (setitem, index arrays)",
    "indexing/scatter_multiply": "no scatter-multiply in the standard",
    "indexing/scatter_min": "no scatter-min in the standard",
    "indexing/scatter_max": "no scatter-max in the standard",
    "decompositions/eig": "no general eigendecomposition in the standard's linalg",
    "decompositions/sqrtm": "no matrix square root in the standard's linalg",
    "decompositions/solve-lower": "no triangular solve in the standard's linalg",
    "decompositions/solve-upper": "no triangular solve in the standard's linalg",
}
NOT_YET: dict[str, str] = {
    # The standard's linalg extension has these; kenaz's decompositions still call
    # np.linalg (which on CuPy and Dask dispatches to theirs through __array_function__,
    # but converts a strict array to NumPy): routing them through `xp.linalg` is to do.
    "decompositions/": "kenaz: decompositions call np.linalg directly (not yet xp.linalg)",
}


def _reason(case_id: str) -> str | None:
    for prefix, reason in (NOT_IN_THE_STANDARD | NOT_YET).items():
        if case_id.startswith(prefix):
            return reason
    return None


def to_strict(value: Any) -> Any:
    """NumPy arrays (and NumPy scalars) as strict arrays; everything else unchanged."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)
        return xps.asarray(value, dtype=getattr(xps, value.dtype.name))
    return value


def _as_tensors(args: tuple) -> tuple:
    """Array arguments as Tensors, as ``check_op`` passes them (``v[index]`` is kenaz's)."""
    return tuple(kenaz.Tensor(a) if hasattr(a, "shape") else a for a in args)


def _is_strict(value: Any) -> bool:
    return type(value).__module__.startswith("array_api_strict")


def _leaves(out: Any) -> list[Any]:
    return [leaf for leaf in kenaz.tree.leaves(out) if isinstance(leaf, kenaz.Tensor)]


def _run_on_strict(case: OpCase, dtype: Any) -> None:
    numpy_args = cast_args(case.args, dtype)
    strict_args = tuple(to_strict(a) for a in numpy_args)
    expected = case.fn(*_as_tensors(numpy_args), **case.params)
    got = case.fn(*_as_tensors(strict_args), **case.params)
    for g, e in zip(_leaves(got), _leaves(expected), strict=True):
        assert _is_strict(g._value), f"{case.id}: the output is a {type(g._value)}, not strict"
        np.testing.assert_allclose(
            np.asarray(g._value), e.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12
        )
    check_op(
        case.fn,
        strict_args,
        case.params,
        order=case.order,
        finite_differences=case.finite_differences,
    )


EXPRESSIBLE = [
    pytest.param(case, id=case_id) for case_id, case in ALL_CASES if _reason(case_id) is None
]
INEXPRESSIBLE = [
    pytest.param(case, id=case_id) for case_id, case in ALL_CASES if _reason(case_id) is not None
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", EXPRESSIBLE)
def test_check_op_on_array_api_strict(case: OpCase, dtype: Any) -> None:
    _run_on_strict(case, dtype)


@pytest.mark.parametrize("case", INEXPRESSIBLE)
def test_what_the_standard_cannot_express_still_fails_on_strict(case: OpCase) -> None:
    with pytest.raises(
        (NotImplementedError, TypeError, AttributeError, AssertionError, IndexError)
    ):
        _run_on_strict(case, np.float64)


# -- compositions: grad, jvp, vmap and their nestings on strict arrays equal NumPy's -----------
def _mlp(params, x):
    hidden = kenaz.numpy.tanh(x @ params["w"] + params["b"])
    return kenaz.numpy.sum(kenaz.numpy.logaddexp(0.0, hidden) ** 2) / x.shape[0]


COMPOSITIONS = {
    "grad": lambda p, x: kenaz.grad(_mlp)(p, x),
    "grad-of-x": lambda p, x: kenaz.grad(_mlp, argnums=1)(p, x),
    "jvp": lambda p, x: kenaz.jvp(lambda x: _mlp(p, x), (x,), (x * 0.5 + 1.0,))[1],
    "vmap-grad": lambda p, x: kenaz.vmap(kenaz.grad(_mlp), in_axes=(None, 0))(p, x[:, None, :]),
    "hessian-vector": lambda p, x: kenaz.hvp(lambda x: _mlp(p, x), (x,), (x * 0.0 + 1.0,)),
    "grad-of-grad": lambda p, x: kenaz.grad(
        lambda x: kenaz.numpy.sum(kenaz.grad(_mlp, argnums=1)(p, x) ** 2)
    )(x),
    "softmax-cross-entropy": lambda p, x: kenaz.grad(
        lambda p: (
            -kenaz.numpy.sum(
                kenaz.nn.log_softmax(x @ p["w"] + p["b"], axis=-1)[
                    kenaz.numpy.arange(4), [0, 1, 2, 0]
                ]
            )
        )
    )(p),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_compositions_on_strict_equal_numpys(name: str) -> None:
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 3)), "b": rng.normal(size=3)}
    x = rng.normal(size=(4, 3))
    expected = COMPOSITIONS[name](params, x)
    strict_params = {k: kenaz.Tensor(to_strict(v)) for k, v in params.items()}
    got = COMPOSITIONS[name](strict_params, kenaz.Tensor(to_strict(x)))
    for g, e in zip(_leaves(got), _leaves(expected), strict=True):
        assert _is_strict(g._value), f"{name}: a {type(g._value)} came out, not a strict array"
        np.testing.assert_allclose(np.asarray(g._value), e.numpy(), rtol=1e-12, atol=1e-14)


def test_creation_functions_follow_the_default_backend() -> None:
    import kenaz.numpy as knp

    with kenaz.default_backend(xps):
        zeros = knp.zeros((2, 3))
        assert _is_strict(zeros._value)
    assert isinstance(knp.zeros(2)._value, np.ndarray)
