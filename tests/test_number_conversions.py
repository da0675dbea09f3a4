"""Python and NumPy numbers of a tracked tensor (issue 22, item 3).

Under a differentiating transformation, turning a tensor it tracks into a number would
make it a constant (a silently zero derivative): it raises TrackedConversionError,
naming the conversion, the user's line and the fixes. int, bool, comparisons and
formatting stay allowed; outside transformations nothing changes.
"""

import math

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import TrackedConversionError

# Each conversion, as user code writes it, on a 0-d tensor.
NUMBERS = {
    "float": float,
    "complex": complex,
    "item": lambda t: t.item(),
    "tolist": lambda t: t.tolist(),
    "numpy.float64": np.float64,
    "math.exp": math.exp,
    "math.sqrt": math.sqrt,
    "math.isfinite": math.isfinite,
}
# What the error names for each (the conversion the user wrote, or the one it reached).
NAMED = {
    "float": "float(t)",
    "complex": "complex(t)",
    "item": "t.item()",
    "tolist": "t.tolist()",
    "numpy.float64": "numpy.float64(t)",
    "math.exp": "float(t)",
    "math.sqrt": "float(t)",
    "math.isfinite": "float(t)",
}


def _under(transform, f):
    if transform == "grad":
        return kenaz.grad(f)(1.5)
    if transform == "jvp":
        return kenaz.jvp(f, (1.5,), (1.0,))[1]
    if transform == "linearize":
        return kenaz.linearize(f, 1.5)[1](1.0)
    return kenaz.hessian(f)(1.5)


@pytest.mark.parametrize("transform", ["grad", "jvp", "linearize", "hessian"])
@pytest.mark.parametrize("name", list(NUMBERS))
def test_each_number_conversion_raises_under_differentiation(name, transform):
    convert = NUMBERS[name]

    def f(x):
        return x * convert(x)

    with pytest.raises(TrackedConversionError) as info:
        _under(transform, f)
    message = str(info.value)
    assert NAMED[name] in message
    assert f"{__file__}:" in message  # the user's file:line, not kenaz's
    assert "kenaz.stop_gradient" in message and "kenaz.numpy" in message


def test_the_error_names_the_users_line():
    def f(x):
        return math.exp(x) * x  # the line the error must name

    with pytest.raises(TrackedConversionError) as info:
        kenaz.grad(f)(0.7)
    line = f.__code__.co_firstlineno + 1
    assert f"{__file__}:{line}" in str(info.value)


def test_the_error_is_public_and_a_type_error():
    assert kenaz.errors.TrackedConversionError is TrackedConversionError
    assert issubclass(TrackedConversionError, TypeError)
    assert issubclass(TrackedConversionError, kenaz.errors.ConcretizationError)


@pytest.mark.parametrize("name", list(NUMBERS))
def test_number_conversions_pass_outside_and_after_stop_gradient(name):
    convert = NUMBERS[name]
    t = knp.array(1.5)
    expected = convert(np.float64(1.5))
    assert convert(t) == expected  # outside any transformation

    def stopped(x):
        return (
            x * convert(kenaz.stop_gradient(x)).real
            if name == "complex"
            else x * convert(kenaz.stop_gradient(x))
        )

    # d/dx [x * c] with c a constant is c: the derivative of the constant is not asked.
    assert float(kenaz.grad(stopped)(1.5)) == pytest.approx(float(np.real(expected)))
    assert float(kenaz.jvp(stopped, (1.5,), (1.0,))[1]) == pytest.approx(float(np.real(expected)))
    # A tensor made outside the transformation is a constant to it: converts freely.
    c = knp.array(1.5)
    assert float(kenaz.grad(lambda x: x * convert(c).real)(2.0)) == pytest.approx(
        float(np.real(expected))
    )


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_int_bool_comparisons_and_formatting_pass_inside(transform):
    seen = []

    def f(x):
        seen.append((int(x), bool(x > 1), x > 1.0, x == 1.5, f"{x:.3f}", f"{x}", repr(x), str(x)))
        return x * x if x > 0 else -x

    assert float(_under(transform, f)) == 3.0
    assert seen[0][0] == 1 and seen[0][1] is True and seen[0][4] == "1.500"
    assert "1.5" in seen[0][6] and seen[0][7] == "1.5"


def test_integer_indexing_passes_inside():
    def f(x):
        n = knp.sum(x > 0)  # an integer tensor, used as an index and a range
        return knp.sum(x[: int(n)]) * x[n - 1]

    g = kenaz.grad(f)(np.array([1.0, 2.0, -1.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 5.0, 0.0])


def test_arrays_of_the_transformation_convert_after_it_returns():
    x = knp.array([0.5, 1.5])
    out, pullback = kenaz.vjp(lambda v: v * 2, x)
    assert out.tolist() == [1.0, 3.0] and float(out[1]) == 3.0
