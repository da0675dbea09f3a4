"""Saving and loading parameter pytrees: ``.npz`` (always) or ``.safetensors`` (optional).

Neither format ever pickles: arrays are stored as raw data, and the pytree's
structure (nested dicts, lists, tuples and ``None``) is stored as JSON next to
them. ``load(path)`` rebuilds that structure; ``load(path, template)`` instead
checks the file against ``template`` (a pytree of the expected structure,
shapes and dtypes, e.g. freshly initialized parameters) and returns a pytree
of the template's structure, so any registered container works.

A file that is not a checkpoint, is truncated or corrupt, or does not match
the template raises :class:`CheckpointError` saying which.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from . import tree
from .tensor import Tensor

__all__ = ["CheckpointError", "save", "load"]

_STRUCTURE_KEY = "__kenaz_structure__"
_FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read, or that does not match the template.

    A subclass of ``ValueError``.

    Examples
    --------
    >>> from pathlib import Path
    >>> _ = Path("/tmp/broken.npz").write_bytes(b"not a checkpoint")
    >>> try:
    ...     load("/tmp/broken.npz")
    ... except CheckpointError as error:
    ...     print("refused:", str(error)[:60])
    refused: kenaz.io.load: /tmp/broken.npz is not a readable .npz checkp
    """


# -- structure as JSON --------------------------------------------------------------------
# Python numbers are stored as 0-d arrays and come back as themselves: a step count saved
# as 3 loads as 3, not Tensor(3).
_PYTHON_NUMBERS = (bool, int, float, complex)
_PYTHON_NUMBERS_BY_NAME = {t.__name__: t for t in _PYTHON_NUMBERS}


class _CustomContainer(Exception):
    """Raised while describing a pytree that holds a container JSON cannot name."""


def _describe(node: Any, leaves: list[np.ndarray]) -> Any:
    """JSON description of a pytree; leaves are appended to ``leaves`` and named by index.

    The traversal order (dict keys sorted, sequences in order) is the pytree
    leaf order, so leaf ``i`` here is ``tree.leaves(params)[i]``.
    """
    if node is None:
        return {"none": True}
    if type(node) is dict:
        if not all(isinstance(k, str) for k in node):
            raise TypeError("kenaz.io.save: dict keys must be strings to be saved without pickle")
        return {"dict": {k: _describe(node[k], leaves) for k in sorted(node)}}
    if type(node) in (list, tuple):
        return {type(node).__name__: [_describe(item, leaves) for item in node]}
    if type(node) in _PYTHON_NUMBERS:  # loaded back as the same Python type, not a Tensor
        leaves.append(np.asarray(node))
        return {"number": [len(leaves) - 1, type(node).__name__]}
    if isinstance(node, (Tensor, np.ndarray, np.generic, int, float, complex)):
        leaves.append(np.asarray(node))
        return {"leaf": len(leaves) - 1}
    raise _CustomContainer(type(node).__name__)


def _rebuild(description: Any, arrays: dict[str, np.ndarray]) -> Any:
    if not isinstance(description, dict) or len(description) != 1:
        raise CheckpointError("kenaz.io.load: the stored structure is malformed")
    ((kind, body),) = description.items()
    if kind == "none":
        return None
    if kind == "leaf":
        return Tensor(arrays[_leaf_name(body)])
    if kind == "number":
        index, name = body
        number_type = _PYTHON_NUMBERS_BY_NAME.get(name)
        if number_type is None:
            raise CheckpointError(f"kenaz.io.load: unknown Python number type {name!r}")
        return number_type(arrays[_leaf_name(index)].item())
    if kind == "dict":
        return {k: _rebuild(v, arrays) for k, v in body.items()}
    if kind == "list":
        return [_rebuild(v, arrays) for v in body]
    if kind == "tuple":
        return tuple(_rebuild(v, arrays) for v in body)
    raise CheckpointError(f"kenaz.io.load: unknown node kind {kind!r} in the stored structure")


def _leaf_name(index: int) -> str:
    return f"leaf_{index:05d}"


