"""A codemode script's inner calls in the terminal UI: shown inside the codemode call, not as
tool calls of their own (as pi 1.6 shows them)."""

from __future__ import annotations

from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]


def test_inner_calls_have_no_blocks_of_their_own(tau: TauCommand, start_tui: Start) -> None:
    script = "return (await tools.bash({ command: 'echo inner-$((6*7))' })).output;"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("codemode", {"code": script})]), Turn(text="All done."))
    terminal = start_tui("--tools", "+codemode", cols=120)
    terminal.type("go")
    terminal.send(ENTER)
    terminal.wait_for("All done.")
    text = terminal.text()
    assert "inner-42" in text  # the script's output, in the codemode block
    assert "$ echo inner-$((6*7))" not in text  # no bash block of its own
