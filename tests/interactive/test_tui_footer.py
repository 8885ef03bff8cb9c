"""The footer in a narrow terminal and after a compaction, in the real `tau` in a pseudo-terminal."""

from __future__ import annotations

import re
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn
from tau.testing.fake_llm.script import ScriptedUsage

Start = Callable[..., Terminal]
FIELD = re.compile(
    r"^(↑|↓|R|W)\d+(\.\d)?[kM]?$|^\$\d+\.\d{3}$|^cache$|^\d+%$|^(\d+\.\d%|\?)/100k$|^\(auto\)$"
)


def _usage_line(terminal: Terminal) -> str:
    return [line for line in terminal.display().splitlines() if line.strip()][-1]


def test_a_narrow_footer_drops_whole_fields_and_shows_unknown_context_after_a_compaction(
    tau: TauCommand, start_tui: Start
) -> None:
    usage = ScriptedUsage(input=1_234_567, output=98_765, cache_read=3_456_789, cache_write=45_678)
    tau.server.add(Turn(text="Counted.", usage=usage), Turn(text="## Summary\nall of it"))
    terminal = start_tui(cols=40)
    terminal.type("count")
    terminal.send(ENTER)
    terminal.wait_for(lambda: "/100k" in _usage_line(terminal) and "↑" in _usage_line(terminal))
    line = _usage_line(terminal)
    assert len(line) <= 40
    assert all(FIELD.match(word) for word in line.split()), line
    assert re.search(r"\d+\.\d%/100k", line)  # the context use is the last field to go
    terminal.type("/compact")
    terminal.send(ENTER)
    terminal.wait_for(lambda: "?/100k" in _usage_line(terminal), timeout=15)
