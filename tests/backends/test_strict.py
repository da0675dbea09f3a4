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
import kenaz.numpy
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
# Array API standard (2025.12, array-api-strict's default version, whose linalg extension
# has eig and eigvals) cannot express; then what it could, that kenaz does not do yet (its
# own gap, named as such; none at present).
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
    "decompositions/sqrtm": "no matrix square root in the standard's linalg",
}
NOT_YET: dict[str, str] = {}


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
    _check_on_strict(name, COMPOSITIONS[name], params, rng.normal(size=(4, 3)), 1e-12, 1e-14)


def _check_on_strict(name, composition, params, x, rtol: float, atol: float) -> None:
    """``composition(params, x)`` on strict arrays: strict results equal NumPy's."""
    expected = composition(params, x)
    strict_params = {k: kenaz.Tensor(to_strict(v)) for k, v in params.items()}
    got = composition(strict_params, kenaz.Tensor(to_strict(x)))
    for g, e in zip(_leaves(got), _leaves(expected), strict=True):
        assert _is_strict(g._value), f"{name}: a {type(g._value)} came out, not a strict array"
        np.testing.assert_allclose(np.asarray(g._value), e.numpy(), rtol=rtol, atol=atol)


CREATIONS = [  # (function, args, kwargs): each made by the standard's own function
    ("zeros", ((2, 3),), {}),
    ("zeros", (3,), {"dtype": np.float32}),
    ("ones", (2,), {}),
    ("empty", ((2, 2),), {}),
    ("full", ((2,), 7), {}),
    ("full", ((2,), 7.5), {}),
    ("full", (2, np.float32(1.5)), {}),
    ("full", (3, True), {}),
    ("eye", (3,), {}),
    ("eye", (3, 4), {"k": 1}),
    ("identity", (2,), {}),
    ("tri", (3, 4, -1), {}),
    ("arange", (5,), {}),
    ("arange", (1, 6, 2), {}),
    ("arange", (0.5, 3.0, 0.5), {}),
    ("arange", (5,), {"dtype": np.float32}),
    ("linspace", (0, 1, 5), {}),
    ("linspace", (0, 1, 4), {"endpoint": False}),
    ("linspace", (0.0, 2.0, 3), {"dtype": np.float32}),
]


@pytest.mark.parametrize(
    ("name", "args", "kwargs"), CREATIONS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CREATIONS)]
)
def test_creation_functions_make_arrays_with_the_default_backends_functions(
    name: str, args: tuple, kwargs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kenaz.numpy as knp
    from kenaz import backend

    expected = getattr(knp, name)(*args, **kwargs)
    assert isinstance(expected._value, np.ndarray)  # NumPy outside the block

    def no_conversion(*_: Any) -> Any:
        raise AssertionError(f"{name} was made by NumPy and converted")

    monkeypatch.setattr(backend, "asarray_on", no_conversion)
    with kenaz.default_backend(xps):
        made = getattr(knp, name)(*args, **kwargs)
    assert _is_strict(made._value)
    assert made.dtype == expected.dtype  # NumPy's default dtypes
    np.testing.assert_array_equal(np.asarray(made._value), expected.numpy())


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("zeros", (3,), {"order": "F"}),  # NumPy's keyword, not the standard's
        ("linspace", (0, 10, 4), {"dtype": int}),  # an integer linspace is NumPy's floor
        ("linspace", (np.zeros(2), np.ones(2), 3), {}),  # array bounds
    ],
)
def test_what_the_standard_cannot_make_is_made_by_numpy_and_moved(
    name: str, args: tuple, kwargs: dict
) -> None:
    import kenaz.numpy as knp

    expected = getattr(knp, name)(*args, **kwargs)
    with kenaz.default_backend(xps):
        made = getattr(knp, name)(*args, **kwargs)
    assert _is_strict(made._value) and made.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(made._value), expected.numpy())


def test_random_draws_are_moved_to_the_default_backend() -> None:
    import kenaz.numpy as knp

    with kenaz.default_backend(xps):
        knp.random.seed(3)
        drawn = knp.random.normal(size=(2, 3))
    knp.random.seed(3)
    assert _is_strict(drawn._value)
    np.testing.assert_array_equal(np.asarray(drawn._value), knp.random.normal(size=(2, 3)).numpy())


