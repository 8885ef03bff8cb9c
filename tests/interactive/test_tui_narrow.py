"""The terminal UI in a 40-column terminal: the real `tau` in a pseudo-terminal, the fake server
answering. Nothing is cut in the middle: sentences and table cells wrap between words."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from tau_command import TauCommand
from terminal import ENTER, Terminal
from wcwidth import width

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]

TABLE = (
    "| setting | what it does |\n|---|---|\n"
    "| compaction_threshold_tokens | the number of tokens after which the session is summarised |\n"
    "| x | short |\n\nTHE-END"
)


def _rows(terminal: Terminal) -> list[str]:
    return [row.rstrip() for row in terminal.display().splitlines()]


def _words(rows: list[str]) -> str:
    return " ".join(" ".join(rows).split())


def test_the_start_up_help_wraps_between_words_and_so_does_the_full_help_of_ctrl_o(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui(rows=60, cols=40)
    header = _rows(terminal)[:5]
    assert all(width(row) <= 40 and "…" not in row for row in header), header
    assert "Press ctrl+o to show full startup help." in _words(header)
    terminal.send("\x0f")  # Ctrl+O
    terminal.wait_for(lambda: "Queue a follow-up" in terminal.text() and "fake-model" in terminal.display())
    text = terminal.text()
    shown = [row.rstrip() for row in text[: text.rindex("─" * 40)].splitlines()]  # above the editor
    assert all(width(row) <= 40 and "…" not in row for row in shown)
    assert "Abort the run / close a dialog; twice on an empty editor: /tree" in _words(shown)


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_a_table_wider_than_the_terminal_wraps_its_cells(
    tau: TauCommand, start_tui: Start, mode: str
) -> None:
    tau.server.add(Turn(text=TABLE))
    terminal = start_tui("--tui-mode", mode, rows=30, cols=40)
    terminal.type("table")
    terminal.send(ENTER)
    terminal.wait_for("THE-END", where="display")
    rows = _rows(terminal)
    table = rows[next(n for n, row in enumerate(rows) if "setting" in row) : rows.index(" THE-END")]
    assert all(width(row) <= 40 and "…" not in row for row in table), table
    # Each column's cells, read down the rows, are the whole text.
    column = re.search("what it does", table[0]).start()  # type: ignore[union-attr]
    second = _words([row[column:] for row in table[2:]])
    first = "".join(row[:column].strip() for row in table[2:])
    assert second.startswith("the number of tokens after which the session is summarised")
    assert first.startswith("compaction_threshold_tokens")
