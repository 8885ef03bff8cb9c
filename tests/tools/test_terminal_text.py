"""Tests for tau.tools.terminal_text: terminal output as plain text."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from tau.tools.terminal_text import sanitize_terminal_output


def test_colour_codes_are_removed() -> None:
    assert sanitize_terminal_output("\x1b[1;31merror\x1b[0m: bad") == "error: bad"


def test_osc_titles_and_hyperlinks_are_removed() -> None:
    assert sanitize_terminal_output("\x1b]0;title\x07a \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "a link"


def test_a_carriage_return_redraw_keeps_what_the_terminal_finally_shows() -> None:
    assert sanitize_terminal_output("10%\r50%\r100%\ndone\n") == "100%\ndone\n"


def test_crlf_becomes_lf() -> None:
    assert sanitize_terminal_output("a\r\nb\r\n") == "a\nb\n"


def test_control_characters_go_but_tabs_and_newlines_stay() -> None:
    assert sanitize_terminal_output("a\tb\x07\x00c\n\ufffbd") == "a\tbc\nd"


def test_plain_text_is_returned_as_is() -> None:
    text = "nothing to clean here\n"
    assert sanitize_terminal_output(text) is text


@given(st.text())
def test_sanitising_never_changes_the_number_of_lines(text: str) -> None:
    assert sanitize_terminal_output(text).count("\n") == text.count("\n")


def test_redraws_on_several_lines_each_keep_their_last_state() -> None:
    assert sanitize_terminal_output("a\rb\r\rc\nx\ry\n\rz") == "c\ny\nz"


def test_a_long_line_of_control_characters_is_cleaned_in_linear_time() -> None:
    started = time.monotonic()
    assert sanitize_terminal_output("\x00" * 2_000_000 + "end") == "end"
    assert time.monotonic() - started < 2  # was minutes: every position rescanned the line
