"""The read tool keeps no more of a file than its window can show (the real process, its peak memory)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import ScriptedToolCall, Turn

# Runs tau as its only child and prints tau's peak RSS in KB.
PEAK_RSS = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

FILE_MB = 200


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def test_reading_a_200_mb_text_file_keeps_memory_flat_and_counts_every_line(tau: TauCommand) -> None:
    line = b"0123456789" * 9 + b"abcdefghi\n"  # 100 bytes
    with open(tau.work / "big.log", "wb") as file:
        block = line * 10_000
        for _ in range(FILE_MB * 1_000_000 // len(block)):
            file.write(block)
    call = ScriptedToolCall("read", {"path": "big.log", "offset": 1_000_001, "limit": 3}, id="call_big")
    tau.server.add(Turn(tool_calls=[call]), Turn(text="ok"))
    out = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "tau", *MODEL, "-p", "read it"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    peak_mb = int(out.stdout.strip()) / 1024
    [result] = [m for m in tau.server.requests[1].body["messages"] if m["role"] == "tool"]
    text = json.dumps(result["content"])
    assert "0123456789" in text and "[999998 more lines in file. Use offset=1000004 to continue.]" in text
    assert peak_mb < FILE_MB, f"tau peaked at {peak_mb:.0f} MB reading a {FILE_MB} MB file"
