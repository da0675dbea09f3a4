"""kenaz.graph: nodes, edges and phases of one call; DOT text; rendering when Graphviz exists."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import custom_jvp, grad


def loss(w, x):
    return knp.sum(knp.tanh(x @ w) ** 2)


def test_forward_only_for_a_plain_function():
    g = kenaz.graph(lambda x: knp.sin(x) * x)(knp.ones(3))
    assert [n.label for n in g.ops()] == ["sin", "mul"]
    assert g.ops("backward") == []
    inputs = [n for n in g.nodes if n.kind == "input"]
    outputs = [n for n in g.nodes if n.kind == "output"]
    assert [n.label for n in inputs] == ["x"] and len(outputs) == 1
    (sin,), (mul,) = ([n for n in g.ops() if n.label == name] for name in ("sin", "mul"))
    into_mul = sorted(source for source, target, _ in g.edges if target == mul.id)
    assert into_mul == sorted([inputs[0].id, sin.id])
    np.testing.assert_allclose(g.result.numpy(), np.sin(1.0) * np.ones(3))


def test_grad_has_forward_and_backward_phases():
    w, x = knp.ones((3, 2)) * 0.1, knp.ones((4, 3))
    g = kenaz.graph(grad(loss))(w, x)
    forward = [n.label.split()[0] for n in g.ops("forward")]
    assert forward == ["matmul", "tanh", "square", "sum"]
    backward = [n.label.split()[0] for n in g.ops("backward")]
    assert "matmul" in backward and "transpose" in backward
    np.testing.assert_allclose(g.result.numpy(), grad(loss)(w, x).numpy())
    assert "backward ops" in repr(g)


def test_dot_text():
    dot = kenaz.graph(grad(loss), name="grad loss")(knp.ones((3, 2)), knp.ones((4, 3))).to_dot()
    assert dot.startswith('digraph "grad loss" {')
    assert "subgraph cluster_forward" in dot and "subgraph cluster_backward" in dot
    assert dot.rstrip().endswith("}")
    assert dot.count("->") >= 10


def test_records_are_removed_and_inputs_untouched():
    w, x = knp.ones((3, 2)), knp.ones((4, 3))
    constant = knp.array(2.0)
    g = kenaz.graph(lambda w: loss(w, x) * constant)(w)
    for t in (w, x, constant, g.result):
        assert not t._trace
    labels = {n.label for n in g.nodes if n.kind == "constant"}
    assert "constant" in labels and "2" in labels


def test_multiple_results_and_custom_calls():
    a = knp.array([[2.0, 1.0], [1.0, 3.0]])
    g = kenaz.graph(lambda a: knp.sum(knp.linalg.eigh(a)[1]))(a)
    assert any(label.startswith("[") for _, _, label in g.edges)

    @custom_jvp
    def f(x):
        return knp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), knp.cos(p[0]) * t[0]))
    plain = kenaz.graph(f)(1.0)
    assert [n.label for n in plain.ops()] == ["custom_jvp[f]"]
    differentiated = kenaz.graph(grad(f))(1.0)
    assert "cos" in [n.label for n in differentiated.ops("backward")]


def test_vmap_and_pytrees():
    g = kenaz.graph(kenaz.vmap(lambda p, x: p["w"] * x, in_axes=(None, 0)))(
        {"w": knp.array(2.0)}, knp.ones((5, 3))
    )
    assert [n.label for n in g.nodes if n.kind == "input"] == ["p", "x"]
    assert any(n.detail == "float64[5,3]" for n in g.ops())


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")
def test_render_svg_and_png(tmp_path):
    g = kenaz.graph(grad(loss))(knp.ones((3, 2)), knp.ones((4, 3)))
    assert b"<svg" in g.pipe("svg")
    path = g.render(tmp_path / "g.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in g._repr_svg_()


def test_rendering_without_graphviz_names_the_fix(monkeypatch):
    import sys

    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    g = kenaz.graph(knp.sin)(1.0)
    with pytest.raises(RuntimeError, match="dot"):
        g.pipe("svg")
    assert g._repr_svg_() is None


def test_a_raising_function_leaves_no_records():
    constant = knp.array(3.0)

    def broken(x):
        y = x * constant
        raise RuntimeError(f"boom {y.shape}")

    with pytest.raises(RuntimeError, match="boom"):
        kenaz.graph(broken)(1.0)
    assert not constant._trace
