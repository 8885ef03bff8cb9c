"""Test doubles for extension authors: a host that records what extensions ask of the session, and
a UI that answers dialogs from a script.

    runner = await load_extensions([ExtensionSource("file", "gate", "gate.py")], cwd=tmp)
    host, ui = RecordingHost(tmp), ScriptedUI(confirms=[False])
    runner.bind(host, ui)
    decision = await runner.emit_tool_call("bash", "call-1", {"command": "rm -rf /"})
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msgspec import Struct, field

from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, Model, TextContent
from tau.extensions.host import DeliverAs, ForkPosition, UserDelivery
from tau.extensions.types import CommandInfo, ToolInfo
from tau.extensions.ui import NotifyLevel, WidgetPlacement
from tau.session.manager import SessionManager
from tau.session.messages import CustomMessage

__all__ = ["RecordingHost", "ScriptedUI", "SentMessage"]


class SentMessage(Struct, frozen=True):
    message: CustomMessage
    trigger_turn: bool
    deliver_as: DeliverAs


class RecordingHost:
    """An ``ExtensionHost`` over an in-memory session that records every action."""

    def __init__(
        self,
        cwd: str,
        *,
        session_manager: SessionManager | None = None,
        model: Model | None = None,
        system_prompt: str = "",
        tools: Sequence[ToolInfo] = (),
        active_tools: Sequence[str] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.cwd = cwd
        self.settings: dict[str, Any] = dict(settings or {})
        self.session_manager = session_manager or SessionManager.in_memory(cwd)
        self.model_registry: Any = None
        self.model = model
        self.signal: AbortSignal | None = None
        self.system_prompt = system_prompt
        self.idle = True
        self.pending_messages = False
        self.tools = list(tools)
        self.active_tools = list(active_tools) if active_tools is not None else [t.name for t in self.tools]
        self.thinking_level = "off"
        self.session_name: str | None = None
        self.sent: list[SentMessage] = []
        self.user_messages: list[tuple[str | list[TextContent | ImageContent], UserDelivery | None]] = []
        self.entries: list[tuple[str, Any]] = []
        self.labels: dict[str, str | None] = {}
        self.actions: list[str] = []
        """Names of the actions called, in order (``abort``, ``refresh_tools``, ``new_session`` …)."""

    # -- state -----------------------------------------------------------------------------------

    def is_idle(self) -> bool:
        return self.idle

    def has_pending_messages(self) -> bool:
        return self.pending_messages

    def get_context_usage(self) -> Any:
        return None

    def get_system_prompt(self) -> str:
        return self.system_prompt

    def get_system_prompt_options(self) -> Any:
        return None

    def get_settings(self) -> dict[str, Any]:
        return dict(self.settings)

    # -- actions ---------------------------------------------------------------------------------

    def abort(self) -> None:
        self.actions.append("abort")

    def shutdown(self) -> None:
        self.actions.append("shutdown")

    def compact(
        self,
        custom_instructions: str | None,
        on_complete: Callable[[Any], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        self.actions.append("compact")

    def send_message(self, message: CustomMessage, *, trigger_turn: bool, deliver_as: DeliverAs) -> None:
        self.sent.append(SentMessage(message, trigger_turn, deliver_as))

    def send_user_message(
        self, content: str | list[TextContent | ImageContent], *, deliver_as: UserDelivery | None
    ) -> None:
        self.user_messages.append((content, deliver_as))

    def append_entry(self, custom_type: str, data: Any) -> str:
        self.entries.append((custom_type, data))
        return self.session_manager.append_custom_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self.session_name = name

    def get_session_name(self) -> str | None:
        return self.session_name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.labels[entry_id] = label

    def get_active_tools(self) -> list[str]:
        return list(self.active_tools)

    def get_all_tools(self) -> list[ToolInfo]:
        return list(self.tools)

    def set_active_tools(self, names: Sequence[str]) -> None:
        known = {t.name for t in self.tools}
        self.active_tools = [n for n in names if not known or n in known]

    def refresh_tools(self) -> None:
        self.actions.append("refresh_tools")

    def get_resource_commands(self) -> list[CommandInfo]:
        return []

    async def set_model(self, model: Model) -> bool:
        self.model = model
        return True

    def get_thinking_level(self) -> str:
        return self.thinking_level

    def set_thinking_level(self, level: str) -> None:
        self.thinking_level = level

    async def wait_for_idle(self) -> None:
        self.actions.append("wait_for_idle")

    async def new_session(self, **options: Any) -> Any:
        self.actions.append("new_session")

    async def fork(self, entry_id: str, position: ForkPosition) -> Any:
        self.actions.append("fork")

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        self.actions.append("navigate_tree")

    async def switch_session(self, path: str, **options: Any) -> Any:
        self.actions.append("switch_session")

    async def reload(self) -> None:
        self.actions.append("reload")


class ScriptedUI(Struct, dict=True):
    """A UI whose dialogs take their answers from lists (then answer "no answer"), recording
    every dialog title and every notification."""

    confirms: Iterable[bool] = ()
    selects: Iterable[str | None] = ()
    inputs: Iterable[str | None] = ()
    dialogs: list[str] = field(default_factory=list)
    notifications: list[tuple[str, NotifyLevel]] = field(default_factory=list)
    statuses: dict[str, str | None] = field(default_factory=dict)
    widgets: dict[str, list[str] | None] = field(default_factory=dict)
    editor_text: str = ""
    tools_expanded: bool = False

    def __post_init__(self) -> None:
        self._confirms: deque[bool] = deque(self.confirms)
        self._selects: deque[str | None] = deque(self.selects)
        self._inputs: deque[str | None] = deque(self.inputs)

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        self.dialogs.append(title)
        return self._selects.popleft() if self._selects else None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        self.dialogs.append(title)
        return self._confirms.popleft() if self._confirms else False

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        self.dialogs.append(title)
        return self._inputs.popleft() if self._inputs else None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        self.dialogs.append(title)
        return self._inputs.popleft() if self._inputs else None

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        self.notifications.append((message, level or "info"))

    def set_status(self, key: str, text: str | None) -> None:
        self.statuses[key] = text

    def set_working_message(self, text: str | None) -> None:
        return None

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        self.widgets[key] = list(lines) if lines is not None else None

    def set_title(self, title: str) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        self.editor_text = text

    def get_editor_text(self) -> str:
        return self.editor_text

    def paste_to_editor(self, text: str) -> None:
        self.editor_text += text

    def get_tools_expanded(self) -> bool:
        return self.tools_expanded

    def set_tools_expanded(self, expanded: bool) -> None:
        self.tools_expanded = expanded

    async def custom(self, factory: Any, *, overlay: bool = False, overlay_options: Any = None) -> Any:
        """No screen to draw on: ``None`` at once, as in pi's RPC mode."""
        self.dialogs.append("custom")
        return None

    def set_header(self, factory: Any) -> None:
        return None

    def set_footer(self, factory: Any) -> None:
        return None

    def set_editor_component(self, factory: Any) -> None:
        return None

    def get_editor_component(self) -> Any:
        return None

    def add_autocomplete_provider(self, factory: Any) -> None:
        return None

    def set_working_visible(self, visible: bool) -> None:
        return None

    def set_working_indicator(self, frames: Sequence[str] | None = None, interval_ms: int = 100) -> None:
        return None

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        return None

    def get_all_themes(self) -> list[dict[str, str | None]]:
        return []

    def set_theme(self, name: str) -> dict[str, Any]:
        return {"success": False, "error": "Theme switching needs the terminal UI"}

    def on_terminal_input(self, handler: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: None
