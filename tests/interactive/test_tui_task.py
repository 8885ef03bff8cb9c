"""The task tool in the real terminal UI (issue #35): the child's tool calls show under the call
while it runs, and its answer is the call's output."""

from __future__ import annotations

from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]


def test_childs_progress_shows_under_the_task_call(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": "Check the clock."})]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 2; echo tick"})]),
        Turn(text="The clock ticks."),
        Turn(text="Delegated and done."),
    )
    terminal = start_tui("--tools", "+task", cols=160)
    terminal.type("delegate")
    terminal.send(ENTER)
    terminal.wait_for("bash sleep 2; echo tick")  # the child's call, while it runs
    terminal.wait_for("Delegated and done.")
    assert "The clock ticks." in terminal.display()
