"""Tests for the local operations in tau.tools.operations."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.tools.operations import LocalFileOperations, LocalGrepOperations


async def test_local_files_round_trip_text_exactly(tmp_path: Path) -> None:
    ops = LocalFileOperations()
    await ops.mkdir(str(tmp_path / "a" / "b"))
    await ops.write_file(str(tmp_path / "a" / "b" / "f.txt"), "x\r\ny\n")
    assert await ops.read_file(str(tmp_path / "a" / "b" / "f.txt")) == b"x\r\ny\n"


async def test_access_refuses_missing_files_and_directories(tmp_path: Path) -> None:
    ops = LocalFileOperations()
    with pytest.raises(FileNotFoundError):
        await ops.access(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        await ops.access(str(tmp_path))


async def test_grep_reads_non_utf8_files_leniently(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"caf\xe9\n")
    assert await LocalGrepOperations().read_file(str(tmp_path / "f.txt")) == "caf\ufffd\n"


async def test_ls_operations_list_and_classify(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    ops = LocalFileOperations()
    assert await ops.readdir(str(tmp_path)) == ["d"]
    assert await ops.is_directory(str(tmp_path / "d"))
    assert await ops.exists(str(tmp_path / "d")) and not await ops.exists(str(tmp_path / "x"))
