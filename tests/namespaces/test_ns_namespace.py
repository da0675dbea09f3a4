"""The rest of kenaz.numpy's namespace: values against NumPy, derivatives, vmap."""

import numpy as np
import pytest
from _check import check, check_vmap, record

import kenaz
import kenaz.numpy as knp

rng = np.random.default_rng(5)
v5 = rng.standard_normal(5)
w5 = rng.standard_normal(5)
m34 = rng.standard_normal((3, 4))
pos5 = rng.uniform(0.5, 2.0, 5)
nan5 = np.array([1.0, np.nan, -2.0, 3.5, np.nan])
nan34 = np.where(np.array([[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]]) == 1, np.nan, m34)

# name, function of the differentiated args, args, kwargs (also passed to NumPy)
DIFFERENTIABLE = [
    ("fabs", (v5,), {}),
    ("float_power", (pos5, w5), {}),
    ("fmod", (v5 * 3, np.full(5, 1.3)), {}),
    ("copysign", (v5, w5), {}),
    ("heaviside", (np.array([-1.0, 0.0, 2.0]), np.array([0.3, 0.5, 0.7])), {}),
    ("ptp", (m34,), {"axis": 1}),
    ("kron", (m34[:2, :2], m34[1:, 2:]), {}),
    ("kron", (v5[:3], m34[:2, :2]), {}),
    ("diagflat", (m34[:2, :2],), {"k": 1}),
    ("rollaxis", (m34.reshape(3, 2, 2), 2), {}),
    ("nansum", (nan34,), {"axis": 0}),
    ("nanmean", (nan34,), {"axis": 1}),
    ("nanvar", (nan34,), {"axis": 1, "ddof": 1}),
    ("nanstd", (nan34,), {}),
    ("nanmax", (nan34,), {"axis": 0}),
    ("nanmin", (nan34,), {"axis": 1}),
    ("nanprod", (nan5,), {}),
    ("nancumsum", (nan5,), {}),
    ("nancumprod", (nan5,), {}),
    ("median", (m34,), {"axis": 1}),
    ("median", (v5,), {}),
    ("quantile", (m34, [0.1, 0.45, 0.9]), {"axis": 0}),
    ("quantile", (m34, 0.3), {"keepdims": True}),
    ("percentile", (m34, 40), {"axis": 1, "keepdims": True}),
    ("cov", (m34,), {}),
    ("cov", (m34,), {"rowvar": False, "bias": True}),
    ("corrcoef", (m34,), {}),
    ("convolve", (v5, w5[:3]), {}),
    ("convolve", (v5, w5[:3]), {"mode": "same"}),
    ("correlate", (v5, w5[:3]), {}),
    ("correlate", (v5[:2], w5), {"mode": "full"}),
    ("polyval", (w5[:3], v5), {}),
    ("vander", (v5[:3],), {"N": 4}),
    ("vander", (v5[:3],), {"increasing": True}),
    ("interp", (np.array([-0.5, 0.2, 1.7, 2.5, 3.9]), np.array([0.0, 1.0, 2.0, 3.0]),
                np.array([1.0, -1.0, 0.5, 2.0])), {}),  # fmt: skip
    ("trapezoid", (m34,), {}),
    ("trapezoid", (m34, np.array([0.0, 0.5, 1.5, 3.0])), {"axis": 1}),
    ("trapezoid", (m34,), {"dx": 0.5, "axis": 0}),
    ("gradient", (v5,), {}),
    ("gradient", (m34, 0.5), {"axis": 1}),
    ("ediff1d", (m34,), {"to_begin": np.array([1.0])}),
    ("logspace", (0.5, 2.0, 4), {}),
    ("geomspace", (0.5, 8.0, 4), {}),
    ("rot90", (m34,), {}),
    ("rot90", (m34, 2), {}),
    ("rot90", (m34, 3), {}),
    ("append", (v5, w5), {}),
    ("append", (m34, m34[:1]), {"axis": 0}),
    ("copy", (v5,), {}),
    ("resize", (v5, (3, 4)), {}),
    ("insert", (v5, 2, 7.0), {}),
    ("insert", (m34, [1, 3], m34[:, :2]), {"axis": 1}),
    ("delete", (m34, 1), {"axis": 1}),
    ("delete", (v5, [0, 3]), {}),
    ("trim_zeros", (np.array([0.0, 0.0, 1.5, 2.0, 0.0]),), {}),
    ("nan_to_num", (np.array([1.0, np.nan, np.inf, -np.inf]),), {}),
    ("ldexp", (v5, np.array([1, 2, 0, -1, 3])), {}),
    ("positive", (v5,), {}),
    ("pow", (pos5, w5), {}),
    ("acos", (v5 / 4,), {}),
    ("asinh", (v5,), {}),
    ("atanh", (v5 / 4,), {}),
    ("cumulative_sum", (v5,), {}),
    ("cumulative_prod", (m34,), {"axis": 1, "include_initial": True}),
    ("real_if_close", (v5 + 1e-20j,), {}),
    ("i0", (v5,), {}),
    ("asanyarray", (v5,), {}),
    ("ascontiguousarray", (m34,), {}),
    ("asfortranarray", (m34,), {}),
    ("require", (m34,), {}),
    ("matvec", (m34, v5[:4]), {}),
    ("vecmat", (v5[:3], m34), {}),
    ("unwrap", (np.array([0.1, 3.0, 6.0, -2.5, 1.0]),), {}),
    ("polyadd", (v5[:3], w5), {}),
    ("polysub", (v5, w5[:2]), {}),
    ("polymul", (v5[:3], w5[:2]), {}),
    ("polyder", (v5,), {"m": 2}),
    ("polyint", (v5,), {"m": 2, "k": [0.5, -1.0]}),
    ("poly", (v5[:3],), {}),
]


