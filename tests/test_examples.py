"""The examples run and reach their targets (shortened where a full run takes seconds)."""

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name):
    sys.path.insert(0, str(EXAMPLES))  # examples import each other (tour imports digits_mlp)
    try:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


def test_digits_mlp_reaches_97_percent():
    pytest.importorskip("sklearn")
    example = load_example("digits_mlp")
    _, history, test_accuracy = example.train_digits_mlp(progress=False, plot_path=None)
    assert test_accuracy >= 0.97
    assert history["loss"][-1] < 0.1


def test_digits_cnn_learns():
    pytest.importorskip("sklearn")
    example = load_example("digits_cnn")
    _, _, test_accuracy = example.train_digits_cnn(epochs=2, progress=False)
    assert test_accuracy > 0.85


def test_dp_sgd_per_example_gradients_match_a_loop():
    pytest.importorskip("sklearn")
    example = load_example("dp_sgd")
    from kenaz import data

    (x, y), _ = data.load_digits()
    params = example.MODEL.init(0)
    assert example.check_per_example_gradients(params, x[:4], y[:4]) < 1e-12
    assert example.train(private=True, epochs=3) > 0.7


def test_newton_converges_quadratically_on_rosenbrock():
    example = load_example("newton")
    import kenaz.numpy as knp

    x, steps = example.newton_minimize(example.rosenbrock, knp.array([-1.2, 1.0]), verbose=False)
    assert steps < 30
    assert abs(float(x[0]) - 1) < 1e-8 and abs(float(x[1]) - 1) < 1e-8


def test_projectile_jvp_matches_finite_differences_and_aims():
    example = load_example("projectile_ode")
    import kenaz
    import kenaz.numpy as knp

    angle = knp.asarray(0.5)
    _, slope = kenaz.jvp(example.landing_distance, (angle,), (knp.asarray(1.0),))
    h = 1e-5
    central = (
        float(example.landing_distance(angle + h)) - float(example.landing_distance(angle - h))
    ) / (2 * h)
    assert float(slope) == pytest.approx(central, rel=1e-6)
    best = example.aim(60.0)
    assert float(example.landing_distance(knp.asarray(best))) == pytest.approx(60.0, abs=1e-6)
