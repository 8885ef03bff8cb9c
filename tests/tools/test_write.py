"""Tests for the write tool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.tools import ToolError, create_write_tool


async def test_write_creates_missing_parent_folders(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    result = await run(create_write_tool(str(tmp_path)), {"path": "a/b/c/out.txt", "content": "hello world"})
    assert (tmp_path / "a/b/c/out.txt").read_text() == "hello world"
    assert "11" in text_of(result) and "a/b/c/out.txt" in text_of(result)


async def test_write_overwrites_an_existing_file_exactly_as_given(tmp_path: Path, run: Any) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old content that is longer")
    await run(create_write_tool(str(tmp_path)), {"path": "f.txt", "content": "new\r\nline"})
    assert target.read_bytes() == b"new\r\nline"


async def test_write_reports_utf8_bytes(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    result = await run(create_write_tool(str(tmp_path)), {"path": "u.txt", "content": "héllo"})
    assert "6 bytes" in text_of(result)
    assert (tmp_path / "u.txt").read_bytes() == "héllo".encode()


async def test_writing_onto_a_directory_is_an_error(tmp_path: Path, run: Any) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="EISDIR"):
        await run(create_write_tool(str(tmp_path)), {"path": "d", "content": "x"})


async def test_write_goes_through_the_given_operations(tmp_path: Path, run: Any) -> None:
    calls: list[tuple[str, str]] = []

    class Remote:
        async def write_file(self, path: str, text: str) -> None:
            calls.append(("write", path))

        async def mkdir(self, path: str) -> None:
            calls.append(("mkdir", path))

    await run(create_write_tool("/remote/home", Remote()), {"path": "x/y.txt", "content": "z"})
    assert calls == [("mkdir", "/remote/home/x"), ("write", "/remote/home/x/y.txt")]
