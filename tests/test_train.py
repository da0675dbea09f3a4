"""fit: training, history, evaluation, state, progress bar; plot_history."""

import sys

import numpy as np
import pytest

import kenaz.numpy as knp
from kenaz import nn, optim, train

X = np.linspace(-1, 1, 40)
Y = 2 * X - 1


def line_loss(params, x, y):
    return nn.mse(params["a"] * x + params["b"], y)


def test_fit_learns_a_line_and_records_history():
    result = train.fit(
        line_loss,
        {"a": 0.0, "b": 0.0},
        optim.sgd(0.3, momentum=0.5),
        (X, Y),
        epochs=30,
        batch_size=8,
        evaluate=lambda p: {"error": abs(float(p["a"]) - 2)},
        progress=False,
    )
    assert float(result.params["a"]) == pytest.approx(2, abs=1e-3)
    assert float(result.params["b"]) == pytest.approx(-1, abs=1e-3)
    history = result.history
    assert len(history["loss"]) == len(history["error"]) == len(history["epoch_time"]) == 30
    assert len(history["step_loss"]) == 30 * 5
    assert history["loss"][-1] < history["loss"][0]
    assert result.state is None and result.opt_state is not None


def test_fit_is_reproducible_and_resumable():
    def run(**kwargs):
        return train.fit(
            line_loss,
            {"a": 0.0, "b": 0.0},
            optim.adam(0.05),
            (X, Y),
            batch_size=8,
            progress=False,
            **kwargs,
        )

    first, second = run(epochs=2, seed=4), run(epochs=2, seed=4)
    assert first.history["step_loss"] == second.history["step_loss"]
    resumed = train.fit(
        line_loss,
        first.params,
        optim.adam(0.05),
        (X, Y),
        epochs=1,
        batch_size=8,
        opt_state=first.opt_state,
        progress=False,
    )
    assert resumed.opt_state[0].count == 15


def test_fit_threads_model_state_through_batch_norm():
    layer, head = nn.BatchNorm(1), nn.Linear(1, 1)
    params = {"bn": layer.init(0), "head": head.init(0)}

    def loss(params, state, x, y):
        h, state = layer(params["bn"], state, x[:, None], training=True)
        return nn.mse(head(params["head"], h)[:, 0], y), state

    result = train.fit(
        loss,
        params,
        optim.adam(0.05),
        (X * 5 + 3, Y),
        epochs=3,
        batch_size=10,
        state=layer.init_state(),
        progress=False,
        evaluate=lambda p, s: {"running_mean": float(s["mean"][0])},
    )
    assert float(result.state["mean"][0]) > 1.0  # moving towards the data mean, 3
    assert len(result.history["running_mean"]) == 3


def test_progress_bar_and_fallbacks(capsys, monkeypatch):
    pytest.importorskip("tqdm")
    train.fit(
        line_loss,
        {"a": 0.0, "b": 0.0},
        optim.sgd(0.1),
        (X, Y),
        epochs=2,
        batch_size=20,
        progress=True,
        description="line",
    )
    captured = capsys.readouterr()
    assert "line" in captured.err and "loss=" in captured.err

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match=r"kenaz\[progress\]"):
        train.fit(line_loss, {"a": 0.0, "b": 0.0}, optim.sgd(0.1), (X, Y), progress=True)
    train.fit(line_loss, {"a": 0.0, "b": 0.0}, optim.sgd(0.1), (X, Y), epochs=2, batch_size=20)
    assert "epoch 2/2  loss" in capsys.readouterr().out  # no tqdm: one line per epoch


def test_fit_rejects_an_empty_epoch():
    with pytest.raises(ValueError, match="no batches"):
        train.fit(
            line_loss,
            {"a": 0.0, "b": 0.0},
            optim.sgd(0.1),
            (X, Y),
            batch_size=64,
            drop_last=True,
            progress=False,
        )


def test_plot_history_writes_a_png(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    history = {
        "loss": [1.0, 0.5, 0.2],
        "test_loss": [1.1, 0.7, 0.4],
        "test_accuracy": [0.5, 0.8, 0.9],
        "step_loss": [1.2, 0.9, 0.6, 0.5, 0.3, 0.2],
        "epoch_time": [0.1, 0.1, 0.1],
    }
    path = train.plot_history(history, tmp_path / "plots" / "curves.png", title="test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"kenaz\[plot\]"):
        train.plot_history(history, tmp_path / "again.png")
    assert knp is not None


def test_fit_passes_a_fresh_reproducible_key_for_dropout():
    seen = []

    def loss(params, x, y, key):
        seen.append(key.random())
        hidden = nn.dropout(params["a"] * x, 0.2, key=key)
        return nn.mse(hidden + params["b"], y)

    def run():
        seen.clear()
        result = train.fit(
            loss,
            {"a": 0.0, "b": 0.0},
            optim.sgd(0.1),
            (X, Y),
            epochs=2,
            batch_size=10,
            key=5,
            progress=False,
        )
        return list(seen), result.history["step_loss"]

    first_keys, first_losses = run()
    second_keys, second_losses = run()
    assert len(set(first_keys)) == 8  # a new key every step
    assert first_keys == second_keys and first_losses == second_losses


def test_fit_jits_the_step_by_default_and_can_opt_out():
    x = np.linspace(-1, 1, 64)
    y = 3 * x + 1
    runs = []

    def loss(p, x, y):
        runs.append(1)  # a Python side effect: with jit it runs only while tracing
        return ((p["a"] * x + p["b"] - y) ** 2).mean()

    params = {"a": knp.zeros(()), "b": knp.zeros(())}
    compiled = train.fit(loss, params, optim.adam(0.1), (x, y), epochs=20, batch_size=16,
                         progress=False)
    assert len(runs) == 2  # 4 batches of 16 a step, 80 steps: one trace and one purity check
    runs.clear()
    eager = train.fit(loss, params, optim.adam(0.1), (x, y), epochs=20, batch_size=16,
                      progress=False, jit=False)
    assert len(runs) == 80
    for name in ("a", "b"):
        np.testing.assert_allclose(compiled.params[name].numpy(), eager.params[name].numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(compiled.history["step_loss"], eager.history["step_loss"],
                               rtol=1e-12)


def test_fit_falls_back_to_eager_with_a_reason():
    x = np.linspace(-1, 1, 32)

    def loss(p, x):
        error = ((p - x) ** 2).mean()
        if error > 100.0:  # Python control flow on a value: cannot be traced
            return error * 0.0
        return error

    with pytest.warns(RuntimeWarning, match="could not be compiled.*ConcretizationError"):
        result = train.fit(loss, knp.zeros(()), optim.sgd(0.1), x, epochs=3, batch_size=8,
                           progress=False)
    assert np.isfinite(result.history["loss"]).all()
