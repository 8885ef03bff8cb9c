"""``ctx``: what a handler, tool or shortcut may read and do in the current session.

A context is made for each emission and reads everything at access time, so a value is never
older than the call. ``ExtensionCommandContext`` (commands only) adds the actions that wait for
the agent or replace the session: from an event handler they could wait for the handler itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.ai.abort import AbortSignal
from tau.ai.types import Model
from tau.extensions.binding import ExtensionMode, SessionBinding
from tau.extensions.host import ForkPosition
from tau.extensions.ui import ExtensionUI
from tau.session.manager import SessionManager

if TYPE_CHECKING:
    from tau.agent.tool import AgentTool, AgentToolResult
    from tau.agent.tool_execution import NestedToolCaller, NestedToolResult
    from tau.context.system_prompt import SystemPromptOptions

__all__ = [
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionToolContext",
    "ProjectTrustContext",
    "TrustMode",
]

TrustMode = ExtensionMode


class _FromHost:
    """Marker: take the signal of the host's running prompt."""


_FROM_HOST = _FromHost()


class ExtensionContext:
    """The session as an extension sees it. Every access raises ``StaleContextError`` once the
    session is gone, and (for session state) ``ExtensionNotReadyError`` before it exists."""

    __slots__ = ("_binding", "_signal", "_system_prompt")

    def __init__(
        self,
        binding: SessionBinding,
        *,
        signal: AbortSignal | _FromHost | None = _FROM_HOST,
        system_prompt: Callable[[], str] | None = None,
    ) -> None:
        self._binding = binding
        self._signal = signal
        self._system_prompt = system_prompt

    @property
    def ui(self) -> ExtensionUI:
        self._binding.check_live()
        return self._binding.ui

    @property
    def has_ui(self) -> bool:
        """``False`` in print and JSON modes: dialogs there answer "no answer" at once."""
        self._binding.check_live()
        return self._binding.has_ui

    @property
    def mode(self) -> ExtensionMode:
        """The mode tau runs in, as pi names it: ``"tui"``, ``"rpc"``, ``"json"`` or ``"print"``
        (ACP counts as ``"rpc"``: a client answers the dialogs)."""
        self._binding.check_live()
        return self._binding.mode

    @property
    def cwd(self) -> str:
        self._binding.check_live()
        host = self._binding.host
        return host.cwd if host is not None else self._binding.cwd

    @property
    def session_manager(self) -> SessionManager:
        """The session file (read it; write through ``tau.append_entry`` and friends)."""
        return self._binding.require_host("ctx.session_manager").session_manager

    @property
    def model_registry(self) -> Any:
        return self._binding.require_host("ctx.model_registry").model_registry

    @property
    def model(self) -> Model | None:
        return self._binding.require_host("ctx.model").model

    @property
    def signal(self) -> AbortSignal | None:
        """The running prompt's abort signal; ``None`` when nothing runs."""
        self._binding.check_live()
        if not isinstance(self._signal, _FromHost):
            return self._signal
        host = self._binding.host
        return host.signal if host is not None else None

    def is_idle(self) -> bool:
        return self._binding.require_host("ctx.is_idle()").is_idle()

    def abort(self) -> None:
        self._binding.require_host("ctx.abort()").abort()

    def has_pending_messages(self) -> bool:
        return self._binding.require_host("ctx.has_pending_messages()").has_pending_messages()

    def shutdown(self) -> None:
        """End the program once the agent is idle (nothing happens in print mode)."""
        self._binding.require_host("ctx.shutdown()").shutdown()

    def get_context_usage(self) -> Any:
        return self._binding.require_host("ctx.get_context_usage()").get_context_usage()

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        on_complete: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Start a compaction in the background; the callbacks report how it went."""
        self._binding.require_host("ctx.compact()").compact(custom_instructions, on_complete, on_error)

    def is_project_trusted(self) -> bool:
        """Whether the session's folder is trusted now (also by ``-a`` or an answer for this run
        only): read a project's own configuration only when it is."""
        return self._binding.require_host("ctx.is_project_trusted()").is_project_trusted()

    def fence_command(self, argv: list[str], cwd: str, purpose: str) -> list[str]:
        """``argv`` as the session's sandbox runs a helper process of ``purpose`` (``"mcp"``: a
        stdio MCP server, fenced when the ``sandbox.mcp`` setting is true)."""
        return self._binding.require_host("ctx.fence_command()").fence_command(argv, cwd, purpose)

    def get_system_prompt_options(self) -> SystemPromptOptions | None:
        """What the default system prompt is built from (pi's ``ctx.getSystemPromptOptions()``):
        the folder, tools and their snippets and guidelines, ``SYSTEM.md`` / ``--system-prompt``,
        appended text, context files, skills, sections; ``None`` before the session built it."""
        self._binding.check_live()
        return self._binding.require_host("ctx.get_system_prompt_options()").get_system_prompt_options()

    def get_system_prompt(self) -> str:
        """The system prompt of the next request; inside ``before_agent_start``, the prompt as the
        handlers before this one left it."""
        self._binding.check_live()
        if self._system_prompt is not None:
            return self._system_prompt()
        return self._binding.require_host("ctx.get_system_prompt()").get_system_prompt()


