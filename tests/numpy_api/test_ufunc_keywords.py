"""NumPy's ufunc keywords (out=, where=, dtype=, casting=, order=, subok=, signature=) on
kenaz.numpy's elementwise functions: NumPy's values, eagerly and under transformations,
and derivatives checked against finite differences (issue 24, item 3)."""

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import Handler, perform_args
from kenaz.testing import check_grads

rng = np.random.default_rng(3)
MASK = np.array([[True, False, True], [False, True, True]])


class _Passing(Handler):
    """Installed, it makes every call take the transformed (functional) path."""

    def handle(self, op, args, params):
        return perform_args(op, args, params)


def _ufunc_names():
    names = []
    for name in sorted(dir(knp)):
        ufunc = getattr(np, name, None)
        if (isinstance(ufunc, np.ufunc) and ufunc.signature is None
                and not isinstance(getattr(knp, name), np.ufunc)):  # fmt: skip
            names.append(name)
    return names


UFUNCS = _ufunc_names()


def _operands(ufunc):
    """Inputs of shape (2, 3) in the ufunc's domain: floats in (0.1, 0.9), else integers."""
    floats = any(t.split("->")[0] == "d" * ufunc.nin for t in ufunc.types)
    if floats:
        return [rng.uniform(0.1, 0.9, (2, 3)) for _ in range(ufunc.nin)]
    return [rng.integers(1, 7, (2, 3)) for _ in range(ufunc.nin)]


def _same(ours, theirs):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6, atol=1e-12, equal_nan=True)


def _outs(ufunc, operands, fill=5):
    result = ufunc(*operands)
    results = result if isinstance(result, tuple) else (result,)
    return tuple(np.full(r.shape, fill, r.dtype) for r in results)


@pytest.mark.parametrize("name", UFUNCS)
def test_every_ufunc_takes_out_where_and_dtype_as_numpy(name):
    ufunc, ours = getattr(np, name), getattr(knp, name)
    operands = _operands(ufunc)
    single = ufunc.nout == 1
    for transformed in (False, True):  # arccosh is nan on (0.1, 0.9): NumPy's value too
        with _Passing() if transformed else _NoHandler(), np.errstate(invalid="ignore"):
            # out= (a Tensor: written and returned), where= with out=
            outs = _outs(ufunc, operands)
            tensors = tuple(knp.array(o) for o in outs)
            given = tensors[0] if single else tensors
            result = ours(*operands, out=given)
            assert all(r is g for r, g in zip(result, given)) if not single else result is given
            _same(tensors, ufunc(*operands, out=tuple(o.copy() for o in outs)))
            tensors = tuple(knp.array(o) for o in outs)
            ours(*operands, out=tensors[0] if single else tensors, where=MASK)
            _same(tensors, ufunc(*operands, out=tuple(o.copy() for o in outs), where=MASK))
            # dtype=, order=, subok=
            for dtype in (np.float32, np.int64):  # NumPy's loop, or NumPy's refusal
                try:
                    expected = ufunc(*operands, dtype=dtype)
                except TypeError as error:
                    with pytest.raises(TypeError, match=str(error)[:20]):
                        ours(*operands, dtype=dtype)
                else:
                    _same(ours(*operands, dtype=dtype), expected)
            _same(ours(*operands, order="F", subok=False), ufunc(*operands))


class _NoHandler:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_casting_and_signature_as_numpy():
    x, i = np.array([0.5, 1.5]), np.array([1, 2])
    with _Passing():
        _same(knp.add(i, i, dtype=np.float64), np.add(i, i, dtype=np.float64))
        _same(knp.add(x, x, signature="ff->f"), np.add(x, x, signature="ff->f"))
        _same(knp.sqrt(i, signature=(None, "f4")), np.sqrt(i, signature=(None, "f4")))
        _same(knp.add(x, 1, dtype=np.float32), np.add(x, 1, dtype=np.float32))
        with pytest.raises(TypeError, match="add.*same_kind"):
            knp.add(x, x, dtype=np.int64)  # float64 -> int64 is not same_kind
        with pytest.raises(TypeError, match="add.*safe"):
            knp.add(x, x, dtype=np.float32, casting="safe")
        _same(knp.add(x, x, dtype=np.int64, casting="unsafe"),
              np.add(x, x, dtype=np.int64, casting="unsafe"))  # fmt: skip
        with pytest.raises(TypeError, match="sqrt: cannot cast the output from float64 to int64"):
            knp.sqrt(x, out=knp.zeros(2, dtype=np.int64))
    for run in (lambda: knp.sin(x, order="X"), lambda: knp.sin(x, casting="nope")):
        with pytest.raises(ValueError, match="sin"):
            run()
    with pytest.raises(TypeError, match="both 'signature' and 'dtype'"):
        knp.sin(x, dtype=np.float32, signature="f->f")
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        knp.sin(x, axis=0)


