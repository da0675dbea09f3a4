"""The documentation site builds in strict mode, and its API reference covers every public name.

`mkdocs build --strict` fails on a warning, a broken link, or an example that raises
(tutorial blocks run through markdown-exec; the other pages' ```python blocks through
scripts/docs_hooks.py). The build takes about 10 s.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

for tool in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "markdown_exec"):
    pytest.importorskip(tool)

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor

# module -> its API page; the numpy- and scipy-style namespaces are tables (docs_hooks.api_table)
DIRECTIVE_MODULES = {
    "kenaz": "api/kenaz",
    "kenaz.nn": "api/nn",
    "kenaz.optim": "api/optim",
    "kenaz.testing": "api/testing",
    "kenaz.data": "api/training",
    "kenaz.train": "api/training",
    "kenaz.io": "api/training",
    "kenaz.tree": "api/tree",
    "kenaz.errors": "api/tree",
}
TABLE_MODULES = {
    "kenaz.numpy": "api/numpy",
    "kenaz.numpy.linalg": "api/numpy",
    "kenaz.numpy.fft": "api/numpy",
    "kenaz.numpy.random": "api/numpy",
    "kenaz.scipy.special": "api/scipy",
    "kenaz.scipy.stats": "api/scipy",
    "kenaz.scipy.linalg": "api/scipy",
}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=600,
    )  # fmt: skip


BUILD_LOG: list[str] = []  # what the site's build printed (the count of blocks it ran)


# Built once for the module: pytest-xdist runs a file whole on one worker (--dist loadfile,
# tests/conftest.py), so two workers never build it twice.
@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    result = build(ROOT / "mkdocs.yml", site)
    assert result.returncode == 0, result.stdout + result.stderr
    BUILD_LOG.append(result.stdout + result.stderr)
    return site


def _fences() -> dict[str, int]:
    """How many code blocks of each kind the pages hold: ```python blocks (doctest
    transcripts among them), markdown-exec's, and listings (text, sh)."""
    counts = {"python": 0, "exec": 0, "listing": 0}
    for path in (ROOT / "docs").rglob("*.md"):
        inside = False
        for line in path.read_text().splitlines():
            if not line.startswith("```"):
                continue
            if inside:
                inside = False
                continue
            inside = True
            info = line[3:].strip()
            assert info, f"{path.name}: a code block without a language ({line!r})"
            kind = "exec" if 'exec="on"' in info else "python" if info == "python" else "listing"
            assert kind != "listing" or info in ("text", "sh"), (path.name, info)
            counts[kind] += 1
    return counts


@pytest.mark.slow  # the first test here builds the site: 10-40 s
def test_every_python_block_of_every_page_ran(site):
    """Every ```python block runs (doctest transcripts through doctest), and every
    markdown-exec block (the tutorials); only text and sh listings do not."""
    found = re.search(
        r"docs_hooks: ran (\d+) python blocks and (\d+) doctest blocks on (\d+) pages", BUILD_LOG[0]
    )
    assert found, BUILD_LOG[0][-2000:]
    python, doctests, _pages = map(int, found.groups())
    counts = _fences()
    assert python + doctests == counts["python"], (python, doctests, counts)
    assert counts["exec"] >= 30 and python >= 25 and doctests >= 2, counts


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text()


def test_the_site_builds_strictly_with_every_page(site):
    for nav_page in re.findall(r":\s+([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M):
        if nav_page == "architecture.md" and not (ROOT / "docs" / nav_page).exists():
            continue  # docs_hooks leaves it out until it is written
        built = "index.html" if nav_page == "index.md" else nav_page[:-3] + "/index.html"
        assert (site / built).is_file(), nav_page


def test_tutorial_examples_ran_and_show_their_output(site):
    first = page(site, "tutorial/first-gradient")
    assert "10.0" in first  # grad of x**3 - 2x at 2, printed as NumPy prints it
    interop = page(site, "tutorial/interop")
    assert "evaluations" in interop and "kenaz-tensor" in interop  # minimize, the notebook repr


@pytest.mark.parametrize("module_name", sorted(DIRECTIVE_MODULES))
def test_every_public_name_has_an_api_entry(site, module_name):
    ids = set()
    for api_page in (site / "api").glob("*/index.html"):
        ids |= set(re.findall(r'id="([\w.]+)"', api_page.read_text()))
    module = importlib.import_module(module_name)
    missing = [
        name for name in module.__all__
        if not {f"{module_name}.{name}", f"{module_name}.{name}.{name}"} & ids
        and f"{module_name}.{name}" not in TABLE_MODULES  # kenaz.numpy: its own page
    ]  # fmt: skip
    assert not missing, f"{module_name}: no API entry for {missing}"


@pytest.mark.parametrize("module_name", sorted(TABLE_MODULES))
def test_every_public_name_is_in_its_api_table(site, module_name):
    html = page(site, TABLE_MODULES[module_name])
    module = importlib.import_module(module_name)
    missing = [name for name in module.__all__ if f"<td><code>{name}</code></td>" not in html]
    assert not missing, f"{module_name}: not in the API table: {missing}"


def test_strict_mode_fails_on_a_raising_example_or_a_broken_link(tmp_path):
    """The same plugins on a two-page site: each fault alone must fail the build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text(textwrap.dedent(f"""
        site_name: check
        docs_dir: {docs}
        extra: {{source_url: https://example.org/kenaz}}
        hooks: [{ROOT / "scripts" / "docs_hooks.py"}]
        plugins: [search, markdown-exec]
        markdown_extensions: [pymdownx.superfences]
    """))
    faults = {  # the fault, and what the build's log must say about it
        '```python exec="on"\nimport kenaz\nkenaz.grad(lambda x: x)(1)\n```\n': "markdown_exec",
        "```python\nraise ValueError('stale example')\n```\n": "stale example",
        "[gone](missing.md)\n": "missing.md",
        "[gone](../examples/no_such_example.py)\n": "no_such_example.py, which does not exist",
    }
    for text, message in faults.items():
        (docs / "index.md").write_text("# ok\n\n" + text)
        result = build(config, tmp_path / "site")
        assert result.returncode != 0 and message in result.stderr, (text, result.stderr)
    ok = "```python\nimport kenaz\nimport kenaz.numpy as knp\n\nx = kenaz.grad(knp.sin)(0.0)\n```\n"
    (docs / "index.md").write_text("# ok\n\n" + ok)
    assert build(config, tmp_path / "site").returncode == 0


def _check_site_module():
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "scripts" / "check_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _needs_chromium():
    pytest.importorskip("websockets")
    check_site = _check_site_module()
    if check_site.find_chromium() is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium)")
    return check_site


@pytest.mark.slow
def test_every_page_loads_in_chromium_without_console_errors(site, capsys):
    check_site = _needs_chromium()
    status = check_site.main([str(site)])
    report = capsys.readouterr().out
    assert status == 0, report
    assert "0 with errors" in report


@pytest.mark.slow
def test_the_browser_check_reports_console_errors_and_missing_resources(tmp_path, capsys):
    check_site = _needs_chromium()
    (tmp_path / "index.html").write_text("<title>fine</title><p>fine</p>")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "index.html").write_text(
        '<title>broken</title><img src="missing.png">'
        '<script>console.error("stale example"); undefined_function();</script>'
    )
    status = check_site.main([str(tmp_path)])
    report = capsys.readouterr().out
    assert status == 1, report
    assert "1 clean, 1 with errors" in report
    for problem in ("console.error: stale example", "uncaught exception", "HTTP 404"):
        assert problem in report, report
