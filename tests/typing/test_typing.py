"""Types: mypy --strict accepts a user's typed script, and catches misuse of the API."""

from __future__ import annotations

import importlib.resources
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kenaz.numpy as knp
from kenaz.numpy import _composed, _signatures

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[2]
USER_SCRIPT = Path(__file__).with_name("user_script.py")


def run_mypy(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         *map(str, paths)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip


def test_the_package_is_marked_typed():
    assert importlib.resources.files("kenaz").joinpath("py.typed").is_file()


@pytest.mark.slow  # the first mypy run fills .mypy_cache: ~12 s
def test_mypy_strict_accepts_the_typed_user_script():
    result = run_mypy(USER_SCRIPT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == ""


def test_the_typed_user_script_runs():
    namespace: dict = {"__name__": "user_script"}
    exec(compile(USER_SCRIPT.read_text(), str(USER_SCRIPT), "exec"), namespace)
    namespace["main"]()


MISUSE = """
    import kenaz
    import kenaz.numpy as knp
    from kenaz import Tensor
    from typing import assert_type

    def loss(w: Tensor, x: Tensor) -> Tensor:
        return knp.sum((x @ w) ** 2)

    x = knp.ones(3)
    kenaz.grad(loss)(x)  # error: grad keeps loss's parameters: one is missing
    kenaz.vmap(loss)(x, x, x)  # error: so does vmap: one too many
    kenaz.value_and_grad(loss)(x, "not an array")  # error: wrong type for x
    assert_type(knp.sin(x), int)  # error: knp.sin returns a Tensor
    assert_type(x.sum(), float)  # error: so does Tensor.sum
    x.no_such_method()  # error
    out, tangent = kenaz.jvp(loss, (x, x), (x, x))
    assert_type(tangent, str)  # error: the tangent has the output's type
    knp.no_such_function(x)  # error
"""


def test_mypy_catches_misuse(tmp_path):
    script = tmp_path / "misuse.py"
    source = textwrap.dedent(MISUSE).lstrip("\n")
    script.write_text(source)
    expected = {n for n, line in enumerate(source.splitlines(), 1) if "# error" in line}
    result = run_mypy(script)
    flagged = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    assert len(expected) == 8 and flagged == expected, result.stdout


def test_kenaz_numpy_exports_every_public_name():
    """``__all__`` is what type checkers (and the API reference) treat as exported."""
    public = {
        name for name, value in vars(knp).items()
        if not name.startswith("_") and getattr(value, "__module__", "") != "typing"
    }  # fmt: skip
    internal = {"annotations", "Any", "Callable", "Sequence", "Tensor", "holds_tensor"}
    assert set(knp.__all__) == public - internal
    assert len(knp.__all__) == len(set(knp.__all__))
    assert set(_composed.__all__) | set(_signatures.__all__) <= set(knp.__all__)


REVEALED = """
    import kenaz
    import kenaz.numpy as knp
    from kenaz import Tensor, nn

    Params = dict[str, Tensor]

    def loss(params: Params, x: Tensor) -> Tensor:
        return knp.sum((x @ params["w"]) ** 2)

    def loss_with_aux(params: Params, x: Tensor) -> tuple[Tensor, Tensor]:
        return loss(params, x), knp.mean(x)

    def step(x: Tensor, scale: float) -> Tensor:
        return knp.sin(x) * scale

    reveal_type(kenaz.grad(loss))
    reveal_type(kenaz.grad(loss_with_aux, has_aux=True))
    reveal_type(kenaz.value_and_grad(loss))
    reveal_type(kenaz.value_and_grad(loss_with_aux, has_aux=True))
    reveal_type(kenaz.jit(step))
    reveal_type(kenaz.jit(static_argnums=1)(step))
    reveal_type(kenaz.checkpoint(step))
    reveal_type(kenaz.custom_jvp(step))
    reveal_type(kenaz.custom_vjp(step)(knp.ones(2), 2.0))
    reveal_type(nn.Sequential([nn.Linear(2, 32), nn.tanh, nn.Linear(32, 1)]))
"""
P, T = "dict[str, kenaz.tensor.Tensor]", "kenaz.tensor.Tensor"
EXPECTED_REVEALED = [
    f"def ({P}, x: {T}) -> {P}",
    f"def ({P}, x: {T}) -> tuple[{P}, {T}]",
    f"def ({P}, x: {T}) -> tuple[{T}, {P}]",
    f"def ({P}, x: {T}) -> tuple[tuple[{T}, {T}], {P}]",
    f"Jitted[[x: {T}, scale: float], {T}]",  # kenaz's Jitted, typed as the function
    f"Jitted[[x: {T}, scale: float], {T}]",
    f"def (x: {T}, scale: float) -> {T}",
    f"custom_jvp[[x: {T}, scale: float], {T}]",
    T,
    ".Sequential",
]


def test_transformations_reveal_the_functions_types_and_no_any(tmp_path):
    """grad/value_and_grad give the first argument's type as the gradient's; jit,
    checkpoint, custom_jvp and custom_vjp keep the signature; Sequential takes layers and
    plain functions. mypy --strict: no error, and no Any in what it reveals."""
    script = tmp_path / "revealed.py"
    script.write_text(textwrap.dedent(REVEALED).lstrip("\n"))
    result = run_mypy(script)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert not errors, result.stdout
    revealed = [
        line.split('Revealed type is "', 1)[1].rstrip('"')
        for line in result.stdout.splitlines()
        if "Revealed type is" in line
    ]
    # Each as expected (class names without the module, which may move).
    assert len(revealed) == len(EXPECTED_REVEALED), "\n".join(revealed)
    for got, expected in zip(revealed, EXPECTED_REVEALED, strict=True):
        assert got == expected or got.endswith("." + expected.lstrip(".")), (got, expected)
    assert not any("Any" in r for r in revealed)
