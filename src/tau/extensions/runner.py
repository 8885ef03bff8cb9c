"""``ExtensionRunner``: calls the loaded extensions at each hook point and combines what they return.

The runtime holds one runner per session and calls it where pi's ``AgentSession`` does:

    runner.bind(host, ui)                                  # once the session exists
    await runner.emit(SessionStartEvent("startup"))        # notifications
    outcome = await runner.emit_input(text, images, source)
    outcome = await runner.emit_before_agent_start(prompt, images, base_prompt, options)
    messages = await runner.emit_context(messages, signal)            # = transform_context
    payload = await runner.emit_before_provider_request(payload, model)  # = on_payload
    await runner.emit_agent_event(event)                   # every agent event, in order
    runner.dispose()                                       # contexts go stale

Handlers run one after another: extensions in load order, then registration order. A handler
that raises is reported (``on_error``) and the next one runs with the value as it was before the
failure; the one exception is ``tool_call``, where a raising handler blocks the call. A result of
the wrong shape is reported against the handler's definition line and ignored.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from tau.agent.events import AgentEvent, AgentStart, MessageEnd, TurnEnd
from tau.agent.hooks import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from tau.agent.messages import AgentMessage
from tau.agent.tool import AgentTool, AgentToolResult
from tau.agent.tool_execution import NestedToolCaller
from tau.ai.abort import AbortSignal
from tau.ai.options import ResponseInfo
from tau.ai.types import ImageContent, JsonObject, Model
from tau.compaction import CompactionPreparation
from tau.context.system_prompt import SectionNameError, SystemPromptOptions, check_section_name
from tau.extensions.binding import ExtensionMode, SessionBinding
from tau.extensions.bus import EventBus, TaskSupervisor
from tau.extensions.context import (
    _FROM_HOST,
    ExtensionCommandContext,
    ExtensionContext,
    ExtensionToolContext,
    ProjectTrustContext,
    _FromHost,
)
from tau.extensions.errors import (
    ExtensionDiagnostic,
    ExtensionErrorReport,
    MalformedResultError,
    describe_exception,
)
from tau.extensions.events import (
    CANCELLABLE_EVENTS,
    COMBINED_EVENTS,
    AfterProviderResponseEvent,
    AgentBeforeSettleEvent,
    BeforeAgentStartEvent,
    BeforeProviderHeadersEvent,
    BeforeProviderRequestEvent,
    CacheWarmingDecisionEvent,
    ContextEvent,
    ContextWithSystemEvent,
    ExtensionEvent,
    InputEvent,
    InputSource,
    McpServersChangeEvent,
    MessageEndEvent,
    ProjectTrustEvent,
    ProviderStreamEvent,
    ResourcesDiscoverEvent,
    SessionBeforeCompactEvent,
    SessionBeforeForkEvent,
    SessionBeforeSwitchEvent,
    SessionBeforeTreeEvent,
    ToolCallEvent,
    ToolResultEvent,
    TreePreparation,
    UiPromptEndEvent,
    UiPromptStartEvent,
    UserBashEvent,
    from_agent_event,
)
from tau.extensions.host import ExtensionHost, ProviderSink
from tau.extensions.invocations import Invocations
from tau.extensions.providers import ProviderInstaller
from tau.extensions.registry import Extension, ExtensionRegistry, Handler
from tau.extensions.reporting import ErrorListener, ErrorReporter
from tau.extensions.results import (
    BeforeAgentStartOutcome,
    InputResult,
    ProjectTrustResult,
    ResourcesDiscoverResult,
    SessionBeforeCompactResult,
    SessionBeforeForkResult,
    SessionBeforeSwitchResult,
    SessionBeforeTreeResult,
    ToolCallResult,
    ToolResultPatch,
    UserBashResult,
    parse_result,
)
from tau.extensions.tool_wrapper import wrap_tool
from tau.extensions.types import (
    FlagDefinition,
    FlagValue,
    MarkdownContext,
    ProviderRegistration,
    RegisteredCommand,
    RegisteredMcpServer,
    RegisteredRenderer,
    RegisteredShortcut,
    RegisteredTool,
    ToolRenderer,
)
from tau.extensions.ui import ExtensionUI, NoUI
from tau.extensions.ui_prompts import PromptKind, PromptTrackingUI
from tau.extensions.virtual_models import (
    ModelRoute,
    ModelRouteRequest,
    VirtualModelInstaller,
    VirtualModelRegistration,
)
from tau.session.entries import SessionEntry
from tau.session.messages import CustomMessage

__all__ = ["ExtensionRunner"]


class ExtensionRunner:
    """The extensions of one session, the hooks that call them, and what they registered."""

    def __init__(self, cwd: str, *, flag_values: Mapping[str, FlagValue] | None = None) -> None:
        self.cwd = cwd
        self.binding = SessionBinding(cwd)
        self.registry = ExtensionRegistry(dict(flag_values or {}))
        self.reporter = ErrorReporter()
        self.report = self.reporter.report
        self.supervisor = TaskSupervisor(self.report)
        self.bus = EventBus(self.report, self.supervisor)
        self._wrapped: dict[tuple[str, str], tuple[RegisteredTool, AgentTool]] = {}
        self._providers = ProviderInstaller()
        self._virtual_models = VirtualModelInstaller(self.route_virtual_model)
        self._turn_index = 0
        self._invocations = Invocations(
            self.registry, self.reporter, self.create_context, self.create_command_context
        )
        self.module_names: list[str] = []
        self._background: set[Any] = set()
        self._failed_transformers: set[int] = set()
        self.mcp_connector: Callable[[], None] | None = None
        """Loads the built-in MCP support into this runner when an extension first registers an
        MCP server after the session started (no mcp.json brought it in)."""
        self.mcp_server_check: Callable[[str, Any], str | None] | None = None
        """What is wrong with an MCP server's name and config (``tau.config.mcp_servers``'s check, given
        by the runtime, which knows that layer), or ``None``; unset: nothing is checked here."""
        """Modules imported for this runner's extensions (removed from ``sys.modules`` on dispose)."""

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """``False`` once disposed: every ``tau`` object and ``ctx`` of this runner is stale."""
        return self.binding.active

    def bind(self, host: ExtensionHost, ui: ExtensionUI | None = None) -> None:
        """Connect the extensions to the session; ``ui=None`` means no UI (``NoUI``)."""
        self.binding.check_live()
        self.binding.host = host
        self.set_ui(ui)

    def set_ui(self, ui: ExtensionUI | None, mode: ExtensionMode | None = None) -> None:
        """``ui``'s dialogs then report ``ui_prompt_start`` / ``ui_prompt_end`` (not ``NoUI``'s);
        ``mode`` is ``ctx.mode`` (by default ``"tui"`` with a UI, ``"print"`` without)."""
        self.binding.has_ui = ui is not None and not isinstance(ui, NoUI)
        self.binding.mode = mode or ("tui" if self.binding.has_ui else "print")
        if ui is None or not self.binding.has_ui:
            self.binding.ui = ui if ui is not None else NoUI()
            return
        if isinstance(ui, PromptTrackingUI):
            ui = ui.inner
        self.binding.ui = PromptTrackingUI(ui, self._prompt_span)

    async def _prompt_span(self, phase: Literal["start", "end"], kind: PromptKind, title: str | None) -> None:
        event_type = "ui_prompt_start" if phase == "start" else "ui_prompt_end"
        if not self.binding.active or not self.registry.has_handlers(event_type):
            return
        event = UiPromptStartEvent(kind, title) if phase == "start" else UiPromptEndEvent(kind, title)
        await self.emit(event)

    def dispose(self) -> None:
        """Invalidate every context, stop background tasks, remove registered providers and forget
        the extensions' modules (a reload imports them afresh)."""
        if not self.binding.active:
            return
        self.binding.active = False
        self.binding.host = None
        self.supervisor.close()
        for task in list(self._background):
            task.cancel()
        self.bus.clear()
        self._providers.close(self.registry.providers())
        self._virtual_models.close()
        for name in self.module_names:
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[loaded]

    # -- what was registered ---------------------------------------------------------------------

    @property
    def extensions(self) -> list[Extension]:
        return list(self.registry.extensions)

    @property
    def diagnostics(self) -> list[ExtensionDiagnostic]:
        """Loading problems and registration clashes, each naming extension, file and line."""
        return list(self.registry.diagnostics)

    @property
    def tools(self) -> list[AgentTool]:
        """Extension tools ready for the agent (each call gets a fresh ``ctx``), in load order."""
        tools: list[AgentTool] = []
        for registered in self.registry.tools():
            key = (registered.path, registered.definition.name)
            cached = self._wrapped.get(key)
            if cached is None or cached[0] is not registered:
                cached = (registered, wrap_tool(registered, self._tool_context))
                self._wrapped[key] = cached
            tools.append(cached[1])
        return tools

    @property
    def tool_definitions(self) -> list[RegisteredTool]:
        return self.registry.tools()

    @property
    def commands(self) -> dict[str, RegisteredCommand]:
        """Commands by invocation name (``review:1`` / ``review:2`` when two extensions share one)."""
        return self.registry.commands()

    @property
    def shortcuts(self) -> dict[str, RegisteredShortcut]:
        return self.registry.shortcuts()

    @property
    def flags(self) -> dict[str, FlagDefinition]:
        return self.registry.flags()

    @property
    def flag_values(self) -> dict[str, FlagValue]:
        """Every flag's value (defaults, then CLI values); pass it to the next runner on reload."""
        return self.registry.flag_values

    @property
    def message_renderers(self) -> dict[str, RegisteredRenderer]:
        return self.registry.renderers()

    @property
    def providers(self) -> list[ProviderRegistration]:
        return self.registry.providers()

    def has_handlers(self, event: str) -> bool:
        return self.registry.has_handlers(event)

    # -- errors ----------------------------------------------------------------------------------

    def report_boundary(self, problem: str) -> None:
        """Report a problem of tau's own at an extension boundary (pi's ``<boundary>`` errors)."""
        self.reporter.report_problem("<boundary>", "agent_before_settle", problem)

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Call ``listener(report)`` for every handler failure; returns an unsubscriber. Without
        listeners, failures are logged on the ``tau.extensions`` logger."""
        return self.reporter.on_error(listener)

    @property
    def errors(self) -> list[ExtensionErrorReport]:
        """The latest handler failures (at most 100)."""
        return self.reporter.errors

    # -- contexts --------------------------------------------------------------------------------

    def create_context(
        self,
        signal: AbortSignal | _FromHost | None = _FROM_HOST,
        system_prompt: Callable[[], str] | None = None,
    ) -> ExtensionContext:
        """A fresh ``ctx``; without ``signal`` it reads the host's running-prompt signal."""
        self.binding.check_live()
        return ExtensionContext(self.binding, signal=signal, system_prompt=system_prompt)

    def create_command_context(self) -> ExtensionCommandContext:
        self.binding.check_live()
        return ExtensionCommandContext(self.binding)

    def _tool_context(
        self, signal: AbortSignal | None, caller: NestedToolCaller | None
    ) -> ExtensionToolContext:
        self.binding.check_live()
        return ExtensionToolContext(self.binding, signal=signal, caller=caller)

    # -- calling handlers ------------------------------------------------------------------------

    async def _call(self, extension: Extension, handler: Handler, event: Any, ctx: ExtensionContext) -> Any:
        """One handler's checked result; ``None`` when it returned nothing, failed or was malformed."""
        try:
            value = handler(event, ctx)
            if inspect.isawaitable(value):
                value = await value
        except Exception as error:
            self.report(extension, event.type, error, handler)
            return None
        try:
            return parse_result(event.type, value)
        except MalformedResultError as error:
            self.report(extension, event.type, f"malformed result: {error}", handler)
            return None

    async def emit(self, event: ExtensionEvent) -> Any:
        """Deliver a notification event to every handler (results ignored).

        ``session_before_*`` events return the combined result (last one kept; ``cancel``
        stops at once). Events whose results combine otherwise have their own ``emit_*`` method.
        """
        if event.type in COMBINED_EVENTS:
            raise TypeError(f"use emit_{event.type}() for {event.type!r}: its handlers' results are combined")
        if not self.registry.has_handlers(event.type):
            return None
        ctx = self.create_context()
        kept: Any = None
        for extension, handler in list(self.registry.handlers(event.type)):
            result = await self._call(extension, handler, event, ctx)
            if event.type in CANCELLABLE_EVENTS and result is not None:
                kept = result
                if getattr(result, "cancel", False):
                    break
        return kept

    async def emit_agent_event(self, event: AgentEvent) -> None:
        """Forward one agent event (numbering turns from each ``agent_start``). A ``message_end``
        replacement is copied into the original message object, so state and persistence agree."""
        if isinstance(event, MessageEnd):
            await self.emit_message_end(event.message)
            return
        if isinstance(event, AgentStart):
            self._turn_index = 0
        converted = from_agent_event(event, self._turn_index)
        if isinstance(event, TurnEnd):
            self._turn_index += 1
        await self.emit(converted)

    async def emit_message_end(self, message: AgentMessage) -> AgentMessage:
        """Chain ``{message}`` replacements (same role and type required); the final one is copied
        into ``message`` itself, which is returned."""
        if not self.registry.has_handlers("message_end"):
            return message
        event = MessageEndEvent(message)
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("message_end")):
            result = await self._call(extension, handler, event, ctx)
            if result is None:
                continue
            replacement = result.message
            if type(replacement) is not type(message) or replacement.role != message.role:
                self.report(
                    extension,
                    "message_end",
                    f"malformed result: the replacement is a {type(replacement).__name__} with role "
                    f"{getattr(replacement, 'role', None)!r}; it must be a {type(message).__name__} with role "
                    f"{message.role!r}",
                    handler,
                )
                continue
            event.message = replacement
        if event.message is not message:
            _copy_into(message, event.message)
        return message

    # -- the prompt flow -------------------------------------------------------------------------

    async def emit_input(
        self, text: str, images: Sequence[ImageContent] | None, source: InputSource
    ) -> InputResult:
        """Transforms chain (each handler sees the text so far); the first ``handled`` ends it.
        The outcome's action is ``handled``, ``transform`` (something changed) or ``continue``."""
        event = InputEvent(text, list(images) if images is not None else None, source)
        transformed = False
        if self.registry.has_handlers("input"):
            ctx = self.create_context()
            for extension, handler in list(self.registry.handlers("input")):
                result: InputResult | None = await self._call(extension, handler, event, ctx)
                if result is None:
                    continue
                if result.action == "handled":
                    return InputResult("handled", event.text, event.images)
                if result.action == "transform" and result.text is not None:
                    event.text = result.text
                    if result.images is not None:
                        event.images = result.images
                    transformed = True
        return InputResult("transform" if transformed else "continue", event.text, event.images)

    async def emit_before_agent_start(
        self,
        prompt: str,
        images: Sequence[ImageContent] | None,
        system_prompt: str,
        system_prompt_options: SystemPromptOptions | None = None,
    ) -> BeforeAgentStartOutcome:
        """Collect each handler's message in order; chain ``system_prompt`` (each handler sees the
        previous one's in ``event.system_prompt`` and ``ctx.get_system_prompt()``)."""
        outcome = BeforeAgentStartOutcome()
        if not self.registry.has_handlers("before_agent_start"):
            return outcome
        event = BeforeAgentStartEvent(
            prompt, list(images) if images is not None else None, system_prompt, system_prompt_options
        )
        ctx = self.create_context(system_prompt=lambda: event.system_prompt)
        for extension, handler in list(self.registry.handlers("before_agent_start")):
            result = await self._call(extension, handler, event, ctx)
            if system_prompt_options is not None:
                self._drop_bad_sections(extension, handler, system_prompt_options.sections)
            if result is None:
                continue
            if result.message is not None:
                outcome.messages.append(result.message)
            if result.system_prompt is not None:
                event.system_prompt = result.system_prompt
                outcome.system_prompt = result.system_prompt
        return outcome

    def _drop_bad_sections(self, extension: Extension, handler: Handler, sections: dict[str, str]) -> None:
        """A prompt section a handler named wrongly (or gave no text) is reported and left out."""
        for name in list(sections):
            try:
                check_section_name(name)
                if not isinstance(sections[name], str):
                    raise SectionNameError(f"System prompt section {name!r} must be text")
            except SectionNameError as error:
                del sections[name]
                self.report(extension, "before_agent_start", str(error), handler)

    async def emit_agent_before_settle(
        self, outcome: Literal["completed", "aborted", "error"], messages: list[AgentMessage]
    ) -> tuple[list[JsonObject], bool]:
        """The entries to append and whether to make one more request: each handler sees what the
        ones before proposed; a returned field replaces that field only. Drafts other than
        ``custom``, ``custom_message``, ``context_edit`` and ``compaction`` (or malformed) are
        reported and dropped."""
        event = AgentBeforeSettleEvent([], False, outcome, messages)
        if not self.registry.has_handlers("agent_before_settle"):
            return [], False
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("agent_before_settle")):
            result = await self._call(extension, handler, event, ctx)
            if result is None:
                continue
            entries, go_on = result
            if entries is not None:
                kept: list[JsonObject] = []
                for draft in entries:
                    problem = _draft_problem(draft)
                    if problem is None:
                        kept.append(draft)
                    else:
                        self.report(extension, "agent_before_settle", f"malformed result: {problem}", handler)
                event.entries = kept
            if go_on is not None:
                event.continue_ = go_on
        return event.entries, event.continue_

    async def emit_cache_warming_decision(self, event: CacheWarmingDecisionEvent) -> str:
        """tau's ``event.action``, or the action the last handler that returns one chose."""
        action: str = event.action
        if not self.registry.has_handlers("cache_warming_decision"):
            return action
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("cache_warming_decision")):
            result = await self._call(extension, handler, event, ctx)
            if result is not None:
                action = result.action
        return action

    async def emit_context(
        self, messages: list[AgentMessage], signal: AbortSignal | None = None
    ) -> list[AgentMessage]:
        """The messages for one model call: handlers change a deep copy, each seeing the previous
        one's result. Without handlers, ``messages`` itself is returned."""
        if not self.registry.has_handlers("context"):
            return messages
        event = ContextEvent(copy.deepcopy(messages))
        ctx = self.create_context(signal)
        for extension, handler in list(self.registry.handlers("context")):
            result = await self._call(extension, handler, event, ctx)
            if result is not None:
                event.messages = result.messages
        return event.messages

    async def emit_context_with_system(
        self, messages: list[AgentMessage], signal: AbortSignal | None = None
    ) -> list[AgentMessage]:
        """The whole transcript of one model call (system messages included): handlers change a
        deep copy, each seeing the previous one's result. A result that no longer starts with a
        system message, when the transcript did, is reported and ignored. Without handlers,
        ``messages`` itself is returned."""
        if not self.registry.has_handlers("context_with_system"):
            return messages
        event = ContextWithSystemEvent(copy.deepcopy(messages))
        needs_head = bool(messages) and getattr(messages[0], "role", None) == "system"
        ctx = self.create_context(signal)
        for extension, handler in list(self.registry.handlers("context_with_system")):
            result = await self._call(extension, handler, event, ctx)
            if result is None:
                continue
            if needs_head and (not result.messages or getattr(result.messages[0], "role", None) != "system"):
                self.report(
                    extension,
                    "context_with_system",
                    "malformed result: the first message must stay a system message (it holds the "
                    "prompt and the tools); the messages are left as they were",
                    handler,
                )
                continue
            event.messages = result.messages
        return event.messages

    async def emit_before_provider_headers(self, headers: dict[str, str | None]) -> None:
        """Let handlers change ``headers`` in place (return values are ignored)."""
        if self.registry.has_handlers("before_provider_headers"):
            await self.emit(BeforeProviderHeadersEvent(headers))

    async def emit_provider_stream_event(self, data: Any, model: Model) -> None:
        """One parsed provider stream event, to every handler in turn (results ignored)."""
        if self.registry.has_handlers("provider_stream_event"):
            await self.emit(ProviderStreamEvent(data, model.provider, model.api, model.id))

    async def emit_before_provider_request(
        self, payload: JsonObject, model: Model | None = None
    ) -> JsonObject:
        """The request body after every handler (a returned dict replaces it; ``None`` keeps it)."""
        if not self.registry.has_handlers("before_provider_request"):
            return payload
        event = BeforeProviderRequestEvent(payload, model)
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("before_provider_request")):
            result = await self._call(extension, handler, event, ctx)
            if result is not None:
                event.payload = result
        return event.payload

    async def emit_after_provider_response(self, info: ResponseInfo, model: Model | None = None) -> None:
        """Status and headers of a response, before its body is read (fits ``on_response``)."""
        if self.registry.has_handlers("after_provider_response"):
            await self.emit(AfterProviderResponseEvent(info.status, dict(info.headers)))

    # -- tools -----------------------------------------------------------------------------------

    async def emit_tool_call(
        self,
        tool_name: str,
        tool_call_id: str,
        input: JsonObject,
        signal: AbortSignal | None = None,
        *,
        parent_tool_call_id: str | None = None,
    ) -> ToolCallResult | None:
        """A block decision, or ``None`` to run the call. ``input`` is passed as is, so handlers
        change the call by changing it. The first ``block`` wins; a raising handler blocks too."""
        if not self.registry.has_handlers("tool_call"):
            return None
        event = ToolCallEvent(tool_name, tool_call_id, input, parent_tool_call_id)
        ctx = self.create_context(signal)
        for extension, handler in list(self.registry.handlers("tool_call")):
            try:
                value = handler(event, ctx)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as error:
                self.report(extension, "tool_call", error, handler)
                return ToolCallResult(
                    True,
                    f"Tool call blocked: extension {extension.name!r} failed: {describe_exception(error)}",
                )
            try:
                result: ToolCallResult | None = parse_result("tool_call", value)
            except MalformedResultError as error:
                self.report(extension, "tool_call", f"malformed result: {error}", handler)
                continue
            if result is not None and result.block:
                return ToolCallResult(True, result.reason or f"Blocked by extension {extension.name!r}")
        return None

    async def emit_tool_result(
        self,
        tool_name: str,
        tool_call_id: str,
        input: JsonObject,
        result: AgentToolResult,
        is_error: bool,
        signal: AbortSignal | None = None,
        *,
        parent_tool_call_id: str | None = None,
    ) -> ToolResultPatch | None:
        """Rewrites chain on a working copy (each handler sees the fields as changed so far);
        the full set of fields when any changed, else ``None``."""
        if not self.registry.has_handlers("tool_result"):
            return None
        event = ToolResultEvent(
            tool_name,
            tool_call_id,
            input,
            list(result.content),
            result.details,
            is_error,
            parent_tool_call_id,
        )
        ctx = self.create_context(signal)
        changed = False
        for extension, handler in list(self.registry.handlers("tool_result")):
            patch: ToolResultPatch | None = await self._call(extension, handler, event, ctx)
            if patch is None:
                continue
            if patch.content is not None:
                event.content, changed = patch.content, True
            if patch.details is not None:
                event.details, changed = patch.details, True
            if patch.is_error is not None:
                event.is_error, changed = patch.is_error, True
        return ToolResultPatch(event.content, event.details, event.is_error) if changed else None

    async def before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult | None:
        """``emit_tool_call`` shaped as the agent loop's ``before_tool_call`` hook."""
        call = context.tool_call
        decision = await self.emit_tool_call(
            call.name, call.id, context.args, signal, parent_tool_call_id=context.parent_tool_call_id
        )
        return BeforeToolCallResult(True, decision.reason) if decision is not None else None

    async def after_tool_call(
        self, context: AfterToolCallContext, signal: AbortSignal | None
    ) -> AfterToolCallResult | None:
        """``emit_tool_result`` shaped as the agent loop's ``after_tool_call`` hook."""
        call = context.tool_call
        patch = await self.emit_tool_result(
            call.name,
            call.id,
            context.args,
            context.result,
            context.is_error,
            signal,
            parent_tool_call_id=context.parent_tool_call_id,
        )
        if patch is None:
            return None
        return AfterToolCallResult(content=patch.content, details=patch.details, is_error=patch.is_error)

    # -- session lifecycle -----------------------------------------------------------------------

    async def emit_project_trust(
        self, ctx: ProjectTrustContext
    ) -> tuple[ProjectTrustResult | None, list[str]]:
        """Ask the handlers whether ``ctx.cwd`` is trusted: the first ``"yes"`` or ``"no"`` (``None``
        when every handler is undecided), and one warning line per handler that failed."""
        event = ProjectTrustEvent(ctx.cwd)
        problems: list[str] = []
        for extension, handler in list(self.registry.handlers(event.type)):
            try:
                value = handler(event, ctx)
                if inspect.isawaitable(value):
                    value = await value
                result = parse_result(event.type, value)
            except Exception as error:  # an extension's failure never decides trust
                problems.append(f'Extension "{extension.path}" project_trust error: {error}')
                continue
            if isinstance(result, ProjectTrustResult) and result.trusted != "undecided":
                return result, problems
        return None, problems

    async def emit_resources_discover(
        self, cwd: str, reason: Literal["startup", "reload"]
    ) -> ResourcesDiscoverResult:
        """Every handler's extra skill, prompt and theme paths (relative ones resolved against the
        extension's folder), in handler order."""
        merged = ResourcesDiscoverResult()
        if not self.registry.has_handlers("resources_discover"):
            return merged
        event = ResourcesDiscoverEvent(cwd, reason)
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("resources_discover")):
            result: ResourcesDiscoverResult | None = await self._call(extension, handler, event, ctx)
            if result is None:
                continue
            base = _extension_dir(extension, cwd)
            merged.skill_paths += [_resolve(p, base) for p in result.skill_paths]
            merged.prompt_paths += [_resolve(p, base) for p in result.prompt_paths]
            merged.theme_paths += [_resolve(p, base) for p in result.theme_paths]
        return merged

    async def emit_session_before_switch(
        self, reason: Literal["new", "resume"], target_session_file: str | None = None
    ) -> SessionBeforeSwitchResult | None:
        result: SessionBeforeSwitchResult | None = await self.emit(
            SessionBeforeSwitchEvent(reason, target_session_file)
        )
        return result

    async def emit_session_before_fork(
        self, entry_id: str, position: Literal["before", "at"]
    ) -> SessionBeforeForkResult | None:
        result: SessionBeforeForkResult | None = await self.emit(SessionBeforeForkEvent(entry_id, position))
        return result

    async def emit_session_before_compact(
        self,
        preparation: CompactionPreparation,
        branch_entries: list[SessionEntry],
        custom_instructions: str | None = None,
        signal: AbortSignal | None = None,
        reason: Literal["manual", "threshold", "overflow"] = "manual",
        will_retry: bool = False,
    ) -> SessionBeforeCompactResult | None:
        """``cancel`` (stops at once) or a ``compaction`` to store instead of the model's summary."""
        result: SessionBeforeCompactResult | None = await self.emit(
            SessionBeforeCompactEvent(
                preparation, branch_entries, custom_instructions, signal, reason, will_retry
            )
        )
        return result

    async def emit_session_before_tree(
        self, preparation: TreePreparation, signal: AbortSignal | None = None
    ) -> SessionBeforeTreeResult | None:
        result: SessionBeforeTreeResult | None = await self.emit(SessionBeforeTreeEvent(preparation, signal))
        return result

    async def emit_user_bash(
        self, command: str, exclude_from_context: bool, cwd: str
    ) -> UserBashResult | None:
        """The first handler result that carries ``operations`` or ``result``."""
        if not self.registry.has_handlers("user_bash"):
            return None
        event = UserBashEvent(command, exclude_from_context, cwd)
        ctx = self.create_context()
        for extension, handler in list(self.registry.handlers("user_bash")):
            result: UserBashResult | None = await self._call(extension, handler, event, ctx)
            if result is not None and (result.operations is not None or result.result is not None):
                return result
        return None

    # -- commands, shortcuts, renderers, flags ---------------------------------------------------

    def get_command(self, text: str) -> RegisteredCommand | None:
        """The command ``/name args`` invokes, if an extension registered ``name``."""
        return self._invocations.get_command(text)

    def is_command(self, text: str) -> bool:
        return self._invocations.get_command(text) is not None

    async def run_command(self, text: str) -> bool:
        """Run the command ``text`` invokes with the rest of the line as its argument; whether one
        ran. A failing handler is reported (event ``command``), never raised."""
        return await self._invocations.run_command(text)

    async def run_shortcut(self, key: str) -> bool:
        """Run the handler bound to ``key``; whether there was one."""
        return await self._invocations.run_shortcut(key)

    def render_message(self, message: CustomMessage, *, expanded: bool = False, theme: Any = None) -> Any:
        """The extension renderer's component for ``message``, or ``None`` (default rendering)."""
        return self._invocations.render_message(message, expanded, theme)

    def apply_flag_values(self, values: Mapping[str, str | bool | None]) -> list[ExtensionDiagnostic]:
        """Apply CLI ``--name[=value]`` values; problems (unknown flag, missing value) come back as
        errors and leave the value unchanged."""
        return self.registry.apply_flag_values(values)

    # -- providers -------------------------------------------------------------------------------

    def register_providers(self, sink: ProviderSink | None) -> list[ExtensionDiagnostic]:
        """Install the providers extensions registered while loading: their stream functions in
        ``tau.ai``'s api registry, their configs in ``sink`` (the model registry). Later
        registrations are installed at once. Returns the problems (that provider is skipped)."""
        self.binding.check_live()
        problems = self._providers.install_all(sink, self.registry.providers())
        for registration, problem in self._virtual_models.install_all(sink, self.registry.virtual_models()):
            problems.append(self._virtual_model_problem(registration, problem))
        return problems

    def provider_registered(self, registration: ProviderRegistration) -> None:
        if self._providers.open:
            problem = self._providers.install(registration)
            if problem is not None:
                self.registry.diagnostics.append(problem)

    def provider_unregistered(self, registration: ProviderRegistration) -> None:
        if self._providers.open:
            self._providers.remove(registration)

    # -- virtual models --------------------------------------------------------------------------

    def virtual_model_registered(self, registration: VirtualModelRegistration) -> None:
        if not self._virtual_models.open:
            return  # installed with the others by ``register_providers``
        problem = self._virtual_models.add(registration)
        if problem is not None:
            self.registry.diagnostics.append(self._virtual_model_problem(registration, problem))

    def virtual_model_unregistered(self, provider: str, model_id: str) -> None:
        self._virtual_models.remove(provider, model_id)

    async def route_virtual_model(self, request: ModelRouteRequest) -> ModelRoute:
        """Ask the router of ``request.model`` for this request's route; raises when there is no
        router, when it fails, or when it returns something other than a ``ModelRoute``."""
        model = request.model
        registration = self._virtual_models.get(model.provider, model.id)
        if registration is None or not self.binding.active:
            raise LookupError(f"Virtual model {model.provider}/{model.id} is not registered.")
        ctx = self.create_context(request.signal)
        route = registration.definition.route(request, ctx)
        if inspect.isawaitable(route):
            route = await route
        if not isinstance(route, ModelRoute):
            raise TypeError(
                f"Virtual model {model.provider}/{model.id}: route() returned {type(route).__name__}, "
                "not a ModelRoute"
            )
        return route

    @staticmethod
    def _virtual_model_problem(registration: VirtualModelRegistration, problem: str) -> ExtensionDiagnostic:
        d = registration.definition
        return ExtensionDiagnostic(
            "error",
            f"virtual model {d.provider}/{d.id} was refused: {problem}",
            registration.extension,
            registration.path,
        )

    # -- renderers -------------------------------------------------------------------------------

    @property
    def has_markdown_transformers(self) -> bool:
        return bool(self.registry.markdown_transformers())

    def transform_markdown(self, markdown: str, context: MarkdownContext) -> str:
        """``markdown`` through every transformer registered for ``context.message_type``, in load
        order. One that raises or returns something else than text is passed over, and reported
        the first time only (transformers run at every redraw)."""
        for registered in self.registry.markdown_transformers():
            if context.message_type not in registered.message_types:
                continue
            problem: Exception | str | None = None
            try:
                produced = registered.transformer(markdown, context)
            except Exception as error:
                problem = error
            else:
                if isinstance(produced, str):
                    markdown = produced
                    continue
                problem = (
                    f"malformed result: a markdown transformer returns text, not {type(produced).__name__}"
                )
            if id(registered) not in self._failed_transformers:
                self._failed_transformers.add(id(registered))
                self.report(self.registry.owner(registered.path), "render", problem, registered.transformer)
        return markdown

    def entry_renderer(self, custom_type: str) -> Any:
        """The function drawing ``custom`` entries of ``custom_type``, or ``None``; a failure of
        it is reported and draws nothing."""
        registered = self.registry.entry_renderers().get(custom_type)
        if registered is None:
            return None

        def draw(entry: Any, options: Any, theme: Any) -> Any:
            try:
                return registered.renderer(entry, options, theme)
            except Exception as error:
                self.report(self.registry.owner(registered.path), "render", error, registered.renderer)
                return None

        return draw

    def resolve_tool_renderer(self, tool_name: str, base: Callable[[], Any]) -> Any:
        """What draws calls of ``tool_name``: the first resolver's choice, each seeing the later ones
        (then ``base()``, the tool's own definition) through ``next()``. A resolver that raises
        is reported and passed over."""
        resolvers = self.registry.tool_renderers()

        def resolve(index: int) -> Any:
            if index >= len(resolvers):
                return base()
            extension, resolver = resolvers[index]
            try:
                chosen = resolver(tool_name, lambda: resolve(index + 1))
            except Exception as error:
                self.report(extension, "render", error, resolver)
                return resolve(index + 1)
            if isinstance(chosen, Mapping):
                chosen = ToolRenderer(chosen.get("render_call"), chosen.get("render_result"))
            return chosen

        return resolve(0)

    # -- MCP servers -----------------------------------------------------------------------------

    def mcp_servers_changed(self) -> None:
        """An extension registered or removed an MCP server. While loading, nothing happens (the
        MCP support reads them when it loads); once bound, ``mcp_servers_change`` is emitted in the
        background, or, when no extension handles it, each server is reported: nothing connects it."""
        if self.binding.host is None:
            return
        if self.mcp_connector is not None:
            connect, self.mcp_connector = self.mcp_connector, None
            connect()
        if not self.registry.has_handlers("mcp_servers_change"):
            self.report_unhandled_mcp_servers()
            return
        import asyncio

        servers = [
            RegisteredMcpServer(s.name, dict(s.config), s.extension_path)
            for s in self.registry.mcp_servers.values()
        ]
        task = asyncio.ensure_future(self.emit(McpServersChangeEvent(servers)))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def report_unhandled_mcp_servers(self) -> None:
        """One error per registered MCP server when no extension connects them."""
        if self.registry.has_handlers("mcp_servers_change"):
            return
        for server in self.registry.mcp_servers.values():
            owner = next((e for e in self.registry.extensions if e.path == server.extension_path), None)
            problem = (
                f"MCP server {server.name!r} is registered but nothing connects it "
                "(the built-in MCP support is off: -builtin:mcp or --no-mcp)"
            )
            if owner is None:
                self.reporter.report_problem(server.extension_path, "mcp_servers_change", problem)
            else:
                self.report(owner, "mcp_servers_change", problem)

    def tool_registered(self) -> None:
        """A tool was registered; once bound, the host refreshes its tool registry."""
        host = self.binding.host
        if host is not None:
            host.refresh_tools()


