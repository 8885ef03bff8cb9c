"""Every tool on files that never end or never open: a FIFO nobody writes, /dev/zero, /dev/urandom.
A real process per file (a tool stuck in ``open`` would hang this one), with a short timeout: the
call gets an error result, the run finishes, the special file is still there."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fault_campaign import TALLY, Campaign, kill_processes, processes_running, session_lines
from tau_command import MODEL

from tau.testing.fake_llm import ScriptedToolCall, Turn

ALL_TOOLS = ["--tools", "read,write,edit,bash,grep,find,ls"]

TARGETS = {"fifo": "{work}/fifo", "dev-zero": "/dev/zero", "dev-urandom": "/dev/urandom"}

TOOL_CALLS = {
    "read": {},
    "write": {"content": "x"},
    "edit": {"edits": [{"oldText": "a", "newText": "b"}]},
    "grep": {"pattern": "x"},
    "find": {"pattern": "*"},
    "ls": {},
}


def make_fifo(work: Path) -> Path:
    fifo = work / "fifo"
    os.mkfifo(fifo)
    return fifo


def finish_after(campaign: Campaign, calls: list[ScriptedToolCall]) -> None:
    """The model asks for ``calls`` in one reply (they run side by side), then says "done": every
    call gets a result and the run ends; each call counts as one bad input."""
    campaign.server.add(Turn(tool_calls=calls), Turn(text="done"))
    outcome = campaign.process_check(*MODEL, *ALL_TOOLS, "-p", "go", timeout=15)
    TALLY.bad_inputs += len(calls) - 1
    assert outcome.code == 0 and outcome.stdout == "done\n", outcome
    results = [m for m in campaign.server.last_request.body["messages"] if m["role"] == "tool"]
    assert len(results) == len(calls)
    [session] = campaign.session_files()
    session_lines(session)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_tool_on_a_file_that_never_ends(campaign: Campaign, target: str) -> None:
    fifo = make_fifo(campaign.work)
    path = TARGETS[target].replace("{work}", str(campaign.work))
    finish_after(
        campaign,
        [ScriptedToolCall(tool, {**args, "path": path}) for tool, args in sorted(TOOL_CALLS.items())],
    )
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


BASH_COMMANDS = ["cat fifo", "cat /dev/zero", "cat /dev/urandom", "yes", "sleep 987 & echo started"]


def test_bash_on_streams_that_never_end_stops_at_its_timeout(campaign: Campaign) -> None:
    make_fifo(campaign.work)
    try:
        finish_after(
            campaign, [ScriptedToolCall("bash", {"command": c, "timeout": 1}) for c in BASH_COMMANDS]
        )
    finally:  # a process the command put in the background may stay (a server started with &)
        kill_processes(processes_running("sleep 987"))


def test_write_with_20_mb_of_streamed_content(campaign: Campaign) -> None:
    content = "w" * 20_000_000
    call = ScriptedToolCall("write", {"path": "big.txt", "content": content})
    campaign.server.add(Turn(tool_calls=[call], chunk_size=4096), Turn(text="done"))
    outcome = campaign.process_check(*MODEL, *ALL_TOOLS, "-p", "go", timeout=40)
    assert outcome.code == 0 and outcome.stdout == "done\n", outcome
    assert (campaign.work / "big.txt").stat().st_size == len(content)
    [session] = campaign.session_files()
    session_lines(session)
