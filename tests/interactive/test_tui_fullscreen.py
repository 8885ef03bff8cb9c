"""The fullscreen terminal UI (``tuiMode: "fullscreen"`` / ``--tui-mode fullscreen``): the real
`tau` in a pseudo-terminal whose screen knows xterm's alternate screen, the fake server answering."""

from __future__ import annotations

import base64
import json
import re
import signal
import sys
from collections.abc import Callable

from tau_command import TauCommand
from terminal import CTRL_D, ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]

PAGE_UP = "\x1b[5~"
CTRL_END = "\x1b[1;5F"
CTRL_SHIFT_UP, CTRL_SHIFT_DOWN = "\x1b[1;6A", "\x1b[1;6B"
CTRL_SHIFT_F = "\x1b[102;6u"  # as a terminal speaking the kitty keyboard protocol sends it
CTRL_SHIFT_F_XTERM = "\x1b[27;6;70~"
NUMBERED = "\n\n".join(f"line {n:02}" for n in range(1, 41))


def _rows(terminal: Terminal) -> list[str]:
    return terminal.display().split("\n")


def _editor_rows(terminal: Terminal) -> list[int]:
    return [n for n, row in enumerate(_rows(terminal)) if row.startswith("─" * 40)]


def _shown_numbers(terminal: Terminal) -> list[int]:
    return [int(n) for n in re.findall(r"line (\d\d)", terminal.display())]


def _scrollbar(terminal: Terminal) -> set[str]:
    """The characters in the transcript pane's rightmost column."""
    return {terminal.screen.buffer[y][terminal.cols - 1].data for y in range(_editor_rows(terminal)[0] - 1)}


def _copied(terminal: Terminal) -> list[str]:
    """What tau put on the clipboard through OSC 52, in order."""
    return [
        base64.b64decode(p).decode() for p in re.findall(rb"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", terminal.raw)
    ]


def _reversed_text(terminal: Terminal) -> str:
    """The characters of the transcript drawn in reverse video (a selection), in reading order."""
    rows = sorted(terminal.screen.buffer.items())[: _editor_rows(terminal)[0]]
    return "".join(cell.data for _, row in rows for _, cell in sorted(row.items()) if cell.reverse).strip()


NOISE_EXTENSION = """\
import subprocess
import sys


def setup(tau):
    @tau.register_command("noise", description="Print stray output")
    async def noise(args, ctx):
        print("stray stdout line")
        print("stray stderr\tline", file=sys.stderr)
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('child stderr line\\n')"])
"""


TTY_EDITOR = """\
import os
import sys

open(sys.argv[-1], "w").write("stderr is the terminal" if os.isatty(2) else "stderr is a pipe")
"""


def _scrolled_reply(tau: TauCommand, start_tui: Start, *args: str) -> Terminal:
    tau.server.add(Turn(text=NUMBERED))
    terminal = start_tui(*args, rows=20, cols=80, tui_mode=None)  # as the settings or args say
    terminal.type("count")
    terminal.send(ENTER)
    terminal.wait_for("line 40", where="display")
    terminal.settle()  # the run's last frames (footer, status) drawn: the rows stay where they are
    return terminal


