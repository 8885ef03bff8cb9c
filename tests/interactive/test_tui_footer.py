"""The footer in a narrow terminal and after a compaction, in the real `tau` in a pseudo-terminal."""

from __future__ import annotations

import json
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
    # Automatic compaction off (the usage is past the window), so the footer is seen before /compact.
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"enabled": False, "keepRecentTokens": 1}})
    )
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


def test_an_automatic_compaction_shows_unknown_context_at_once(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    tau.server.add(
        Turn(text="First."),
        Turn(text="Counted.", usage=ScriptedUsage(input=90_000, output=500)),  # past 100k - 16384
        Turn(text="## Summary\nall of it"),
        Turn(text="prefix summary"),
    )
    terminal = start_tui()
    terminal.type("one")
    terminal.send(ENTER)
    terminal.wait_for("First.")
    terminal.type("count")
    terminal.send(ENTER)
    terminal.wait_for("Compacted from", where="display")
    terminal.wait_for(lambda: _usage_line(terminal).split()[-3:-1] == ["?/100k", "(auto)"], timeout=5)
