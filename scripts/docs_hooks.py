"""MkDocs hooks for kenaz's site (named in mkdocs.yml): examples that run, links that resolve.

- Every ```python block of every page runs when the site builds, as written: in
  order, in one namespace per page that starts empty (a page imports what it
  uses), in a scratch directory. A block whose first line is ``>>>`` is a
  doctest transcript: it runs through ``doctest`` and its printed output must
  match. Set-up a page shares but does not show (a placeholder's definition) is
  declared once, at the top of the page, in an HTML comment ``<!-- docs-setup``
  ... ``-->``. A block that raises fails the build, naming the page and the
  block. Tutorial pages use markdown-exec (```python exec="on"```) instead, which
  also shows the output. Listings that are not Python (```text, ```sh) do not run.
  The build prints how many blocks ran (tests/test_docs_site.py checks the count).
- Links from a page to the repository's own files (``../examples/...``,
  ``../src/...``, ``../tests/...``) become links to the repository on the web,
  and a link to a file that does not exist fails the build.
- ``<!-- api-table: kenaz.numpy -->`` becomes a table of every name in that module's
  ``__all__``: its kind (primitive, function, ...) and the first line of its
  docstring, or of the NumPy or SciPy function it mirrors when it has none of
  its own (the primitives are ``Op`` objects, whose rules are documented once).
- ``docs/architecture.md`` ("How it works") is in the nav; until that page
  exists the nav entry is dropped and links to it point at the README's "How
  it works" section, with a note, so that the strict build passes.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import inspect
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]

_PLAIN_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```\s*$", re.S | re.M)
_SETUP = re.compile(r"^<!-- docs-setup\n(.*?)^-->\s*$", re.S | re.M)
_DOCTEST_OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# Blocks run in this build, per page: {"page.md": (python blocks, doctest blocks)}.
blocks_run: dict[str, tuple[int, int]] = {}
_REPOSITORY_LINK = re.compile(r"\]\(\.\./((?:examples|src|tests|benchmarks|scripts)/[^)#\s]+)\)")
_API_TABLE = re.compile(r"^<!-- api-table: ([\w.]+) -->$", re.M)
_ARCHITECTURE = "architecture.md"


_architecture_missing = False


def on_config(config: Any) -> Any:
    global _architecture_missing
    _architecture_missing = not (Path(config["docs_dir"]) / _ARCHITECTURE).exists()
    if _architecture_missing and config["nav"]:
        config["nav"] = [
            entry
            for entry in config["nav"]
            if not (isinstance(entry, dict) and _ARCHITECTURE in entry.values())
        ]
        print(f"docs_hooks: docs/{_ARCHITECTURE} is not written yet; its nav entry is left out")
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    path = page.file.src_uri
    _run_python_blocks(markdown, path)
    markdown = _SETUP.sub("", markdown)
    markdown = _API_TABLE.sub(lambda match: api_table(match.group(1)), markdown)
    if _architecture_missing:
        readme = config["extra"]["source_url"].rstrip("/") + "#how-it-works"
        markdown = re.sub(r"\]\((?:\.\./)?architecture\.md\)", f"]({readme})", markdown)
    return _link_repository_files(markdown, path, config["extra"]["source_url"])


def _run_python_blocks(markdown: str, page: str) -> None:
    blocks = _PLAIN_PYTHON_BLOCK.findall(markdown)
    if not blocks:
        return
    namespace: dict[str, Any] = {"__name__": "__main__"}
    setups = _SETUP.findall(markdown)
    if len(setups) > 1:
        raise PluginError(f"docs/{page}: declare its docs-setup once, not {len(setups)} times")
    doctests = 0
    start = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # an example that writes a file writes it here
        try:
            for number, source in enumerate([*setups, *blocks], 1 - len(setups)):
                where = f"docs/{page}: " + (f"python block {number}" if number else "docs-setup")
                if source.lstrip().startswith(">>>"):
                    doctests += 1
                    _run_doctest(source, namespace, where)
                    continue
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(source, where, "exec"), namespace)
                except Exception as error:
                    raise PluginError(
                        f"{where} of {len(blocks)} raised {type(error).__name__}: {error}"
                    ) from error
        finally:
            os.chdir(start)
    blocks_run[page] = (len(blocks) - doctests, doctests)


def _run_doctest(source: str, namespace: dict[str, Any], where: str) -> None:
    """Run a ``>>>`` transcript in the page's namespace: its output must match."""
    test = doctest.DocTestParser().get_doctest(source, namespace, where, where, 0)
    output = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=_DOCTEST_OPTIONS)
    runner.run(test, out=output.write, clear_globs=False)
    if runner.failures:
        raise PluginError(f"{where}: the doctest transcript does not match:\n{output.getvalue()}")


