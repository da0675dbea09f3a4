"""save/load: round trips in both formats, templates, and clear errors for bad files."""

import sys
import zipfile
from typing import NamedTuple

import numpy as np
import pytest

import kenaz
import kenaz.numpy as knp
from kenaz import io, nn, optim

FORMATS = [
    ".npz",
    pytest.param(
        ".safetensors",
        marks=pytest.mark.skipif(
            __import__("importlib").util.find_spec("safetensors") is None,
            reason="needs safetensors",
        ),
    ),
]


def nested_params():
    return {
        "layers": [nn.Linear(3, 2).init(0), None, nn.Linear(2, 1, dtype=np.float32).init(1)],
        "steps": np.array([1, 2, 3], dtype=np.int64),
        "pair": (knp.ones(()), np.float64(2.5)),
    }


def assert_same(loaded, original):
    assert kenaz.tree.structure(loaded) == kenaz.tree.structure(original)
    for a, b in zip(kenaz.tree.leaves(loaded), kenaz.tree.leaves(original), strict=True):
        if type(b) in (bool, int, float, complex):  # Python numbers load as themselves
            assert type(a) is type(b) and a == b
            continue
        assert isinstance(a, kenaz.Tensor)
        assert a.dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a.numpy(), np.asarray(b))


@pytest.mark.parametrize("suffix", FORMATS)
def test_round_trip_without_template(tmp_path, suffix):
    params = nested_params()
    path = io.save(tmp_path / f"params{suffix}", params)
    assert path.exists()
    assert_same(io.load(path), params)


@pytest.mark.parametrize("suffix", FORMATS)
def test_round_trip_with_template_and_custom_containers(tmp_path, suffix):
    params = nested_params()
    optimizer = optim.adam(1e-3)
    opt_state = optimizer.init(params)  # tuples of NamedTuples
    path = io.save(tmp_path / f"state{suffix}", opt_state)
    with pytest.raises(io.CheckpointError, match="template"):
        io.load(path)
    assert_same(io.load(path, template=opt_state), opt_state)


def test_npz_is_plain_and_never_pickled(tmp_path):
    path = io.save(tmp_path / "p.npz", nested_params())
    with np.load(path, allow_pickle=False) as archive:  # readable without pickle
        assert all(archive[name].dtype != object for name in archive.files)
    with pytest.raises(TypeError):
        io.save(tmp_path / "bad.npz", {"a": np.array(["text"])})


class Pair(NamedTuple):
    first: object
    second: object


@pytest.mark.parametrize("suffix", FORMATS)
def test_template_mismatches_are_named(tmp_path, suffix):
    path = io.save(tmp_path / f"p{suffix}", {"w": np.ones((2, 3)), "b": np.zeros(3)})
    with pytest.raises(io.CheckpointError, match=r"'w' has shape \(2, 3\).*\(3, 2\)"):
        io.load(path, template={"w": np.ones((3, 2)), "b": np.zeros(3)})
    with pytest.raises(io.CheckpointError, match=r"'b' has dtype float64.*float32"):
        io.load(path, template={"w": np.ones((2, 3)), "b": np.zeros(3, dtype=np.float32)})
    with pytest.raises(io.CheckpointError, match=r"only in the file \['b'\].*\['c'\]"):
        io.load(path, template={"w": np.ones((2, 3)), "c": np.zeros(3)})
    with pytest.raises(io.CheckpointError, match="do not match"):
        io.load(path, template=Pair(np.zeros(3), np.ones((2, 3))))


