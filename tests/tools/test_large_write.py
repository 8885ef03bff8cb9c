"""A write of megabytes whose arguments stream in small deltas finishes in linear time (the real process)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import ScriptedToolCall, Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def test_a_two_megabyte_write_streamed_in_64_byte_deltas_lands_whole_and_fast(tau: TauCommand) -> None:
    content = ("z" * 79 + "\n") * 25_000
    call = ScriptedToolCall("write", {"path": "big.txt", "content": content})
    tau.server.add(Turn(tool_calls=[call], chunk_size=64), Turn(text="written"))
    started = time.monotonic()
    result = tau.run(*MODEL, "-p", "write it", timeout=50)
    # Re-parsing the arguments from the start on every delta takes many minutes here.
    assert time.monotonic() - started < 30
    assert result.returncode == 0, result.stderr
    assert (tau.work / "big.txt").read_text() == content
