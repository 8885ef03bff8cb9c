"""The display settings of pi 1.6 in the real `tau` in a pseudo-terminal, the fake server answering:
each one changes what the terminal shows as pi's does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from tau_command import TauCommand
from terminal import CTRL_D, Terminal

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


def test_verbose_shows_the_whole_header_whatever_quiet_startup_says(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "AGENTS.md").write_text("Be brief.")
    _settings(tau, quietStartup=True)
    terminal = start_tui("--verbose")
    terminal.wait_for("[context]")
    assert "tau v" in terminal.text()
