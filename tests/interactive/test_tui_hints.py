"""Small things of the terminal UI, in one `tau` run: the start-up hint line fits the width and
Ctrl+O shows the full help; Tab takes a file from the ``@`` menu and closes it; a shell command
says how long it has been running and, at the end, how long it took."""

from __future__ import annotations

import re
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal
from wcwidth import width

from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]


def test_hints_fit_ctrl_o_shows_all_keys_tab_takes_a_file_and_bash_shows_its_time(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.work / "alphabet.txt").write_text("letters\n")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 0.5; echo slept"})]),
        Turn(text="all done"),
    )
    terminal = start_tui(cols=60)
    [hints] = [line for line in terminal.display().splitlines() if "interrupt" in line]
    assert hints.rstrip().endswith("ctrl+o more") and "…" not in hints  # whole hints only
    assert width(hints.rstrip()) <= 60
    assert "Queue a follow-up message" not in terminal.text()

    terminal.type("read @alphab")
    terminal.wait_for(" alphabet.txt", where="display")  # the menu, below the editor
    terminal.send("\t")
    terminal.wait_for(lambda: " alphabet.txt" not in terminal.display())
    assert "read @alphabet.txt" in terminal.display()

    terminal.send(ENTER)
    # While it runs: the time so far (a wall clock, so the figure itself is not pinned).
    terminal.wait_for(lambda: re.search(r"Elapsed \d+\.\ds", terminal.display()) is not None, where="display")
    terminal.wait_for("all done")
    assert re.search(r"Took \d+\.\ds", terminal.text())

    terminal.send("\x0f")  # Ctrl+O: the header is drawn again with every key
    terminal.wait_for("Queue a follow-up message")