def _leaves_and_structure(params: Any) -> tuple[list[np.ndarray], str]:
    leaves = [np.asarray(leaf) for leaf in tree.leaves(params)]
    try:
        description = _describe(params, [])
    except _CustomContainer:
        description = None  # e.g. a NamedTuple optimizer state: loading needs a template
    for leaf in leaves:
        if leaf.dtype.kind not in "biufc":
            raise TypeError(f"kenaz.io.save: cannot save a leaf of dtype {leaf.dtype}")
    paths = [".".join(str(k) for k in path) for path in _paths(params)]
    structure = {"format": "kenaz", "version": _FORMAT_VERSION, "tree": description, "paths": paths}
    return leaves, json.dumps(structure)


def _paths(params: Any) -> list[tuple[Any, ...]]:
    import optree

    return optree.tree_paths(params, namespace=tree.NAMESPACE)


# -- save -----------------------------------------------------------------------------------
def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return "npz"
    if suffix == ".safetensors":
        return "safetensors"
    raise ValueError(
        f"kenaz.io: unknown checkpoint format {path.suffix!r} for {path}; "
        "use a .npz or .safetensors file name"
    )


def _import_safetensors() -> Any:
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError(
            "kenaz.io: .safetensors files need the safetensors package: pip install 'kenaz[io]' "
            "(or use a .npz file name)"
        ) from None
    return safetensors.numpy


def save(path: str | Path, params: Any) -> Path:
    """Save the pytree ``params`` to ``path`` (``.npz``, or ``.safetensors`` with ``kenaz[io]``).

    Leaves may be tensors, NumPy arrays or numbers. Nested dicts (string
    keys), lists, tuples and ``None`` are stored so that ``load(path)`` can
    rebuild them; other containers need ``load(path, template)``.

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> path = save("/tmp/params.npz", {"w": knp.ones((2, 3)), "layers": [knp.zeros(2), None]})
    >>> load(path)["w"].shape
    (2, 3)
    """
    path = Path(path)
    kind = _format_of(path)
    leaves, structure = _leaves_and_structure(params)
    # np.asarray(order="C"), not np.ascontiguousarray, which turns 0-d leaves into shape (1,).
    arrays = {_leaf_name(i): np.asarray(leaf, order="C") for i, leaf in enumerate(leaves)}
    if kind == "safetensors":
        _import_safetensors().save_file(arrays, str(path), metadata={_STRUCTURE_KEY: structure})
    else:
        encoded = np.frombuffer(structure.encode("utf-8"), dtype=np.uint8)
        with open(path, "wb") as file:  # np.savez would append ".npz" to other names
            np.savez(file, **arrays, **{_STRUCTURE_KEY: encoded})
    return path


# -- load -----------------------------------------------------------------------------------
def _read_npz(path: Path) -> tuple[dict[str, np.ndarray], str]:
    def corrupt(error: Exception) -> CheckpointError:
        return CheckpointError(
            f"kenaz.io.load: {path} is not a readable .npz checkpoint (truncated or corrupt?): "
            f"{error}"
        )

    try:
        archive = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as error:
        raise corrupt(error) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CheckpointError(f"kenaz.io.load: {path} holds a single array, not a kenaz checkpoint")
    try:
        with archive:
            arrays = {name: archive[name] for name in archive.files}
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise CheckpointError(
                f"kenaz.io.load: {path} holds pickled Python objects; kenaz never unpickles "
                "(it could run arbitrary code)"
            ) from None
        raise corrupt(error) from None
    except (zipfile.BadZipFile, EOFError, OSError, KeyError) as error:
        raise corrupt(error) from None
    if _STRUCTURE_KEY not in arrays:
        raise CheckpointError(f"kenaz.io.load: {path} is an .npz file but not a kenaz checkpoint")
    structure = arrays.pop(_STRUCTURE_KEY).tobytes().decode("utf-8", errors="replace")
    return arrays, structure


