"""Tests for the ls tool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.tools import ToolError, create_ls_tool


async def test_entries_are_sorted_case_insensitively_with_dotfiles_and_folder_slashes(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    for name in ("b.txt", "A.txt", ".env"):
        (tmp_path / name).write_text("")
    (tmp_path / "Docs").mkdir()
    assert text_of(await run(create_ls_tool(str(tmp_path)), {})).split("\n") == [
        ".env",
        "A.txt",
        "b.txt",
        "Docs/",
    ]


async def test_an_empty_folder_says_so(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    assert text_of(await run(create_ls_tool(str(tmp_path)), {})) == "(empty directory)"


async def test_a_file_is_not_a_directory(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("")
    with pytest.raises(ToolError, match="Not a directory"):
        await run(create_ls_tool(str(tmp_path)), {"path": "f.txt"})


async def test_a_missing_path_is_not_found(tmp_path: Path, run: Any) -> None:
    with pytest.raises(ToolError, match="Path not found"):
        await run(create_ls_tool(str(tmp_path)), {"path": "nope"})


async def test_the_entry_limit_is_reported(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    for i in range(5):
        (tmp_path / f"f{i}").write_text("")
    result = await run(create_ls_tool(str(tmp_path)), {"limit": 2})
    body, note = text_of(result).split("\n\n")
    assert body == "f0\nf1" and "2 entries" in note and "limit=4" in note


async def test_a_dangling_symlink_is_skipped(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    (tmp_path / "real").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    assert text_of(await run(create_ls_tool(str(tmp_path)), {})) == "real"


async def test_gitignored_entries_are_still_listed(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / ".gitignore").write_text("ignored\n")
    (tmp_path / "ignored").write_text("")
    assert "ignored" in text_of(await run(create_ls_tool(str(tmp_path)), {})).split("\n")
