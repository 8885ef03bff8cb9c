"""What an extension can ask of the user interface, and ``NoUI`` for modes without one.

Dialogs are coroutines; a dialog that times out, is aborted through ``signal`` or cannot be
shown answers with its "no answer" value (``None`` / ``False``). Everything else is a plain call
that changes what is on screen. Print and JSON modes bind ``NoUI`` and report ``ctx.has_ui`` as
false, so an extension can choose a safe default (a permission gate blocks, say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from tau.ai.abort import AbortSignal

__all__ = [
    "ComponentUI",
    "ExtensionUI",
    "NeutralUI",
    "NoUI",
    "NotifyLevel",
    "ThemeInfo",
    "ThemeResult",
    "WidgetPlacement",
]

NotifyLevel: TypeAlias = Literal["info", "warning", "error"]
WidgetPlacement: TypeAlias = Literal["aboveEditor", "belowEditor"]
ThemeInfo: TypeAlias = dict[str, str | None]
"""``get_all_themes()``'s entry, as pi's: ``{"name": ..., "path": ...}``."""
ThemeResult: TypeAlias = dict[str, Any]
"""``set_theme()``'s answer, as pi's: ``{"success": bool, "error"?: str}``."""


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

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        """A notice; ``level`` ``None`` is an ``"info"`` one (sent without a type over RPC, as pi's)."""
        ...

    def set_status(self, key: str, text: str | None) -> None:
        """A short status line kept under ``key`` (``None`` removes it)."""
        ...

    def set_working_message(self, text: str | None) -> None: ...

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        """Lines shown under ``key`` (``None`` removes them), above the editor unless ``placement``
        says ``"belowEditor"``."""
        ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...

    def paste_to_editor(self, text: str) -> None: ...

    def get_tools_expanded(self) -> bool: ...

    def set_tools_expanded(self, expanded: bool) -> None: ...


@runtime_checkable
class ComponentUI(Protocol):
    """What ``ctx.ui`` offers beyond ``ExtensionUI`` for extensions' own components (pi's
    ``ctx.ui.custom`` / ``setHeader`` / ``setFooter`` / ``setEditorComponent`` /
    ``addAutocompleteProvider``). The terminal
    UI draws them (``tau.modes.interactive.components`` says what a component is); elsewhere
    ``custom`` answers ``None`` at once and the others change nothing, as in pi's RPC mode."""

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, overlay_options: Any = None
    ) -> Any:
        """``factory(tui, theme, keybindings, done)``'s component in the editor's place (above the
        screen with ``overlay=True``) until it calls ``done(value)``; returns ``value``."""
        ...

    def set_header(self, factory: Callable[..., Any] | None) -> None:
        """``factory(tui, theme)``'s component instead of the startup header (``None``: tau's)."""
        ...

    def set_footer(self, factory: Callable[..., Any] | None) -> None:
        """``factory(tui, theme, footer_data)``'s component instead of the footer (``None``: tau's)."""
        ...

    def set_editor_component(self, factory: Callable[..., Any] | None) -> None:
        """``factory(tui, theme, keybindings)``'s editor in place of tau's (``None``: tau's again);
        ``tau.extensions.CustomEditor`` says what it may do."""
        ...

    def get_editor_component(self) -> Callable[..., Any] | None:
        """The factory of the editor set now (to wrap it), ``None`` for tau's."""
        ...

    def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        """Stack ``factory(current)``'s provider on the editor's completion: its
        ``get_suggestions(lines, cursor_line, cursor_col, options)`` (plain or async) returns
        ``{"prefix", "items": [{"value", "label"?, "description"?}]}``, or delegates to
        ``current.get_suggestions(...)``."""
        ...

    def set_working_visible(self, visible: bool) -> None:
        """``False`` hides the working line (spinner and words) while the agent works."""
        ...

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int = 100) -> None:
        """The working line's spinner: ``frames`` in turn every ``interval_ms`` (colour codes kept),
        ``[]`` for none, ``None`` for tau's own."""
        ...

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """The words a collapsed thinking block shows instead of "Thinking…" (``None``: tau's)."""
        ...

    def get_all_themes(self) -> list[ThemeInfo]:
        """The themes there are: ``{"name", "path"}`` (the theme file; ``None`` for a built-in one)."""
        ...

    def set_theme(self, name: str) -> ThemeResult:
        """Draw with theme ``name`` from now on in this process (not saved): ``{"success": True}``,
        or ``{"success": False, "error": ...}``."""
        ...

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        """``handler(data)`` sees the terminal's raw input first (each read, key sequences as the
        terminal sends them): return ``{"consume": True}`` to swallow it or ``{"data": text}`` to
        hand on other text; returns the function that removes the handler."""
        ...


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

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        return None

    def set_status(self, key: str, text: str | None) -> None:
        return None

    def set_working_message(self, text: str | None) -> None:
        return None

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
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

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, overlay_options: Any = None
    ) -> Any:
        return None

    def set_header(self, factory: Callable[..., Any] | None) -> None:
        return None

    def set_footer(self, factory: Callable[..., Any] | None) -> None:
        return None

    def set_editor_component(self, factory: Callable[..., Any] | None) -> None:
        return None

    def get_editor_component(self) -> Callable[..., Any] | None:
        return None

    def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        return None

    def set_working_visible(self, visible: bool) -> None:
        return None

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int = 100) -> None:
        return None

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        return None

    def get_all_themes(self) -> list[ThemeInfo]:
        return []

    def set_theme(self, name: str) -> ThemeResult:
        return {"success": False, "error": "Theme switching needs the terminal UI"}

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: None


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
