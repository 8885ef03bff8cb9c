"""Tests for the find tool (rg --files and fd-style globs over real folders)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tau.tools import ToolError, create_find_tool


def make_tree(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


async def test_hidden_files_are_listed_and_gitignored_ones_are_not(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, [".secret/hidden.txt", "visible.txt", "ignored.txt", ".git/HEAD"])
    (tmp_path / ".gitignore").write_text("ignored.txt\n")
    text = text_of(await run(create_find_tool(str(tmp_path)), {"pattern": "*.txt"}))
    assert text.split("\n") == [".secret/hidden.txt", "visible.txt"]


async def test_a_pattern_with_a_slash_matches_the_full_path(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, ["src/a/x.spec.ts", "src/y.spec.ts", "lib/z.spec.ts", "src/a/x.ts"])
    text = text_of(await run(create_find_tool(str(tmp_path)), {"pattern": "src/**/*.spec.ts"}))
    assert text.split("\n") == ["src/a/x.spec.ts", "src/y.spec.ts"]


async def test_a_nested_gitignore_applies_only_to_its_own_folder_even_outside_git(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, ["a/secret.log", "b/secret.log"])
    (tmp_path / "a" / ".gitignore").write_text("secret.log\n")
    text = text_of(await run(create_find_tool(str(tmp_path)), {"pattern": "*.log"}))
    assert text == "b/secret.log"


async def test_matching_folders_are_listed_with_a_trailing_slash(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, ["tests/unit/a.py", "src/tests.txt"])
    text = text_of(await run(create_find_tool(str(tmp_path)), {"pattern": "tests*"}))
    assert text.split("\n") == ["src/tests.txt", "tests/"]


async def test_reaching_the_limit_is_reported(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, [f"f{i}.txt" for i in range(5)])
    result = await run(create_find_tool(str(tmp_path)), {"pattern": "*.txt", "limit": 3})
    body, note = text_of(result).split("\n\n")
    assert body.split("\n") == ["f0.txt", "f1.txt", "f2.txt"]
    assert "3 results" in note and "limit=6" in note
    assert result.details["resultLimitReached"] == 3


async def test_no_results_says_so(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, ["a.txt"])
    result = await run(create_find_tool(str(tmp_path)), {"pattern": "*.rs"})
    assert text_of(result) == "No files found matching pattern"


async def test_node_modules_is_skipped(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, ["node_modules/pkg/index.js", "main.js"])
    assert text_of(await run(create_find_tool(str(tmp_path)), {"pattern": "*.js"})) == "main.js"


async def test_a_missing_folder_is_an_error(tmp_path: Path, run: Any) -> None:
    with pytest.raises(ToolError, match="Path not found"):
        await run(create_find_tool(str(tmp_path)), {"pattern": "*", "path": "nope"})


async def test_custom_operations_replace_the_walk_and_results_are_made_relative(
    run: Any, text_of: Callable[..., str]
) -> None:
    calls: list[tuple[str, str, int]] = []

    class Remote:
        async def exists(self, path: str) -> bool:
            return True

        async def glob(self, pattern: str, cwd: str, *, ignore: Sequence[str], limit: int) -> list[str]:
            calls.append((pattern, cwd, limit))
            return ["/srv/app/src/main.py", "docs/"]

    result = await run(create_find_tool("/srv/app", Remote()), {"pattern": "*"})
    assert calls == [("*", "/srv/app", 1000)]
    assert text_of(result) == "src/main.py\ndocs/"
