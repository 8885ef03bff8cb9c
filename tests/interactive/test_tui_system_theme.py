"""The ``system`` theme: colours derived from what the terminal says of its own (OSC 10, 11 and 4),
as pi 1.6's; the terminal's own palette (its 16 colours and default colours) when it says nothing;
light or dark as the terminal's answer to the background query (OSC 11) says."""

from __future__ import annotations

import re
import sys

import pytest
from tau_command import MODEL, TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

REPLY = "Here:\n\n```python\ndef answer():\n    return 42\n```\n"
# SGR colours that are not the palette's 16: 256-colour indices 16-255 and RGB.
_FIXED_COLOUR = re.compile(rb"\x1b\[[0-9;]*(?:[34]8;2;|[34]8;5;(?:1[6-9]|[2-9]\d|\d{3}))")


TANGO = ["2e2e/3434/3636", "cccc/0000/0000", "4e4e/9a9a/0606", "c4c4/a0a0/0000", "3434/6565/a4a4",
         "7575/5050/7b7b", "0606/9898/9a9a", "d3d3/d7d7/cfcf", "5555/5757/5353", "efef/2929/2929",
         "8a8a/e2e2/3434", "fcfc/e9e9/4f4f", "7272/9f9f/cfcf", "adad/7f7f/a8a8", "3434/e2e2/e2e2",
         "eeee/eeee/ecec"]  # fmt: skip


def _start(tau: TauCommand, mode: str, **answers: object) -> Terminal:
    terminal = Terminal(
        [sys.executable, "-m", "tau", *MODEL, "--theme", "system", "--tui-mode", mode],
        cwd=str(tau.work),
        env=tau.env,
        **answers,  # type: ignore[arg-type]
    )
    terminal.wait_for("fake-model")
    return terminal


def _run(tau: TauCommand, background: str | None, mode: str) -> Terminal:
    tau.server.add(Turn(text=REPLY))
    terminal = _start(tau, mode, background=background)
    terminal.type("show code")
    terminal.send(ENTER)
    terminal.wait_for("return 42")
    return terminal


def _colour_shown(terminal: Terminal, word: str) -> str | None:
    """The colour of ``word`` where the screen shows it, or None while it does not (a repaint
    in progress: the terminal has the clear but not yet the new rows)."""
    for row in terminal.screen.buffer.values():
        line = "".join(row[x].data for x in range(terminal.cols))
        column = line.find(word)
        if column >= 0:
            return str(row[column].fg)
    return None


def _colour_of(terminal: Terminal, word: str) -> str:
    colour = _colour_shown(terminal, word)
    if colour is None:
        raise AssertionError(f"{word!r} is not on the screen:\n{terminal.display()}")
    return colour


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_the_system_theme_follows_the_terminals_background(tau: TauCommand, mode: str) -> None:
    terminal = _run(tau, background="rgb:ffff/ffff/f0f0", mode=mode)
    try:
        # asked for the foreground, background and 16 colours, as pi asks
        assert all(
            query in terminal.raw for query in (b"\x1b]10;?", b"\x1b]11;?", b"\x1b]4;0;?", b"\x1b]4;15;?")
        )
        # A light background: code in the plain ANSI colours (on a dark one, the bright ones).
        assert _colour_of(terminal, "def") == "blue"
        assert "11;rgb" not in terminal.text()  # the answer is not typed into the editor
        # The terminal reports that it turned dark (mode 2031, which tau asked for): bright colours.
        assert b"\x1b[?2031h" in terminal.raw
        terminal.background = "rgb:0000/0000/0000"  # what it answers from now on: tau asks again
        terminal.send("\x1b[?997;1n")
        terminal.wait_for(lambda: _colour_shown(terminal, "def") == "brightblue")
        assert "997" not in terminal.display()
    finally:
        terminal.close()


def test_a_terminal_that_answers_no_colour_query_keeps_its_own_palette(tau: TauCommand) -> None:
    terminal = _start(tau, "regular")
    try:
        terminal.settle()
        assert b"\x1b]4;0;?" in terminal.raw
        assert not _FIXED_COLOUR.findall(bytes(terminal.raw))  # the 16 colours and default ones only
    finally:
        terminal.close()


def test_the_colours_come_from_the_terminals_palette_when_it_reports_one(tau: TauCommand) -> None:
    tau.env["COLORTERM"] = "truecolor"  # the derived colours as they are, not their 256-colour neighbours
    terminal = _start(
        tau,
        "regular",
        background="rgb:1e1e/1e1e/2e2e",
        foreground="rgb:cdcd/d6d6/f4f4",
        palette=[f"rgb:{colour}" for colour in TANGO],
    )
    try:
        # The editor's border (thinking off) in the colour pi 1.6 derives for this terminal.
        terminal.wait_for(lambda: _colour_shown(terminal, "───") == "6f716d")
    finally:
        terminal.close()
