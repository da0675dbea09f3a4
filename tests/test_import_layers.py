"""The imports of src/kenaz flow one way: no cycle, and no module imports a layer above its own.

The layers, lowest first (docs/architecture.md): errors, tree and backend; tensor;
effects; the primitives (ops/, and call.py, the call op); the
transformations; the numpy and scipy namespaces; testing; nn, optim, train
and the data utilities. Only imports a module runs when it loads count (at
module level, also inside a top-level ``if``/``try``, but not under ``if
TYPE_CHECKING``); an import inside a function is how a module reaches one
above it at run time, and carries a comment saying why. The tests named
"counting imports inside functions" add those: with them too there is no
cycle and no import up the layers, except those listed in DEFERRED_EXCEPTIONS
with their reasons.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "src"

# Layer of each module, by the longest matching name prefix.
LAYERS: dict[str, int] = {
    "kenaz.errors": 0,
    "kenaz.tree": 0,
    "kenaz.backend": 0,  # array namespaces: below Tensor, which keeps backends' values
    "kenaz.type_names": 0,  # how printers write a tensor's type: NumPy alone
    "kenaz.tensor": 1,
    "kenaz.ndarray_methods": 1,  # the base class of Tensor: its ndarray methods and attributes
    "kenaz.convert": 3,  # converting arguments to tensors: beside the ops, which use it
    "kenaz.effects": 2,
    "kenaz.rule_tables": 2,  # an op's rule and saves tables, as effects.Op keeps them
    "kenaz.operators": 2,  # Tensor's operators: perform's eager path inlined
    "kenaz.ops": 3,
    "kenaz.call": 3,
    "kenaz.transform": 4,
    "kenaz.checks": 4,
    "kenaz.forward": 4,
    "kenaz.reverse": 4,
    "kenaz.vectorize": 4,
    "kenaz.custom_jvp_rule": 4,
    "kenaz.custom_vjp_rule": 4,
    "kenaz.rematerialize": 4,
    "kenaz.root": 4,
    "kenaz.lifted": 4,
    "kenaz.closures": 3,
    "kenaz.jacobians": 4,
    "kenaz.no_grad_handler": 4,
    "kenaz.debugging": 4,
    "kenaz.mutation": 4,
    "kenaz.graphing": 4,
    "kenaz.compiler": 4,  # the jit pipeline: program, passes, codegen, staged, api
    "kenaz.numpy": 5,
    "kenaz.scipy": 5,
    "kenaz.testing": 6,
    "kenaz.nn": 7,
    "kenaz.optim": 7,
    "kenaz.train": 7,
    "kenaz.distributed": 7,
    "kenaz.data": 7,
    "kenaz.io": 7,
    "kenaz": 8,  # the package itself gathers everything
}
LAYER_NAMES = [
    "errors/tree/backend",
    "tensor",
    "effects",
    "ops",
    "transformations",
    "numpy/scipy namespaces",
    "testing",
    "nn/optim/train",
    "the package",
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SOURCE / "kenaz").rglob("*.py"):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    name = module
    while name not in LAYERS:
        if "." not in name:
            raise KeyError(module)
        name = name.rsplit(".", 1)[0]
    # A package's own __init__ and its submodules share the entry, except `kenaz` itself.
    if name == "kenaz" and module != "kenaz":
        raise KeyError(module)
    return LAYERS[name]


def _load_time_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run when the module loads (not those in functions or classes)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            test = node.test
            is_type_checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            )
            if not is_type_checking:
                found += _load_time_imports(node.body)
            found += _load_time_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                found += _load_time_imports(block)
            for handler in node.handlers:
                found += _load_time_imports(handler.body)
    return found


def _all_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, also inside functions and classes (not under TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return found


def imports_of(module: str, deferred: bool = False) -> set[str]:
    """The kenaz modules ``module`` imports when it loads (``deferred``: also inside functions)."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    body = ast.parse(path.read_text()).body
    for node in _all_imports(body) if deferred else _load_time_imports(body):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            # `from package import module` imports that module; `from module import name`, module
            names = [name for name in submodules if name in MODULES] or [base]
        targets.update(name for name in names if name in MODULES and name != module)
    return targets


GRAPH = {module: imports_of(module) for module in MODULES}
# Imports inside functions too: a deferred import that closes a loop is still a loop in the
# design (python3 ../shared/hooks/import_cycles.py --all src). A lower layer that needs a
# higher one is handed what it needs by registration (Tensor's methods by
# kenaz.numpy._tensor_methods, shape ops' getitem and casts by ops.shape.provide, the
# assembled kenaz.numpy by numpy/_namespace), never by an import at the call.
GRAPH_WITH_DEFERRED = {module: imports_of(module, deferred=True) for module in MODULES}

# The imports inside functions still allowed to go up the layers or close a loop, each with
# its reason. Remove an entry when its import goes (test_every_exception_is_still_needed).
DEFERRED_EXCEPTIONS: dict[tuple[str, str], str] = {}  # none left (issue 23 item 8)


