"""Functions not exercised elsewhere: creation, inspection, aliases across namespaces."""

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats
from _check import check, check_vmap, record

import kenaz
import kenaz.numpy as knp
import kenaz.scipy.linalg as ksl
import kenaz.scipy.special as ks
import kenaz.scipy.stats as kst

rng = np.random.default_rng(9)
m = rng.standard_normal((4, 3))
square = rng.standard_normal((3, 3)) + 3 * np.eye(3)


def test_creation_and_inspection_values():
    cases = {
        "arange": ((5,), {}), "eye": ((3,), {"k": 1}), "identity": ((2,), {}),
        "full": (((2, 2), 3.0), {}), "ones": ((3,), {}), "zeros": (((2, 3),), {}),
        "empty": ((3,), {}), "tri": ((3,), {}), "empty_like": ((m,), {}),
    }  # fmt: skip
    for name, (args, kwargs) in cases.items():
        ours, theirs = getattr(knp, name)(*args, **kwargs), getattr(np, name)(*args, **kwargs)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        if not name.startswith("empty"):
            np.testing.assert_array_equal(ours.numpy(), theirs)
        record(name, "values")
    assert knp.array_equal(m, m) and knp.array_equiv(m, m) and knp.can_cast(np.int8, np.int16)
    assert knp.isdtype(np.int32, "integral") and knp.isrealobj(m) and not knp.iscomplexobj(m)
    assert knp.isscalar(3) and not knp.isscalar(m)
    for name in ("array_equal", "array_equiv", "can_cast", "isdtype", "isrealobj",
                 "iscomplexobj", "isscalar"):  # fmt: skip
        record(name, "values")
    shifted = knp.bitwise_left_shift(np.array([1, 2]), 1), knp.bitwise_right_shift(8, 2)
    assert shifted[0].numpy().tolist() == [2, 4] and int(shifted[1]) == 2
    assert knp.bitwise_not(np.array([0])).numpy().tolist() == [-1]
    for name in ("bitwise_left_shift", "bitwise_right_shift", "bitwise_not"):
        record(name, "values")
    np.testing.assert_allclose(knp.fft.fftfreq(5, 0.1), np.fft.fftfreq(5, 0.1))
    np.testing.assert_allclose(knp.fft.rfftfreq(6), np.fft.rfftfreq(6))
    record("fft.fftfreq", "values")
    record("fft.rfftfreq", "values")
    assert int(knp.linalg.matrix_rank(m)) == 3
    record("linalg.matrix_rank", "values")


def test_splits_unstack_broadcast_partition():
    x = rng.standard_normal((2, 4, 6))
    for name in ("hsplit", "vsplit", "dsplit"):
        f = lambda v, name=name: getattr(knp, name)(v, 2)  # noqa: E731
        for ours, theirs in zip(f(x), getattr(np, name)(x, 2), strict=True):
            np.testing.assert_array_equal(ours.numpy(), theirs)
        check(name, f, x, order=1)
        check_vmap(name, f, np.stack([x, 2 * x]))
    check("unstack", lambda v: knp.unstack(v, axis=1), x, order=1)
    check_vmap("unstack", lambda v: knp.unstack(v, axis=1), np.stack([x, 2 * x]))
    check("broadcast_arrays", lambda a, b: knp.broadcast_arrays(a, b), m[:, :1], m[0])
    check_vmap("broadcast_arrays", lambda a, b: knp.broadcast_arrays(a, b), m[:, :1], m)
    check("partition", lambda v: knp.partition(v, 1), m[0])
    check_vmap("partition", lambda v: knp.partition(v, 1), m)


def test_unique_family_and_polyfit():
    x = np.array([2.0, 1.0, 2.0, 3.0])
    for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
        ours = getattr(knp, name)(x)
        theirs = getattr(np, name)(x)
        for got, want in zip(kenaz.tree.leaves(ours), list(theirs) if isinstance(theirs, tuple)
                             else [theirs], strict=True):  # fmt: skip
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        g = kenaz.grad(lambda v, name=name: kenaz.tree.leaves(getattr(knp, name)(v))[0].sum())(x)
        np.testing.assert_array_equal(g.numpy(), [1, 1, 0, 1])
        record(name, "rev")
    xs, ys = np.linspace(0, 1, 6), rng.standard_normal(6)
    np.testing.assert_allclose(knp.polyfit(xs, ys, 2).numpy(), np.polyfit(xs, ys, 2))
    check("polyfit", lambda a, b: knp.polyfit(a, b, 2), xs, ys, order=1)


