"""The import graph of ``src/tau`` is a tree: no circle of modules outside type-only imports.

Every import counts, those inside functions too (a late import hides a circle, it does not end
it); an import under ``if TYPE_CHECKING:`` does not, as it never runs.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in (root / "tau").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = (
                test.id
                if isinstance(test, ast.Name)
                else test.attr
                if isinstance(test, ast.Attribute)
                else ""
            )
            if name == "TYPE_CHECKING":
                skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = _modules(root)
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([base] if base else [])])
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_circle_of_imports_in_src_tau() -> None:
    assert circles(import_graph(SRC)) == []


def test_a_late_import_that_closes_a_circle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "tau"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from tau.b import x\n")
    (package / "b.py").write_text("def x():\n    from tau import a\n")
    assert circles(import_graph(tmp_path)) == [["tau.a", "tau.b"]]


def test_a_type_only_import_is_not_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "tau"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from tau.b import x\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tau.a import y\nx = 1\n"
    )
    assert circles(import_graph(tmp_path)) == []
