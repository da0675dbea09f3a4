"""The core of kenaz.numpy, function by function: values, derivatives (order 2), vmap.

The primitives' rules are checked one by one in tests/ops; here each public
function is checked as a user calls it, which is what docs/coverage.md reports.
"""

import numpy as np
import pytest
from _check import check, check_vmap, record

import kenaz
import kenaz.numpy as knp

rng = np.random.default_rng(6)
x = rng.uniform(-0.9, 0.9, (3, 4))
y = rng.uniform(-0.9, 0.9, (3, 4))
positive = rng.uniform(0.5, 2.0, (3, 4))
above_one = rng.uniform(1.2, 3.0, (3, 4))

UNARY = {
    "negative": x, "exp": x, "exp2": x, "expm1": x, "log": positive, "log2": positive,
    "log10": positive, "log1p": positive, "sqrt": positive, "cbrt": positive, "square": x,
    "reciprocal": positive, "sin": x, "cos": x, "tan": x, "arcsin": x, "arccos": x,
    "arctan": x, "sinh": x, "cosh": x, "tanh": x, "arcsinh": x, "arccosh": above_one,
    "arctanh": x, "deg2rad": x, "rad2deg": x, "degrees": x, "radians": x, "sinc": x,
    "abs": x + 0.1 * np.sign(x), "absolute": x + 0.1 * np.sign(x), "expit": x, "erf": x,
    "conj": x, "conjugate": x, "real": x, "imag": x, "angle": x, "asin": x, "acos": x,
    "atan": x, "asinh": x, "acosh": above_one, "atanh": x, "positive": x, "fabs": positive,
    "clip": x, "cumsum": x, "cumprod": x, "diff": x, "ravel": x, "transpose": x,
    "fliplr": x, "flipud": x, "flip": x, "squeeze": x[:1], "atleast_3d": x, "tril": x,
    "triu": x, "trace": x, "diagonal": x, "diag": x, "logsumexp": x, "sort": x,
    "around": x, "round": x, "sign": x, "floor": x, "ceil": x,
    "array": x, "asarray": x, "copy": x,
}  # fmt: skip

BINARY = {
    "add": (x, y), "subtract": (x, y), "multiply": (x, y), "divide": (x, positive),
    "true_divide": (x, positive), "power": (positive, y), "pow": (positive, y),
    "maximum": (x, y), "minimum": (x, y), "fmax": (x, y), "fmin": (x, y),
    "arctan2": (x, positive), "atan2": (x, positive), "hypot": (x, y), "logaddexp": (x, y),
    "logaddexp2": (x, y), "remainder": (x * 3, positive), "mod": (x * 3, positive),
    "where": (x, y), "dot": (x, y.T), "matmul": (x, y.T), "inner": (x, y), "outer": (x, y),
    "vdot": (x, y), "kron": (x[:2, :2], y[:2]), "tensordot": (x, y), "cross": (x[:, :3], y[:, :3]),
    "vecdot": (x, y), "float_power": (positive, y), "copysign": (x, y), "ldexp": (x, y),
}  # fmt: skip


def _unary_function(name):
    f = getattr(knp, name)
    if name == "clip":
        return lambda v: f(v, -0.5, 0.5)
    return f


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    f = _unary_function(name)
    value = UNARY[name]
    check(name, f, value)
    check_vmap(name, f, np.stack([value, value[::-1]]))


def _binary_function(name):
    f = getattr(knp, name)
    if name == "where":
        return lambda a, b: f(x > 0, a, b)
    if name == "ldexp":
        return lambda a, b: f(a, np.array([1, 0, 2, -1]))
    return f


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    f = _binary_function(name)
    a, b = BINARY[name]
    check(name, f, a, b)
    check_vmap(name, f, np.stack([a, a[::-1]]), np.stack([b, b[::-1]]))


