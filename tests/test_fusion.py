"""Fusion (kenaz.compiler.fusion, the extra kenaz[jit]): runs of elementwise ops compiled into
one numba loop each give NumPy's numbers (to the last bit for arithmetic, to a tested bound
for the transcendental functions), on every shape and dtype they accept; tiering switches
only when the fused code is faster; without numba jit keeps its NumPy code."""

from __future__ import annotations

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz.compiler import fusion, tiers

pytest.importorskip("numba")

ULP_BOUND = 4  # units in the last place per transcendental op, numba's libm against NumPy's


def fused_and_plain(f, *args):
    fused = kenaz.jit(f, fuse=True)
    plain = kenaz.jit(f, fuse=False)
    return (
        fused,
        [np.asarray(r) for r in kenaz.tree.leaves(fused(*args))],
        [np.asarray(r) for r in kenaz.tree.leaves(plain(*args))],
    )


def runs_of(fused, *args) -> int:
    return getattr(fused._entry(args, {}).staged.compile(), "fused_runs", 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (3, 5)])  # (1-D: the other tests)
def test_arithmetic_runs_agree_to_the_last_bit(dtype, shape) -> None:
    rng = np.random.default_rng(0)
    x = knp.asarray(rng.normal(size=shape).astype(dtype))
    y = knp.asarray(rng.uniform(1, 2, size=shape).astype(dtype))
    s = knp.asarray(np.asarray(1.5, dtype=dtype))  # a 0-d operand broadcast in the loop

    def f(x, y, s, c):
        z = (x * y + 0.25) / y - x * s
        w = -z * z + c * y  # c: a Python float argument (weak: takes the arrays' dtype)
        return w**2 - y**-1.0 + (z * z) ** 0.5, z  # z: read outside the run, an output too

    fused, got, expected = fused_and_plain(f, x, y, s, 0.3)
    assert runs_of(fused, x, y, s, 0.3) >= 1
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # bitwise (NaN where both are NaN)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transcendental_runs_agree_within_a_few_ulps(dtype) -> None:
    rng = np.random.default_rng(1)
    x = knp.asarray(rng.uniform(0.1, 2.0, size=64).astype(dtype))

    def f(x):
        return knp.tanh(knp.sin(x) * knp.exp(-x)) + knp.log(x) * knp.sqrt(x) - knp.cos(x)

    fused, (got,), (expected,) = fused_and_plain(f, x)
    assert runs_of(fused, x) == 1
    # Each of the 7 transcendental ops may differ by ULP_BOUND units of its own result (all
    # of them at most 2 in magnitude here); the sum can cancel, so the bound is absolute.
    atol = ULP_BOUND * 7 * float(np.spacing(dtype(2.0)))
    np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


def test_a_gradient_chain_fuses_into_one_loop_and_matches() -> None:
    def chain(x):
        for _ in range(30):
            x = knp.sin(x) * 1.01 + 0.1
        return knp.tanh(x)

    x = knp.asarray(np.linspace(-1, 1, 16))
    gradient = kenaz.grad(lambda x: knp.sum(chain(x)))
    fused, (got,), (expected,) = fused_and_plain(gradient, x)
    program = fused._entry((x,), {}).staged.compile().program
    unfused = fused.program(x)
    assert all(eq.op.name.startswith("fused") for eq in program.equations[1:])
    # forward and backward in loops of up to MAX_OPS ops each
    assert len(program.equations) <= len(unfused.equations) // fusion.MAX_OPS + 3
    np.testing.assert_allclose(got, expected, rtol=ULP_BOUND * 60 * np.finfo(float).eps)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_slope_ops_fused_formula_is_its_one_formula(dtype) -> None:
    # The slope ops' g * f'(r) is written once (kenaz.ops.elementwise); fusion spells it by
    # calling that formula on symbols. The spelled text, run per element as the fused loop
    # runs it, gives the op's NumPy result (same operations, same order: to the last bit but
    # for NumPy's SIMD cos/sin on arrays); the gradient-chain test above compiles such loops.
    from kenaz.compiler.slope_formulas import slope_formula
    from kenaz.ops.elementwise import slope_ops

    rng = np.random.default_rng(3)
    g = rng.normal(size=5).astype(dtype)
    r = rng.uniform(0.2, 0.9, size=5).astype(dtype)
    for name, slope in slope_ops.items():
        formula = slope_formula(slope.impl)
        assert formula is not None, name
        text = formula.format("g", "r").replace("C(", f"np.{np.dtype(dtype).name}(")
        per_element = [eval(text, {"np": np, "g": a, "r": b}) for a, b in zip(g, r)]  # noqa: S307
        expected = slope(g, r).numpy()
        assert expected.dtype == dtype and all(type(v) is dtype for v in per_element), name
        rtol = ULP_BOUND * np.finfo(dtype).eps
        np.testing.assert_allclose(np.array(per_element), expected, rtol=rtol, err_msg=name)


