"""The small protocols the interactive mode's helpers take instead of the whole mode.

A slash command, a dialog flow or a panel names what it uses of the mode (the session, the chat,
a dialog in the editor's place, a redraw, ...) as one of these, or as a protocol of its own built
from them; ``InteractiveMode`` fits each. A helper thus reads as what it needs, can be driven by
any object that has it, and imports nothing of the application (the import graph stays a tree).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from tau.modes.interactive.capabilities import Capabilities
    from tau.modes.interactive.dialogs import Dialog
    from tau.modes.interactive.footer import UsageTotals
    from tau.modes.interactive.keymap import Keymap
    from tau.modes.interactive.state import Activity
    from tau.runtime.agent_session import AgentSession
    from tau.runtime.runtime import AgentSessionRuntime

__all__ = ["CommandHost", "DialogHost", "EditorHost", "Notices", "SessionHost", "SettingsHost"]


class Notices(Protocol):
    """Where a helper tells the user something: a line in the chat."""

    def add_notice(self, text: str, level: str = "info") -> None: ...

    def add_markdown(self, text: str) -> None: ...


class SessionHost(Protocol):
    """The session the mode runs and the chat's notices: what a command that only reports needs."""

    @property
    def session(self) -> AgentSession: ...

    def theme(self) -> Any: ...

    @property
    def chat(self) -> Notices: ...


class DialogHost(SessionHost, Protocol):
    """A command that asks: a dialog in the editor's place until it answers, and a redraw."""

    async def show_dialog(self, dialog: Dialog) -> Any: ...

    def invalidate(self) -> None: ...


class EditorHost(SessionHost, Protocol):
    """A helper that changes the message editor's text."""

    @property
    def editor(self) -> Buffer: ...

    def invalidate(self) -> None: ...


class SettingsHost(DialogHost, Protocol):
    """What the settings menu reads and changes of the mode beside the settings themselves: the
    view (theme, thinking shown, padding, fullscreen or regular) and its redraws."""

    theme_name: str
    show_thinking: bool

    @property
    def output_pad(self) -> int: ...

    @property
    def tui_mode(self) -> str: ...

    def restyle(self) -> None: ...

    def switch_tui_mode(self, tui_mode: str) -> None: ...

    def set_output_pad(self, pad: int) -> None: ...

    def redraw_all(self, *, reload_messages: bool = False) -> None: ...

    def capabilities(self) -> Capabilities: ...


class CommandHost(SettingsHost, Protocol):
    """What the slash commands use of the mode: the runtime (new, resume, fork), the editor, the
    keys, the view the settings menu changes, the terminal (OSC 52) and the running of work."""

    @property
    def runtime(self) -> AgentSessionRuntime: ...

    @property
    def editor(self) -> Buffer: ...

    @property
    def keymap(self) -> Keymap: ...

    @property
    def totals(self) -> UsageTotals: ...

    @property
    def activity(self) -> Activity: ...

    def footer_changed(self) -> None: ...

    def keymap_reload(self) -> None: ...

    def write_raw(self, data: str) -> None: ...

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]: ...

    def quit(self, code: int = 0) -> None: ...
