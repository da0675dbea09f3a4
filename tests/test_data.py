"""Minibatch iteration, splits and the digits loader."""

import numpy as np
import pytest

from kenaz import data


def test_batches_cover_every_example_once_per_epoch():
    x, y = np.arange(23.0).reshape(23, 1), np.arange(23)
    batches = data.Batches((x, y), batch_size=5, seed=3)
    assert len(batches) == 5
    for _ in range(2):
        seen = [b[1] for b in batches]
        assert [len(s) for s in seen] == [5, 5, 5, 5, 3]
        assert sorted(np.concatenate(seen).tolist()) == list(range(23))
        for bx, by in batches:
            np.testing.assert_array_equal(bx[:, 0], by)  # rows stay paired


def test_drop_last():
    batches = data.Batches(np.arange(23), batch_size=5, drop_last=True)
    assert len(batches) == 4
    assert all(len(b) == 5 for b in batches)


def test_shuffle_depends_only_on_seed_and_epoch():
    def epochs(seed):
        batches = data.Batches(np.arange(50), batch_size=50, seed=seed)
        return [next(iter(batches)).tolist() for _ in range(2)]

    first, again, other = epochs(1), epochs(1), epochs(2)
    assert first == again
    assert first[0] != first[1]  # a new order each epoch
    assert first != other
    ordered = data.Batches(np.arange(7), batch_size=3, shuffle=False)
    assert [b.tolist() for b in ordered] == [[0, 1, 2], [3, 4, 5], [6]]


def test_minibatches_and_pytrees():
    dataset = {"x": np.zeros((6, 2)), "y": np.arange(6)}
    batches = list(data.minibatches(dataset, 4, seed=0))
    assert [b["x"].shape for b in batches] == [(4, 2), (2, 2)]


def test_mismatched_lengths_and_bad_sizes():
    with pytest.raises(ValueError, match="same number of examples"):
        data.Batches((np.zeros(3), np.zeros(4)), batch_size=2)
    with pytest.raises(ValueError, match="wrap it in numpy.array"):
        data.Batches([1.0, 2.0, 3.0], batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        data.Batches(np.zeros(3), batch_size=0)
    with pytest.raises(ValueError, match="test_fraction"):
        data.train_test_split(np.zeros(3), test_fraction=1.5)


def test_train_test_split():
    x, y = np.arange(20).reshape(10, 2), np.arange(10)
    (x_train, y_train), (x_test, y_test) = data.train_test_split((x, y), 0.3, seed=0)
    assert len(y_train) == 7 and len(y_test) == 3
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == list(range(10))
    np.testing.assert_array_equal(x_train[:, 0] // 2, y_train)


def test_load_digits():
    pytest.importorskip("sklearn")
    (x_train, y_train), (x_test, y_test) = data.load_digits()
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)
    assert 0 <= x_train.min() and x_train.max() <= 1
    assert set(np.unique(y_train)) == set(range(10))
    (images, _), _ = data.load_digits(images=True, dtype=np.float32)
    assert images.shape == (1438, 1, 8, 8) and images.dtype == np.float32


def test_load_digits_without_scikit_learn(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r"kenaz\[data\]"):
        data.load_digits()