def test_values_passed_between_runs_agree_to_the_last_bit() -> None:
    # Runs cut by an unfused op (maximum): values later runs read live in workspace rows,
    # reused once dead; values maximum or the outputs read escape into arrays of their own.
    def f(x, y):
        h, kept = x, []
        for k in range(6):
            h = h * 1.5 - 0.25 * h * y
            kept.append(h)
            if k % 2:
                h = knp.maximum(h, 0.1)
        total = kept[0]
        for v in kept[1:]:
            total = total * 0.5 + v * v  # reads values computed several runs before
        return total, h

    rng = np.random.default_rng(3)
    x = knp.asarray(rng.normal(size=(5, 3)).T)  # not contiguous: the kernel copies it
    y = knp.asarray(rng.normal(size=(3, 5)))
    fused, got, expected = fused_and_plain(f, x, y)
    program = fused._entry((x, y), {}).staged.compile().program
    workspaces = {v.shape for eq in program.equations for v in eq.outputs if len(v.shape) == 2}
    assert any(shape[1] == 15 for shape in workspaces)  # rows of 15 elements were used
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_broadcast_operands_agree_to_the_last_bit() -> None:
    # t, computed by a run of shape (5,), is read by a run of shape (3, 5) that broadcasts
    # it; alone, an outer product (3, 1) x (1, 5) is fused too, because it broadcasts.
    def f(x, m):
        t = x * 2.0 + 1.0
        return (m * t - t) * 0.5

    def outer(column, x):
        return knp.maximum(column * x[None, :], 0.0)  # (maximum: not fused)

    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32):
        x = knp.asarray(rng.normal(size=5).astype(dtype))
        m = knp.asarray(rng.normal(size=(3, 5)).astype(dtype))
        column = knp.asarray(rng.normal(size=(3, 1)).astype(dtype))
        for function, args in ((f, (x, m)), (outer, (column, x))):
            fused, got, expected = fused_and_plain(function, *args)
            assert runs_of(fused, *args) == (2 if function is f else 1)
            for a, b in zip(got, expected, strict=True):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_fused_into_their_run_stay_within_the_reordering_bound(dtype) -> None:
    # A sum of a run's value accumulates in the run's loop, in loop order. Over axis 0
    # NumPy adds row after row too: the same operations, bitwise equal. Over the last
    # axis or all of them NumPy sums pairwise; two orders of n additions differ by at most
    # n * eps * sum(|terms|) (each has error at most (n - 1) * eps/2 * sum(|terms|)).
    def f(x, y):
        terms = x * y - 0.5 * x
        return (
            knp.sum(terms, axis=0),
            knp.sum(terms * 2.0 + y, axis=1, keepdims=True),
            knp.sum(x * x + y),
            terms,
        )

    rng = np.random.default_rng(5)
    x = knp.asarray(rng.normal(size=(40, 300)).astype(dtype))
    y = knp.asarray(rng.normal(size=(40, 300)).astype(dtype))
    fused, got, expected = fused_and_plain(f, x, y)
    program = fused._entry((x, y), {}).staged.compile().program
    names = [eq.op.name for eq in program.equations]
    assert len(names) == 3 and all(name.startswith("fused") for name in names)  # no sum left
    np.testing.assert_array_equal(got[0], expected[0])  # axis 0: the same order
    np.testing.assert_array_equal(got[3], expected[3])
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    eps = float(np.finfo(dtype).eps)
    for k, (magnitude, n) in {
        1: (np.abs(2 * (xs * ys - 0.5 * xs) + ys).sum(axis=1, keepdims=True), 300),
        2: (np.abs(xs * xs + ys).sum(), 40 * 300),
    }.items():
        assert got[k].shape == expected[k].shape and got[k].dtype == expected[k].dtype
        difference = np.abs(got[k].astype(np.float64) - expected[k].astype(np.float64))
        assert np.all(difference <= n * eps * magnitude)
        assert np.all(difference <= 64 * eps * magnitude)  # far inside it in practice


def test_a_scalar_program_is_one_kernel() -> None:
    def f(a, b):
        for _ in range(6):  # 24 ops on 0-d values, then their gradient: one run
            a = knp.sin(a) * b + knp.cos(a)
        return a

    a, b = knp.asarray(np.asarray(0.3)), knp.asarray(np.asarray(0.9))
    gradient = kenaz.grad(f, argnums=(0, 1))
    fused, got, expected = fused_and_plain(gradient, a, b)
    assert runs_of(fused, a, b) == 1
    for x, y in zip(got, expected, strict=True):
        assert type(x) is type(y) and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=ULP_BOUND * 200 * np.finfo(float).eps)


def test_scalar_runs_return_numpy_scalars_of_their_dtype() -> None:
    def f(a, b):
        for _ in range(5):
            a = knp.sin(a) * b + 0.5
        return a, a * 2.0

    a = knp.asarray(np.float32(0.3))
    b = knp.asarray(np.float32(1.2))
    fused, got, expected = fused_and_plain(f, a, b)
    assert runs_of(fused, a, b) == 1
    for x, y in zip(got, expected, strict=True):
        assert x.dtype == np.float32 and x.shape == ()
        np.testing.assert_allclose(x, y, rtol=ULP_BOUND * 5 * np.finfo(np.float32).eps)