class ExtensionToolContext(ExtensionContext):
    """A tool's ``ctx`` (the fifth argument of ``execute``): adds ``tools`` and ``execute_tool``,
    pi's tools calling tools."""

    __slots__ = ("_caller",)

    def __init__(
        self,
        binding: SessionBinding,
        *,
        signal: AbortSignal | None,
        caller: NestedToolCaller | None,
    ) -> None:
        super().__init__(binding, signal=signal)
        self._caller = caller

    @property
    def tools(self) -> list[AgentTool]:
        """The tools ``execute_tool`` can call: the active ones (not ``model-only``), and every
        ``codemode``/``deferred`` one."""
        self._binding.check_live()
        return self._caller.tools if self._caller is not None else []

    async def execute_tool(
        self,
        name: str,
        args: Any,
        *,
        signal: AbortSignal | None = None,
        on_update: Callable[[AgentToolResult], None] | None = None,
    ) -> NestedToolResult:
        """Run another tool, as the model's calls run: argument validation, the ``tool_call`` and
        ``tool_result`` handlers, ``tool_execution_*`` events carrying ``parent_tool_call_id``,
        with the id ``<this call's id>/<n>``. The call adds nothing to the transcript; the session
        keeps a bounded record of it (``nestedCalls`` on this tool's result). Never raises for the
        tool's failure: an unknown tool, invalid arguments, a block or a raising tool give a result
        with ``is_error``. ``signal`` defaults to this tool's; ``on_update`` gets the nested
        tool's partial results."""
        from tau.agent.tool_execution import NestedToolResult, error_result

        self._binding.check_live()
        caller = self._caller
        if caller is None:
            text = (
                f"Tool {name} cannot be called here: ctx.execute_tool works while a tool of the session runs"
            )
            return NestedToolResult("", error_result(text), True)
        if not isinstance(args, dict):
            text = f'Invalid arguments for tool "{name}": expected an object, got {type(args).__name__}'
            return NestedToolResult("", error_result(text), True)
        return await caller.call(name, args, signal=signal, on_update=on_update)


class ExtensionCommandContext(ExtensionContext):
    """A command's ``ctx``: adds waiting for the agent and replacing the session.

    After ``new_session``, ``fork``, ``switch_session`` or ``reload`` this context (and the
    extension's ``tau`` object) belong to the old session and raise ``StaleContextError``.
    """

    __slots__ = ()

    async def wait_for_idle(self) -> None:
        await self._binding.require_host("ctx.wait_for_idle()").wait_for_idle()

    async def new_session(self, **options: Any) -> Any:
        return await self._binding.require_host("ctx.new_session()").new_session(**options)

    async def fork(self, entry_id: str, position: ForkPosition = "before") -> Any:
        return await self._binding.require_host("ctx.fork()").fork(entry_id, position)

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        return await self._binding.require_host("ctx.navigate_tree()").navigate_tree(target_id, **options)

    async def switch_session(self, path: str, **options: Any) -> Any:
        return await self._binding.require_host("ctx.switch_session()").switch_session(path, **options)

    async def reload(self) -> None:
        await self._binding.require_host("ctx.reload()").reload()


class ProjectTrustContext:
    """The ``ctx`` of a ``project_trust`` handler. No session exists yet, so it has only the folder,
    the mode (``"tui"``, ``"print"``, ``"json"``, ``"rpc"``) and the dialogs of ``ui`` (``select``,
    ``confirm``, ``input``; ``notify``): in the terminal UI they ask, elsewhere they answer "no
    answer" at once, so check ``has_ui`` first."""

    __slots__ = ("cwd", "has_ui", "mode", "ui")

    def __init__(self, cwd: str, mode: TrustMode, ui: ExtensionUI, *, has_ui: bool) -> None:
        self.cwd = cwd
        self.mode = mode
        self.ui = ui
        self.has_ui = has_ui
