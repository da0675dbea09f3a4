"""Packaging: the wheel installs into an empty virtual environment and works with NumPy and
optree alone; one version source; the metadata a package index shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import kenaz

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

SMOKE = """
import importlib.metadata, json, sys
import kenaz, kenaz.numpy as knp
try:
    import kenaz.scipy
    scipy_error = None
except ImportError as error:
    scipy_error = str(error)
print(json.dumps({
    "version": kenaz.__version__,
    "metadata_version": importlib.metadata.version("kenaz"),
    "grad": float(kenaz.grad(lambda x: knp.sum(knp.sin(x) ** 2))(knp.array([0.5]))[0]),
    "vmap": kenaz.vmap(lambda x: x @ x)(knp.ones((3, 2))).tolist(),
    "kenaz_file": kenaz.__file__,
    "distributions": sorted(d.metadata["Name"].lower() for d in importlib.metadata.distributions()),
    "scipy_error": scipy_error,
}))
"""


def run(*command: str | Path, cwd: Path) -> str:
    result = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, cwd=cwd, timeout=900
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_one_version_source():
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert "version" not in PYPROJECT["project"]
    declared = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "src/kenaz/__init__.py").read_text(),
                         re.M)  # fmt: skip
    assert declared and kenaz.__version__ == declared.group(1)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{kenaz.__version__}]" in changelog and "## [Unreleased]" in changelog


def test_metadata_is_complete():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert project["requires-python"] == ">=3.10"
    assert set(project["urls"]) >= {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert "Typing :: Typed" in project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # SPDX instead
    assert project["dependencies"] == ["numpy>=2.0", "optree>=0.13"]
    assert {"docs", "dev", "scipy"} <= set(project["optional-dependencies"])


# What a build from the checkout would skip or write itself: the wheel is built from a copy,
# since setuptools writes build/ and src/kenaz.egg-info into the tree it builds, and other
# tests (on other pytest-xdist workers) read that tree at the same time.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "site", "*.egg-info", "__pycache__", ".*_cache",
    ".hypothesis",
)


@pytest.mark.slow
def test_the_wheel_works_in_an_empty_venv_with_numpy_and_optree_alone(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES, symlinks=True)
    dist = tmp_path / "dist"
    # uv (a dev dependency) builds and installs as pip would, in a fifth of the time
    run(sys.executable, "-m", "uv", "build", "--quiet", "--wheel", "--out-dir", dist, source,
        cwd=tmp_path)  # fmt: skip
    (wheel,) = dist.glob("kenaz-*.whl")
    assert wheel.name.startswith(f"kenaz-{kenaz.__version__}-py3-none-any")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"kenaz-{kenaz.__version__}.dist-info/METADATA").decode()
    assert "kenaz/py.typed" in names
    assert "kenaz/scipy/optimize.py" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not [name for name in names if name.startswith(("tests/", "docs/", "scripts/"))]
    assert "License-Expression: MIT" in metadata
    assert "Requires-Python: >=3.10" in metadata
    assert "Classifier: Typing :: Typed" in metadata
    assert "Project-URL: Documentation," in metadata
    assert "Requires-Dist: numpy>=2.0" in metadata and "Requires-Dist: optree>=0.13" in metadata

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "uv", "venv", "--quiet", "--python", sys.executable, venv,
        cwd=tmp_path)  # fmt: skip
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "uv", "pip", "install", "--quiet", "--python", python, wheel,
        cwd=tmp_path)  # fmt: skip
    report = json.loads(run(python, "-c", SMOKE, cwd=tmp_path))  # cwd: the repo is not on the path

    assert report["version"] == report["metadata_version"] == kenaz.__version__
    assert abs(report["grad"] - 0.8414709848078965) < 1e-12  # d/dx sin(x)**2 = sin(2x)
    assert report["vmap"] == [2.0, 2.0, 2.0]
    assert report["kenaz_file"].startswith(str(venv))
    installed = {name.replace("_", "-") for name in report["distributions"]}
    # typing-extensions is optree's own dependency
    assert installed - {"typing-extensions"} == {"kenaz", "numpy", "optree"}
    assert "pip install kenaz[scipy]" in report["scipy_error"]