# Arguments held fixed: the function jumps there (heaviside at 0), or its shape or type
# depends on the values (trim_zeros, real_if_close).
HELD = {"heaviside": {0}, "trim_zeros": {0}, "real_if_close": {0}}


def _numpy_result(name, args, kwargs):
    return getattr(np, name)(*args, **kwargs)


@pytest.mark.parametrize(
    "name, args, kwargs", DIFFERENTIABLE, ids=[f"{d[0]}-{i}" for i, d in enumerate(DIFFERENTIABLE)]
)
def test_differentiable(name, args, kwargs):
    ours = getattr(knp, name)
    expected = _numpy_result(name, args, kwargs)
    result = ours(*args, **kwargs)
    for got, want in zip(kenaz.tree.leaves(result), kenaz.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    float_positions = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind in "fc"
                       and np.ndim(a) > 0 and np.isfinite(np.asarray(a)).all()
                       and i not in HELD.get(name, ())]  # fmt: skip
    if not float_positions:
        record(name, "values")
        return

    def f(*diffed):
        full = list(args)
        for i, value in zip(float_positions, diffed, strict=True):
            full[i] = value
        return ours(*full, **kwargs)

    differentiated = [np.asarray(args[i]) for i in float_positions]
    check(name, f, *differentiated, order=2 if name not in ("i0",) else 1)
    # vmap over the first differentiated argument; the others are shared.
    first = differentiated[0]
    in_axes = (0,) + (None,) * (len(differentiated) - 1)
    check_vmap(name, f, np.stack([first, 0.5 * first + 0.1]), *differentiated[1:], in_axes=in_axes)


def test_nan_reductions_differentiate_the_present_values():
    g = kenaz.grad(lambda x: knp.nansum(x) + knp.nanmean(x))(nan5)
    np.testing.assert_allclose(g.numpy(), np.where(np.isnan(nan5), 0.0, 1 + 1 / 3))