def test_fullscreen_from_the_setting_scrolls_the_transcript_and_jumps_to_prompts_while_the_editor_stays_put(
    tau: TauCommand, start_tui: Start
) -> None:
    editor = tau.work.parent / "editor.py"
    editor.write_text(TTY_EDITOR)
    settings = {
        "tuiMode": "fullscreen",
        "externalEditor": f"{sys.executable} {editor}",
        "fullscreenWheelScrollLines": 3,
    }
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    (tau.agent_dir / "keybindings.json").write_text(json.dumps({"tui.altScreen.lineUp": "alt+k"}))
    terminal = _scrolled_reply(tau, start_tui)
    assert terminal.on_alternate_screen
    editor = _editor_rows(terminal)
    assert editor[-1] == 17  # the editor's lower border, then the two footer lines at the bottom
    assert "line 01" not in terminal.text()  # nothing went to the terminal's own scrollback

    terminal.send(PAGE_UP)
    terminal.wait_for(lambda: max(_shown_numbers(terminal), default=40) < 40)
    assert _editor_rows(terminal) == editor
    assert "ctrl+end (or a click here) jumps to the latest message" in terminal.display()
    assert _scrollbar(terminal) == {"┃", "│"}  # shown while scrolled up (fullscreenScrollbar "auto")

    terminal.send("\x1b[<64;10;5M")  # the wheel, one notch up: three lines
    before = min(_shown_numbers(terminal))
    terminal.wait_for(lambda: min(_shown_numbers(terminal)) < before)

    # A press on the scrollbar's top row shows the start; dragging the thumb down moves the view along.
    column = terminal.cols
    terminal.send(f"\x1b[<0;{column};1M")
    terminal.wait_for(lambda: min(_shown_numbers(terminal), default=0) == 1)
    terminal.send(f"\x1b[<32;{column};5M\x1b[<32;{column};8M")
    terminal.wait_for(lambda: min(_shown_numbers(terminal), default=1) > 10)
    # The drag keeps the mouse below the pane, over the editor: there it means the end.
    terminal.send(f"\x1b[<32;{column};19M\x1b[<0;{column};19m")
    terminal.wait_for(lambda: max(_shown_numbers(terminal), default=0) == 40)
    terminal.send(PAGE_UP)
    terminal.wait_for(lambda: max(_shown_numbers(terminal), default=40) < 40)

    # A click on the line under the pane jumps to the end and follows it again.
    row = next(n for n, line in enumerate(_rows(terminal)) if "jumps to the latest" in line) + 1
    terminal.send(f"\x1b[<0;10;{row}M\x1b[<0;10;{row}m")
    terminal.wait_for(lambda: max(_shown_numbers(terminal), default=0) == 40)
    assert "ctrl+end" not in terminal.display()
    assert _scrollbar(terminal) == {" "}

    # An external editor (Ctrl+G) gets the terminal as its stderr, not the pane's capture.
    terminal.send("\x07")
    terminal.wait_for("stderr is the terminal", where="display")
    terminal.send("\x15")

    # Ctrl+Shift+Up/Down put the previous / next user message at the top of the pane.
    tau.server.add(Turn(text=NUMBERED.replace("line", "more")))
    terminal.type("again")
    terminal.send(ENTER)
    terminal.wait_for("more 40", where="display")
    terminal.send(CTRL_SHIFT_UP)
    terminal.wait_for(lambda: "again" in "".join(_rows(terminal)[:2]))
    terminal.send(CTRL_SHIFT_UP)
    terminal.wait_for(lambda: "count" in "".join(_rows(terminal)[:2]))
    terminal.send(CTRL_SHIFT_DOWN)
    terminal.wait_for(lambda: "again" in "".join(_rows(terminal)[:2]))
    terminal.send(CTRL_SHIFT_DOWN + CTRL_SHIFT_UP)  # no later message: Down stays, Up goes back one
    terminal.wait_for(lambda: "count" in "".join(_rows(terminal)[:2]))
    terminal.send(CTRL_END)
    terminal.wait_for(lambda: "more 40" in terminal.display() and "ctrl+end" not in terminal.display())
    terminal.send("\x1bk")  # pi's tui.altScreen.lineUp, bound in keybindings.json
    terminal.wait_for(lambda: "more 40" not in terminal.display() and "more 39" in terminal.display())

    # Ctrl+Z gives the terminal back before stopping: main screen, no mouse reports, the keys
    # the shell expects; then takes it again (here at once: a pty without job control cannot stop).
    start = len(terminal.raw)
    terminal.send("\x1a")
    terminal.wait_for(lambda: b"\x1b[?1049h" in terminal.raw[start:])
    suspended = bytes(terminal.raw[start:])
    left, back = suspended.index(b"\x1b[?1049l"), suspended.index(b"\x1b[?1049h")
    assert left < suspended.find(b"\x1b[?1000l") < back
    assert left < suspended.find(b"\x1b[<u") < back  # the kitty flags popped while stopped

    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
    assert not terminal.on_alternate_screen
    # The main screen again, with the conversation printed on it (fullscreenExitOutput "transcript").
    text = terminal.text()
    assert "line 01" in text and "line 40" in text and "count" in text


