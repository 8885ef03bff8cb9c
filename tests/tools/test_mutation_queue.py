"""Tests for tau.tools.mutation_queue: one writer per file, different files in parallel."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tau.tools import mutation_queue
from tau.tools.mutation_queue import file_mutation, mutation_key


async def test_holders_of_one_file_run_one_after_another(tmp_path: Path) -> None:
    order: list[str] = []

    async def hold(name: str) -> None:
        async with file_mutation(str(tmp_path / "f.txt")):
            order.append(f"{name} in")
            await asyncio.sleep(0.02)
            order.append(f"{name} out")

    await asyncio.gather(hold("a"), hold("b"))
    assert order == ["a in", "a out", "b in", "b out"]


async def test_different_files_are_not_serialised(tmp_path: Path) -> None:
    inside = 0
    peak = 0

    async def hold(name: str) -> None:
        nonlocal inside, peak
        async with file_mutation(str(tmp_path / name)):
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0.02)
            inside -= 1

    await asyncio.gather(hold("a"), hold("b"))
    assert peak == 2


async def test_a_symlink_shares_the_lock_of_its_target(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert mutation_key(str(tmp_path / "link.txt")) == mutation_key(str(tmp_path / "real.txt"))


async def test_locks_are_forgotten_once_nobody_holds_them(tmp_path: Path) -> None:
    async with file_mutation(str(tmp_path / "f.txt")):
        assert mutation_key(str(tmp_path / "f.txt")) in mutation_queue._entries
    assert mutation_key(str(tmp_path / "f.txt")) not in mutation_queue._entries
