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
    terminal.wait_for("Session Tree", where="display")
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


def test_escape_aborts_every_running_child(tau: TauCommand, start_tui: Start) -> None:
    import json
    import time

    from terminal import ESCAPE

    from tau.testing.fake_llm import Fault

    stall = Fault(kind="stall", after_events=1, seconds=30)
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("task", {"prompt": "First slow job."}, id="t1"),
                ScriptedToolCall("task", {"prompt": "Second slow job."}, id="t2"),
            ]
        ),
        Turn(text="never one", fault=stall),
        Turn(text="never two", fault=stall),
        Turn(text="after the abort"),
    )
    terminal = start_tui("--tools", "+task", cols=160)
    terminal.type("delegate")
    terminal.send(ENTER)
    terminal.wait_for(lambda: len(tau.server.requests) >= 3)  # both children are waiting on a reply
    started = time.monotonic()
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: len(tau.session_files()) == 3 and all(_ended(f) for f in tau.session_files()))
    assert time.monotonic() - started < 10
    # The parent's two results are errors.
    parent = next(f for f in tau.session_files() if "parentSession" not in f.read_text().splitlines()[0])
    results = [
        e["message"]
        for e in map(json.loads, parent.read_text().splitlines())
        if e.get("type") == "message" and e["message"].get("role") == "toolResult"
    ]
    assert [(r["toolCallId"], r["isError"]) for r in results] == [("t1", True), ("t2", True)]
    assert len(tau.server.requests) == 3  # nothing asked the model after the abort


def _ended(path: object) -> bool:
    """The transcript's last entry is an aborted reply (each child's, and the parent's after them)."""
    import json
    from pathlib import Path

    lines = Path(str(path)).read_text().splitlines()
    message = json.loads(lines[-1]).get("message", {}) if lines else {}
    return message.get("role") == "assistant" and message.get("stopReason") == "aborted"
