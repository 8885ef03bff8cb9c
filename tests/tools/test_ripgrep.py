"""Tests for tau.tools.ripgrep: finding rg and streaming its lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tau.ai.abort import AbortController
from tau.tools.errors import ToolAborted
from tau.tools.ripgrep import find_rg, run_rg


def test_the_rg_of_the_ripgrep_wheel_is_found() -> None:
    rg = find_rg()
    assert rg is not None and os.access(rg, os.X_OK)


def test_a_bin_dir_with_rg_comes_first(tmp_path: Path) -> None:
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_rg(str(tmp_path)) == str(fake)


async def test_lines_longer_than_a_read_chunk_arrive_whole(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("needle" + "x" * 300_000 + "\nneedle 2\n")
    lines: list[bytes] = []
    outcome = await run_rg(
        [str(find_rg()), "needle", "f.txt"], str(tmp_path), lambda b: lines.append(b) or True, None
    )
    assert outcome.exit_code == 0 and not outcome.stopped
    assert [len(line) for line in lines] == [300_006, 8]


async def test_returning_false_stops_rg(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hit\n" * 100_000)
    seen: list[bytes] = []

    def take_three(line: bytes) -> bool:
        seen.append(line)
        return len(seen) < 3

    outcome = await run_rg([str(find_rg()), "hit", "f.txt"], str(tmp_path), take_three, None)
    assert outcome.stopped and len(seen) == 3


async def test_an_aborted_search_raises(tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolAborted):
        await run_rg([str(find_rg()), "x", "."], str(tmp_path), lambda b: True, controller.signal)
