"""stdout belongs to a mode's own output (RPC lines, JSON events, the printed answer) whatever an
extension prints, at import or in a handler, and whatever a process it starts writes; all of that
goes to stderr. The extension loads once in each of these modes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import text_turn, tool_turn

LOUD_EXTENSION = """
import os
import subprocess
import sys

with open(os.environ["LOUD_MARKER"], "a") as marker:
    marker.write("loaded\\n")
print("printed at load")
subprocess.run(["echo", "echoed by a child at load"])


def setup(tau):
    @tau.on("tool_call")
    async def loud(event, ctx):
        sys.stdout.write("written in a hook\\n")
        os.system("echo echoed by a child in a hook")
"""

STRAY = ("printed at load", "echoed by a child at load", "written in a hook", "echoed by a child in a hook")


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    for command in tau_command(tmp_path):
        (command.work / "loud.py").write_text(LOUD_EXTENSION)
        command.env["LOUD_MARKER"] = str(tmp_path / "marker")
        command.server.add(tool_turn("bash", {"command": "echo listed"}), text_turn("Listed."))
        yield command


def run(tau: TauCommand, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "-e", "./loud.py", *args],
        cwd=tau.work,
        env=tau.env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def assert_stray_output_on_stderr(tau: TauCommand, stderr: str) -> None:
    for text in STRAY:
        assert stderr.count(text) == 1, f"{text!r} not once in stderr:\n{stderr}"
    assert (tau.work.parent / "marker").read_text() == "loaded\n"  # the extension loaded once


def test_every_rpc_stdout_line_is_protocol_json_and_stray_output_goes_to_stderr(tau: TauCommand) -> None:
    # End of input does not drop the running prompt: its events are all written before the exit.
    done = run(
        tau, "--mode", "rpc", stdin=json.dumps({"id": "p", "type": "prompt", "message": "List"}) + "\n"
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {
        "id": "p",
        "type": "response",
        "command": "prompt",
        "success": True,
        "data": lines[0]["data"],
    }
    assert lines[-1]["type"] == "agent_settled"
    ends = [line for line in lines if line["type"] == "tool_execution_end"]
    assert ends[0]["result"]["content"][0]["text"] == "listed\n"
    assert_stray_output_on_stderr(tau, done.stderr)


def test_every_json_mode_stdout_line_is_an_event_and_stray_output_goes_to_stderr(tau: TauCommand) -> None:
    done = run(tau, "--mode", "json", "List")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[-1]["type"] == "agent_settled"
    assert_stray_output_on_stderr(tau, done.stderr)


def test_print_mode_stdout_is_the_answer_alone_and_stray_output_goes_to_stderr(tau: TauCommand) -> None:
    done = run(tau, "-p", "List")
    assert done.stdout == "Listed.\n"
    assert_stray_output_on_stderr(tau, done.stderr)
