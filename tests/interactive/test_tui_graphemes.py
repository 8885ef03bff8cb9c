"""Grapheme clusters in the terminal UI: the real `tau` in a pseudo-terminal that clusters as
current terminals do, sent the UTF-8 bytes a terminal sends; what the screen shows is checked
against what reaches the fake model server."""

from __future__ import annotations

from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal
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
    borders = [i for i, line in enumerate(lines) if line.startswith("─" * 20)]
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


def test_a_reply_and_a_queued_message_of_wide_clusters_fit_the_width(tau: TauCommand, start_tui: Start) -> None:
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
    terminal.wait_for("esc to interrupt", where="display")
    terminal.send("漢字" * 30 + FAMILY)
    terminal.send(ENTER)
    terminal.wait_for("⏵ steer:", where="display")
    [queued] = [line for line in terminal.display().splitlines() if "⏵ steer:" in line]
    assert queued.rstrip().endswith(("漢…", "字…"))  # cut between clusters, the mark shown
    assert width(queued.rstrip()) <= 39


def test_the_fullscreen_transcript_draws_wide_clusters_in_the_cells_the_terminal_gives_them(
    tau: TauCommand, start_tui: Start
) -> None:
    # 48 cells as the terminal draws them; counted per code point (each 👩‍👩‍👧 six cells) the
    # row would be 80 wide and cut at the 60-column edge before its Z.
    tau.server.add(Turn(text="A" + FAMILY * 8 + "B" * 30 + "Z"))
    terminal = start_tui("--tui-mode", "fullscreen", rows=20, cols=60)
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("BBBB", where="display")
    terminal.wait_for(lambda: any(line.rstrip().endswith("B" * 30 + "Z") for line in terminal.display().splitlines()))
    [row] = [line for line in terminal.display().splitlines() if "BBBB" in line]
    assert row.strip() == "A" + FAMILY * 8 + "B" * 30 + "Z"