CONSTANT_VALUED = [
    ("signbit", (v5,), {}),
    ("spacing", (v5,), {}),
    ("nextafter", (v5, w5), {}),
    ("trunc", (v5 * 3,), {}),
    ("rint", (v5 * 3,), {}),
    ("fix", (v5 * 3,), {}),
    ("isreal", (v5 + np.array([0, 1j, 0, 0, 2j]),), {}),
    ("iscomplex", (v5 + np.array([0, 1j, 0, 0, 2j]),), {}),
    ("isneginf", (np.array([1.0, -np.inf, np.inf]),), {}),
    ("isposinf", (np.array([1.0, -np.inf, np.inf]),), {}),
    ("gcd", (np.array([12, 18]), np.array([8, 12])), {}),
    ("lcm", (np.array([12, 18]), np.array([8, 12])), {}),
    ("left_shift", (np.array([1, 3]), np.array([2, 1])), {}),
    ("right_shift", (np.array([8, 3]), np.array([2, 1])), {}),
    ("bitwise_invert", (np.array([1, 3]),), {}),
    ("searchsorted", (np.sort(v5), w5), {}),
    ("flatnonzero", (np.array([0, 2, 0, 1]),), {}),
    ("argwhere", (m34 > 0,), {}),
    ("unravel_index", (np.array([3, 7]), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([1, 3])), (3, 4)), {}),
    ("indices", ((2, 3),), {}),
    ("nanargmax", (nan5,), {}),
    ("nanargmin", (nan5,), {}),
    ("argpartition", (v5, 2), {}),
]


