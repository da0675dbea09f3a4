"""debug's options: value summaries (with NaN and inf counts) and op filters."""

from __future__ import annotations

import gc
import io

import numpy as np

import kenaz
import kenaz.numpy as knp


def run_debug(f, *args, **options) -> list[str]:
    out = io.StringIO()
    with np.errstate(all="ignore"):
        kenaz.debug(f, file=out, **options)(*args)
    return out.getvalue().splitlines()


def test_values_show_min_max_mean_nan_and_inf():
    lines = run_debug(lambda x: knp.log(x) * x, knp.array([0.0, 1.0, 2.0]), values=True)
    log_line, mul_line = lines
    assert log_line.startswith("log(") and "min=0 max=0.6931 mean=0.3466 inf=1" in log_line
    assert "nan=1" in mul_line
    all_nan = run_debug(lambda x: x * np.nan, knp.ones(2), values=True)
    assert all_nan[0].endswith("(nan=2)")


def test_values_of_integers_and_inside_vmap():
    lines = run_debug(lambda x: x + 1, knp.array([1, 2, 3]), values=True)
    assert "min=2 max=4 mean=3" in lines[0]
    lines = run_debug(kenaz.vmap(lambda x: knp.sum(x)), knp.ones((2, 3)), values=True)
    assert any("sum(" in line and "min=3 max=3" in line for line in lines)


def test_op_filter_by_names_and_by_predicate():
    f = kenaz.grad(lambda x: knp.sum(knp.sin(x) * x))
    by_name = run_debug(f, knp.ones(2), ops={"sin", "dsin"})
    ops = [line.strip().split("(")[0] for line in by_name if not line.strip().startswith("[")]
    assert ops == ["sin", "dsin"]  # the backward pass of sin is one op: dsin(g, x) = g * cos(x)
    headers = [line.strip() for line in by_name if line.strip().startswith("[")]
    assert headers == ["[grad]", "[vjp]", "[vjp: backward]"]
    by_predicate = run_debug(f, knp.ones(2), ops=lambda op: op.name == "mul")
    everything = run_debug(f, knp.ones(2))
    muls = [line for line in everything if line.strip().startswith("mul(")]
    assert [line for line in by_predicate if not line.strip().startswith("[")] == muls
    assert len(muls) >= 2  # the forward product and its backward


def test_debug_composes_with_custom_calls_and_checkpoint():
    layer = kenaz.checkpoint(lambda x: knp.tanh(x) * 2)
    lines = run_debug(kenaz.grad(lambda x: knp.sum(layer(x))), knp.ones(3))
    # the forward pass runs tanh once, the backward pass recomputes it
    assert sum(line.strip().startswith("tanh(") for line in lines) == 2


def test_phases_are_noted_only_while_a_debug_handler_lives():
    """Without a handler that shows them the phases are not noted (they cost every
    transformation); a debug handler made inside a transformation sees the ones after it."""
    seen = []

    def f(x):
        seen.append(kenaz.effects.current_scopes())
        return knp.sum(x * x)

    gc.collect()  # no debug handler of an earlier test lingers in a cycle
    kenaz.grad(f)(knp.ones(2))
    assert seen[-1] == ()
    lines = run_debug(kenaz.grad(f), knp.ones(2))
    assert seen[-1] == ("grad", "vjp")
    assert [line.strip() for line in lines if line.strip().startswith("[")][:2] == [
        "[grad]",
        "[vjp]",
    ]
    inner = run_debug(lambda x: kenaz.grad(kenaz.debug(f, file=io.StringIO()))(x), knp.ones(2))
    assert [line.strip() for line in inner if line.strip().startswith("[")] == [
        "[grad]", "[vjp]", "[vjp: backward]"
    ]  # fmt: skip
