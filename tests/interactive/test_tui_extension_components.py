"""Extensions' own components in the real terminal UI (ctx.ui.custom inline and as an overlay,
set_header, set_footer, add_autocomplete_provider), driven through a pseudo-terminal with the
examples in examples/extensions/."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal

Start = Callable[..., Terminal]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"
DOWN = "\x1b[B"
ESCAPE = "\x1b"


def _command(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def test_a_custom_component_takes_the_editors_place_gets_the_keys_and_answers(start_tui: Start) -> None:
    terminal = start_tui("-e", str(EXAMPLES / "pick_target.py"))
    _command(terminal, "/pick-target")
    terminal.wait_for("Choose a deployment target", where="display")
    terminal.wait_for("> development", where="display")
    terminal.send(DOWN)
    terminal.wait_for("> staging", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Selected staging")
    terminal.wait_for(lambda: "Choose a deployment target" not in terminal.display())


def test_an_overlay_floats_above_the_screen_until_it_is_done(start_tui: Start) -> None:
    terminal = start_tui("-e", str(EXAMPLES / "pick_target.py"), "--tui-mode", "fullscreen")
    _command(terminal, "/pick-target overlay")
    terminal.wait_for("Choose a deployment target", where="display")
    # In the top right corner, one cell in from the edge: the rest of the screen is still drawn.
    row = next(line for line in terminal.display().splitlines() if "Choose a deployment target" in line)
    assert row.index("Choose a deployment target") >= 100 - 40 - 1 - 1
    terminal.send(ESCAPE)
    terminal.wait_for("No target chosen")
    terminal.wait_for(lambda: "Choose a deployment target" not in terminal.display())


def test_a_custom_header_and_footer_replace_tau_s(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui("-e", str(EXAMPLES / "custom_header.py"), "-e", str(EXAMPLES / "custom_footer.py"))
    terminal.wait_for("Run the tests before you commit.")
    assert tau.work.name in terminal.text()
    _command(terminal, "/footer")
    terminal.wait_for("⎇ no git", where="display")
    assert "fake-model" not in terminal.display().splitlines()[-1]
    _command(terminal, "/footer")
    terminal.wait_for(lambda: "⎇ no git" not in terminal.display())


def test_an_autocomplete_provider_offers_its_items_and_hands_the_rest_to_tau_s(
    tau: TauCommand, start_tui: Start
) -> None:
    bin_dir = tau.work.parent / "bin"
    bin_dir.mkdir()
    issues = [
        {"number": 2983, "title": "Extension API for autocomplete"},
        {"number": 2753, "title": "Reload"},
    ]
    gh = bin_dir / "gh"
    gh.write_text(f"#!/bin/sh\necho '{json.dumps(issues)}'\n")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    tau.env["PATH"] = f"{bin_dir}{os.pathsep}{tau.env['PATH']}"
    terminal = start_tui("-e", str(EXAMPLES / "issue_autocomplete.py"))
    terminal.type("fix #29")
    terminal.wait_for("Extension API for autocomplete", where="display")
    terminal.wait_for(lambda: "Reload" not in terminal.display())  # "#29" leaves out #2753
    terminal.send(ENTER)  # takes the suggestion
    terminal.wait_for("fix #2983", where="display")
    terminal.send("\x15")  # ctrl+u: an empty editor again
    terminal.type("/mod")
    terminal.wait_for("→ model", where="display")  # tau's own completion, below the provider


def test_an_extension_s_editor_takes_the_keys_first_and_hands_the_rest_to_tau_s_editor(
    start_tui: Start,
) -> None:
    terminal = start_tui("-e", str(EXAMPLES / "modal_editor.py"))
    terminal.wait_for("INSERT", where="display")
    terminal.type("hello")
    terminal.send(ESCAPE)  # insert → normal: the extension's, not tau's interrupt
    terminal.wait_for("NORMAL", where="display")
    terminal.type("hhx")  # two left (tau's cursor keys), then delete under the cursor
    terminal.wait_for("helo", where="display")
    terminal.type("$a")  # to the end, insert after it
    terminal.send("\x15")  # ctrl+u, tau's: deletes back to the line's start
    terminal.wait_for(lambda: "helo" not in terminal.display() and "INSERT" in terminal.display())
    _command(terminal, "/vim")  # Enter, tau's: the command puts tau's own editor back
    terminal.wait_for(lambda: "INSERT" not in terminal.display() and "NORMAL" not in terminal.display())
    terminal.type("hhx")
    terminal.wait_for("hhx", where="display")


def test_an_extension_command_s_argument_completions_are_offered_and_a_failing_one_offers_none(
    tau: TauCommand, start_tui: Start
) -> None:
    """``register_command(..., complete=...)``: what ``complete(prefix)`` returns is the menu for
    the argument (pi's ``getArgumentCompletions``); Enter takes one into the text; a completer
    that raises offers nothing and the editor goes on."""
    extension = tau.work / "deploy_ext.py"
    extension.write_text(
        "def setup(tau):\n"
        "    targets = ['staging', 'production', 'preview']\n"
        "    tau.register_command('deploy', lambda args, ctx: ctx.ui.notify('deploying ' + args),\n"
        "                         description='Deploy', complete=lambda p: [t for t in targets if p in t])\n"
        "    def broken(prefix):\n"
        "        raise RuntimeError('no list today')\n"
        "    tau.register_command('broken', lambda args, ctx: None, complete=broken)\n"
    )
    terminal = start_tui("-e", str(extension))
    terminal.type("/deploy pr")
    terminal.wait_for("→ production", where="display")
    assert "preview" in terminal.display() and "staging" not in terminal.display()
    terminal.send(ENTER)  # takes it into the text
    terminal.wait_for(lambda: "→" not in terminal.display(), where="display")
    terminal.send(ENTER)  # runs the command
    terminal.wait_for("deploying production", where="display")
    terminal.type("/broken x")
    terminal.settle()
    assert "→" not in terminal.display() and "/broken x" in terminal.display()
