"""The display settings of pi 1.6 in the real `tau` in a pseudo-terminal, the fake server answering:
each one changes what the terminal shows as pi's does."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from tau_command import TauCommand
from terminal import CTRL_D, ENTER, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]


def _settings(tau: TauCommand, **settings: Any) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


# -- quietStartup -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quiet", "header", "listing"),
    [(False, True, True), ("header", True, False), (True, False, False)],
    ids=["false", "header", "true"],
)
def test_quiet_startup_hides_the_header_and_what_was_loaded(
    tau: TauCommand, start_tui: Start, quiet: bool | str, header: bool, listing: bool
) -> None:
    (tau.agent_dir / "AGENTS.md").write_text("Be brief.")
    _settings(tau, quietStartup=quiet)
    terminal = start_tui()
    terminal.settle()
    shown = terminal.text()
    assert ("tau v" in shown) is header
    assert ("[context]" in shown) is listing
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0


def test_verbose_shows_the_whole_header_whatever_quiet_startup_says(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.agent_dir / "AGENTS.md").write_text("Be brief.")
    _settings(tau, quietStartup=True)
    terminal = start_tui("--verbose")
    terminal.wait_for("[context]")
    assert "tau v" in terminal.text()


# -- the editor: editorPaddingX, showHardwareCursor, autocompleteMaxVisible -------------------------


def _editor_line(terminal: Terminal, text: str) -> str:
    return next(line for line in terminal.display().splitlines() if text in line and "─" not in line)


@pytest.mark.parametrize(("padding", "column"), [(None, 0), (2, 2), (3, 3)], ids=["default", "two", "three"])
def test_editor_padding_moves_the_text_in_from_the_edges(
    tau: TauCommand, start_tui: Start, padding: int | None, column: int
) -> None:
    _settings(tau, **({} if padding is None else {"editorPaddingX": padding}))
    terminal = start_tui(cols=40)
    terminal.type("x" * 50)
    terminal.wait_for("x" * 30, where="display")
    terminal.settle()
    rows = [line for line in terminal.display().splitlines() if "xxx" in line]
    assert [row.index("x") for row in rows] == [column, column]
    assert len(rows[0]) == 40 - column  # the text wraps before the padding on the right
    assert "".join(rows).count("x") == 50


def _cursor_cell(terminal: Terminal) -> tuple[str, bool]:
    cursor = terminal.screen.cursor
    cell = terminal.screen.buffer[cursor.y][cursor.x]
    return cell.data, cell.reverse


def test_the_editor_draws_its_cursor_and_hides_the_terminals_by_default(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    terminal.type("hello")
    terminal.send("\x1b[D\x1b[D")  # left twice: the cursor on the first "l"... of "lo"
    terminal.settle()
    assert terminal.screen.cursor.hidden
    assert _cursor_cell(terminal) == ("l", True)  # the terminal's cursor still sits on the drawn one
    row = terminal.screen.buffer[terminal.screen.cursor.y]
    assert [row[x].reverse for x in range(5)] == [False, False, False, True, False]
    terminal.send("\x1b[C\x1b[C")  # at the end: a reverse blank after the text
    terminal.settle()
    assert _cursor_cell(terminal) == (" ", True)


def test_show_hardware_cursor_shows_the_terminals_cursor_and_draws_none(
    tau: TauCommand, start_tui: Start
) -> None:
    _settings(tau, showHardwareCursor=True)
    terminal = start_tui()
    terminal.type("hello")
    terminal.send("\x1b[D\x1b[D")
    terminal.settle()
    assert not terminal.screen.cursor.hidden
    assert _cursor_cell(terminal) == ("l", False)


def _menu_rows(terminal: Terminal) -> list[str]:
    """The menu's rows: pi's marker or its two spaces, a command's name, two spaces at least and
    its description."""
    return [line for line in terminal.display().splitlines() if re.match(r"(→ |  )[a-z][a-z:-]*  +\S", line)]


@pytest.mark.parametrize(("visible", "rows"), [(None, 5), (3, 3), (7, 7), (1, 3), (50, 20)])
def test_the_completion_menu_shows_autocomplete_max_visible_rows(
    tau: TauCommand, start_tui: Start, visible: int | None, rows: int
) -> None:
    _settings(tau, **({} if visible is None else {"autocompleteMaxVisible": visible}))
    terminal = start_tui(rows=40)
    terminal.type("/")
    terminal.wait_for("→ settings", where="display")
    terminal.settle()
    assert len(_menu_rows(terminal)) == rows, terminal.display()


# -- markdown.codeBlockIndent ------------------------------------------------------------------------

CODE_REPLY = "Here:\n\n```python\nprint('indented code')\n```\n\nDone."


@pytest.mark.parametrize(
    ("markdown", "row"),
    [(None, "   print('indented code')"), ({"codeBlockIndent": "    "}, "     print('indented code')"),
     ({"codeBlockIndent": "│ "}, " │ print('indented code')"), ({"codeBlockIndent": ""}, " print('indented code')")],
    ids=["default", "four", "bar", "none"],
)  # fmt: skip
def test_code_blocks_are_indented_by_code_block_indent(
    tau: TauCommand, start_tui: Start, markdown: dict[str, str] | None, row: str
) -> None:
    _settings(tau, **({} if markdown is None else {"markdown": markdown}))
    tau.server.add(Turn(text=CODE_REPLY, chunk_size=5))
    terminal = start_tui()
    terminal.type("code please")
    terminal.send(ENTER)
    terminal.wait_for("Done.")
    [line] = [line for line in terminal.text().splitlines() if "indented code" in line]
    assert line == row


# -- fullscreenWheelScrollLines ----------------------------------------------------------------------

ROWS = "\n".join(f"row {n:02}" for n in range(1, 61))
WHEEL_UP = "\x1b[<64;10;5M"
ALT_WHEEL_UP = "\x1b[<72;10;5M"


def _last_row_shown(terminal: Terminal) -> int:
    return max((int(n) for n in re.findall(r"row (\d\d)", terminal.display())), default=0)


@pytest.mark.parametrize(
    ("lines", "one", "alt"),
    [(None, 1, 5), (1, 1, 5), (4, 4, 20), (0, 1, 5)],
    ids=["auto", "one", "four", "zero"],
)
def test_a_wheel_notch_scrolls_the_fullscreen_transcript_by_the_setting(
    tau: TauCommand, start_tui: Start, lines: int | None, one: int, alt: int
) -> None:
    settings: dict[str, Any] = {"tuiMode": "fullscreen"}
    if lines is not None:
        settings["fullscreenWheelScrollLines"] = lines
    _settings(tau, **settings)
    tau.server.add(Turn(text=ROWS))
    terminal = start_tui(rows=30, cols=80, tui_mode=None)  # the setting's mode
    terminal.type("rows")
    terminal.send(ENTER)
    terminal.wait_for("row 60", where="display")
    terminal.settle()
    terminal.send(WHEEL_UP)
    terminal.wait_for(lambda: _last_row_shown(terminal) < 60)
    terminal.settle()
    # scrolled up, the pane gives its last row to the "jumps to the latest message" line
    assert _last_row_shown(terminal) == 60 - one - 1
    terminal.send(ALT_WHEEL_UP)  # Alt+wheel: five times as far
    terminal.wait_for(lambda: _last_row_shown(terminal) < 59 - one)
    terminal.settle()
    assert _last_row_shown(terminal) == 59 - one - alt


# -- terminal.showTerminalProgress ---------------------------------------------------------------------

BUSY, CLEAR = b"\x1b]9;4;3\x07", b"\x1b]9;4;0\x07"


def test_terminal_progress_shows_while_the_agent_works_and_clears_when_it_ends(
    tau: TauCommand, start_tui: Start
) -> None:
    _settings(tau, terminal={"showTerminalProgress": True})
    tau.server.add(Turn(text="a paced reply " * 12, chunk_size=4, frames_per_second=20))  # over 2 s
    terminal = start_tui()
    assert BUSY not in terminal.raw
    terminal.type("work")
    terminal.send(ENTER)
    terminal.wait_for(lambda: BUSY in terminal.raw)
    terminal.wait_for(lambda: CLEAR in terminal.raw, timeout=20)
    output = bytes(terminal.raw)
    assert output.count(BUSY) >= 2  # renewed every second while the reply streams
    assert output.rindex(BUSY) < output.index(CLEAR)
    terminal.wait_for("a paced reply")


def test_terminal_progress_is_off_by_default(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="done"))
    terminal = start_tui()
    terminal.type("work")
    terminal.send(ENTER)
    terminal.wait_for("done")
    terminal.settle()
    assert b"\x1b]9;4" not in terminal.raw


# -- terminal.clearOnShrink ---------------------------------------------------------------------------


def test_clear_on_shrink_puts_the_footer_back_on_the_last_row_when_the_live_area_shrinks(
    tau: TauCommand, start_tui: Start
) -> None:
    # Eight rows: the header and the live area fill them, the completion menu pushes the header up.
    _settings(tau, terminal={"clearOnShrink": True})
    terminal = start_tui(rows=8)
    terminal.type("/")
    terminal.wait_for("→ settings", where="display")
    terminal.send("\x7f")  # backspace: the menu closes, the live area is six rows shorter
    terminal.wait_for(lambda: "→ settings" not in terminal.display() and "tau v" in terminal.display())
    terminal.settle()
    rows = terminal.display().splitlines()
    assert "fake-model" in rows[-1], rows
