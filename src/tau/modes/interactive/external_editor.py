"""Ctrl+G: the editor's text edited in an external program, chosen as pi 1.6 chooses it.

The command is the ``externalEditor`` setting, else ``$VISUAL``, else ``$EDITOR``, else ``nano``.
It gets a temporary ``prompt.md`` holding the text and the terminal; when it exits with 0 the
file's content (one final newline dropped, as editors add one) becomes the editor's text. Any other
outcome leaves the text as it was and says why.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct
from prompt_toolkit.application import run_in_terminal

from tau.modes.interactive.stray_output import terminal_owned

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from tau.modes.interactive.host import EditorHost


__all__ = ["EditOutcome", "edit_in_external_editor", "external_editor_command", "open_external_editor"]

_FALLBACK = "nano"


def external_editor_command(configured: object, environ: dict[str, str] | None = None) -> str:
    """The command to run: a non-blank ``externalEditor`` setting, ``$VISUAL``, ``$EDITOR``, ``nano``."""
    if isinstance(configured, str) and configured.strip():
        return configured
    env = os.environ if environ is None else environ
    return env.get("VISUAL") or env.get("EDITOR") or _FALLBACK


class EditOutcome(Struct, frozen=True):
    """The edited text, or (``text`` is ``None``) the one line saying why there is none."""

    text: str | None
    message: str = ""


def _argv(command: str) -> list[str]:
    # Quotes are honoured ("'/opt/My Editor/bin/ed' --wait"); pi splits on spaces, which gives the
    # same words for every command without quotes.
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words


def edit_in_external_editor(command: str, content: str, *, cwd: str | None = None) -> EditOutcome:
    """Run ``command`` on a temporary file holding ``content`` (blocking; the terminal is the editor's)."""
    with tempfile.TemporaryDirectory(prefix="tau-editor-") as folder:
        path = Path(folder) / "prompt.md"
        path.write_text(content, encoding="utf-8")
        argv = _argv(command)
        if not argv:
            return EditOutcome(None, f"Failed to launch external editor: {command}")
        try:
            with terminal_owned():  # fullscreen keeps stray output in its pane: not the editor's
                sys.stdout.write(
                    f"Launching external editor: {command}\nTau will resume when the editor exits.\n"
                )
                sys.stdout.flush()
                code = subprocess.call([*argv, str(path)], cwd=cwd)
        except OSError:
            return EditOutcome(None, f"Failed to launch external editor: {command}")
        if code != 0:
            how = f"code {code}" if code > 0 else f"signal {-code}"
            return EditOutcome(None, f"External editor exited with {how}; prompt unchanged")
        try:
            text = path.read_text(encoding="utf-8-sig", errors="replace")
        except OSError as error:
            return EditOutcome(None, f"Cannot read the edited text: {error}; prompt unchanged")
    return EditOutcome(text.removesuffix("\n"))


async def open_external_editor(mode: EditorHost, buffer: Buffer | None = None) -> None:
    """The key's action on ``buffer`` (default: the message editor; also an extension's editor
    dialog): the application steps aside while the external editor owns the terminal."""
    command = external_editor_command(mode.session.services.settings_manager.get("externalEditor"))
    buffer = buffer if buffer is not None else mode.editor
    content = buffer.text
    outcome: EditOutcome = await run_in_terminal(
        lambda: edit_in_external_editor(command, content, cwd=mode.session.cwd), in_executor=True
    )
    if outcome.text is None:
        mode.chat.add_notice(outcome.message, "warning")
    else:
        buffer.text = outcome.text
        buffer.cursor_position = len(outcome.text)
    mode.invalidate()
