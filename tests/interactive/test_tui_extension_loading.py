"""How often the TUI loads an extension (runs its top-level code), as pi does: once at start-up (the
first session takes what start-up built), then once more for each session that replaces it (pi
builds a session's services afresh on /new, /resume, /fork) and on /reload."""

from __future__ import annotations

from collections.abc import Callable

from tau_command import MODEL, TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]

MARKED_EXTENSION = """
import os

with open(os.environ["LOAD_MARKER"], "a") as marker:
    marker.write("loaded\\n")


def setup(tau):
    pass
"""


def _loads(tau: TauCommand) -> int:
    marker = tau.work.parent / "marker"
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def _start(tau: TauCommand, start_tui: Start) -> Terminal:
    (tau.work / "marked.py").write_text(MARKED_EXTENSION)
    tau.env["LOAD_MARKER"] = str(tau.work.parent / "marker")
    return start_tui("-e", "./marked.py")


def _command(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def test_start_up_loads_an_extension_once(tau: TauCommand, start_tui: Start) -> None:
    _start(tau, start_tui)
    assert _loads(tau) == 1


def test_new_resume_and_reload_load_it_once_more_each(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="an earlier answer"))
    assert tau.run(*MODEL, "-p", "an earlier question").returncode == 0
    terminal = _start(tau, start_tui)
    _command(terminal, "/new")
    terminal.wait_for("New session")
    assert _loads(tau) == 2
    _command(terminal, "/resume")
    terminal.wait_for("› an earlier question", where="display")
    terminal.send(ENTER)
    terminal.wait_for("an earlier answer")
    assert _loads(tau) == 3
    _command(terminal, "/reload")
    terminal.wait_for("Reloaded keybindings")
    assert _loads(tau) == 4


def test_a_typescript_extension_is_named_at_start_as_not_loadable(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "extensions").mkdir(parents=True, exist_ok=True)
    (tau.agent_dir / "extensions" / "guard.ts").write_text("export default function (pi) {}\n")
    terminal = start_tui(cols=240)
    terminal.wait_for("guard.ts: not loadable (TypeScript): tau runs Python extensions only")
