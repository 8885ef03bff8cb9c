"""``SessionExtensions``: one session's extension runner through its life.

The runner comes loaded from the services (``None`` when the cwd has no extensions). Here it is
bound to the session (``SessionExtensionHost``), later to a mode's UI and error listener
(``bind``: ``session_start`` then ``resources_discover``), replaced by ``reload`` and finally
shut down (``session_shutdown``, then every ``ctx`` goes stale). Work that extensions start
without waiting for it (a triggered turn, ``ctx.compact()``) runs as tasks kept here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Literal

from tau.ai.types import Model, models_are_equal
from tau.config.tool_selection import is_mcp_tool_name
from tau.runtime.extension_host import SessionExtensionHost
from tau.runtime.extension_loading import load_extension_runner
from tau.runtime.services import AgentSessionServices, ServiceDiagnostic
from tau.runtime.tool_registry import ToolRegistry
from tau.runtime.user_bash import BashResult

if TYPE_CHECKING:
    from tau.extensions.binding import ExtensionMode
    from tau.extensions.events import ShutdownReason, StartReason
    from tau.extensions.reporting import ErrorListener
    from tau.extensions.runner import ExtensionRunner
    from tau.extensions.types import ToolDefinition
    from tau.extensions.ui import ExtensionUI
    from tau.runtime.agent_session import AgentSession
    from tau.tools import BashOperations

__all__ = ["ExtensionBinding", "SessionExtensions"]

_log = logging.getLogger("tau.extensions")


class ExtensionBinding:
    """What a mode gave the extensions: its UI (``None``: no UI), where handler errors go, what
    ``ctx.shutdown()`` does and its name (``ctx.mode``). A replacement session gets the same binding."""

    __slots__ = ("mode", "on_error", "shutdown_handler", "ui")

    def __init__(
        self,
        ui: ExtensionUI | None = None,
        on_error: ErrorListener | None = None,
        shutdown_handler: Callable[[], None] | None = None,
        mode: ExtensionMode | None = None,
    ) -> None:
        self.ui = ui
        self.on_error = on_error
        self.shutdown_handler = shutdown_handler
        self.mode = mode


class SessionExtensions:
    """The extension side of one ``AgentSession`` (see the module docstring)."""

    def __init__(
        self,
        session: AgentSession,
        services: AgentSessionServices,
        tools: ToolRegistry,
        apply_tools: Callable[[], None],
        drain_events: Callable[[], Awaitable[None]],
    ) -> None:
        self._services = services
        self._tools = tools
        self._apply_tools = apply_tools
        self._drain_events = drain_events
        self.host = SessionExtensionHost(session)
        self.binding: ExtensionBinding | None = None
        self._runner: ExtensionRunner | None = None
        self._stop_reporting: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._attach(services.extension_runner)

    @property
    def runner(self) -> ExtensionRunner | None:
        return self._runner

    def current_runner(self) -> ExtensionRunner | None:
        """The runner as of now, for hooks installed once (``extension_hooks``)."""
        return self._runner

    def _attach(self, runner: ExtensionRunner | None) -> None:
        self._runner = runner
        self._take_tool_metadata()
        if runner is None:
            return
        runner.bind(self.host)
        if self.binding is not None:
            runner.set_ui(self.binding.ui, self.binding.mode)
            if self.binding.on_error is not None:
                self._stop_reporting = runner.on_error(self.binding.on_error)

    # -- binding and lifecycle -----------------------------------------------------------------

    async def bind(
        self,
        binding: ExtensionBinding,
        reason: StartReason = "startup",
        previous_session_file: str | None = None,
    ) -> None:
        """Give the extensions the mode's UI and error listener, then announce the session
        (``session_start``) and collect extra resources (``resources_discover``)."""
        self.binding = binding
        self.host.shutdown_handler = binding.shutdown_handler
        if self._stop_reporting is not None:
            self._stop_reporting()
            self._stop_reporting = None
        self._attach(self._runner)
        await self._announce(reason, previous_session_file)

    async def _announce(self, reason: StartReason, previous_session_file: str | None) -> None:
        runner = self._runner
        if runner is None:
            return
        from tau.extensions.events import SessionStartEvent

        await runner.emit(SessionStartEvent(reason, previous_session_file))
        found = await runner.emit_resources_discover(
            self._services.cwd, "reload" if reason == "reload" else "startup"
        )
        if found.skill_paths or found.prompt_paths:
            loader = self._services.resource_loader
            loader.set_extension_paths(found.skill_paths, found.prompt_paths)
            loader.reload()
            self._apply_tools()

    async def shutdown(self, reason: ShutdownReason, target_session_file: str | None = None) -> None:
        """``session_shutdown``, then the runner is disposed: every ``tau``/``ctx`` goes stale."""
        runner = self._runner
        if runner is None:
            return
        from tau.extensions.events import SessionShutdownEvent

        await runner.emit(SessionShutdownEvent(reason, target_session_file))
        self._runner = None
        for task in list(self._tasks):
            if task is not asyncio.current_task():
                task.cancel()
        if self._stop_reporting is not None:
            self._stop_reporting()
            self._stop_reporting = None
        runner.dispose()
        if self._services.extension_runner is runner:
            self._services.extension_runner = None

    async def reload(self) -> list[ServiceDiagnostic]:
        """Spec 30 §8.9: shut the extensions down, re-read settings and resources, load fresh
        extension instances (keeping flag values and the active tools) and, when a mode is bound,
        announce the session again. Returns the loading problems (as warnings)."""
        previous = self._runner
        flag_values: Mapping[str, Any] = dict(previous.flag_values) if previous is not None else {}
        await self.shutdown("reload")
        services = self._services
        services.settings_manager.reload()
        services.resource_loader.set_extension_paths()
        services.resource_loader.reload()
        runner, problems = load_extension_runner(
            services.cwd,
            services.agent_dir,
            services.settings_manager,
            services.extension_options,
            flag_values=flag_values,
            include_project=services.project_trusted,
        )
        if runner is not None:
            problems += runner.register_providers(services.model_registry)
        services.extension_runner = runner
        self._attach(runner)
        self.refresh_tools()
        if self.binding is not None:
            await self._announce("reload", None)
        return [ServiceDiagnostic("warning", str(p)) for p in problems]

    # -- tools ---------------------------------------------------------------------------------

    def refresh_tools(self) -> None:
        """Take the runner's current tools; new names become active unless registered inactive or
        an allowlist is in force (which activates only MCP tools it names or matches)."""
        runner = self._runner
        added = self._tools.set_extension_tools(runner.tools if runner is not None else [])
        self._take_tool_metadata()
        inactive = (
            {t.definition.name for t in runner.tool_definitions if not t.definition.activates_on_registration}
            if runner
            else set()
        )
        tools = self._tools
        activate = [
            name
            for name in added
            if name not in inactive
            and (not tools.has_allowlist or (is_mcp_tool_name(name) and tools.allowlist_selects(name)))
        ]
        if activate:
            tools.set_active([*tools.active_names, *activate])
        self._apply_tools()

    def _take_tool_metadata(self) -> None:
        """Give the tool registry the extension tools' ``prepare_loadout`` hooks and namespaces; a
        hook that raises is reported as the extension's error."""
        runner = self._runner
        definitions = [t.definition for t in runner.tool_definitions] if runner is not None else []
        self._tools.set_tool_metadata(
            {d.name: d.prepare_loadout for d in definitions if d.prepare_loadout is not None},
            {d.name: d.namespace for d in definitions if d.namespace is not None},
        )
        if runner is not None:

            def report(name: str, problem: str) -> None:
                runner.reporter.report_problem(self.tool_source(name), "prepare_loadout", problem)

            self._tools.on_loadout_error = report

    def tool_definition(self, name: str) -> ToolDefinition | None:
        """The definition an extension registered for the tool ``name`` in use (``None`` for a
        built-in or SDK tool)."""
        if self._tools.origin(name) == "extension" and self._runner is not None:
            for registered in self._runner.tool_definitions:
                if registered.definition.name == name:
                    return registered.definition
        return None

    def tool_source(self, name: str) -> str:
        """``<builtin:name>``, ``<sdk:name>`` or the path of the extension that registered it."""
        origin = self._tools.origin(name)
        if origin == "extension" and self._runner is not None:
            for registered in self._runner.tool_definitions:
                if registered.definition.name == name:
                    return registered.path
        return f"<{'sdk' if origin == 'sdk' else 'builtin'}:{name}>"

    # -- events the session raises itself ------------------------------------------------------

    async def model_selected(
        self, model: Model | None, previous: Model | None, source: Literal["set", "cycle", "restore"]
    ) -> None:
        """``model_select`` when the model changed, after a clamped thinking level was announced."""
        runner = self._runner
        if runner is None or model is None or models_are_equal(model, previous):
            return
        if runner.has_handlers("model_select"):
            from tau.extensions.events import ModelSelectEvent

            await self._drain_events()  # the pipeline carries thinking_level_select
            await runner.emit(ModelSelectEvent(model, previous, source))

    async def user_bash(
        self, command: str, exclude_from_context: bool, cwd: str
    ) -> tuple[BashResult | None, BashOperations | None]:
        """An extension's ``user_bash`` answer: the result of a command it ran itself, or the
        operations to run it with; ``(None, None)`` to run it as usual."""
        runner = self._runner
        if runner is None:
            return None, None
        answer = await runner.emit_user_bash(command, exclude_from_context, cwd)
        if answer is None:
            return None, None
        if answer.result is not None:
            return _bash_result(answer.result), None
        return None, answer.operations

    # -- background work -----------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:
        """Run ``work`` in the background; a failure is logged, never raised into an extension."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and (error := finished.exception()) is not None:
                _log.warning("extension-started %s failed: %s", what, error)

        task.add_done_callback(done)

    async def settle(self) -> None:
        """Wait for the background work started so far (and what it starts), except the caller."""
        while pending := [t for t in self._tasks if t is not asyncio.current_task()]:
            await asyncio.gather(*pending, return_exceptions=True)


def _bash_result(value: Any) -> BashResult:
    if isinstance(value, BashResult):
        return value
    if isinstance(value, Mapping):
        code = value.get("exit_code", value.get("exitCode"))
        return BashResult(
            output=str(value.get("output", "")),
            exit_code=code if isinstance(code, int) else None,
            cancelled=bool(value.get("cancelled", False)),
            truncated=bool(value.get("truncated", False)),
            full_output_path=value.get("full_output_path", value.get("fullOutputPath")),
        )
    raise TypeError(f"user_bash result must be a BashResult or a dict, not {type(value).__name__}")