def test_out_broadcasts_to_its_shape_and_casts_as_numpy():
    x = np.array([0.5, 1.5, 2.5])
    for transformed in (False, True):
        with _Passing() if transformed else _NoHandler():
            out = knp.zeros((2, 3), dtype=np.float32)
            assert knp.exp(x, out=out) is out
            _same(out, np.exp(x, out=np.zeros((2, 3), np.float32)))
            array = np.zeros(3)
            assert knp.log1p(knp.asarray(x), out=array) is array  # an ndarray as out
            np.testing.assert_allclose(array, np.log1p(x))
            with pytest.raises(ValueError, match="exp: .*shape"):
                knp.exp(x, out=knp.zeros(2))


def test_where_needs_out():
    with pytest.raises(TypeError, match="sin: where= needs out="):
        knp.sin(np.ones(2), where=[True, False])
    with pytest.raises(TypeError, match="where= needs out="):
        kenaz.grad(lambda x: knp.sum(knp.sin(x, where=x > 0)))(np.ones(2))


# -- derivatives ------------------------------------------------------------------------
TOLERANCES = {np.float64: {}, np.float32: {"atol": 2e-2, "rtol": 2e-2}}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_derivatives_through_out_and_where(dtype):
    x = rng.uniform(0.3, 1.5, (2, 3)).astype(dtype)
    y = rng.uniform(0.3, 1.5, (2, 3)).astype(dtype)
    tolerance = TOLERANCES[dtype]

    def written(x, y):  # out created inside, kept values where the mask is False
        out = knp.full((2, 3), 0.5, dtype=dtype)
        knp.arctan2(x, y, out=out, where=MASK)
        return out * x

    def into_tracked(x, y):  # out is itself tracked: its kept entries carry y's derivative
        out = y * y
        result = knp.sin(x, out=out, where=MASK)
        return result + out  # the same tensor, now holding the new values

    def composite(x, y):
        out = knp.zeros((2, 3), dtype=dtype)
        return knp.hypot(x, y, out=out, where=MASK) ** 2

    for f in (written, into_tracked, composite):
        check_grads(f, (x, y), order=2, **tolerance)
        ours = f(x, y)
        assert ours.dtype == dtype