@pytest.mark.parametrize("suffix", FORMATS)
def test_truncated_and_corrupt_files(tmp_path, suffix):
    path = io.save(tmp_path / f"p{suffix}", {"w": np.arange(1000.0)})
    content = path.read_bytes()
    truncated = tmp_path / f"truncated{suffix}"
    truncated.write_bytes(content[: len(content) // 2])
    with pytest.raises(io.CheckpointError, match="truncated or corrupt"):
        io.load(truncated)
    garbage = tmp_path / f"garbage{suffix}"
    garbage.write_bytes(b"this is not a checkpoint" * 10)
    with pytest.raises(io.CheckpointError, match="truncated or corrupt"):
        io.load(garbage)
    empty = tmp_path / f"empty{suffix}"
    empty.write_bytes(b"")
    with pytest.raises(io.CheckpointError):
        io.load(empty)


def test_npz_that_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, a=np.ones(3))
    with pytest.raises(io.CheckpointError, match="not a kenaz checkpoint"):
        io.load(path)
    corrupt_structure = tmp_path / "corrupt.npz"
    np.savez(corrupt_structure, __kenaz_structure__=np.frombuffer(b"{not json", dtype=np.uint8))
    with pytest.raises(io.CheckpointError, match="corrupt"):
        io.load(corrupt_structure)
    with zipfile.ZipFile(tmp_path / "zip.npz", "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(io.CheckpointError):
        io.load(tmp_path / "zip.npz")


def test_flipped_bytes_and_single_arrays(tmp_path):
    path = io.save(tmp_path / "p.npz", {"w": np.arange(1000.0)})
    content = bytearray(path.read_bytes())
    content[len(content) // 3] ^= 0xFF  # inside the stored array: the zip CRC catches it
    flipped = tmp_path / "flipped.npz"
    flipped.write_bytes(bytes(content))
    with pytest.raises(io.CheckpointError, match="truncated or corrupt"):
        io.load(flipped)
    single = tmp_path / "single.npz"
    with open(single, "wb") as file:
        np.save(file, np.ones(3))
    with pytest.raises(io.CheckpointError, match="single array"):
        io.load(single)


def test_pickled_npz_is_refused(tmp_path):
    path = tmp_path / "pickled.npz"
    np.savez(path, a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(io.CheckpointError, match="never unpickles"):
        io.load(path)


def test_paths_and_formats(tmp_path):
    with pytest.raises(ValueError, match=".npz or .safetensors"):
        io.save(tmp_path / "params.pkl", {"w": np.ones(2)})
    with pytest.raises(FileNotFoundError):
        io.load(tmp_path / "missing.npz")


def test_safetensors_missing_gives_install_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r"kenaz\[io\]"):
        io.save(tmp_path / "p.safetensors", {"w": np.ones(2)})


def test_resuming_an_optimizer_from_a_checkpoint_keeps_float32(tmp_path):
    params = {"w": knp.ones(3, dtype=np.float32)}
    optimizer = optim.chain(optim.adam(optim.cosine_decay_schedule(0.1, 10)))
    state = optimizer.init(params)
    grads = {"w": knp.ones(3, dtype=np.float32)}
    _, state = optimizer.update(grads, state, params)
    path = io.save(tmp_path / "opt.npz", state)
    restored = io.load(path, template=state)
    updates, new_state = optimizer.update(grads, restored, params)
    assert updates["w"].dtype == np.float32
    assert all(
        leaf.dtype != np.float64 for leaf in kenaz.tree.leaves(new_state) if hasattr(leaf, "dtype")
    )
    expected, _ = optimizer.update(grads, state, params)
    np.testing.assert_array_equal(updates["w"].numpy(), expected["w"].numpy())


@pytest.mark.parametrize("suffix", FORMATS)
def test_python_numbers_round_trip_as_themselves(tmp_path, suffix):
    """A saved Python int, float, bool or complex loads as that number, not a Tensor."""
    state = {"step": 7, "rate": 0.125, "done": True, "w": knp.ones(2)}
    if suffix == ".npz":  # safetensors stores no complex128
        state["phase"] = 1 + 2j
    path = io.save(tmp_path / f"state{suffix}", state)
    for loaded in (io.load(path), io.load(path, template=state)):
        for key in state.keys() - {"w"}:
            assert type(loaded[key]) is type(state[key]) and loaded[key] == state[key]
        assert isinstance(loaded["w"], kenaz.Tensor)
