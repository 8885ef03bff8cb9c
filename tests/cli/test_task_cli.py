"""`--tools +task` in a real `tau` process (issue #35): the child's work streams as updates of the
parent's tool call and its transcript is a second session file naming the first."""

from __future__ import annotations

import json
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_json_mode_streams_the_childs_tool_calls_under_the_task_call(tau: TauCommand) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": "Say hi with bash."}, id="task_1")]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi-from-child"})]),
        Turn(text="The child printed hi."),
        Turn(text="All done."),
    )
    result = tau.run(*MODEL, "--tools", "+task", "--mode", "json", "delegate it")
    assert result.returncode == 0, result.stderr
    events = _events(result.stdout)
    updates = [e for e in events if e["type"] == "tool_execution_update" and e["toolCallId"] == "task_1"]
    assert any("bash echo hi-from-child" in json.dumps(e["partialResult"]) for e in updates)
    nested = [e for e in events if e.get("parentToolCallId") == "task_1"]
    assert [e["type"] for e in nested if e["type"] != "tool_execution_update"] == [
        "tool_execution_start",
        "tool_execution_end",
    ]
    assert {e["toolName"] for e in nested} == {"bash"}
    assert all(str(e["toolCallId"]).startswith("task_1/") for e in nested)
    assert "hi-from-child" in json.dumps(nested[-1]["result"])
    [end] = [e for e in events if e["type"] == "tool_execution_end" and e["toolCallId"] == "task_1"]
    assert end["isError"] is False
    assert end["result"]["content"] == [{"type": "text", "text": "The child printed hi."}]
    child_file = end["result"]["details"]["sessionFile"]
    parent_file = next(str(p) for p in tau.session_files() if str(p) != child_file)
    header = json.loads(Path(child_file).read_text(encoding="utf-8").splitlines()[0])
    assert header["parentSession"] == parent_file


def test_task_is_off_unless_asked_for(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    names = [tool["function"]["name"] for tool in tau.server.last_request.body["tools"]]
    assert "task" not in names and "bash" in names


def test_tools_flag_naming_task_gives_no_unknown_tool_warning(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--tools", "read,task", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "no tool named" not in result.stderr
    names = [tool["function"]["name"] for tool in tau.server.last_request.body["tools"]]
    assert names == ["read", "task"]


def test_a_child_killed_with_its_parent_leaves_no_process_and_readable_transcripts(tau: TauCommand) -> None:
    import signal
    import time

    pid_file = tau.work / "child-sleep.pid"
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": "Wait a long time."}, id="task_1")]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"sleep 300 & echo $! > {pid_file}; wait"})]),
        Turn(text="never reached"),
    )
    process = tau.popen(*MODEL, "--tools", "+task", "-p", "delegate it")
    deadline = time.time() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.time() < deadline:
        time.sleep(0.05)
    sleeper = int(pid_file.read_text())
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 143, stderr
    deadline = time.time() + 5
    while _alive(sleeper) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(sleeper), "the child's command outlived tau"
    files = tau.session_files()
    assert len(files) == 2
    for path in files:
        for line in path.read_text().splitlines():
            json.loads(line)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, waiting for its parent to read it
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