def _without_exceptions(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {
        module: {t for t in targets if (module, t) not in DEFERRED_EXCEPTIONS}
        for module, targets in graph.items()
    }


def test_every_module_has_a_layer():
    unplaced = []
    for module in MODULES:
        try:
            layer_of(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, f"add these modules to LAYERS in {__file__}: {unplaced}"


def test_no_module_imports_a_layer_above_its_own():
    upward = [
        f"{module} ({LAYER_NAMES[layer_of(module)]}) imports {target} "
        f"({LAYER_NAMES[layer_of(target)]})"
        for module, targets in GRAPH.items()
        if module != "kenaz"
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, "imports that go up the layers:\n" + "\n".join(upward)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_no_import_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "modules that import each other: " + " -> ".join(cycle or [])


def test_no_import_cycle_counting_imports_inside_functions():
    cycle = find_cycle(_without_exceptions(GRAPH_WITH_DEFERRED))
    assert cycle is None, (
        "modules that import each other (counting imports inside functions): "
        + " -> ".join(cycle or [])
        + "; hand the lower module what it needs by registration, or list the import, with "
        "its reason, in DEFERRED_EXCEPTIONS"
    )


def test_no_import_inside_a_function_goes_up_the_layers():
    upward = [
        f"{module} ({LAYER_NAMES[layer_of(module)]}) imports {target} "
        f"({LAYER_NAMES[layer_of(target)]}) inside a function"
        for module, targets in _without_exceptions(GRAPH_WITH_DEFERRED).items()
        if module != "kenaz"
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, "imports that go up the layers:\n" + "\n".join(upward)


def test_every_exception_is_still_needed():
    gone = [pair for pair in DEFERRED_EXCEPTIONS if pair[1] not in GRAPH_WITH_DEFERRED[pair[0]]]
    assert not gone, f"remove these from DEFERRED_EXCEPTIONS, their imports are gone: {gone}"


def test_ops_never_import_a_transformation():
    transformations = {m for m in MODULES if m != "kenaz" and layer_of(m) >= 4}
    offending = {
        module: sorted(GRAPH[module] & transformations)
        for module in MODULES
        if module.startswith("kenaz.ops") and GRAPH[module] & transformations
    }
    assert not offending


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"a"}}, ["a", "a"]),
    ],
)
def test_the_cycle_finder_finds_cycles(graph, expected):
    assert find_cycle(graph) == expected


def test_the_import_parser_sees_imports_inside_functions_when_asked():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .effects import Op\n"
        "def later():\n    from . import reverse\n"
        "class Later:\n    def method(self):\n        import kenaz.tensor\n"
    )
    found = sorted(ast.unparse(node) for node in _all_imports(ast.parse(source).body))
    assert found == [
        "from . import reverse",
        "from typing import TYPE_CHECKING",
        "import kenaz.tensor",
    ]


def test_the_import_parser_sees_load_time_imports_only(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import tensor\n"
        "if TYPE_CHECKING:\n    from .effects import Op\n"
        "try:\n    from .ops import shape\nexcept ImportError:\n    pass\n"
        "def later():\n    from . import reverse\n"
    )
    tree = ast.parse(source)
    found = [ast.unparse(node) for node in _load_time_imports(tree.body)]
    assert found == [
        "from typing import TYPE_CHECKING",
        "from . import tensor",
        "from .ops import shape",
    ]


def test_tensor_operators_are_bound_to_primitives():
    """Every global name tensor.py's functions read exists once kenaz is imported.

    The operators and methods read names (``add``, ``perform_args``, ...) that
    kenaz.numpy._tensor_methods binds; one left unbound would fail only when called.
    """
    import builtins
    import dis
    import types

    import kenaz.tensor

    def codes(code: types.CodeType):
        yield code
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                yield from codes(constant)

    source = MODULES["kenaz.tensor"].read_text()
    module_code = compile(source, str(MODULES["kenaz.tensor"]), "exec")
    read = {
        instruction.argval
        for code in codes(module_code)
        if code is not module_code
        for instruction in dis.get_instructions(code)
        if instruction.opname == "LOAD_GLOBAL"
    }
    unbound = sorted(n for n in read if n not in vars(kenaz.tensor) and not hasattr(builtins, n))
    assert not unbound, f"kenaz.numpy._tensor_methods does not bind {unbound}"
    assert {"perform_args", "add", "_numpy_api"} <= read


def test_the_architecture_page_names_every_module_in_its_layer_table():
    """docs/architecture.md's layer table has a row for each module, in the module's layer."""
    page = (SOURCE.parent / "docs" / "architecture.md").read_text()
    section = page[page.index("## Layers") :]
    section = section[: section.index("\n## ")]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`") and cells[0][:1].isdigit():
            rows[cells[1].strip("`")] = int(cells[0].split()[0])
    missing, misplaced = [], []
    for module, path in MODULES.items():
        name = str(path.relative_to(SOURCE / "kenaz"))
        if name not in rows:
            missing.append(name)
        elif module != "kenaz" and rows[name] != layer_of(module):
            misplaced.append(f"{name}: table says {rows[name]}, LAYERS {layer_of(module)}")
    assert not missing, f"add rows to docs/architecture.md's layer table for {sorted(missing)}"
    assert not misplaced, "docs/architecture.md's layer table disagrees: " + "; ".join(misplaced)


def test_only_effects_touches_the_private_handler_stack():
    """The handler stack `_handlers` is effects.py's: others use its public functions
    (`installed_stack`, `handlers_installed`, `current_handlers`, `no_handlers`...)."""
    readers = [
        str(path.relative_to(SOURCE))
        for module, path in MODULES.items()
        if module != "kenaz.effects" and re.search(r"\b_handlers\b", path.read_text())
    ]
    assert not readers, f"modules reading kenaz.effects._handlers: {readers}"
