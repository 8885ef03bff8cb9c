"""Grapheme clusters in the terminal UI: the real `tau` in a pseudo-terminal that clusters as
current terminals do, sent the UTF-8 bytes a terminal sends; what the screen shows is checked
against what reaches the fake model server."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable

import pytest
from tau_command import TauCommand
from terminal import ENTER, Terminal, is_rule
from wcwidth import width

from tau.testing.fake_llm import Fault, Turn

Start = Callable[..., Terminal]

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"  # 👩‍👩‍👧: three emoji joined by ZWJ
FLAG = "\U0001f1fa\U0001f1f8"  # two regional indicators
THUMB = "\U0001f44d\U0001f3fd"  # a skin-tone modifier
E_ACUTE = "e\u0301"  # e + combining acute accent
HANGUL = "\u1100\u1161\u11a8"  # 각 as three jamo
LEFT, RIGHT, BACKSPACE, DELETE = "\x1b[D", "\x1b[C", "\x7f", "\x1b[3~"


def _editor_lines(terminal: Terminal) -> list[str]:
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
    return lines[borders[-2] + 1 : borders[-1]] if len(borders) >= 2 else []


def _editor_shows(terminal: Terminal, text: str) -> None:
    terminal.wait_for(lambda: "".join(line.strip() for line in _editor_lines(terminal)) == text, timeout=5)


def _sent_text(tau: TauCommand) -> str:
    content = tau.server.last_request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def test_arrows_backspace_and_delete_take_whole_clusters_and_the_shown_text_is_sent(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.server.add(Turn(text="done"))
    terminal = start_tui()
    terminal.send("a" + FAMILY + "b" + FLAG + THUMB + E_ACUTE + HANGUL + "漢字")
    _editor_shows(terminal, "a" + FAMILY + "b" + FLAG + THUMB + E_ACUTE + HANGUL + "漢字")
    terminal.send(LEFT * 3 + BACKSPACE)  # over 字, 漢, 각; then é goes whole
    _editor_shows(terminal, "a" + FAMILY + "b" + FLAG + THUMB + HANGUL + "漢字")
    terminal.send(LEFT * 3 + DELETE)  # back over 👍🏽, 🇺🇸, b; b goes
    _editor_shows(terminal, "a" + FAMILY + FLAG + THUMB + HANGUL + "漢字")
    terminal.send(DELETE + LEFT + BACKSPACE)  # the flag, then (past 👩‍👩‍👧) the a
    _editor_shows(terminal, FAMILY + THUMB + HANGUL + "漢字")
    terminal.send(RIGHT + "X")
    _editor_shows(terminal, FAMILY + "X" + THUMB + HANGUL + "漢字")
    assert terminal.screen.cursor.x == 3  # after the two cells of 👩‍👩‍👧 and the X
    terminal.send(ENTER)
    terminal.wait_for("done")
    assert _sent_text(tau) == FAMILY + "X" + THUMB + HANGUL + "漢字"


def test_typing_after_emoji_puts_each_character_in_its_place(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(rows=16, cols=30)
    for text in ("a", FAMILY, "b", LEFT, LEFT, "X"):  # a keystroke at a time, each one redrawn
        terminal.send(text)
        terminal.pump(0.1)
    _editor_shows(terminal, "aX" + FAMILY + "b")
    assert terminal.screen.cursor.x == 2
    # a long line of wide clusters wraps before the one that would straddle the edge
    terminal.send("\x1b[F" + ("漢字" + FAMILY + FLAG) * 3 + FAMILY + "z")
    _editor_shows(terminal, "aX" + FAMILY + "b" + ("漢字" + FAMILY + FLAG) * 3 + FAMILY + "z")
    first, second = (line.rstrip() for line in _editor_lines(terminal))
    assert (width(first), second) == (29, " " + FAMILY + "z")


def test_a_reply_and_a_queued_message_of_wide_clusters_fit_the_width(
    tau: TauCommand, start_tui: Start
) -> None:
    reply = ("日本語の" + FAMILY + " ") * 12
    tau.server.add(
        Turn(text=reply, chunk_size=7),
        Turn(text="slow", fault=Fault("stall", after_events=1, seconds=30)),
    )
    terminal = start_tui(rows=30, cols=40)
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for(lambda: "".join(terminal.text().split()).count("日本語の" + FAMILY) == 12)
    terminal.type("again")
    terminal.send(ENTER)
    terminal.wait_for("Working", where="display")
    terminal.send("漢字" * 30 + FAMILY)
    terminal.send(ENTER)
    terminal.wait_for("⏵ steer:", where="display")
    [queued] = [line for line in terminal.display().splitlines() if "⏵ steer:" in line]
    assert queued.rstrip().endswith(("漢…", "字…"))  # cut between clusters, the mark shown
    assert width(queued.rstrip()) <= 39


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_a_sent_message_of_wide_clusters_is_shown_whole_in_the_transcript(
    tau: TauCommand, start_tui: Start, mode: str
) -> None:
    # One word wider than the row: it folds between clusters, never inside a flag, and every
    # row keeps to the 30 columns (a row one cell too wide wrapped again, or lost its end).
    message = "aX" + FAMILY + "b" + ("漢字" + FAMILY + FLAG) * 3 + FAMILY + "z"
    tau.server.add(Turn(text="done"))
    terminal = start_tui("--tui-mode", mode, rows=16, cols=30)
    terminal.send(message)
    _editor_shows(terminal, message)
    terminal.send(ENTER)
    terminal.wait_for("done", where="display")
    assert _sent_text(tau) == message
    rows = terminal.display().splitlines()
    first = next(n for n, row in enumerate(rows) if row.startswith(" aX"))
    assert [row.strip() for row in rows[first : first + 3]] == [
        "aX" + FAMILY + "b" + ("漢字" + FAMILY + FLAG) * 2 + "漢字" + FAMILY,
        FLAG + FAMILY + "z",
        "",
    ]
    assert all(width(row.rstrip()) <= 30 for row in rows)


def test_the_fullscreen_transcript_draws_wide_clusters_in_the_cells_the_terminal_gives_them(
    tau: TauCommand, start_tui: Start
) -> None:
    # 48 cells as the terminal draws them; counted per code point (each 👩‍👩‍👧 six cells) the
    # row would be 80 wide and cut at the 59 columns the scrollbar leaves, before its Z.
    (tau.agent_dir / "settings.json").write_text(json.dumps({"fullscreenScrollbar": "always"}))
    wide = "A" + FAMILY * 8 + "B" * 30 + "Z"
    tau.server.add(Turn(text="\n\n".join(f"line {n}" for n in range(10)) + "\n\n" + wide))
    terminal = start_tui("--tui-mode", "fullscreen", rows=20, cols=60)
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("B" * 30 + "Z", where="display")
    # The turn's end (its token counts in the footer) gives the pane back the working line's row:
    # the row is read only after it, or the click would land one row above the word.
    terminal.wait_for("↓5", where="display")
    [(y, row)] = [(y, line) for y, line in enumerate(terminal.display().splitlines()) if "BBBB" in line]
    assert row[:-1].strip() == wide
    assert terminal.screen.buffer[y][59].data in "┃│"  # the scrollbar, in the last column
    # A double-click on the 30th cell (inside the Bs: after " A" and eight two-cell families)
    # takes that word: the cell clicked is the cell read.
    terminal.send(f"\x1b[<0;30;{y + 1}M\x1b[<0;30;{y + 1}m" * 2)
    terminal.wait_for("Copied", where="display")
    copied = re.findall(rb"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", terminal.raw)
    assert [base64.b64decode(text).decode() for text in copied] == ["B" * 30 + "Z"]