def on_post_build(config: Any) -> None:
    python = sum(count for count, _ in blocks_run.values())
    doctests = sum(count for _, count in blocks_run.values())
    print(
        f"docs_hooks: ran {python} python blocks and {doctests} doctest blocks "
        f"on {len(blocks_run)} pages"
    )


def _link_repository_files(markdown: str, page: str, repo_url: str) -> str:
    def to_repository(match: re.Match[str]) -> str:
        target = match.group(1)
        if not (ROOT / target).exists():
            raise PluginError(f"docs/{page} links to ../{target}, which does not exist")
        kind = "tree" if (ROOT / target).is_dir() else "blob"
        return f"]({repo_url.rstrip('/')}/{kind}/main/{target})"

    return _REPOSITORY_LINK.sub(to_repository, markdown)


def api_table(module_name: str) -> str:
    """A Markdown table of every public name of ``module_name``, from the docstrings."""
    from kenaz.effects import Op

    module = importlib.import_module(module_name)
    counterpart = _counterpart_module(module_name)
    rows = ["| name | kind | summary |", "| --- | --- | --- |"]
    for name in sorted(module.__all__, key=str.lower):
        value = getattr(module, name)
        if isinstance(value, Op):
            kind, own = "primitive", None
        elif inspect.ismodule(value):
            kind, own = "module", value.__doc__
        elif inspect.isclass(value):
            kind, own = "class", value.__doc__ if value.__module__.startswith("kenaz") else None
        elif callable(value):
            kind, own = "function", value.__doc__
        else:
            kind, own = "constant", None
        summary = _first_line(own) or _counterpart_summary(counterpart, name, kind)
        escaped = summary.replace("|", "\\|")
        rows.append(f"| `{name}` | {kind} | {escaped} |")
    if len(rows) == 2:
        raise PluginError(f"api-table: {module_name} has an empty __all__")
    return "\n".join(rows)


def _counterpart_module(module_name: str) -> Any:
    """The NumPy or SciPy module that ``module_name`` mirrors (None when none does)."""
    mirrored = module_name.replace("kenaz.numpy", "numpy").replace("kenaz.scipy", "scipy")
    if mirrored == module_name:
        return None
    try:
        return importlib.import_module(mirrored)
    except ImportError:
        return None


# Primitives that are kenaz's own, with neither a docstring nor a NumPy or SciPy counterpart.
_OWN_PRIMITIVES = {
    "stop_gradient": "The identity, with a zero derivative: its input is a constant to "
    "every transformation (as `jax.lax.stop_gradient`, PyTorch's `detach`).",
}


def _counterpart_summary(counterpart: Any, name: str, kind: str) -> str:
    if name in _OWN_PRIMITIVES:
        return _OWN_PRIMITIVES[name]
    candidates = [counterpart] if counterpart is not None else []
    with contextlib.suppress(ImportError):  # NumPy-namespace extras from SciPy: erf, expit
        candidates.append(importlib.import_module("scipy.special"))
    for module in candidates:
        if hasattr(module, name):
            where = module.__name__
            line = _first_line(getattr(module, name).__doc__, skip_signature=True)
            if kind == "constant" or not line:
                return f"`{where}.{name}`"
            return f"As `{where}.{name}`: {line}"
    raise PluginError(f"api-table: `{name}` has no docstring and no NumPy/SciPy counterpart")


def _first_line(doc: str | None, skip_signature: bool = False) -> str:
    """The first sentence line of a docstring (after a ufunc's signature line)."""
    if not doc:
        return ""
    paragraphs = [p.strip() for p in inspect.cleandoc(doc).split("\n\n") if p.strip()]
    if skip_signature and paragraphs and re.match(r"^[\w.]+\(.*\)", paragraphs[0]):
        paragraphs = paragraphs[1:]
    return " ".join(paragraphs[0].split()) if paragraphs else ""
