"""Project trust in the terminal: the start-up question and ``/trust``.

The question comes before any of the folder's code can load, so before the terminal UI exists: it
is a one-dialog application of its own, erased once answered. ``/trust`` saves a decision for the
next start; the running session keeps what it loaded (its extensions already ran, or never did).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.layout import Layout
from prompt_toolkit.styles import Style

from tau.ai.abort import AbortSignal
from tau.config.config_errors import ConfigError
from tau.config.project_trust import (
    SavedDecision,
    TrustOption,
    TrustStore,
    canonical_folder,
    has_trust_requiring_resources,
    trust_options,
    trust_question,
)
from tau.extensions.ui import NoUI
from tau.modes.interactive.dialogs import Dialog, InputDialog, ListDialog, ListItem

if TYPE_CHECKING:
    from tau.modes.interactive.host import DialogHost

__all__ = ["StartupUI", "ask_project_trust", "trust_command", "untrusted_notice"]

_STYLE = {
    "dialog.title": "bold",
    "dialog.hint": "#808080",
    "dialog.selected": "reverse",
    "dialog.border": "#5f87af",
}


async def ask_project_trust(cwd: str) -> TrustOption | None:
    """Ask whether to trust ``cwd``; the chosen answer, or ``None`` when dismissed (Esc, Ctrl+C)."""
    title, message = trust_question(cwd)
    items = [ListItem(option.label, option) for option in trust_options(cwd)]
    dialog: ListDialog[TrustOption] = ListDialog(
        title, items, message=message, filterable=False, hint="↑↓ move · enter choose · esc: do not trust"
    )
    chosen = await _run_alone(dialog)
    return chosen.value if isinstance(chosen, ListItem) else None


async def _run_alone(dialog: Dialog) -> Any:
    """A dialog as a small application of its own (before the terminal UI exists); its answer."""
    app: Application[None] = Application(
        layout=Layout(dialog.container, focused_element=dialog.focus),
        style=Style.from_dict(_STYLE),
        full_screen=False,
        mouse_support=False,
        erase_when_done=True,
    )
    dialog.future.add_done_callback(lambda _: app.exit())
    await app.run_async()
    return dialog.future.result() if dialog.future.done() else None


async def _choose(title: str, options: Sequence[str], *, message: str = "") -> str | None:
    items = [ListItem(option, option) for option in options]
    hint = "↑↓ move · enter choose · esc cancel"
    chosen = await _run_alone(ListDialog(title, items, message=message, filterable=False, hint=hint))
    return chosen.value if isinstance(chosen, ListItem) else None


class StartupUI(NoUI):
    """``ctx.ui`` of a ``project_trust`` handler in the terminal: its dialogs ask, one at a time,
    before the terminal UI starts; everything else does nothing (there is no screen yet)."""

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return await _choose(title, options)

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> bool:
        return await _choose(title, ["Yes", "No"], message=message) == "Yes"

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        answer = await _run_alone(InputDialog(title, placeholder=placeholder or ""))
        return answer if isinstance(answer, str) else None


def untrusted_notice(cwd: str, trusted: bool) -> str | None:
    """The warning for a folder whose protected files were left out, ``None`` when nothing was."""
    if trusted or not has_trust_requiring_resources(cwd):
        return None
    return (
        "This folder is not trusted: its .tau extensions, settings, skills, prompt templates and system "
        "prompt files were not loaded. Use /trust to save a decision, then restart tau."
    )


def _describe(saved: SavedDecision | None, folder: str) -> str:
    if saved is None:
        return "none"
    label = "trusted" if saved.trusted else "not trusted"
    return f"{label} ({saved.path})" if saved.path == folder else f"{label} (inherited from {saved.path})"


async def trust_command(mode: DialogHost, argument: str) -> None:
    services = mode.session.services
    store = TrustStore(services.agent_dir)
    folder = canonical_folder(services.cwd)
    try:
        saved = store.entry(folder)
    except ConfigError as error:
        mode.chat.add_notice(f"{error.message}; fix or remove it to save a decision", "error")
        return
    options = trust_options(folder, session_only=False)
    current = next(
        (
            i
            for i, o in enumerate(options)
            if saved and o.trusted == saved.trusted and o.saved_path == saved.path
        ),
        0,
    )
    session = "trusted" if services.project_trusted else "not trusted"
    dialog: ListDialog[TrustOption] = ListDialog(
        "Project trust",
        [ListItem(o.label, o, "(saved)" if i == current and saved else "") for i, o in enumerate(options)],
        message=f"{folder}\nSaved decision: {_describe(saved, folder)}\nThis session: {session}",
        filterable=False,
        selected=current,
        hint="↑↓ move · enter save · esc cancel",
    )
    chosen = await mode.show_dialog(dialog)
    if not isinstance(chosen, ListItem):
        return
    try:
        store.update(chosen.value.updates)
    except (ConfigError, OSError) as error:
        mode.chat.add_notice(error.message if isinstance(error, ConfigError) else str(error), "error")
        return
    word = "trusted" if chosen.value.trusted else "not trusted"
    mode.chat.add_notice(f"Saved trust decision: {word}. Restart tau for it to take effect.")
