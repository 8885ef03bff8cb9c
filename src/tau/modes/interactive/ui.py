"""``ctx.ui`` in the terminal: extension dialogs take the editor's place, notices go into the
chat, statuses into the footer, widgets above or below the editor."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tau.ai.abort import AbortSignal
from tau.extensions.ui import NotifyLevel, ThemeInfo, ThemeResult, WidgetPlacement
from tau.modes.interactive.dialogs import Dialog, EditorDialog, InputDialog, ListDialog, ListItem
from tau.modes.interactive.external_editor import open_external_editor
from tau.modes.interactive.host import DialogHost, EditorHost

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from tau.modes.interactive.components import ComponentHost
    from tau.modes.interactive.program_status import ProgramStatus
    from tau.modes.interactive.state import Activity

__all__ = ["InteractiveUI", "UIHost"]


class UIHost(DialogHost, EditorHost, Protocol):
    """What ``ctx.ui`` reaches of the mode: dialogs, notices, the editor, the extensions' statuses
    and widgets, the spinner's words, the tools' expansion and the terminal's title."""

    @property
    def components(self) -> ComponentHost: ...

    @property
    def statuses(self) -> dict[str, str]: ...

    @property
    def widgets(self) -> dict[str, tuple[list[str], str]]: ...

    @property
    def activity(self) -> Activity: ...

    tools_expanded: bool
    hidden_thinking_label: str | None
    program_status: ProgramStatus
    terminal_input_listeners: list[Callable[[str], Any]]
    theme_name: str

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]: ...

    def restyle(self) -> None: ...

    def redraw_all(self, *, reload_messages: bool = False) -> None: ...

    def write_title(self, title: str) -> None: ...


class InteractiveUI:
    def __init__(self, mode: UIHost) -> None:
        self._mode = mode

    async def _ask(
        self,
        dialog: Dialog,
        timeout: float | None,
        signal: AbortSignal | None,
        default: Any,
        title: str,
        kind: str = "question",
    ) -> Any:
        """``dialog``'s answer; meanwhile the program status says tau waits for the user."""
        source = f"extension-dialog-{id(dialog)}"
        self._mode.program_status.blocked(source, kind, title)
        try:
            return await self._ask_now(dialog, timeout, signal, default)
        finally:
            self._mode.program_status.blocked(source)

    async def _ask_now(
        self, dialog: Dialog, timeout: float | None, signal: AbortSignal | None, default: Any
    ) -> Any:
        if signal is not None:
            if signal.aborted:
                return default
            signal.add_listener(lambda *_: dialog.close(default))
        waiting = asyncio.ensure_future(self._mode.show_dialog(dialog))
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), timeout) if timeout else await waiting
        except TimeoutError:
            dialog.close(default)
            await waiting
            return default

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        dialog: ListDialog[str] = ListDialog(title, [ListItem(option, option) for option in options])
        chosen = await self._ask(dialog, timeout, signal, None, title)
        return chosen.value if isinstance(chosen, ListItem) else None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        dialog: ListDialog[bool] = ListDialog(
            title,
            [ListItem("Yes", True), ListItem("No", False)],
            message=message,
            filterable=False,
            hint="↑↓ move · enter choose · esc: no",
        )
        chosen = await self._ask(dialog, timeout, signal, None, title, kind="permission")
        return bool(chosen.value) if isinstance(chosen, ListItem) else False

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        answer = await self._ask(
            InputDialog(title, placeholder=placeholder or ""), timeout, signal, None, title
        )
        return answer if isinstance(answer, str) else None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        def external(buffer: Buffer) -> None:
            self._mode.spawn(open_external_editor(self._mode, buffer))

        source = f"extension-editor-{id(external)}"
        self._mode.program_status.blocked(source, "question", title)
        try:
            answer = await self._mode.show_dialog(EditorDialog(title, prefill, external_editor=external))
        finally:
            self._mode.program_status.blocked(source)
        return answer if isinstance(answer, str) else None

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        self._mode.chat.add_notice(message, level or "info")

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self._mode.statuses[key] = text
        else:
            self._mode.statuses.pop(key, None)
        self._mode.invalidate()

    def set_working_message(self, text: str | None) -> None:
        self._mode.activity.working_message = text
        self._mode.invalidate()

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        if lines:
            self._mode.widgets[key] = ([_printable(line) for line in lines], placement or "aboveEditor")
        else:
            self._mode.widgets.pop(key, None)
        self._mode.invalidate()

    def set_title(self, title: str) -> None:
        clean = _printable(title)
        self._mode.write_title(clean)

    def set_editor_text(self, text: str) -> None:
        self._mode.editor.text = text
        self._mode.editor.cursor_position = len(text)

    def get_editor_text(self) -> str:
        return self._mode.editor.text

    def paste_to_editor(self, text: str) -> None:
        self._mode.editor.insert_text(text)

    def get_tools_expanded(self) -> bool:
        return self._mode.tools_expanded

    def set_tools_expanded(self, expanded: bool) -> None:
        if expanded != self._mode.tools_expanded:
            self._mode.tools_expanded = expanded
            self._mode.redraw_all()

    # -- components (tau.modes.interactive.components) ---------------------------------------------

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, overlay_options: Any = None
    ) -> Any:
        return await self._mode.components.custom(factory, overlay=overlay, overlay_options=overlay_options)

    def set_header(self, factory: Callable[..., Any] | None) -> None:
        self._mode.components.set_header(factory)

    def set_footer(self, factory: Callable[..., Any] | None) -> None:
        self._mode.components.set_footer(factory)

    def set_editor_component(self, factory: Callable[..., Any] | None) -> None:
        self._mode.components.set_editor_component(factory)

    def get_editor_component(self) -> Callable[..., Any] | None:
        return self._mode.components.editor_factory

    def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        self._mode.components.add_autocomplete_provider(factory)

    def set_working_visible(self, visible: bool) -> None:
        self._mode.activity.working_visible = bool(visible)
        self._mode.invalidate()

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int = 100) -> None:
        activity = self._mode.activity
        activity.working_frames = None if frames is None else [_printable(frame) for frame in frames]
        activity.working_interval_ms = max(1, int(interval_ms))
        self._mode.invalidate()

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        self._mode.hidden_thinking_label = _printable(label) if label else None
        self._mode.restyle()  # drawn blocks keep their drawing: draw them again with the label

    def get_all_themes(self) -> list[ThemeInfo]:
        from tau.modes.interactive.render.theme import theme_names
        from tau.modes.interactive.render.theme_files import theme_file

        return [{"name": name, "path": theme_file(name)} for name in theme_names()]

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        listeners = self._mode.terminal_input_listeners

        def listener(data: str) -> Any:
            try:
                return handler(data)
            except Exception as error:  # an extension's bug must not eat the user's keys
                self._mode.chat.add_notice(f"terminal input handler failed: {error}", "error")
                return None

        listeners.append(listener)

        def unsubscribe() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return unsubscribe

    def set_theme(self, name: str) -> ThemeResult:
        from tau.modes.interactive.render.theme import theme_names

        if name not in theme_names():
            return {"success": False, "error": f"Theme not found: {name}"}
        self._mode.theme_name = name
        self._mode.restyle()
        return {"success": True}


_NOT_SGR = re.compile(r"\x1b(?!\[[0-9;]*m)[^a-zA-Z]*[a-zA-Z]?")


def _printable(text: str) -> str:
    """Widget lines and titles may carry colour (SGR) but no other control sequence."""
    without_other_escapes = _NOT_SGR.sub("", text)
    return "".join(ch for ch in without_other_escapes if ch.isprintable() or ch == "\x1b")
