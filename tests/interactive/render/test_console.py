"""Tests for tau.modes.interactive.render.console (capturing output) and format.terminal_safe."""

from __future__ import annotations

import pytest
from rich.text import Text

from tau.modes.interactive.render.console import console_for, to_ansi
from tau.modes.interactive.render.format import terminal_safe
from tau.modes.interactive.render.theme import DARK


def test_terminal_safe_drops_escape_sequences_and_controls_but_keeps_tabs_and_newlines() -> None:
    raw = "a\x1b[2Jb\x1b]0;title\x07c\x9b2Jd\x00e\tf\ng"
    assert terminal_safe(raw) == "abc2Jde\tf\ng"


def test_terminal_safe_keeps_what_a_carriage_return_redraw_finally_shows() -> None:
    assert terminal_safe("10%\r50%\r100%\n") == "100%\n"


def test_output_is_captured_without_its_final_newline() -> None:
    assert to_ansi(console_for(DARK, 20), Text("hi")) == "hi"


def test_a_console_writes_colour_even_when_no_color_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert to_ansi(console_for(DARK, 23), Text("hi", style="red")) == "\x1b[31mhi\x1b[0m"
