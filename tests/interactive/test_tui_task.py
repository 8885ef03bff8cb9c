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


def test_tree_lists_the_childs_transcript_under_the_call_and_opens_it(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": "Count the moons of Mars."})]),
        Turn(text="Mars has two moons."),
        Turn(text="The child counted."),
    )
    terminal = start_tui("--tools", "+task", cols=160)
    terminal.type("delegate")
    terminal.send(ENTER)
    terminal.wait_for("The child counted.")
    terminal.type("/tree")
    terminal.send(ENTER)
    terminal.wait_for("Session tree", where="display")
    terminal.wait_for("⤷ sub-agent (1 turn): open its transcript", where="display")
    terminal.type("sub-agent")
    terminal.wait_for("›       ⤷ sub-agent", where="display")
    terminal.send(ENTER)
    # The child's conversation is now the session on screen: its prompt and its answer, not the parent's.
    terminal.wait_for(
        lambda: (
            " Count the moons of Mars." in terminal.display().splitlines()
            and "The child counted." not in terminal.display()
        )
    )
    assert "Mars has two moons." in terminal.display()
