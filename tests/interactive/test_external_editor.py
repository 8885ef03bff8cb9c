"""Ctrl+G in the real `tau` in a pseudo-terminal: the editor's text goes through an external
program chosen as pi 1.6 chooses it (the ``externalEditor`` setting, then $VISUAL / $EDITOR)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal, is_rule

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
CTRL_G = "\x07"

# A stand-in editor: it rewrites the file it is given (as an editor the user saves from would),
# or exits with the code in its first argument.
_EDITOR = """\
import sys
path = sys.argv[-1]
if len(sys.argv) > 2:
    sys.exit(int(sys.argv[1]))
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.upper() + " (edited by " + sys.argv[0].split("/")[-1] + ")\\n")
"""


def _editor(tau: TauCommand, name: str) -> str:
    script = tau.work.parent / name
    script.write_text(_EDITOR)
    return f"{sys.executable} {script}"


def _settings(tau: TauCommand, **values: object) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(values))


def _editor_text(terminal: Terminal) -> str:
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
    return "\n".join(lines[borders[-2] + 1 : borders[-1]]).strip() if len(borders) >= 2 else ""


def test_the_external_editor_setting_wins_over_visual_and_its_text_is_sent(
    tau: TauCommand, start_tui: Start
) -> None:
    _settings(tau, externalEditor=_editor(tau, "configured.py"))
    tau.env["VISUAL"] = _editor(tau, "visual.py")
    tau.server.add(Turn(text="got it"))
    terminal = start_tui()
    terminal.type("draft message")
    terminal.send(CTRL_G)
    terminal.wait_for(lambda: _editor_text(terminal) == "DRAFT MESSAGE (edited by configured.py)", timeout=10)
    terminal.send(ENTER)
    terminal.wait_for("got it")
    sent = json.dumps(tau.server.requests[-1].body)
    assert "DRAFT MESSAGE (edited by configured.py)" in sent
    assert "edited by configured.py)\\n" not in sent  # the editor's final newline is dropped


def test_without_the_setting_visual_is_the_editor(tau: TauCommand, start_tui: Start) -> None:
    tau.env["VISUAL"] = _editor(tau, "visual.py")
    tau.env["EDITOR"] = _editor(tau, "editor.py")
    terminal = start_tui()
    terminal.type("hello")
    terminal.send(CTRL_G)
    terminal.wait_for(lambda: _editor_text(terminal) == "HELLO (edited by visual.py)", timeout=10)


def test_an_editor_that_fails_leaves_the_text_and_says_why(tau: TauCommand, start_tui: Start) -> None:
    _settings(tau, externalEditor=_editor(tau, "failing.py") + " 3")
    terminal = start_tui()
    terminal.type("keep me")
    terminal.send(CTRL_G)
    terminal.wait_for("External editor exited with code 3; prompt unchanged", timeout=10)
    terminal.wait_for(lambda: _editor_text(terminal) == "keep me", timeout=5)


def test_an_editor_that_cannot_start_is_named(tau: TauCommand, start_tui: Start) -> None:
    _settings(tau, externalEditor=str(Path("/nonexistent/editor")))
    terminal = start_tui()
    terminal.type("keep me")
    terminal.send(CTRL_G)
    terminal.wait_for("Failed to launch external editor: /nonexistent/editor", timeout=10)
    terminal.wait_for(lambda: _editor_text(terminal) == "keep me", timeout=5)


NOTE_EXTENSION = """\
def setup(tau):
    @tau.register_command("note", description="Edit a note")
    async def note(args, ctx):
        text = await ctx.ui.editor("Edit the note", "draft note")
        ctx.ui.notify("note: " + str(text))
"""


def test_ctrl_g_in_an_extensions_editor_dialog_uses_the_external_editor_too(
    tau: TauCommand, start_tui: Start
) -> None:
    _settings(tau, externalEditor=_editor(tau, "configured.py"))
    (tau.agent_dir / "extensions").mkdir()
    (tau.agent_dir / "extensions" / "note.py").write_text(NOTE_EXTENSION)
    terminal = start_tui()
    terminal.type("/note")
    terminal.send(ENTER)
    terminal.wait_for("Edit the note", where="display")
    terminal.send(CTRL_G)
    terminal.wait_for("DRAFT NOTE (edited by configured.py)", where="display", timeout=10)
    terminal.send("\x13")  # Ctrl+S saves the dialog
    terminal.wait_for("note: DRAFT NOTE (edited by configured.py)")