def _read_safetensors(path: Path) -> tuple[dict[str, np.ndarray], str]:
    st = _import_safetensors()
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as file:
            metadata = file.metadata() or {}
        arrays = st.load_file(str(path))
    except FileNotFoundError:
        raise
    except Exception as error:  # safetensors raises its own error types
        raise CheckpointError(
            f"kenaz.io.load: {path} is not a readable .safetensors checkpoint "
            f"(truncated or corrupt?): {error}"
        ) from None
    if _STRUCTURE_KEY not in metadata:
        raise CheckpointError(
            f"kenaz.io.load: {path} is a .safetensors file but not a kenaz checkpoint"
        )
    return arrays, metadata[_STRUCTURE_KEY]


def _parse_structure(text: str, path: Path) -> dict[str, Any]:
    try:
        structure = json.loads(text)
    except json.JSONDecodeError:
        raise CheckpointError(f"kenaz.io.load: the structure stored in {path} is corrupt") from None
    if not isinstance(structure, dict) or structure.get("format") != "kenaz":
        raise CheckpointError(f"kenaz.io.load: {path} does not hold a kenaz structure record")
    if structure.get("version", 0) > _FORMAT_VERSION:
        raise CheckpointError(
            f"kenaz.io.load: {path} was written by a newer kenaz (format {structure['version']})"
        )
    return structure


def load(path: str | Path, template: Any = None) -> Any:
    """Load a pytree saved by :func:`save`; leaves come back as tensors, and Python
    numbers (``int``, ``float``, ``bool``, ``complex``) as themselves.

    Parameters
    ----------
    path : str or Path
    template : pytree, optional
        Expected structure, shapes and dtypes (e.g. ``model.init(0)``). The
        result then has exactly the template's structure, and any difference
        raises :class:`CheckpointError` naming the parameter.

    Examples
    --------
    >>> import kenaz.numpy as knp
    >>> path = save("/tmp/w.npz", {"w": knp.ones(3)})
    >>> load(path, template={"w": knp.zeros(4)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kenaz.io.CheckpointError: kenaz.io.load: parameter 'w' has shape (3,) in /tmp/w.npz but (4,)...
    """
    path = Path(path)
    kind = _format_of(path)
    if not path.exists():
        raise FileNotFoundError(f"kenaz.io.load: no such file: {path}")
    arrays, text = _read_npz(path) if kind == "npz" else _read_safetensors(path)
    structure = _parse_structure(text, path)
    paths = structure.get("paths", [])
    expected_names = [_leaf_name(i) for i in range(len(paths))]
    missing = [name for name in expected_names if name not in arrays]
    if missing:
        raise CheckpointError(f"kenaz.io.load: {path} is missing arrays {missing[:5]} (corrupt?)")
    if template is None:
        if structure.get("tree") is None:
            raise CheckpointError(
                f"kenaz.io.load: {path} holds a custom container; pass template= to load it"
            )
        return _rebuild(structure["tree"], arrays)
    return _fill_template(template, paths, [arrays[n] for n in expected_names], path)


def _fill_template(template: Any, paths: list[str], stored: list[np.ndarray], path: Path) -> Any:
    template_leaves, template_structure = tree.flatten(template)
    template_paths = [".".join(str(k) for k in p) for p in _paths(template)]
    if template_paths != paths:
        only_file = sorted(set(paths) - set(template_paths))[:5]
        only_template = sorted(set(template_paths) - set(paths))[:5]
        raise CheckpointError(
            f"kenaz.io.load: the parameters in {path} do not match the template: "
            f"only in the file {only_file}, only in the template {only_template}"
            + ("" if only_file or only_template else " (same names, different order or nesting)")
        )
    loaded = []
    for name, expected, value in zip(template_paths, template_leaves, stored, strict=True):
        expected_shape, expected_dtype = np.shape(expected), np.asarray(expected).dtype
        if value.shape != expected_shape:
            raise CheckpointError(
                f"kenaz.io.load: parameter {name!r} has shape {value.shape} in {path} "
                f"but {expected_shape} in the template"
            )
        if value.dtype != expected_dtype:
            raise CheckpointError(
                f"kenaz.io.load: parameter {name!r} has dtype {value.dtype} in {path} "
                f"but {expected_dtype} in the template"
            )
        kind = type(expected)
        loaded.append(kind(value.item()) if kind in _PYTHON_NUMBERS else Tensor(value))
    return tree.unflatten(template_structure, loaded)
