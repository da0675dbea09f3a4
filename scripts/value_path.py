"""Print the files a value passes through on its way in: from ``vjp(f, x)`` to the first op.

Follows the primal ``x`` of ``kenaz.vjp(f, x)`` (``f = kenaz.numpy.sin``) from the
call until the first op performed inside ``f`` reaches the handler of ``vjp`` with
its arguments as tensors (``ReverseHandler.handle``, the effect being handled). Two
primals: a NumPy array, and a nested list of floats (a pytree: each number becomes a
tensor, and ``f`` receives a nested list of tensors, stacked on the way into the op).

Every Python call and return is watched (``sys.setprofile``); the code running at
each moment is attributed to the innermost frame in ``src/kenaz`` (or to ``f``, the
user's code). The path is the sequence of files where it stays, consecutive repeats
merged. Printed per primal:

- ``stays``: the length of that sequence, and the number of distinct files;
- ``returns``: stays in a file the value had already left, and how many of those
  began with a call into it rather than a return to a caller (back and forth);
- ``calls up``: calls from a file into one of a higher layer (the layers of
  ``tests/test_import_layers.py``, which ``docs/architecture.md`` draws);
- the sequence itself.

Run it on any source tree, e.g. ``PYTHONPATH=src python scripts/value_path.py``; with
``--all`` it also follows ``jvp(f, (x,), (x,))`` and ``vmap(f)(x)`` to their handlers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

import kenaz
import kenaz.numpy as knp

ROOT = Path(kenaz.__file__).resolve().parent  # the kenaz package being measured
USER = "f"


def _layers() -> dict[str, int]:
    """The layer table of tests/test_import_layers.py, next to this script's tree."""
    path = Path(__file__).resolve().parent.parent / "tests" / "test_import_layers.py"
    spec = importlib.util.spec_from_file_location("_import_layers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LAYERS


LAYERS = _layers()


def layer(label: str) -> int:
    """The layer of a file label (``reverse.py``, ``ops/shape.py``); the user's code on top."""
    if label == USER:
        return 99
    module = "kenaz." + label.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _label(frame: Any) -> str | None:
    """The file label of the innermost frame of kenaz or of the user's ``f``, from ``frame`` out."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<lambda>" and code.co_filename == __file__:
            return USER
        path = Path(code.co_filename)
        if path.is_relative_to(ROOT):
            return str(path.relative_to(ROOT))
        frame = frame.f_back
    return None


def _holds_list(args: Any) -> bool:
    return any(isinstance(a, (list, tuple)) for a in args)


def follow(primal: Any, transformation: str = "vjp") -> list[tuple[str, str]]:
    """The ``(how, file)`` stays of ``primal`` on its way in: ``how`` is ``call`` or ``return``.

    ``transformation``: ``vjp`` (``vjp(f, x)``, to ``ReverseHandler.handle``), ``jvp``
    (``jvp(f, (x,), (x,))``, to ``ForwardHandler.handle``) or ``vmap`` (``vmap(f)(x)``,
    to ``BatchHandler.handle``)."""
    handler_file = {"vjp": "reverse.py", "jvp": "forward.py", "vmap": "vectorize.py"}[
        transformation
    ]
    path: list[tuple[str, str]] = []
    state = {"in_f": False, "done": False}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if state["done"] or event not in ("call", "return"):
            return
        code = frame.f_code
        if event == "call" and code.co_name == "<lambda>" and code.co_filename == __file__:
            state["in_f"] = True
        label = _label(frame if event == "call" else frame.f_back)
        if label is not None and (not path or path[-1][1] != label):
            path.append((event, label))
        if (
            event == "call"
            and state["in_f"]
            and code.co_name == "handle"
            and code.co_filename.endswith(handler_file)
            and not _holds_list(frame.f_locals.get("args", ()))
        ):
            state["done"] = True

    f = lambda x: knp.sin(x)  # noqa: E731 - the user's function (found by its code name)
    sys.setprofile(profile)
    try:
        if transformation == "vjp":
            kenaz.vjp(f, primal)
        elif transformation == "jvp":
            kenaz.jvp(f, (primal,), (primal,))
        else:
            kenaz.vmap(f)(primal)
    finally:
        sys.setprofile(None)
    return path


def report(name: str, path: list[tuple[str, str]]) -> None:
    files = [label for _, label in path]
    returns = sum(1 for i, label in enumerate(files) if label in files[:i])
    calls_back = sum(
        1 for i, (how, label) in enumerate(path) if how == "call" and label in files[:i]
    )
    calls_up = [
        f"{files[i - 1]} > {files[i]}"
        for i in range(1, len(path))
        if path[i][0] == "call" and files[i] != USER and layer(files[i]) > layer(files[i - 1])
    ]
    print(f"{name}: {len(files)} stays in {len(set(files))} files, {returns} returns to a file "
          f"already left ({calls_back} of them by a call, not a return), {len(calls_up)} calls "
          f"up a layer ({', '.join(calls_up)})")  # fmt: skip
    print("  " + " > ".join(files))


def main() -> None:
    print(f"kenaz at {ROOT}")
    report("vjp(f, numpy array)", follow(np.array([0.5, 1.0])))
    report("vjp(f, nested list)", follow([[0.5, 1.0], [1.5, 2.0]]))
    if "--all" in sys.argv:  # the other transformations' ways in, on the same array
        report("jvp(f, (numpy array,), (numpy array,))", follow(np.array([0.5, 1.0]), "jvp"))
        report("vmap(f)(numpy array)", follow(np.array([0.5, 1.0]), "vmap"))


if __name__ == "__main__":
    main()
