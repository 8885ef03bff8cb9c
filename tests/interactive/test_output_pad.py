"""The ``outputPad`` setting (pi 1.6) in the real `tau` in a pseudo-terminal: a streamed reply and the
user's message sit one cell in from the edge by default, at the edge with ``"outputPad": 0``."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
REPLY = "the streamed reply, long enough to arrive in several pieces"


@pytest.mark.parametrize(("settings", "column"), [({}, 1), ({"outputPad": 0}, 0)], ids=["default", "zero"])
def test_the_conversation_is_inset_by_the_output_pad(
    tau: TauCommand, start_tui: Start, settings: dict[str, int], column: int
) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text=REPLY, chunk_size=7))
    terminal = start_tui()
    terminal.type("my question")
    terminal.send(ENTER)
    terminal.wait_for(REPLY)
    lines = terminal.text().splitlines()
    [reply] = [line for line in lines if REPLY in line]
    [question] = [line for line in lines if "my question" in line and "─" not in line]
    assert reply.index(REPLY) == column
    assert question.index("my question") == column


def _padding_row(terminal: Terminal) -> tuple[str, str] | None:
    """/settings' Output padding row: its marker and the value in the values' column."""
    row = next(
        (line for line in terminal.display().splitlines() if line[2:].startswith("Output padding  ")), None
    )
    return None if row is None else (row[:2], row[2:].removeprefix("Output padding").strip())


def test_settings_switch_the_output_pad_and_redraw_the_conversation(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.server.add(Turn(text=REPLY))
    terminal = start_tui()
    terminal.type("my question")
    terminal.send(ENTER)
    terminal.wait_for(REPLY)
    terminal.type("/settings")
    terminal.send(ENTER)
    terminal.wait_for(lambda: _padding_row(terminal) == ("  ", "1"))
    terminal.type("output")
    terminal.wait_for(lambda: _padding_row(terminal) == ("› ", "1"))
    terminal.send(ENTER)
    terminal.wait_for("› 1", where="display")
    terminal.send("\x1b[A")  # up to 0
    terminal.send(ENTER)
    terminal.wait_for(lambda: _padding_row(terminal) == ("› ", "0"))
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: json.loads((tau.agent_dir / "settings.json").read_text()).get("outputPad") == 0)
    terminal.wait_for(
        lambda: [line for line in terminal.text().splitlines() if REPLY in line][-1].startswith(REPLY)
    )
