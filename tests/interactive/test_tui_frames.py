"""What the terminal is shown, frame by frame: tau's output replayed into a fresh screen one
synchronized update (``CSI ?2026h`` … ``CSI ?2026l``) at a time, in both TUI modes."""

from __future__ import annotations

import re
from collections.abc import Callable

import pyte
import pytest
from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
BEGIN, END = b"\x1b[?2026h", b"\x1b[?2026l"


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_every_frame_keeps_the_editor_and_footer_while_blocks_go_to_scrollback(
    tau: TauCommand, start_tui: Start, mode: str
) -> None:
    reply = "".join(
        f"Paragraph {n} of the reply, long enough to be a block of its own.\n\n" for n in range(40)
    )
    tau.server.add(Turn(text=reply + "THE-END", chunk_size=8, frames_per_second=400))
    terminal = start_tui("--tui-mode", mode, rows=20, cols=80)
    terminal.type("write a lot")
    terminal.send(ENTER)
    terminal.wait_for("THE-END", where="display")
    if mode == "regular":
        terminal.wait_for("Paragraph 0 of")  # in scrollback by now: blocks were committed on the way
    screen = pyte.Screen(80, 20)
    screen.set_mode(pyte.modes.LNM)
    stream = pyte.ByteStream(screen)
    pieces = bytes(terminal.raw).split(END)
    assert pieces[-1] == b""  # the output ends with a whole frame
    drawn = False  # before the application's first frame: the header, the title, the key query
    for number, piece in enumerate(pieces[:-1]):
        if drawn:
            assert piece.startswith(BEGIN) and piece.count(BEGIN) == 1, f"frame {number}: {piece[:200]!r}"
        stream.feed(piece)
        shown = "\n".join(screen.display)
        if not drawn:
            drawn = "fake-model" in shown
            continue
        # the top rule may say the agent works ("── ⠋ Working ───")
        assert re.search("(─{80}|── .* ─+)\n.*\n─{80}", shown), f"frame {number} has no editor:\n{shown}"
        assert "fake-model" in shown, f"frame {number} has no footer:\n{shown}"
