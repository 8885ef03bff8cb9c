"""Tools given a FIFO or a device answer the model with an error at once instead of hanging the run.

Over the real `tau` process: a hang there is a run that never ends, and a read of /dev/zero is a
process that grows until the kernel kills it (so that run is held under a memory limit).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import ScriptedToolCall, Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def _tool_results(tau: TauCommand) -> dict[str, str]:
    messages = tau.server.requests[1].body["messages"]
    return {m["tool_call_id"]: json.dumps(m["content"]) for m in messages if m["role"] == "tool"}


def test_every_file_tool_refuses_a_fifo_with_no_writer(tau: TauCommand) -> None:
    fifo = str(tau.work / "pipe")
    os.mkfifo(fifo)
    calls = {
        "read": {"path": fifo},
        "write": {"path": fifo, "content": "text"},
        "edit": {"path": fifo, "edits": [{"oldText": "a", "newText": "b"}]},
        "grep": {"pattern": "a", "path": fifo},
        "find": {"pattern": "*", "path": fifo},
        "ls": {"path": fifo},
    }
    turn = Turn(tool_calls=[ScriptedToolCall(name, args, id=f"call_{name}") for name, args in calls.items()])
    tau.server.add(turn, Turn(text="done"))
    result = tau.run(*MODEL, "--tools", ",".join(calls), "-p", "look at the pipe", timeout=30)
    assert result.returncode == 0, result.stderr
    results = _tool_results(tau)
    for name in ("read", "write", "edit", "grep"):
        assert "named pipe (FIFO), not a regular file" in results[f"call_{name}"], results
    assert "Not a directory" in results["call_find"] and "Not a directory" in results["call_ls"]


def _limit_memory() -> None:
    limit = 2 * 1024 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_read_of_an_endless_device_is_refused(tau: TauCommand) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "/dev/zero"}, id="call_zero")]), Turn(text="ok")
    )
    result = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "-p", "read it"],
        cwd=tau.work,
        env=tau.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_limit_memory,
    )
    assert result.returncode == 0, result.stderr
    assert "character device, not a regular file" in _tool_results(tau)["call_zero"]
