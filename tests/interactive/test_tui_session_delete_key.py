"""The session picker's Ctrl+Backspace as pi 1.6's ``app.session.deleteNoninvasive`` (issue #32), in
the real `tau` in a pseudo-terminal: it deletes (after asking) when nothing is typed and edits the
search otherwise; a legacy terminal's Backspace bytes never delete."""

from __future__ import annotations

from collections.abc import Callable

from tau_command import MODEL, TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
CTRL_BACKSPACE_KITTY = "\x1b[127;5u"
CTRL_BACKSPACE_XTERM = "\x1b[27;5;127~"


def _search_line(terminal: Terminal) -> str:
    return next((line for line in terminal.display().splitlines() if line.startswith("filter:")), "")


def test_ctrl_backspace_deletes_a_session_only_with_nothing_typed(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "-p", "first old question").returncode == 0
    assert tau.run(*MODEL, "-p", "second old question").returncode == 0
    terminal = start_tui()
    terminal.type("/resume")
    terminal.send(ENTER)
    terminal.wait_for("› second old question", where="display")
    terminal.send("\x7f")  # Backspace, and the byte some terminals send for Ctrl+Backspace
    terminal.send("\x08")
    terminal.type("first old")
    terminal.wait_for("› first old question", where="display")
    terminal.send(CTRL_BACKSPACE_KITTY)  # something typed: a word of it goes
    terminal.wait_for(lambda: _search_line(terminal).rstrip() == "filter: first", where="display")
    terminal.send(CTRL_BACKSPACE_XTERM)
    terminal.wait_for(lambda: _search_line(terminal).rstrip() == "filter:", where="display")
    terminal.send("\x1b[B")  # Down: to the first question again
    terminal.wait_for("› first old question", where="display")
    assert "Delete this session file?" not in terminal.display()
    assert len(tau.session_files()) == 2
    terminal.send(CTRL_BACKSPACE_KITTY)  # nothing typed: the highlighted session's delete
    terminal.wait_for("Delete this session file?", where="display")
    terminal.send("\x1b[B")
    terminal.send(ENTER)
    terminal.wait_for(lambda: len(tau.session_files()) == 1)
    assert "second old question" in tau.session_files()[0].read_text()
