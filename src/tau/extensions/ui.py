"""What an extension can ask of the user interface, and ``NoUI`` for modes without one.

Dialogs are coroutines; a dialog that times out, is aborted through ``signal`` or cannot be
shown answers with its "no answer" value (``None`` / ``False``). Everything else is a plain call
that changes what is on screen. Print and JSON modes bind ``NoUI`` and report ``ctx.has_ui`` as
false, so an extension can choose a safe default (a permission gate blocks, say).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from tau.ai.abort import AbortSignal

__all__ = ["ExtensionUI", "NeutralUI", "NoUI", "NotifyLevel", "WidgetPlacement"]

NotifyLevel: TypeAlias = Literal["info", "warning", "error"]
WidgetPlacement: TypeAlias = Literal["aboveEditor", "belowEditor"]


@runtime_checkable
class ExtensionUI(Protocol):
    """The UI an extension sees as ``ctx.ui`` (interactive, RPC, or ``NoUI``)."""

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        """One of ``options``, or ``None`` when dismissed."""
        ...

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> bool:
        """``True`` only when the user agreed."""
        ...

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None: ...

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """Multi-line text the user edited, or ``None`` when cancelled."""
        ...

    def notify(self, message: str, level: NotifyLevel = "info") -> None: ...

    def set_status(self, key: str, text: str | None) -> None:
        """A short status line kept under ``key`` (``None`` removes it)."""
        ...

    def set_working_message(self, text: str | None) -> None: ...

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement = "aboveEditor"
    ) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...

    def paste_to_editor(self, text: str) -> None: ...

    def get_tools_expanded(self) -> bool: ...

    def set_tools_expanded(self, expanded: bool) -> None: ...


class NeutralUI:
    """``ExtensionUI`` without a screen, all but its choices: text dialogs get no answer, display
    calls change nothing. UIs that can ask only some things (ACP, RPC) build on it."""

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def set_working_message(self, text: str | None) -> None:
        return None

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        return None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""

    def paste_to_editor(self, text: str) -> None:
        return None

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        return None


class NoUI(NeutralUI):
    """No screen: dialogs answer "no answer" at once, display calls do nothing."""

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return None

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> bool:
        return False
