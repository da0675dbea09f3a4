"""Complex numbers: elementwise rules under JAX's convention, holomorphic grad/jacfwd/jacrev."""

import numpy as np
import pytest
from _check import check, check_vmap

import kenaz
import kenaz.numpy as knp

rng = np.random.default_rng(3)
z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
w = rng.standard_normal(4) + 1j * rng.standard_normal(4)

UNARY = [
    "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sqrt", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "abs", "conj", "real", "imag",
    "square", "reciprocal", "negative", "log2", "log10", "exp2", "angle", "sum", "mean", "prod",
    "var", "std", "cumsum", "cumprod",
]  # fmt: skip
BINARY = ["add", "subtract", "multiply", "divide", "power", "dot", "vdot", "matmul", "inner"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    f = getattr(knp, name)
    check(name, f, z)
    check_vmap(name, f, np.stack([z, w]))


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    f = getattr(knp, name)
    check(name, f, z, w)
    check_vmap(name, f, np.stack([z, w]), np.stack([w, z]))


def test_mixed_real_and_complex_arguments():
    x = rng.standard_normal(4)
    check("multiply", knp.multiply, x, z)
    check("where", lambda a, b: knp.where(x > 0, a, b), z, w)
    check("astype", lambda a: knp.astype(a, np.complex128) * z, x)
    check("abs", lambda a: knp.abs(a * z), x)


def test_jax_convention_for_real_functions_of_complex_inputs():
    # grad of f(x + iy) is df/dx - i df/dy.
    np.testing.assert_allclose(complex(kenaz.grad(lambda v: knp.abs(v) ** 2)(3 + 4j)), 6 - 8j)
    assert complex(kenaz.grad(lambda v: knp.real(v))(3 + 4j)) == 1
    assert complex(kenaz.grad(lambda v: knp.imag(v))(3 + 4j)) == -1j
    np.testing.assert_allclose(complex(kenaz.grad(knp.abs)(3 + 4j)), (3 - 4j) / 5)
    np.testing.assert_allclose(complex(kenaz.grad(knp.angle)(1j)), -1)


def test_holomorphic_grad_and_jacobians():
    g = kenaz.grad(lambda v: knp.sin(v) * v, holomorphic=True)(1 + 1j)
    np.testing.assert_allclose(complex(g), np.cos(1 + 1j) * (1 + 1j) + np.sin(1 + 1j))
    expected = np.diag(3 * z**2)
    np.testing.assert_allclose(kenaz.jacfwd(lambda v: v**3, holomorphic=True)(z).numpy(), expected)
    np.testing.assert_allclose(kenaz.jacrev(lambda v: v**3, holomorphic=True)(z).numpy(), expected)
    hessian = kenaz.hessian(lambda v: (v**3).sum(), holomorphic=True)(z)
    np.testing.assert_allclose(hessian.numpy(), np.diag(6 * z))


def test_complex_dtype_errors():
    with pytest.raises(TypeError, match="holomorphic=True"):
        kenaz.grad(lambda v: v**2)(1 + 1j)
    with pytest.raises(TypeError, match="must be complex"):
        kenaz.grad(lambda v: v**2, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="holomorphic=True"):
        kenaz.jacfwd(knp.abs)(z)
    with pytest.raises(TypeError, match="holomorphic=True"):
        kenaz.jacrev(lambda v: v * 2)(z)


def test_complex64_stays_complex64():
    z64 = z.astype(np.complex64)
    g = kenaz.grad(lambda v: knp.sum(knp.abs(knp.exp(v)) ** 2))(z64)
    assert g.dtype == np.complex64