# -- decompositions: public functions and compositions on strict arrays ------------------------
def _gaussian_nll(params, x):
    """Negative log-likelihood of ``x`` under N(mean, L L^T), through cholesky, solve, slogdet."""
    la = kenaz.numpy.linalg
    scale = params["scale"] @ kenaz.numpy.swapaxes(params["scale"], -1, -2) + 3.0 * np.eye(3)
    lower = la.cholesky(scale)
    centered = x - params["mean"]
    whitened = la.solve(lower, kenaz.numpy.swapaxes(centered, -1, -2))
    return 0.5 * kenaz.numpy.sum(whitened**2) + x.shape[0] * la.slogdet(lower)[1]


DECOMPOSITION_COMPOSITIONS = {
    "grad-gaussian-nll": lambda p, x: kenaz.grad(_gaussian_nll)(p, x),
    "hvp-gaussian-nll": lambda p, x: kenaz.hvp(
        lambda x: _gaussian_nll(p, x), (x,), (x * 0.0 + 1.0,)
    ),
    "vmap-eigvalsh": lambda p, x: kenaz.vmap(
        lambda m: kenaz.numpy.linalg.eigvalsh(m @ kenaz.numpy.swapaxes(m, -1, -2))
    )(kenaz.numpy.reshape(x, (2, 2, 3))),
    "grad-inv-det": lambda p, x: kenaz.grad(
        lambda s: (
            kenaz.numpy.sum(kenaz.numpy.linalg.inv(s + 3.0 * np.eye(3)))
            + kenaz.numpy.linalg.det(s + 3.0 * np.eye(3))
        )
    )(p["scale"]),
    "grad-svdvals-qr": lambda p, x: kenaz.grad(
        lambda x: (
            kenaz.numpy.sum(kenaz.numpy.linalg.svdvals(x))
            + kenaz.numpy.sum(kenaz.numpy.linalg.qr(x).R ** 2)
        )
    )(x),
}


@pytest.mark.parametrize("name", list(DECOMPOSITION_COMPOSITIONS))
def test_decomposition_compositions_on_strict_equal_numpys(name: str) -> None:
    rng = np.random.default_rng(1)
    params = {"mean": rng.normal(size=3), "scale": rng.normal(size=(3, 3))}
    composition = DECOMPOSITION_COMPOSITIONS[name]
    _check_on_strict(name, composition, params, rng.normal(size=(4, 3)), 1e-10, 1e-12)


def test_grad_through_a_new_axis_index_on_strict() -> None:
    # The pullback of x[..., None, :] adds into x[...] (the standard's setitem takes no None).
    def f(x):
        return kenaz.numpy.sum(x[..., None, :] * x[:, :, None])

    x = np.arange(6.0).reshape(2, 3)
    got = kenaz.grad(f)(kenaz.Tensor(to_strict(x)))
    assert _is_strict(got._value)
    np.testing.assert_allclose(np.asarray(got._value), kenaz.grad(f)(x).numpy())


def test_sqrtm_on_strict_names_the_op_and_the_fix() -> None:
    from kenaz.ops import decompositions

    with pytest.raises(NotImplementedError, match=r"sqrtm.*NumPy only.*numpy\.asarray"):
        decompositions.sqrtm_op(kenaz.Tensor(to_strict(np.eye(2))))


def test_complete_svd_and_qr_on_strict_are_strict_arrays() -> None:
    a = np.random.default_rng(6).normal(size=(2, 4, 3))
    la = kenaz.numpy.linalg
    got = [*la.svd(kenaz.Tensor(to_strict(a))), *la.qr(kenaz.Tensor(to_strict(a)), mode="complete")]
    expected = [*la.svd(a), *la.qr(a, mode="complete")]
    for g, e in zip(got, expected, strict=True):
        assert _is_strict(g._value) and g.shape == e.shape
        np.testing.assert_allclose(np.asarray(g._value), e.numpy(), rtol=1e-10, atol=1e-12)


def test_sum_of_booleans_counts_as_numpy_does():
    # The standard's sum takes numbers only; kenaz counts booleans in NumPy's default integer.
    total = kenaz.numpy.sum(xps.asarray([True, False, True]))
    assert type(total._value).__module__.startswith("array_api_strict")
    assert total.dtype == np.int64 and int(total) == 2