@pytest.mark.parametrize(
    "name, args, kwargs", CONSTANT_VALUED, ids=[c[0] for c in CONSTANT_VALUED]
)
def test_constant_valued(name, args, kwargs):
    expected = _numpy_result(name, args, kwargs)
    result = getattr(knp, name)(*args, **kwargs)
    if name == "argpartition":
        expected = np.argsort(args[0])
    for got, want in zip(kenaz.tree.leaves(result), kenaz.tree.leaves(expected), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    record(name, "values")


def test_splits_and_joins():
    x = np.arange(10.0)
    for ours, theirs in zip(knp.array_split(x, 3), np.array_split(x, 3), strict=True):
        np.testing.assert_array_equal(ours.numpy(), theirs)
    grid = np.arange(24.0).reshape(2, 3, 4)
    assert [p.shape for p in knp.dsplit(grid, 2)] == [p.shape for p in np.dsplit(grid, 2)]
    assert [p.shape for p in knp.hsplit(grid, 3)] == [p.shape for p in np.hsplit(grid, 3)]
    assert [p.shape for p in knp.vsplit(grid, 2)] == [p.shape for p in np.vsplit(grid, 2)]
    assert [u.shape for u in knp.unstack(grid, axis=1)] == [(2, 4)] * 3
    a, b = knp.broadcast_arrays(np.ones((3, 1)), np.ones(4))
    assert a.shape == b.shape == (3, 4)
    blocks = [[np.ones((2, 2)), np.zeros((2, 1))], [np.zeros((1, 2)), np.ones((1, 1))]]
    np.testing.assert_array_equal(knp.block(blocks).numpy(), np.block(blocks))
    xs, ys = knp.meshgrid(np.arange(3.0), np.arange(2.0))
    np.testing.assert_array_equal(xs.numpy(), np.meshgrid(np.arange(3.0), np.arange(2.0))[0])
    xs, ys = knp.meshgrid(np.arange(3.0), np.arange(2.0), indexing="ij")
    assert xs.shape == (3, 2)
    check("meshgrid", lambda p, q: knp.meshgrid(p, q), v5, w5[:3])
    conditions = [v5 > 0.5, v5 < -0.5]
    check("select", lambda p, q: knp.select(conditions, [p, q], 0.0), v5, w5)
    np.testing.assert_array_equal(
        knp.select(conditions, [v5, w5], 0.0).numpy(), np.select(conditions, [v5, w5], 0.0)
    )
    choice = np.array([0, 1, 2, 1, 0])
    np.testing.assert_array_equal(knp.choose(choice, [v5, w5, pos5]).numpy(),
                                  np.choose(choice, [v5, w5, pos5]))  # fmt: skip
    check("choose", lambda p, q: knp.choose(choice, [p, q, pos5]), v5, w5)
    check("compress", lambda p: knp.compress([True, False, True], p, axis=1), m34)
    check("extract", lambda p: knp.extract(m34 > 0, p), m34)
    check("block", lambda p: knp.block([[p, p], [p, p]]), m34)
    check("array_split", lambda p: knp.array_split(p, 3), v5)


def test_unique_is_differentiable_in_its_values():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    values, index, inverse, counts = knp.unique(x, True, True, True)
    e_values, e_index, e_inverse, e_counts = np.unique(x, True, True, True)
    for got, want in [(values, e_values), (index, e_index), (inverse, e_inverse),
                      (counts, e_counts)]:  # fmt: skip
        np.testing.assert_array_equal(got.numpy(), want)
    g = kenaz.grad(lambda v: knp.unique(v).sum())(x)
    np.testing.assert_array_equal(g.numpy(), [1, 1, 0, 1, 0])
    record("unique", "rev")
    assert len(knp.unique_all(x)) == 4 and knp.unique_values(x).shape == (3,)


def test_asarray_chkfinite():
    check("asarray_chkfinite", knp.asarray_chkfinite, v5)
    with pytest.raises(ValueError, match="infs or NaNs"):
        knp.asarray_chkfinite(nan5)


def test_frexp_modf_divmod():
    x = np.array([0.3, -2.5, 7.2])
    mantissa, exponent = knp.frexp(x)
    e_mantissa, e_exponent = np.frexp(x)
    np.testing.assert_array_equal(mantissa.numpy(), e_mantissa)
    np.testing.assert_array_equal(exponent.numpy(), e_exponent)
    check("frexp", lambda v: knp.frexp(v)[0], x)
    frac, whole = knp.modf(x)
    np.testing.assert_array_equal(frac.numpy(), np.modf(x)[0])
    check("modf", lambda v: knp.modf(v)[0], x)
    quotient, rest = knp.divmod(x, 0.7)
    np.testing.assert_allclose(rest.numpy(), np.divmod(x, 0.7)[1])
    check("divmod", lambda v: knp.divmod(v, 0.7)[1], x)


def test_dtype_and_inspection_helpers():
    t = knp.ones(3)
    assert knp.can_cast(t, np.float32, "same_kind")
    assert knp.isdtype(np.float64, "real floating")
    assert knp.isrealobj(t) and not knp.iscomplexobj(t)
    assert knp.array_equal(t, np.ones(3)) and knp.array_equiv(t, 1.0)
    assert not knp.isscalar(t) and knp.isscalar(1.0)


def test_random_returns_constants():
    knp.random.seed(1)
    a = knp.random.normal(size=3)
    np.random.seed(1)
    np.testing.assert_array_equal(a.numpy(), np.random.normal(size=3))
    assert isinstance(knp.random.permutation(knp.arange(4)), kenaz.Tensor)
    deck = knp.arange(10)
    knp.random.shuffle(deck)  # in place, as NumPy's, on a Tensor nothing tracks
    assert sorted(deck.tolist()) == list(range(10))

    def shuffled(x):
        knp.random.shuffle(x)
        return x.sum()

    with pytest.raises(TypeError, match="random.shuffle"):
        kenaz.grad(shuffled)(knp.ones(3))
    assert isinstance(knp.random.default_rng(0), np.random.Generator)


def test_nan_quantiles():
    data = np.array([[0.3, np.nan, -1.0, 2.0, 0.7], [1.0, 2.0, 3.0, 4.0, 5.0]])
    for name, args, kwargs in [("nanquantile", ([0.1, 0.45],), {"axis": 1}),
                               ("nanmedian", (), {"axis": 1, "keepdims": True}),
                               ("nanpercentile", (35,), {"axis": 1})]:  # fmt: skip
        ours = getattr(knp, name)(data, *args, **kwargs)
        np.testing.assert_allclose(ours.numpy(), getattr(np, name)(data, *args, **kwargs))
        check_vmap(name, lambda v, n=name, a=args, k=kwargs: getattr(knp, n)(v, *a, **k),
                   np.stack([data, data[::-1]]))  # fmt: skip
        record(name, "values")
    # The derivative follows the interpolated values; NaNs get none.
    g = kenaz.grad(lambda v: knp.nanmedian(v[0]))(data)
    np.testing.assert_allclose(g.numpy()[0], [0.5, 0, 0, 0, 0.5])
    finite = np.array([[0.3, -0.2, -1.0, 2.0, 0.7]])
    check("nanquantile", lambda v: knp.nanquantile(v, [0.1, 0.45], axis=1), finite)
    check("nanmedian", lambda v: knp.nanmedian(v, axis=1), finite)
    check("nanpercentile", lambda v: knp.nanpercentile(v, 35), finite)
