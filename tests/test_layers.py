"""The layering of ``src/tau`` as ``pyproject.toml`` ``[tool.check-layers]`` states it.

A package may import its own modules and packages of a lower rank; the private modules at the root
of ``tau`` (and ``tau.errors``) are shared by all. The same rule ``../shared/tools/check-layers.py``
applies, held here so a clean clone checks it too.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "tau"


def _ranks() -> tuple[dict[str, int], set[tuple[str, str]]]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["check-layers"]
    return {str(k): int(v) for k, v in table["rank"].items()}, {(a, b) for a, b in table.get("sideways", [])}


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def test_every_package_of_tau_has_a_rank() -> None:
    ranks, _ = _ranks()
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages - set(ranks) == set()


def test_no_module_imports_a_package_of_its_own_rank_or_above() -> None:
    ranks, sideways = _ranks()
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        here = path.relative_to(SRC).parts[0].removesuffix(".py")
        if here not in ranks:
            continue
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[0] != "tau" or len(parts) < 2 or parts[1] == here or parts[1] not in ranks:
                continue
            there = parts[1]
            if ranks[there] > ranks[here] or (ranks[there] == ranks[here] and (here, there) not in sideways):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: tau.{here} imports tau.{there}")
    assert wrong == []


def test_tau_package_imports_no_layer_eagerly() -> None:
    """``import tau`` loads only the private helpers at its root; layers come on first access."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    eager = [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("tau.")
        and not node.module.split(".")[1].startswith("_")
    ]
    assert eager == []
