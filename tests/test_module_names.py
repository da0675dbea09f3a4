"""No public name of a kenaz package shadows one of its own modules.

``kenaz.jit`` is the function, so the jit pipeline cannot live in ``kenaz/jit.py``:
``import kenaz.jit`` would load a module that ``kenaz.jit`` no longer names, and
tools that resolve dotted paths (the API reference, ``pickle``, debuggers) would
find one or the other depending on the order of imports.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import kenaz


def test_no_attribute_of_a_package_shadows_its_submodule() -> None:
    for found in pkgutil.walk_packages(kenaz.__path__, "kenaz."):
        try:
            importlib.import_module(found.name)
        except ImportError:  # an optional dependency missing: that module cannot be checked
            continue
    shadowed = []
    for name, module in sorted(sys.modules.items()):
        parent_name, _, leaf = name.rpartition(".")
        if not name.startswith("kenaz.") or parent_name not in sys.modules:
            continue
        value = getattr(sys.modules[parent_name], leaf, module)
        if value is not module:
            shadowed.append(f"{name} (shadowed by a {type(value).__name__})")
    assert not shadowed, f"rename these modules after their content: {shadowed}"