def test_what_is_not_fused_runs_as_before() -> None:
    def f(x, w):
        h = knp.tanh(x @ w + 1.0)  # matmul: not elementwise; the bias add broadcasts
        return knp.sum(h * h, axis=0), knp.maximum(h, 0.0)  # maximum: not fused

    rng = np.random.default_rng(2)
    x, w = knp.asarray(rng.normal(size=(4, 3))), knp.asarray(rng.normal(size=(3, 3)))
    fused, got, expected = fused_and_plain(f, x, w)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    program = fused._entry((x, w), {}).staged.compile().program
    names = [eq.op.name for eq in program.equations]
    assert "matmul" in names and "maximum" in names
    assert "sum" not in names  # accumulated in the loop of h * h


def test_tiering_switches_at_the_hot_call_only_when_it_pays(monkeypatch) -> None:
    def chain(x):
        for _ in range(20):
            x = knp.sin(x) * 1.01 + 0.1
        return x

    x = knp.asarray(np.linspace(0, 1, 8))
    jitted = kenaz.jit(chain)
    staged = None
    for call in range(1, tiers.HOT + 2):
        jitted(x)
        staged = jitted._entry((x,), {}).staged
        # Every call runs the staged program (the first after tracing, the second after
        # the purity check): interpreted until its WARM-th call, generated code until its
        # HOT-th.
        assert (staged.generated is not None) == (call >= tiers.WARM)
        if call < tiers.HOT:
            assert getattr(staged.compiled, "fused_runs", None) is None
    assert getattr(staged.compiled, "fused_runs", 0) >= 1  # 60 small ops: fusion pays

    # When the fused code is slower, the NumPy code stays.
    slower = lambda code, values: 1.0 if hasattr(code, "fused_runs") else 0.5  # noqa: E731
    monkeypatch.setattr(tiers, "_elapsed", slower)
    slow = kenaz.jit(chain)
    for _ in range(tiers.HOT + 1):
        slow(x)
    staged = slow._entry((x,), {}).staged
    assert staged.compiled is staged.generated  # the generated NumPy code stays


def test_without_numba_jit_keeps_its_numpy_code(monkeypatch) -> None:
    monkeypatch.setattr(fusion, "available", lambda: False)

    def chain(x):
        return knp.sin(x) * 2.0 + 1.0

    x = knp.ones(4)
    jitted = kenaz.jit(chain, fuse=True)
    for _ in range(tiers.HOT + 1):
        np.testing.assert_array_equal(jitted(x).numpy(), np.sin(np.ones(4)) * 2.0 + 1.0)
    assert "fused" not in jitted.source(x)


def test_kernels_are_cached_on_disk(monkeypatch, tmp_path) -> None:
    # Written once under a name hashed from their source, then numba stores their machine
    # code beside them: a later process loads it instead of compiling again.
    monkeypatch.setattr(fusion, "_DIRECTORY", [str(tmp_path)])

    def f(x):
        return (x * 1.2345 + 0.987) * x  # constants no other test uses: a new kernel

    x = knp.asarray(np.linspace(0, 1, 5))
    fused, (got,), (expected,) = fused_and_plain(f, x)
    np.testing.assert_array_equal(got, expected)
    (source,) = tmp_path.glob("kernel_*.py")
    assert "1.2345" in source.read_text()
    assert list((tmp_path / "__pycache__").glob(source.stem + ".kernel-*.nbi"))


def test_products_by_a_diagonal_become_scalings() -> None:
    # jacrev pulls back the identity's rows at once: dtanh(I, t) @ W and mul(I, s) @ W are
    # products by diagonal matrices, computed as t's slope (or s) times W's rows instead.
    # Each entry is the same product, rounded once: equal where everything is finite.
    dtype = np.float64  # (the rewrite does not look at the dtype, beyond requiring one)
    rng = np.random.default_rng(6)
    w1 = knp.asarray((rng.normal(size=(6, 6)) / 3).astype(dtype))
    w2 = knp.asarray((rng.normal(size=(6, 4)) / 3).astype(dtype))

    def f(x):
        return knp.tanh(w2.T @ knp.tanh(w1 @ x))  # (W7's function)

    x = knp.asarray(rng.normal(size=6).astype(dtype))
    jacobian = kenaz.jacrev(f)
    fused, (got,), (expected,) = fused_and_plain(jacobian, x)
    program = fused._entry((x,), {}).staged.compile().program
    unfused = fused.program(x)
    products = lambda p: sum(eq.op.name == "matmul" for eq in p.equations)  # noqa: E731
    assert products(program) < products(unfused)
    np.testing.assert_allclose(got, expected, rtol=0, atol=4 * float(np.finfo(dtype).eps))

    # A matrix product by something else than the identity stays one.
    def g(x):
        return (w1 * x) @ w2  # not an identity: broadcast rows, not a diagonal

    fused, (got,), (expected,) = fused_and_plain(g, x)
    np.testing.assert_array_equal(got, expected)
    program = fused._entry((x,), {}).staged.compile().program
    assert "matmul" in [eq.op.name for eq in program.equations]
