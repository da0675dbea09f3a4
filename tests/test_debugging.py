"""debug(f): every op printed, with shapes and dtypes, forward pass then backward pass."""

from __future__ import annotations

import io

import numpy as np

import kenaz.numpy as knp
from kenaz import debug, grad, jvp
from kenaz.effects import current_handlers


def _lines(f, *args, **options) -> list[str]:
    buffer = io.StringIO()
    debug(f, file=buffer, **options)(*args)
    return buffer.getvalue().splitlines()


def _index(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_plain_function_prints_each_op_with_shapes_and_dtypes():
    lines = _lines(lambda x: knp.sin(x) * 2.0, knp.ones((2, 3), dtype=np.float32))
    assert lines[0] == "sin(float32[2,3]) -> float32[2,3]"
    assert lines[1].startswith("mul(float32[2,3], float) -> float32[2,3]")
    assert len(lines) == 2


def test_debug_of_grad_shows_the_forward_pass_then_the_backward_pass():
    lines = _lines(grad(lambda x: knp.sum(knp.sin(x) * x)), np.ones(3))
    forward_sin = _index(lines, "sin(float64[3])")
    backward_header = _index(lines, "backward")
    backward_sin = _index(lines, "dsin(float64[3], float64[3])")  # g * cos(x), one op
    assert forward_sin < _index(lines, "sum(float64[3]") < backward_header < backward_sin
    # The forward ops are indented under their transformation.
    assert lines[forward_sin].startswith("  ")


def test_nested_transformations_indent_deeper():
    lines = _lines(grad(grad(knp.sin)), 0.5)
    depths = {len(line) - len(line.lstrip()) for line in lines}
    assert len(depths) >= 3
    assert any("backward" in line for line in lines)


def test_debug_inside_jvp_sees_the_tangent_arithmetic():
    buffer = io.StringIO()
    jvp(debug(knp.exp, file=buffer), (1.0,), (1.0,))
    assert buffer.getvalue().splitlines() == ["exp(float64[]) -> float64[]"]
    buffer = io.StringIO()
    debug(lambda x: jvp(knp.exp, (x,), (1.0,)), file=buffer)(1.0)
    names = [line.split("(")[0].strip() for line in buffer.getvalue().splitlines()]
    assert "exp" in names and "mul" in names  # the primal and the tangent rule


def test_ops_filter_and_values_summary():
    lines = _lines(
        lambda x: knp.sum(knp.tanh(x) * x), knp.array([1.0, -2.0]), ops={"tanh"}, values=True
    )
    assert len(lines) == 1
    assert lines[0].startswith("tanh(float64[2]) -> float64[2]")
    assert "min=" in lines[0] and "max=" in lines[0]


def test_debug_returns_the_result_and_uninstalls_itself():
    out = debug(lambda x: x + 1, file=io.StringIO())(np.ones(2))
    np.testing.assert_array_equal(out, [2.0, 2.0])
    assert current_handlers() == ()