REDUCTIONS = ["sum", "mean", "prod", "var", "std", "max", "min", "amax", "amin", "average",
              "ptp", "median", "logsumexp", "nansum", "nanmean", "nanmax", "nanmin", "nanvar",
              "nanstd", "nanprod"]  # fmt: skip


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True), ((0, 1), True)])
def test_reductions(name, axis, keepdims):
    f = getattr(knp, name)
    if name == "average":
        if keepdims:
            return
        call = lambda v: f(v, axis=axis)  # noqa: E731
    else:
        call = lambda v: f(v, axis=axis, keepdims=keepdims)  # noqa: E731
    if name != "logsumexp":
        options = {} if name == "average" else {"keepdims": keepdims}
        expected = getattr(np, name)(x, axis=axis, **options)
        np.testing.assert_allclose(call(x).numpy(), expected, rtol=1e-12)
    check(name, call, x)
    if axis == 1 or axis is None:
        check_vmap(name, call, np.stack([x, x[::-1]]))


SHAPES = {
    "reshape": lambda v: knp.reshape(v, (4, 3)),
    "expand_dims": lambda v: knp.expand_dims(v, 1),
    "moveaxis": lambda v: knp.moveaxis(v[None], 0, 2),
    "swapaxes": lambda v: knp.swapaxes(v, 0, 1),
    "permute_dims": lambda v: knp.permute_dims(v, (1, 0)),
    "matrix_transpose": lambda v: knp.matrix_transpose(v),
    "broadcast_to": lambda v: knp.broadcast_to(v, (2, 3, 4)),
    "concatenate": lambda v: knp.concatenate([v, 2 * v], axis=1),
    "concat": lambda v: knp.concat([v, 2 * v]),
    "stack": lambda v: knp.stack([v, 2 * v], axis=1),
    "hstack": lambda v: knp.hstack([v, v]),
    "vstack": lambda v: knp.vstack([v, v]),
    "row_stack": lambda v: knp.row_stack([v, v]),
    "dstack": lambda v: knp.dstack([v, v]),
    "column_stack": lambda v: knp.column_stack([v, v]),
    "split": lambda v: knp.split(v, 2, axis=1),
    "pad": lambda v: knp.pad(v, ((1, 0), (0, 2))),
    "repeat": lambda v: knp.repeat(v, 2, axis=0),
    "tile": lambda v: knp.tile(v, (2, 1)),
    "roll": lambda v: knp.roll(v, 1, axis=1),
    "take": lambda v: knp.take(v, [0, 2, 2], axis=1),
    "take_along_axis": lambda v: knp.take_along_axis(v, np.array([[0, 1], [2, 2], [3, 0]]), 1),
    "getitem": lambda v: knp.getitem(v, (slice(1, None), [0, 2])),
    "atleast_1d": lambda v: knp.atleast_1d(v[0, 0]),
    "atleast_2d": lambda v: knp.atleast_2d(v[0]),
    "scatter": lambda v: knp.scatter(v, (0, slice(None)), v[1]),
    "sum_to": lambda v: knp.sum_to(v, (1, 4)),
    "linspace": lambda v: knp.linspace(v[0, 0], v[0, 1], 5),
    "einsum": lambda v: knp.einsum("ij,kj->ik", v, v),
    "astype": lambda v: knp.astype(v, np.complex128) * (1 + 1j),
    "clip": lambda v: knp.clip(v, -0.5, 0.5),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_and_indexing(name):
    f = SHAPES[name]
    check(name, f, x)
    check_vmap(name, f, np.stack([x, x[::-1]]))


@pytest.mark.parametrize(
    "name",
    ["isnan", "isinf", "isfinite", "equal", "not_equal", "less", "less_equal", "greater",
     "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "argmax",
     "argmin", "argsort", "nonzero", "count_nonzero", "all", "any", "isclose", "allclose",
     "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "shape", "ndim",
     "size", "result_type", "zeros_like", "ones_like", "full_like"],
)  # fmt: skip
def test_constant_valued(name):
    f = getattr(knp, name)
    unary_ok = name in ("isnan", "isinf", "isfinite", "logical_not", "argmax", "argmin",
                        "argsort", "nonzero", "count_nonzero", "all", "any", "invert", "shape",
                        "ndim", "size", "result_type", "zeros_like", "ones_like")  # fmt: skip
    integers = (np.arange(4), np.arange(4)[::-1])
    args = (x,) if unary_ok else (x, y)
    if name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        args = integers
    if name == "invert":
        args = integers[:1]
    if name == "full_like":
        args = (x, 2.0)
    expected = getattr(np, name)(*args)
    ours = f(*args)
    ours = ours if isinstance(ours, tuple) else (ours,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for got, want in zip(ours, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    record(name, "values")


def test_stop_gradient_blocks_derivatives():
    import kenaz

    g = kenaz.grad(lambda v: (knp.stop_gradient(v) * v).sum())(x)
    np.testing.assert_allclose(g.numpy(), x)
    record("stop_gradient", "values")


def test_sort_and_argsort_options():
    v = np.array([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(knp.sort(v, descending=True).numpy(), [3, 3, 2, 1])
    np.testing.assert_array_equal(knp.argsort(v, descending=True).numpy(), [0, 2, 3, 1])
    np.testing.assert_array_equal(knp.argsort(x, axis=None).numpy(), np.argsort(x, axis=None))
    # NumPy's sort on a tracked Tensor runs kenaz's (an untracked one runs NumPy's own).
    sorted_tracked = kenaz.vjp(lambda m: np.sort(m, kind="quicksort"), x)[0]
    np.testing.assert_array_equal(sorted_tracked.numpy(), np.sort(x))
    check("sort", lambda m: knp.sort(m, axis=0, descending=True), x)
    check_vmap("argsort", lambda m: knp.argsort(m, axis=0), np.stack([x, x[::-1]]))


# -- complex inputs, wherever NumPy defines the function for them ----------------------------
z = x + 1j * y
w = y - 0.5j * x
COMPLEX_UNARY = ["negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
                 "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
                 "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "abs", "conj", "real",
                 "imag", "angle", "cumsum", "cumprod", "diff", "ravel", "transpose", "flip",
                 "tril", "triu", "trace", "diagonal", "diag", "positive", "array", "copy",
                 "fliplr", "flipud", "atleast_3d", "asin", "acos", "atan", "asinh", "acosh",
                 "atanh", "sinc"]  # fmt: skip
COMPLEX_BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "power", "pow", "where",
                  "dot", "matmul", "inner", "outer", "vdot", "kron", "tensordot", "cross",
                  "vecdot", "float_power"]  # fmt: skip
COMPLEX_REDUCTIONS = ["sum", "mean", "prod", "var", "std", "average", "nansum", "nanmean",
                      "nanprod", "nanvar", "nanstd"]  # fmt: skip


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary(name):
    f = _unary_function(name)
    check(name, f, z)
    check_vmap(name, f, np.stack([z, w]))


@pytest.mark.parametrize("name", COMPLEX_BINARY)
def test_complex_binary(name):
    f = _binary_function(name)
    a, b = BINARY[name]
    a, b = a + 0.3j * a[::-1], b - 0.2j * b[::-1]
    if name in ("power", "pow", "float_power"):
        a = positive + 0.3j * y
    check(name, f, a, b)
    check_vmap(name, f, np.stack([a, a[::-1]]), np.stack([b, b[::-1]]))


@pytest.mark.parametrize("name", COMPLEX_REDUCTIONS)
def test_complex_reductions(name):
    f = getattr(knp, name)
    for axis in (None, 1):
        np.testing.assert_allclose(f(z, axis=axis).numpy(), getattr(np, name)(z, axis=axis))
        check(name, lambda v, axis=axis: f(v, axis=axis), z)
    check_vmap(name, lambda v: f(v, axis=0), np.stack([z, w]))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_complex_shape_and_indexing(name):
    if name in ("clip", "linspace"):
        return  # clip orders values; linspace here takes real endpoints
    check(name, SHAPES[name], z, order=1)