def _draft_problem(draft: Any) -> str | None:
    """Why ``draft`` cannot be appended at the end of a run, or ``None``."""
    if not isinstance(draft, dict):
        return f"an entry must be a dict, not {type(draft).__name__}"
    kind = draft.get("type")
    if kind == "context_edit":
        if not isinstance(draft.get("targetId", draft.get("target_id")), str):
            return "a context_edit entry needs a 'targetId' string"
        replacement = draft.get("replacement")
        if replacement is not None and not (
            isinstance(replacement, dict) and isinstance(replacement.get("content"), (str, list))
        ):
            return "a context_edit 'replacement' is null or {'content': text or content blocks}"
        return None
    if kind == "compaction":
        if not isinstance(draft.get("summary"), str):
            return "a compaction entry needs a 'summary' string"
        kept = draft.get("firstKeptEntryId", draft.get("first_kept_entry_id"))
        if kept is not None and not isinstance(kept, str):
            return "a compaction's 'firstKeptEntryId' is an entry id or null"
        return None
    if kind not in ("custom", "custom_message"):
        return (
            f"entry type {kind!r} is not supported here (use 'custom', 'custom_message', "
            "'context_edit' or 'compaction')"
        )
    if not isinstance(draft.get("customType", draft.get("custom_type")), str):
        return "an entry needs a 'customType' string"
    if kind == "custom_message" and not isinstance(draft.get("content"), (str, list)):
        return "a custom_message entry needs 'content' (text or content blocks)"
    return None


def _copy_into(original: Any, replacement: Any) -> None:
    """Make ``original`` hold ``replacement``'s values, so every holder of it sees the change."""
    if isinstance(original, msgspec.Struct):
        for name in original.__struct_fields__:
            setattr(original, name, getattr(replacement, name))
    elif dataclasses.is_dataclass(original):
        for f in dataclasses.fields(original):
            setattr(original, f.name, getattr(replacement, f.name))
    else:
        original.__dict__.update(vars(replacement))


def _extension_dir(extension: Extension, cwd: str) -> str:
    root = extension.root
    if root is None:
        return cwd
    return root if os.path.isdir(root) else os.path.dirname(root)


def _resolve(path: str, base: str) -> str:
    expanded = os.path.expanduser(path)
    return expanded if os.path.isabs(expanded) else os.path.normpath(os.path.join(base, expanded))
