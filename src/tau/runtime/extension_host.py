"""``SessionExtensionHost``: the ``ExtensionHost`` the runtime gives the extension runner.

Every ``tau.*`` session action and every ``ctx`` read ends here and is answered by the
``AgentSession``. Actions that start work (``abort``, ``compact``, a triggered turn) do not wait
for it: an event handler calling them would otherwise wait for the run it is part of. Replacing
the session (``ctx.new_session``, ``ctx.fork``, ``ctx.switch_session``) needs the
``AgentSessionRuntime`` that owns the session; without one these raise ``AgentSessionError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tau.accounts.model_resolver import is_valid_thinking_level
from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, Model, TextContent
from tau.runtime.errors import AgentSessionError, MissingAuthError
from tau.session.manager import SessionManager
from tau.session.messages import CustomMessage

if TYPE_CHECKING:
    from tau.context.system_prompt import SystemPromptOptions
    from tau.extensions.host import DeliverAs, ForkPosition, UserDelivery
    from tau.extensions.types import CommandInfo, ToolInfo
    from tau.runtime.agent_session import AgentSession
    from tau.runtime.context_usage import ContextUsage

__all__ = ["SessionExtensionHost", "SessionReplacer"]


class SessionReplacer(Protocol):
    """What ``AgentSessionRuntime`` offers the session it owns."""

    async def new_session(self, *, parent_session: str | None = None) -> Any: ...

    async def switch_session(self, path: str, cwd_override: str | None = None) -> Any: ...

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> Any: ...


class SessionExtensionHost:
    """The session side of the extension API, over one ``AgentSession``."""

    def __init__(self, session: AgentSession) -> None:
        self._session = session
        self.replacer: SessionReplacer | None = None
        """Set by the runtime that owns the session."""
        self.shutdown_handler: Callable[[], None] | None = None
        """What ``ctx.shutdown()`` does (set by the mode; nothing in print mode)."""

    # -- what ``ctx`` reads ------------------------------------------------------------------

    @property
    def cwd(self) -> str:
        return self._session.cwd

    @property
    def session_manager(self) -> SessionManager:
        return self._session.session_manager

    @property
    def model_registry(self) -> Any:
        return self._session.services.model_registry

    @property
    def model(self) -> Model | None:
        return self._session.model

    @property
    def signal(self) -> AbortSignal | None:
        return self._session.agent.signal

    def is_idle(self) -> bool:
        return not self._session.is_streaming

    def has_pending_messages(self) -> bool:
        return self._session.pending_message_count > 0

    def get_context_usage(self) -> ContextUsage | None:
        return self._session.get_context_usage()

    def get_system_prompt(self) -> str:
        return self._session.system_prompt

    def get_system_prompt_options(self) -> SystemPromptOptions | None:
        return self._session.base_system_prompt_options

    def get_settings(self) -> dict[str, Any]:
        return self._session.services.settings_manager.as_dict()

    def is_project_trusted(self) -> bool:
        return self._session.services.project_trusted

    def fence_command(self, argv: list[str], cwd: str, purpose: str) -> list[str]:
        sandbox = self._session.sandbox
        if purpose == "mcp" and not sandbox.policy.fence_mcp and sandbox.policy.fenced:
            return list(argv)
        return sandbox.command(argv, cwd)

    # -- actions of ``ctx`` --------------------------------------------------------------------

    def abort(self) -> None:
        self._session.extensions.spawn(self._session.abort(), "abort")

    def shutdown(self) -> None:
        if self.shutdown_handler is not None:
            self.shutdown_handler()

    def compact(
        self,
        custom_instructions: str | None,
        on_complete: Callable[[Any], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        async def run() -> None:
            try:
                result = await self._session.compact(custom_instructions)
            except Exception as error:
                if on_error is None:
                    raise
                on_error(error)
                return
            if on_complete is not None:
                on_complete(result)

        self._session.extensions.spawn(run(), "compact")

    # -- actions of ``tau`` --------------------------------------------------------------------

    def send_message(self, message: CustomMessage, *, trigger_turn: bool, deliver_as: DeliverAs) -> None:
        self._session.send_custom_message(message, trigger_turn=trigger_turn, deliver_as=deliver_as)

    def send_user_message(
        self, content: str | list[TextContent | ImageContent], *, deliver_as: UserDelivery | None
    ) -> None:
        self._session.send_user_message(content, deliver_as=deliver_as)

    def append_entry(self, custom_type: str, data: Any) -> str:
        return self._session.append_custom_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._session.session_name

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._session.session_manager.append_label_change(entry_id, label)

    def get_active_tools(self) -> list[str]:
        return self._session.get_active_tool_names()

    def get_all_tools(self) -> list[ToolInfo]:
        from tau.extensions.types import ToolInfo

        extensions = self._session.extensions
        infos: list[ToolInfo] = []
        for tool in self._session.get_all_tools():
            definition = extensions.tool_definition(tool.name)
            infos.append(
                ToolInfo(
                    tool.name,
                    tool.description,
                    dict(tool.parameters),
                    extensions.tool_source(tool.name),
                    prompt_guidelines=tuple(tool.prompt_guidelines),
                    exposure=tool.exposure,
                    namespace=definition.namespace if definition is not None else None,
                    annotations=definition.annotations if definition is not None else None,
                    reaches_tools=definition.reaches_tools if definition is not None else None,
                )
            )
        return infos

    def set_active_tools(self, names: Sequence[str]) -> None:
        self._session.set_active_tools(names)

    def refresh_tools(self) -> None:
        self._session.extensions.refresh_tools()

    def get_resource_commands(self) -> list[CommandInfo]:
        from tau.extensions.types import CommandInfo

        resources = self._session.services.resource_loader
        commands = [
            CommandInfo(t.name, t.description, "prompt", t.file_path) for t in resources.prompt_templates
        ]
        if self._session.services.settings_manager.enable_skill_commands:
            commands += [
                CommandInfo(f"skill:{s.name}", s.description, "skill", s.file_path) for s in resources.skills
            ]
        return commands

    async def set_model(self, model: Model) -> bool:
        try:
            await self._session.set_model(model)
        except MissingAuthError:
            return False
        return True

    def get_thinking_level(self) -> str:
        return self._session.thinking_level

    def set_thinking_level(self, level: str) -> None:
        if not is_valid_thinking_level(level):
            raise ValueError(
                f"unknown thinking level {level!r}: use off, minimal, low, medium, high, xhigh or max"
            )
        self._session.set_thinking_level(level)

    # -- command-only actions ------------------------------------------------------------------

    async def wait_for_idle(self) -> None:
        await self._session.wait_for_idle()

    async def new_session(self, **options: Any) -> Any:
        return await self._require_replacer("ctx.new_session()").new_session(**options)

    async def fork(self, entry_id: str, position: ForkPosition) -> Any:
        return await self._require_replacer("ctx.fork()").fork(entry_id, position)

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        return await self._session.navigate_tree(target_id, **options)

    async def switch_session(self, path: str, **options: Any) -> Any:
        return await self._require_replacer("ctx.switch_session()").switch_session(path, **options)

    async def reload(self) -> None:
        await self._session.reload()

    def _require_replacer(self, action: str) -> SessionReplacer:
        if self.replacer is None:
            raise AgentSessionError(f"{action} needs a session runtime, which this mode does not have")
        return self.replacer