def test_linalg_products():
    la = knp.linalg
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    for name, f, args in [
        ("matmul", la.matmul, (a, b.T)),
        ("outer", la.outer, (a[0], b[0])),
        ("tensordot", la.tensordot, (a, b)),
        ("vecdot", la.vecdot, (a, b)),
        ("cross", la.cross, (a, b)),
        ("matrix_transpose", la.matrix_transpose, (a,)),
    ]:
        np.testing.assert_allclose(f(*args).numpy(), getattr(np.linalg, name)(*args))
        check(f"linalg.{name}", f, *args)
        check_vmap(f"linalg.{name}", f, *[np.stack([v, 2 * v]) for v in args])


def test_special_aliases_and_betainc():
    x = rng.uniform(0.5, 3.0, 4)
    for name in ("psi", "loggamma"):
        np.testing.assert_allclose(getattr(ks, name)(x).numpy(), getattr(scipy.special, name)(x))
        check(f"special.{name}", getattr(ks, name), x)
        check_vmap(f"special.{name}", getattr(ks, name), np.stack([x, x + 1]))
    check("special.sinc", ks.sinc, x - 1.5)
    check_vmap("special.sinc", ks.sinc, np.stack([x, x + 1]))
    u = rng.uniform(0.1, 0.9, 4)
    np.testing.assert_allclose(ks.betainc(2.0, 3.0, u).numpy(), scipy.special.betainc(2.0, 3.0, u))
    check("special.betainc", lambda v: ks.betainc(2.0, 3.0, v), u)
    check_vmap("special.betainc", lambda v: ks.betainc(2.0, 3.0, v), np.stack([u, u[::-1]]))


def test_multivariate_normal_entropy():
    def entropy(factor):
        return kst.multivariate_normal.entropy(None, factor @ factor.T + np.eye(3))

    expected = scipy.stats.multivariate_normal.entropy(None, square @ square.T + np.eye(3))
    np.testing.assert_allclose(float(entropy(square)), expected)
    check("stats.multivariate_normal.entropy", entropy, square)


def test_scipy_linalg_aliases():
    spd = square @ square.T + np.eye(3)
    b = rng.standard_normal(3)
    cases = [
        ("solve", lambda a: ksl.solve(a, b), square, scipy.linalg.solve(square, b)),
        ("inv", ksl.inv, square, scipy.linalg.inv(square)),
        ("det", ksl.det, square, scipy.linalg.det(square)),
        ("pinv", ksl.pinv, m, scipy.linalg.pinv(m)),
        ("norm", ksl.norm, m, scipy.linalg.norm(m)),
        ("cholesky", ksl.cholesky, spd, scipy.linalg.cholesky(spd)),
        ("cho_factor", lambda a: ksl.cho_factor(a, lower=True)[0], spd,
         np.tril(scipy.linalg.cho_factor(spd, lower=True)[0])),
        ("eigh", lambda a: ksl.eigh(a, eigvals_only=True), spd, scipy.linalg.eigh(spd)[0]),
        ("svd", lambda a: ksl.svd(a, compute_uv=False), m, scipy.linalg.svdvals(m)),
        ("qr", lambda a: knp.abs(ksl.qr(a, mode="r")[0]), m,
         np.abs(scipy.linalg.qr(m, mode="r")[0])),
        ("lstsq", lambda a: ksl.lstsq(a, np.arange(4.0))[0], m,
         scipy.linalg.lstsq(m, np.arange(4.0))[0]),
    ]  # fmt: skip
    for name, f, arg, expected in cases:
        np.testing.assert_allclose(np.asarray(f(arg)), expected, rtol=1e-10, atol=1e-12)
        check(f"scipy.linalg.{name}", f, arg, order=1)
