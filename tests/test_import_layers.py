"""The imports of src/kenaz flow one way: no cycle, and no module imports a layer above its own.

The layers, lowest first (docs/architecture.md): errors, tree and backend; tensor;
effects; the primitives (ops/, and call.py, the call op); the
transformations; the numpy and scipy namespaces; testing; nn, optim, train
and the data utilities. Only imports a module runs when it loads count (at
module level, also inside a top-level ``if``/``try``, but not under ``if
TYPE_CHECKING``); an import inside a function is how a module reaches one
above it at run time, and carries a comment saying why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "src"

# Layer of each module, by the longest matching name prefix.
LAYERS: dict[str, int] = {
    "kenaz.errors": 0,
    "kenaz.tree": 0,
    "kenaz.backend": 0,  # array namespaces: below Tensor, which keeps backends' values
    "kenaz.tensor": 1,
    "kenaz.convert": 3,  # converting arguments to tensors: beside the ops, which use it
    "kenaz.effects": 2,
    "kenaz.ops": 3,
    "kenaz.call": 3,
    "kenaz.transform": 4,
    "kenaz.forward": 4,
    "kenaz.reverse": 4,
    "kenaz.vectorize": 4,
    "kenaz.custom_jvp_rule": 4,
    "kenaz.custom_vjp_rule": 4,
    "kenaz.rematerialize": 4,
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


def imports_of(module: str) -> set[str]:
    """The kenaz modules ``module`` imports when it loads."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in _load_time_imports(ast.parse(path.read_text()).body):
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
