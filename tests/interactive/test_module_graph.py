"""The interactive mode's modules as a newcomer can follow them (issue #33 §3): their imports form
a tree (a type-only import under ``TYPE_CHECKING`` aside), and none reaches into another object's
private (``_x``) attributes; each helper takes the narrow protocol it needs instead."""

from __future__ import annotations

import ast
from pathlib import Path

import tau.modes.interactive

_PACKAGE = "tau.modes.interactive"
_ROOT = Path(tau.modes.interactive.__file__).parent


def _modules(root: Path, package: str) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """Every module ``module`` imports when it runs: at the top or inside a function, not under
    ``if TYPE_CHECKING:``; ``from p import name`` counts as ``p`` and as ``p.name``."""
    found: set[str] = set()
    base = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.orelse:
                    visit_one(statement)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                anchor = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                source = f"{anchor}.{source}" if source else anchor
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)
        visit(node)

    visit(tree)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module → the package's modules it imports when it runs (the package's ``__init__`` left
    out as a target: importing a submodule runs it first, whoever imports)."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = _runtime_imports(ast.parse(path.read_text()), name, path.name == "__init__.py")
        graph[name] = {m for m in imported if m in modules and m != name and not name.startswith(m + ".")}
        graph[name].discard(package)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A cycle through each back edge a depth-first walk meets; none when the graph is a tree
    (or a forest sharing leaves)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                walk(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    return found


def private_accesses(path: Path) -> list[str]:
    """``obj._name`` where ``obj`` is not ``self`` or ``cls``: a private attribute of another object."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        out.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_the_interactive_modes_imports_form_a_tree() -> None:
    assert cycles(import_graph(_ROOT, _PACKAGE)) == []


def test_no_interactive_module_touches_another_objects_private_attributes() -> None:
    assert [line for path in sorted(_ROOT.rglob("*.py")) for line in private_accesses(path)] == []


def test_no_interactive_helper_imports_the_whole_mode() -> None:
    """Not even for a type: a helper names the protocol it needs (``host`` and its own)."""
    importers = [
        path.name
        for path in sorted(_ROOT.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and any(alias.name == "InteractiveMode" for alias in node.names)
    ]
    assert importers == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    root.mkdir()
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).write_text(text)
    return root


def test_the_check_finds_a_circle_made_by_an_import_inside_a_function(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from pkg import b\n",
            "b.py": "def late():\n    from pkg.a import thing\n",
        },
    )
    assert cycles(import_graph(root, "pkg")) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_the_check_leaves_a_type_only_import_out(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "a.py": "from pkg import b\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import Thing\n",
        },
    )
    assert cycles(import_graph(root, "pkg")) == []


def test_the_check_finds_another_objects_private_attribute_but_not_selfs(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("class A:\n    def f(self, mode):\n        self._own = mode._theirs\n")
    assert private_accesses(source) == ["m.py:3: mode._theirs"]
