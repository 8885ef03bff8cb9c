"""keybindings.json in pi 1.6's ids rebinds the real `tau` in a pseudo-terminal."""

from __future__ import annotations

import json
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal, is_rule

Start = Callable[..., Terminal]
ALT = "\x1b"


def _editor_text(terminal: Terminal) -> str:
    """The lines between the editor's two border lines."""
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
    return "\n".join(lines[borders[-2] + 1 : borders[-1]]).strip() if len(borders) >= 2 else ""


def _write_keybindings(tau: TauCommand, bindings: dict[str, object]) -> None:
    (tau.agent_dir / "keybindings.json").write_text(json.dumps(bindings))


def test_a_rebound_editing_action_moves_on_its_new_key_and_not_its_old_one(
    tau: TauCommand, start_tui: Start
) -> None:
    _write_keybindings(tau, {"tui.editor.cursorLineStart": "alt+a"})
    terminal = start_tui()
    terminal.type("world")
    terminal.send(ALT + "a")
    terminal.type("hello ")
    terminal.send("\x01")  # Ctrl+A: no longer the line start's key
    terminal.type("!")
    terminal.wait_for(lambda: _editor_text(terminal) == "hello !world", where="display")


def test_a_pi_16_application_id_rebinds_its_action(tau: TauCommand, start_tui: Start) -> None:
    _write_keybindings(tau, {"app.tools.expand": "alt+o", "app.session.new": "alt+n"})
    terminal = start_tui()
    terminal.wait_for("alt+o more", where="display")
    terminal.send(ALT + "o")  # the full startup help, as Ctrl+O shows it by default
    terminal.wait_for(lambda: any(line.startswith("alt+n ") for line in terminal.text().splitlines()))
    line = next(line for line in terminal.text().splitlines() if "New session (/new)" in line)
    assert line.startswith("alt+n ")


def test_list_keys_follow_tui_select_ids(tau: TauCommand, start_tui: Start) -> None:
    _write_keybindings(tau, {"tui.select.down": "alt+j", "tui.select.cancel": "alt+q"})
    terminal = start_tui()
    terminal.type("/settings")
    terminal.send(ENTER)
    terminal.wait_for("› ", where="display")
    first = next(line for line in terminal.display().splitlines() if line.startswith("› "))
    terminal.send("\x1b[B")  # Down: replaced by alt+j
    terminal.send(ALT + "j")
    terminal.wait_for(
        lambda: any(line.startswith("› ") and line != first for line in terminal.display().splitlines()),
        where="display",
    )
    second = next(line for line in terminal.display().splitlines() if line.startswith("› "))
    items = [line[2:] for line in terminal.display().splitlines() if line.startswith(("› ", "  "))]
    assert items.index(second[2:]) - items.index(first[2:]) == 1  # one step: Down did nothing
    terminal.send(ALT + "q")
    terminal.wait_for(lambda: not any(line.startswith("› ") for line in terminal.display().splitlines()))


def test_an_id_tau_has_no_action_for_is_named_in_one_warning_line(tau: TauCommand, start_tui: Start) -> None:
    _write_keybindings(tau, {"app.thinking.save": "ctrl+n", "app.thinking.toggle": "alt+t"})
    terminal = start_tui()
    terminal.wait_for("app.thinking.save: tau has no such action; ignored")
    assert terminal.text().count("keybindings.json:") == 1