def test_the_transcript_is_searched_a_mouse_drag_selects_and_copies_it_and_stray_prints_join_it(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"fullscreenExitOutput": "resume-hint"}))
    (tau.agent_dir / "extensions").mkdir()
    (tau.agent_dir / "extensions" / "noise.py").write_text(NOISE_EXTENSION)
    terminal = _scrolled_reply(tau, start_tui, "--tui-mode", "fullscreen")
    row = next(n for n, line in enumerate(_rows(terminal)) if "line 38" in line) + 1
    # Press on "line 38" (1-based cells: the text starts in column 2), drag down two rows, release.
    terminal.send(f"\x1b[<0;2;{row}M\x1b[<32;5;{row + 1}M\x1b[<32;6;{row + 2}M\x1b[<0;6;{row + 2}m")
    terminal.wait_for("Copied", where="display")
    assert _copied(terminal) == ["line 38\n\n line"]
    assert _reversed_text(terminal).startswith("line 38")  # the selection stays marked
    terminal.send("\x0f")  # Ctrl+O draws every block again: the marked cells are gone with them
    terminal.wait_for(lambda: _reversed_text(terminal) == "")
    row = next(n for n, line in enumerate(_rows(terminal)) if "line 37" in line) + 1
    terminal.send(f"\x1b[<0;7;{row}M\x1b[<0;7;{row}m" * 2)  # a double-click on "37": the word
    terminal.wait_for(lambda: _copied(terminal)[-1:] == ["37"])

    # A drag held on the pane's top row scrolls the view up and the selection grows with it.
    row = next(n for n, line in enumerate(_rows(terminal)) if "line 38" in line) + 1
    first = min(_shown_numbers(terminal))
    terminal.send(f"\x1b[<0;2;{row}M\x1b[<32;2;3M\x1b[<32;2;1M")
    terminal.wait_for(lambda: min(_shown_numbers(terminal)) < first - 3)
    terminal.send("\x1b[<0;2;1m")
    terminal.wait_for(lambda: len(_copied(terminal)) == 3)
    grown = _copied(terminal)[-1]
    assert int(re.findall(r"line (\d\d)", grown)[0]) < first and grown.endswith("line 37\n\n")

    terminal.send(CTRL_SHIFT_F)
    terminal.wait_for("Find in transcript", where="display")
    terminal.type("line 0")
    terminal.wait_for("1/9", where="display")
    assert "line 01" in terminal.display()  # the first match, scrolled into view
    terminal.send(ENTER)
    terminal.wait_for("2/9", where="display")
    terminal.send("\x1b[13;2u")  # Shift+Enter: back to the previous match
    terminal.wait_for("1/9", where="display")
    terminal.type("7")
    terminal.wait_for("1/1", where="display")
    assert "line 07" in terminal.display()
    terminal.send(ESCAPE)
    terminal.wait_for(
        lambda: "Find in transcript" not in terminal.display() and "1/1" not in terminal.display()
    )
    terminal.send(CTRL_SHIFT_F_XTERM)  # as xterm and tmux send it under modifyOtherKeys
    terminal.wait_for("Find in transcript", where="display")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Find in transcript" not in terminal.display())
    terminal.type("typed after the search")  # the editor has the keys again
    terminal.wait_for("typed after the search", where="display")

    # An extension's prints, its stderr and a child's inherited stderr go into the transcript:
    # the alternate screen is never left for them.
    terminal.send("\x15" + CTRL_END)  # the editor empty again, the view following the end
    start = len(terminal.raw)
    terminal.type("/noise")
    terminal.send(ENTER)
    terminal.wait_for(lambda: "child stderr line" in terminal.display())
    shown = terminal.display()
    assert "stray stdout line" in shown and "stray stderr    line" in shown
    assert b"\x1b[?1049l" not in terminal.raw[start:]

    terminal.child.kill(signal.SIGTERM)
    assert terminal.wait_exit() == 128 + signal.SIGTERM
    # fullscreenExitOutput "resume-hint": how to come back, not the conversation.
    [session] = tau.session_files()
    assert f"To resume this session:\ntau --session {session}\n".encode() in terminal.raw.replace(b"\r", b"")
    assert "line 01" not in terminal.text()
    assert not terminal.on_alternate_screen and terminal.raw.rfind(b"\x1b[?1000l") > terminal.raw.rfind(
        b"\x1b[?1000h"
    )


def _tui_mode_row(terminal: Terminal) -> str | None:
    """/settings' highlighted TUI mode row's value (in the values' column)."""
    row = next((line for line in terminal.display().splitlines() if line.startswith("› TUI mode  ")), None)
    return None if row is None else row[2:].removeprefix("TUI mode").strip()


def test_tui_mode_regular_overrides_the_setting_and_settings_switches_to_fullscreen(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"tuiMode": "fullscreen"}))
    tau.server.add(Turn(text="an inline reply"))
    terminal = start_tui("--tui-mode", "regular")
    terminal.type("hello")
    terminal.send(ENTER)
    terminal.wait_for("an inline reply")
    assert b"\x1b[?1049h" not in terminal.raw and b"\x1b[?1000h" not in terminal.raw  # no mouse capture
    assert not terminal.on_alternate_screen

    # /settings switches to fullscreen at once (and saves it): the conversation moves into the pane.
    terminal.type("/settings")
    terminal.send(ENTER)
    terminal.type("tui")
    terminal.wait_for(lambda: _tui_mode_row(terminal) == "regular")
    terminal.send(ENTER)
    terminal.wait_for("› regular", where="display")
    terminal.send("\x1b[B")
    terminal.send(ENTER)
    terminal.wait_for(lambda: terminal.on_alternate_screen and _tui_mode_row(terminal) == "fullscreen")
    assert json.loads((tau.agent_dir / "settings.json").read_text())["tuiMode"] == "fullscreen"
    terminal.send(ESCAPE)
    terminal.wait_for(
        lambda: "an inline reply" in terminal.display() and "Settings" not in terminal.display()
    )
    tau.server.add(Turn(text="a reply in the pane"))
    terminal.type("more")
    terminal.send(ENTER)
    terminal.wait_for("a reply in the pane", where="display")
    assert _editor_rows(terminal)[-1] == terminal.rows - 3  # the editor at the bottom, as fullscreen draws it


def test_an_unknown_tui_mode_is_one_clear_error(tau: TauCommand) -> None:
    run = tau.run("--tui-mode", "tiled")
    assert run.returncode != 0
    assert run.stderr.strip().splitlines() == [
        'tau: error: --tui-mode "tiled" is not a mode; use fullscreen or regular'
    ]