def test_where_hides_the_derivative_of_the_excluded_entries():
    x = np.array([[-1.0, 0.0, 4.0], [2.0, -3.0, 0.5]])
    mask = x > 0

    def f(x):
        return knp.sqrt(x, out=knp.ones(x.shape), where=mask) * knp.log(x, out=knp.ones(x.shape),
                                                                         where=mask)  # fmt: skip

    g = kenaz.grad(lambda x: knp.sum(f(x)))(x)
    assert np.all(np.isfinite(np.asarray(g)))
    assert np.all(np.asarray(g)[~mask] == 0)
    check_grads(f, (np.where(mask, x, 1.0),), order=2)
    h = kenaz.hessian(lambda x: knp.sum(f(x)))(x)
    assert np.all(np.isfinite(np.asarray(h)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dtype_is_differentiable(dtype):
    x = rng.uniform(0.3, 1.5, 4).astype(dtype)
    other = np.float32 if dtype == np.float64 else np.float64
    f = lambda x: knp.exp(x, dtype=other) * knp.multiply(x, 2, dtype=other)  # noqa: E731
    assert f(x).dtype == other
    check_grads(f, (x,), order=2, **TOLERANCES[np.float32])


def test_out_under_vmap_and_with_a_numpy_array_is_refused():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="exp: out= cannot be written inside vmap"):
        kenaz.vmap(lambda r: knp.exp(r, out=knp.zeros(3)))(x)
    with pytest.raises(TypeError, match="out= a NumPy array cannot carry the derivative"):
        kenaz.grad(lambda r: knp.sum(knp.exp(r, out=np.zeros((2, 3)))))(x)
    with pytest.raises(TypeError, match="view of another array"):
        kenaz.grad(lambda r: knp.sum(knp.exp(r[0], out=knp.zeros((2, 3))[0])))(x)
    # Batched without out: the keywords batch as the ops do.
    batched = kenaz.vmap(lambda r: knp.exp(r, dtype=np.float32))(x)
    assert batched.dtype == np.float32 and batched.shape == (2, 3)


def test_a_pullback_that_saved_out_is_caught():
    def f(x):
        out = knp.sin(x) * 1.0
        square = out * out  # its pullback keeps `out`
        knp.cos(x, out=out)  # ... which is then overwritten
        return knp.sum(square + out)

    with pytest.raises(RuntimeError, match="mul"):
        kenaz.grad(f)(np.ones(3))


def test_multiple_outputs():
    x = np.array([-2.5, 1.5, 3.0])
    quotient, remainder = knp.zeros(3), knp.zeros(3)
    result = knp.divmod(x, 2.0, out=(quotient, remainder))
    assert result[0] is quotient and result[1] is remainder
    _same((quotient, remainder), np.divmod(x, 2.0))
    with _Passing():
        fraction, whole = knp.modf(x, out=(None, knp.zeros(3)))
        _same((fraction, whole), np.modf(x))
    with pytest.raises(TypeError, match="tuple of 2"):
        knp.divmod(x, 2.0, out=knp.zeros(3))


def test_numpy_s_own_ufuncs_on_tracked_tensors_take_the_keywords():
    x = np.array([1.0, 2.0, -1.0])
    mask = x > 0

    def f(x):
        out = knp.ones(3)
        assert np.log(x, out=out, where=mask) is out  # NumPy's ufunc, dispatched to kenaz
        return out * np.sin(x, dtype=np.float32)

    check_grads(f, (x,), order=2, **TOLERANCES[np.float32])
    assert f(x).dtype == np.float64


# -- reductions: out=, where=, initial=, dtype= ----------------------------------------------
X = rng.uniform(-1.0, 1.0, (2, 3))
REDUCTIONS = [
    ("sum", {"axis": 0, "initial": 1.5, "where": MASK}), ("prod", {"axis": 1, "where": MASK}),
    ("mean", {"axis": 0, "where": MASK}), ("max", {"axis": 1, "initial": -0.5, "where": MASK}),
    ("min", {"axis": 0, "initial": 0.5, "where": MASK}), ("var", {"axis": 1, "where": MASK}),
    ("std", {"axis": 1, "where": MASK, "ddof": 1}), ("var", {"axis": 1, "mean": 0.25}),
    ("cumsum", {"axis": 1}), ("cumprod", {"axis": 0}), ("argmax", {"axis": 0}),
    ("argmin", {"axis": 1}), ("all", {"axis": 0, "where": MASK}), ("any", {"axis": 1}),
    ("clip", {"a_min": -0.5, "a_max": 0.5}), ("round", {"decimals": 1}),
]  # fmt: skip


@pytest.mark.parametrize("name, options", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_write_into_out_as_numpy(name, options):
    ours, theirs = getattr(knp, name), getattr(np, name)
    if "mean" in options:  # NumPy's `mean=` is shaped as with keepdims
        options = dict(options, mean=np.full((2, 1), options["mean"]))
    expected = theirs(X, **options)
    for transformed in (False, True):
        with _Passing() if transformed else _NoHandler():
            _same(ours(X, **options), expected)
            for dtype in {expected.dtype, np.dtype(np.float32)} if expected.dtype.kind == "f" else {
                    expected.dtype}:  # fmt: skip
                out = knp.zeros(expected.shape, dtype=dtype)
                assert ours(X, **options, out=out) is out
                _same(out, theirs(X, **options, out=np.zeros(expected.shape, dtype)))
            with pytest.raises(ValueError, match=f"{name}: out= has shape"):
                ours(X, **options, out=knp.zeros((7,), dtype=expected.dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reductions_into_out_are_differentiable(dtype):
    x = X.astype(dtype)

    def f(x):
        totals = knp.zeros(3, dtype=dtype)
        knp.sum(x * x, axis=0, initial=0.5, where=MASK, out=totals)
        spread = knp.std(x, axis=1, where=MASK)
        return knp.concatenate([totals, spread, knp.max(x, axis=0, initial=-2.0, where=MASK)])

    check_grads(f, (x,), order=2, **TOLERANCES[dtype])
    assert f(x).dtype == dtype


def test_reduction_out_casting_as_numpy():
    out = knp.zeros(3, dtype=np.int64)
    knp.sum(X * 10, axis=0, out=out)  # reductions cast their out unsafely, as NumPy's
    np.testing.assert_array_equal(out, np.sum(X * 10, axis=0, out=np.zeros(3, np.int64)))
    with pytest.raises(TypeError, match="argmax: cannot cast the output from int64 to float32"):
        knp.argmax(X, axis=0, out=knp.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="dot: cannot cast"):
        knp.dot(X, X.T, out=knp.zeros((2, 2), dtype=np.float32))
    product = knp.zeros((2, 2))
    assert knp.dot(X, X.T, out=product) is product and knp.matmul(X, X.T, out=product) is product
    _same(product, X @ X.T)


COMPOSED = [
    ("choose", ([0, 1, 0], [X[0], X[1]]), {}), ("compress", ([True, False, True], X), {"axis": 1}),
    ("outer", (X[0], X[1]), {}), ("cumulative_sum", (X,), {"axis": 1}),
    ("cumulative_prod", (X,), {"axis": 0}), ("isneginf", (np.array([-np.inf, 1.0]),), {}),
    ("isposinf", (np.array([np.inf, 1.0]),), {}), ("nancumsum", (X,), {"axis": 0}),
    ("nancumprod", (X,), {"axis": 1}), ("ptp", (X,), {"axis": 0}), ("trace", (X,), {}),
    ("nanmean", (X,), {"axis": 1}), ("nanstd", (X,), {"axis": 0}), ("nanargmax", (X,), {}),
    ("quantile", (X, 0.3), {"axis": 1}), ("median", (X,), {"axis": 0}),
]  # fmt: skip


@pytest.mark.parametrize("name, args, options", COMPOSED, ids=[c[0] for c in COMPOSED])
def test_composites_write_into_out_as_numpy(name, args, options):
    expected = getattr(np, name)(*args, **options)
    for transformed in (False, True):
        with _Passing() if transformed else _NoHandler():
            out = knp.zeros(np.shape(expected), dtype=np.asarray(expected).dtype)
            assert getattr(knp, name)(*args, **options, out=out) is out
            _same(out, expected)


def test_composite_out_is_differentiable():
    def f(x):
        out = knp.zeros(3)
        knp.ptp(x, axis=0, out=out)
        return out * knp.trace(x[:, :2], dtype=np.float64) + knp.nancumsum(x, axis=0)[1]

    check_grads(f, (X,), order=2)


# -- generalized ufuncs: matmul, vecdot, matvec, vecmat --------------------------------------
A, B = rng.standard_normal((3, 5, 2)), rng.standard_normal((2, 5, 4))
V, M, W = rng.standard_normal((4, 3)), rng.standard_normal((4, 6, 3)), rng.standard_normal((3, 6))
GUFUNCS = [
    ("matmul", (A, B), {"axes": [(0, 2), (0, 2), (2, 0)]}),
    ("matmul", (A, B[:, 0, 0]), {"axes": [(0, 2), (0,), (1,)]}),
    ("matmul", (A[:, 0], B[:, 0]), {"dtype": np.float32}),
    ("vecdot", (V, V), {"axis": 0, "keepdims": True}), ("vecdot", (V, V), {"keepdims": True}),
    ("vecdot", (V, V), {"axes": [(0,), (0,), ()], "dtype": np.float32}),
    ("matvec", (M, W), {"axes": [(0, 2), (0,), (0,)]}),
    ("vecmat", (V[:, :1] * np.ones(6), M), {"axes": [(0,), (0, 2), (1,)]}),
]  # fmt: skip


@pytest.mark.parametrize("name, args, options", GUFUNCS, ids=[g[0] for g in GUFUNCS])
def test_generalized_ufuncs_take_axes_dtype_and_out_as_numpy(name, args, options):
    expected = getattr(np, name)(*args, **options)
    for transformed in (False, True):
        with _Passing() if transformed else _NoHandler():
            _same(getattr(knp, name)(*args, **options), expected)
            out = knp.zeros(expected.shape, dtype=expected.dtype)
            assert getattr(knp, name)(*args, **options, out=out) is out
            _same(out, expected)
    check_grads(lambda *a: getattr(knp, name)(*a, **options), args, order=2,
                **TOLERANCES[np.float32 if "dtype" in options else np.float64])  # fmt: skip


def test_generalized_ufuncs_refuse_what_numpy_refuses():
    with _Passing(), pytest.raises(TypeError, match="keepdims"):
        knp.vecmat(V[:, 0], M[:, 0], keepdims=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        kenaz.grad(lambda a: knp.sum(knp.matmul(a, a.T, where=True)))(V)


def test_numpy_s_own_reductions_on_tracked_tensors_write_into_out():
    def f(x):
        totals = knp.zeros(3)
        assert np.sum(x, axis=0, out=totals) is totals  # dispatched to kenaz.numpy.sum
        return totals * totals

    check_grads(f, (X,), order=2)


# -- out given positionally, as NumPy takes it ----------------------------------------
def test_out_given_positionally_as_numpy():
    x, y = rng.uniform(0.1, 0.9, (2, 3)), rng.uniform(0.1, 0.9, (2, 3))
    for name, operands in (("add", (x, y)), ("sin", (x,)), ("logaddexp", (x, y)),
                           ("hypot", (x, y))):  # fmt: skip  (primitives and composites)
        out = knp.zeros((2, 3))
        returned = getattr(knp, name)(*operands, out)
        assert returned is out
        np.testing.assert_allclose(out.numpy(), getattr(np, name)(x, y) if len(operands) == 2
                                   else np.sin(x), rtol=1e-12)  # fmt: skip
    quotient, remainder = knp.zeros(3), knp.zeros(3)
    knp.divmod(np.array([5.0, 7.0, 9.0]), 2.0, quotient, remainder)
    np.testing.assert_array_equal(quotient.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(remainder.numpy(), [1.0, 1.0, 1.0])
    product = knp.zeros((2, 2))
    knp.matmul(np.eye(2), np.ones((2, 2)), product)
    np.testing.assert_array_equal(product.numpy(), np.ones((2, 2)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_out_given_positionally_under_transformations(dtype):
    x = rng.uniform(0.3, 1.5, (2, 3)).astype(dtype)

    def f(x):
        out = knp.zeros((2, 3), dtype=dtype)
        knp.multiply(x, x, out)
        knp.add(out, 1.0, out)  # add saves nothing: in place is fine
        result = knp.zeros((2, 3), dtype=dtype)
        knp.sin(out, result)
        return result

    check_grads(f, (x,), order=2, **TOLERANCES[dtype])
    assert kenaz.grad(lambda x: knp.sum(f(x)))(x).dtype == dtype
    expected = 2 * x * np.cos(x * x + 1)
    tangent = kenaz.jvp(f, (x,), (np.ones_like(x),))[1]
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=rtol)


def test_positional_out_errors_name_the_function_and_the_fix():
    x = knp.ones(3)
    with pytest.raises(TypeError, match=r"add: takes 2 input\(s\) and at most 1 output"):
        knp.add(x, x, x, x)
    with pytest.raises(TypeError, match="add: cannot specify 'out' as both"):
        knp.add(x, x, knp.zeros(3), out=knp.zeros(3))
    with pytest.raises(TypeError, match="sin: out= cannot be written inside vmap"):
        kenaz.vmap(lambda v: knp.sin(v, knp.zeros(())))(x)
