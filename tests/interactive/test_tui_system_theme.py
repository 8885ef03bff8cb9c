"""The ``system`` theme: the terminal's own palette (its 16 colours and default colours), light or
dark as the terminal's answer to the background query (OSC 11) says."""

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


def _run(tau: TauCommand, background: str | None, mode: str) -> Terminal:
    tau.server.add(Turn(text=REPLY))
    terminal = Terminal(
        [sys.executable, "-m", "tau", *MODEL, "--theme", "system", "--tui-mode", mode],
        cwd=str(tau.work),
        env=tau.env,
        background=background,
    )
    terminal.wait_for("fake-model")
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
def test_the_system_theme_uses_only_the_terminals_palette_and_follows_its_background(
    tau: TauCommand, mode: str
) -> None:
    terminal = _run(tau, background="rgb:ffff/ffff/f0f0", mode=mode)
    try:
        assert b"\x1b]11;?" in terminal.raw  # asked for the background, as pi asks
        assert not _FIXED_COLOUR.findall(bytes(terminal.raw))
        # A light background: code in the plain ANSI colours (on a dark one, the bright ones).
        assert _colour_of(terminal, "def") == "blue"
        assert "11;rgb" not in terminal.text()  # the answer is not typed into the editor
        # The terminal reports that it turned dark (mode 2031, which tau asked for): bright colours.
        assert b"\x1b[?2031h" in terminal.raw
        terminal.send("\x1b[?997;1n")
        terminal.wait_for(lambda: _colour_shown(terminal, "def") == "brightblue")
        assert "997" not in terminal.display()
    finally:
        terminal.close()
