"""Found running pi 1.6 beside tau in a terminal (issue #32's re-audit): what lands on disk."""

from __future__ import annotations

import json
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import text_turn

Start = Callable[..., Terminal]


def test_a_typed_bash_command_records_exclude_from_context_as_pi_16(
    tau: TauCommand, start_tui: Start
) -> None:
    """pi 1.6 writes ``excludeFromContext`` for ``!cmd`` (``false``) and ``!!cmd`` (``true``)."""
    tau.server.add(text_turn("noted"))
    terminal = start_tui()
    # The session file is written once a reply arrives (as pi does): the commands, then a prompt.
    for typed, shown in (("!echo visible", "visible"), ("!!echo hidden", "hidden"), ("go", "noted")):
        terminal.type(typed)
        terminal.send(ENTER)
        terminal.wait_for(shown)
        terminal.settle()
    terminal.close()
    [session] = tau.session_files()
    records = [
        json.loads(line)["message"] for line in session.read_text().splitlines() if '"bashExecution"' in line
    ]
    assert [(r["command"], r["excludeFromContext"]) for r in records] == [
        ("echo visible", False),
        ("echo hidden", True),
    ]
