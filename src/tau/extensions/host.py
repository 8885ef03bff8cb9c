"""What the runtime provides to extensions: the session behind ``tau.*`` actions and ``ctx``.

``tau.extensions`` sits below ``tau.runtime``, so it cannot call ``AgentSession`` itself. The
runtime implements ``ExtensionHost`` and hands it to ``runner.bind(host, ui)``; until then every
session action raises ``ExtensionNotReadyError``. ``ProviderSink`` is the model registry's side of
``tau.register_provider`` (``ModelRegistry`` fits it as it is).

Actions that start work (``send_message`` with a turn, ``compact``, ``shutdown``) must not wait
for it: an event handler calling them would otherwise wait for the run it is part of.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, Model, TextContent
from tau.extensions.types import CommandInfo, ToolInfo
from tau.extensions.virtual_models import VirtualModelSink
from tau.session.manager import SessionManager
from tau.session.messages import CustomMessage

if TYPE_CHECKING:
    from tau.context.system_prompt import SystemPromptOptions

__all__ = ["DeliverAs", "ExtensionHost", "ForkPosition", "ProviderSink", "UserDelivery"]

DeliverAs: TypeAlias = Literal["steer", "follow_up", "next_turn"]
"""Where a custom message goes while the agent works (``next_turn``: with the next prompt)."""
UserDelivery: TypeAlias = Literal["steer", "follow_up"]
ForkPosition: TypeAlias = Literal["before", "at"]


class ExtensionHost(Protocol):
    """The session side of the extension API (spec 30 §8.2, §8.4), implemented by the runtime."""

    # -- what ``ctx`` reads ------------------------------------------------------------------

    @property
    def cwd(self) -> str: ...

    @property
    def session_manager(self) -> SessionManager: ...

    @property
    def model_registry(self) -> Any: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def signal(self) -> AbortSignal | None:
        """The running prompt's abort signal; ``None`` when idle."""
        ...

    def is_idle(self) -> bool: ...

    def has_pending_messages(self) -> bool: ...

    def get_context_usage(self) -> Any: ...

    def get_system_prompt(self) -> str:
        """The system prompt of the next request."""
        ...

    def get_system_prompt_options(self) -> SystemPromptOptions | None:
        """What the default system prompt was built from (``None`` before it is built)."""
        ...

    def get_settings(self) -> dict[str, Any]:
        """A copy of the effective settings (user's, project's, then command-line overrides)."""
        ...

    def is_project_trusted(self) -> bool:
        """Whether the session's folder was trusted, so its own configuration loaded."""
        ...

    def fence_command(self, argv: list[str], cwd: str, purpose: str) -> list[str]:
        """``argv`` as the session's sandbox runs a long-lived helper of ``purpose`` (``"mcp"``:
        a stdio MCP server, fenced when ``sandbox.mcp`` is true); ``argv`` when not fenced.
        Raises ``SandboxUnavailable`` when the sandbox is broken."""
        ...

    # -- actions of ``ctx`` --------------------------------------------------------------------

    def abort(self) -> None:
        """Ask the running prompt to stop (does not wait)."""
        ...

    def shutdown(self) -> None:
        """End the program once idle (a no-op in print mode)."""
        ...

    def compact(
        self,
        custom_instructions: str | None,
        on_complete: Callable[[Any], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        """Start a compaction in the background."""
        ...

    # -- actions of ``tau`` --------------------------------------------------------------------

    def send_message(self, message: CustomMessage, *, trigger_turn: bool, deliver_as: DeliverAs) -> None:
        """Put an extension message in the conversation (spec 30 §1.3.1 ``sendCustomMessage``)."""
        ...

    def send_user_message(
        self, content: str | list[TextContent | ImageContent], *, deliver_as: UserDelivery | None
    ) -> None:
        """Prompt as if the user typed ``content`` (``input`` fires with source ``extension``)."""
        ...

    def append_entry(self, custom_type: str, data: Any) -> str:
        """Persist extension state as a ``custom`` entry (never sent to the model); its id."""
        ...

    def set_session_name(self, name: str) -> None: ...

    def get_session_name(self) -> str | None: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    def get_active_tools(self) -> list[str]: ...

    def get_all_tools(self) -> list[ToolInfo]: ...

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate the named tools (unknown names ignored) and rebuild the base system prompt."""
        ...

    def refresh_tools(self) -> None:
        """An extension registered a tool after startup: rebuild the tool registry from
        ``runner.tools`` and activate the new names (unless an allowlist is in force)."""
        ...

    def get_resource_commands(self) -> list[CommandInfo]:
        """Prompt-template and skill commands, in that order (extension commands come from the runner)."""
        ...

    async def set_model(self, model: Model) -> bool:
        """Switch model; ``False`` when it has no credentials."""
        ...

    def get_thinking_level(self) -> str: ...

    def set_thinking_level(self, level: str) -> None: ...

    # -- command-only actions (``ExtensionCommandContext``) ------------------------------------

    async def wait_for_idle(self) -> None: ...

    async def new_session(self, **options: Any) -> Any: ...

    async def fork(self, entry_id: str, position: ForkPosition) -> Any: ...

    async def navigate_tree(self, target_id: str, **options: Any) -> Any: ...

    async def switch_session(self, path: str, **options: Any) -> Any: ...

    async def reload(self) -> None: ...


class ProviderSink(VirtualModelSink, Protocol):
    """Where extension providers' models.json-style configs and virtual models go (the runtime's
    model registry)."""

    def register_provider(
        self, name: str, config: Mapping[str, Any], *, classifiers: Mapping[str, Any] | None = None
    ) -> None: ...

    def unregister_provider(self, name: str) -> None: ...
