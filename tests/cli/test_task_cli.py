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
