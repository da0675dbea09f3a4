"""Small right-hand sides compiled entry by entry (kenaz.scipy.integrate._scalar): the same
values as NumPy's code, NumPy's semantics where Python's math raises, and no compilation of
programs that are not float64 arithmetic and data movement."""

from __future__ import annotations

import numpy as np

import kenaz.numpy as knp
from kenaz.compiler import program as program_module
from kenaz.compiler.passes import optimize
from kenaz.compiler.staged import Staged
from kenaz.scipy.integrate._scalar import scalar_code


def compiled_both(fn, *example):
    program = optimize(program_module.trace(fn, example, {}, None, "f"))
    numpy_code = Staged(program, fuse=False).compile()
    return scalar_code(program, numpy_code), numpy_code


def network(y, s, w1, b1, w2):
    hidden = knp.tanh(w1 @ y + b1 * knp.sin(s))
    return knp.concatenate([w2 @ hidden, knp.exp(-y[:1]) / (1.0 + y[1:] ** 2)])


def test_values_are_numpys_code():
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(2), np.float64(0.3), rng.standard_normal((5, 2)),
            rng.standard_normal(5), rng.standard_normal((1, 5)))  # fmt: skip
    scalar, numpy_code = compiled_both(network, *args)
    assert scalar is not None and "tanh(" in scalar.source
    for _ in range(3):
        args = (rng.standard_normal(2), *args[1:])
        np.testing.assert_allclose(scalar(*args)[0], numpy_code(*args)[0], rtol=1e-14)


def test_where_python_raises_numpys_code_runs():
    scalar, _ = compiled_both(lambda y: knp.stack([1.0 / y[0], knp.log(y[1])]), np.ones(2))
    with np.errstate(divide="ignore"):
        out = scalar(np.array([0.0, 0.0]))[0]
    assert out[0] == np.inf and out[1] == -np.inf
    top, _ = compiled_both(lambda y: knp.maximum(y, 0.5), np.ones(2))
    out = top(np.array([np.nan, 0.1]))[0]
    assert np.isnan(out[0]) and out[1] == 0.5


def test_comparisons_and_integers_are_not_compiled_here():
    scalar, _ = compiled_both(lambda y: knp.where(y > 0, y, -y), np.ones(3))
    assert scalar is None
    counted, _ = compiled_both(lambda y: y * knp.argmax(y), np.ones(3))
    assert counted is None
