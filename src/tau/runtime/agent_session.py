"""``AgentSession``: one conversation with its agent, its session file and its working directory.

    result = create_agent_session(cwd="/path/to/project")
    session = result.session
    session.subscribe(lambda event: print(event.type))
    await session.prompt("What is in README.md?")
    await session.dispose()

The session wraps an ``Agent``: it expands what the user types (skills, prompt templates), queues
input while the agent works, records every finished message in the session file, runs the user's
own shell commands, switches model, thinking level and tools, and calls its extensions at every
step. The jobs live in their own modules (``event_pipeline``, ``session_prompt``, ``model_control``,
``user_bash``, ``tool_registry``, ``session_extensions``); this class ties them together. Build one
with ``create_agent_session``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from tau.accounts.model_registry import is_virtual_model
from tau.accounts.model_resolver import ScopedModel
from tau.agent._awaitable import resolve
from tau.agent.agent import Agent
from tau.agent.config import StreamFn
from tau.agent.events import MessageEnd, MessageStart
from tau.agent.messages import AgentMessage, user_message
from tau.agent.queues import QueueMode
from tau.agent.tool import AgentTool
from tau.ai.session_resources import cleanup_session_resources
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    Model,
    TextContent,
    ThinkingLevelOrOff,
    ToolCall,
    ToolResultMessage,
)
from tau.context.system_prompt import SystemPromptOptions, build_system_prompt_sections, render_sections
from tau.runtime.cache_warmer import CacheWarmer, WarmingDecision, WarmingStatus
from tau.runtime.compaction_control import CompactionControl
from tau.runtime.compaction_hooks import NavigateTreeResult
from tau.runtime.context_usage import ContextUsage
from tau.runtime.errors import BashBusyError, SessionBusyError
from tau.runtime.event_pipeline import DisplayQueues, EventPipeline, SessionListener
from tau.runtime.events import AgentSettled, EntryAppended, SessionInfoChanged
from tau.runtime.extension_hooks import (
    AgentExtensionHooks,
    ExtensionCompactionHooks,
    ExtensionEventForwarder,
    ExtensionPromptHooks,
)
from tau.runtime.model_control import ModelControl, ModelCycle
from tau.runtime.prompt_ledger import PromptLedger, declaration
from tau.runtime.retry import AutoRetry
from tau.runtime.services import AgentSessionServices, ServiceDiagnostic
from tau.runtime.session_extensions import ExtensionBinding, SessionExtensions
from tau.runtime.session_prompt import (
    InputDisposition,
    InputSource,
    PromptHooks,
    StreamingBehavior,
    expand_input,
    split_user_content,
)
from tau.runtime.tool_registry import ToolRegistry
from tau.runtime.user_bash import BashResult, UserBash
from tau.runtime.virtual_routing import (
    VirtualRouting,
    find_latest_response,
    limits_model,
    selection_needs_recording,
)
from tau.session.entries import MessageEntry, SessionEntry
from tau.session.manager import SessionManager
from tau.session.messages import BashExecutionMessage, CustomMessage, SystemMessage
from tau.tools import SpillDirectory
from tau.tools.images import ImageLimits
from tau.tools.sandbox import EscalationDecision, EscalationRequest, Sandbox

ESCALATION_ENTRY = "sandbox-escalation"
"""The ``customType`` of the session entry recording an escalation's outcome."""
ESCALATION_CHOICES: dict[str, EscalationDecision] = {
    "Allow once": "once",
    "Allow for this session": "session",
    "Deny": "denied",
}

if TYPE_CHECKING:
    from tau.compaction import CompactionResult
    from tau.extensions.binding import ExtensionMode
    from tau.extensions.events import ShutdownReason
    from tau.extensions.host import DeliverAs
    from tau.extensions.reporting import ErrorListener
    from tau.extensions.runner import ExtensionRunner
    from tau.extensions.ui import ExtensionUI

__all__ = ["AgentSession"]


class AgentSession:
    """A running session. Events reach listeners in order through ``subscribe``; ``prompt`` returns
    once the run is over and every event it caused has been handled and persisted."""

    def __init__(
        self,
        *,
        agent: Agent,
        session_manager: SessionManager,
        services: AgentSessionServices,
        tools: ToolRegistry,
        spill: SpillDirectory,
        scoped_models: Sequence[ScopedModel] = (),
        hooks: PromptHooks | None = None,
    ) -> None:
        """Wire an agent to a session; ``create_agent_session`` does this with the right pieces.

        The session takes ownership of ``spill`` and closes it in ``dispose()``."""
        self._agent = agent
        self._session = session_manager
        self._services = services
        self._tools = tools
        self._spill = spill
        self._queues = DisplayQueues()
        self._pipeline = EventPipeline(session_manager, self._queues)
        self._extensions = SessionExtensions(
            self, services, tools, self._apply_active_tools, self._pipeline.drain
        )
        runner = self._extensions.current_runner
        self._hooks = hooks or ExtensionPromptHooks(runner)
        AgentExtensionHooks(
            runner,
            self._pipeline.drain,
            lambda: services.settings_manager.auto_resize_images,
            self.image_limits,
        ).install(agent)
        self._pipeline.extension_step = ExtensionEventForwarder(runner, agent.state.thinking_level)
        self._pipeline.extensions_see_updates = lambda: runner() is not None
        self._next_turn: list[CustomMessage] = []
        self._run_active = False
        self._settle_waiters: list[asyncio.Future[None]] = []  # abort() callers waiting for agent_settled
        self._run_aborted = False  # abort() was called during the current run (agent_settled says so)
        self.child_stream_wrapper: Callable[[StreamFn], StreamFn] | None = None
        """Wraps the stream function of each ``task`` child of this session (and theirs): how a
        caller such as ``tau batch`` puts its provider limits on the children's requests too."""
        self._unsubscribe_agent = agent.subscribe(lambda event, signal: self._pipeline.enqueue(event))
        self._pipeline.on_write_error = lambda error: agent.abort()
        self._retry = AutoRetry(agent, services.settings_manager, self._pipeline, self._omit_failed_attempt)
        self._pipeline.will_retry = self._retry.will_retry
        agent.stream_fn = self._retry.wrap_stream_fn(agent.stream_fn)
        self._warmer = CacheWarmer(
            lambda: services.settings_manager.cache_warming,
            # Under a virtual selection, the physical model that answered is the one kept warm.
            lambda: (
                limits_model(services.model_registry, agent.state.model, agent.state.messages),
                agent.state.messages,
            ),
            self._last_prompt_tokens,
            self._record_cache_warm,
            self._cache_warming_decision,
        )
        agent.stream_fn = self._warmer.wrap(agent.stream_fn)
        # Outermost: everything below (cache warming, retries, the provider) sees physical models.
        self._routing = VirtualRouting(
            services.model_registry,
            session_manager,
            self._pipeline,
            lambda: agent.state.messages,
            # A retry: the reply auto-retry or an overflow compaction dropped.
            lambda: self._retry.take_failed_reply() or self._compaction.take_failed_reply(),
        )
        agent.stream_fn = self._routing.wrap(agent.stream_fn)
        self._pipeline.message_end_checks.append(self._retry.on_message_end)
        self._pipeline.run_end_checks.append(self._retry.on_run_end)
        self._models = ModelControl(
            agent,
            session_manager,
            services.settings_manager,
            services.model_registry,
            self._pipeline.enqueue,
            scoped_models,
        )
        self._compaction = CompactionControl(
            agent,
            session_manager,
            services,
            self._pipeline,
            get_model=lambda: self._models.model,
            abort_run=self.abort,
            hooks=ExtensionCompactionHooks(runner),
            omit=self._omit_failed_attempt,
        )
        self._pipeline.subscribe(self._compaction.on_event, updates=False)
        self._pipeline.run_end_checks.append(self._compaction.on_run_end)  # after auto-retry's check
        settings = services.settings_manager
        self._bash = UserBash(
            services.cwd,
            spill,
            shell_path=settings.shell_path,
            command_prefix=settings.shell_command_prefix,
            sandbox=services.sandbox,
        )
        self._deferred_bash: list[BashExecutionMessage] = []
        self.sandbox_mode_chosen: str | None = None
        """The mode ``set_sandbox`` chose (``/sandbox``, RPC): a replacement session keeps it."""
        services.sandbox.approver = self._ask_escalation
        services.sandbox.recorder = self._record_escalation
        self._base_system_prompt = ""
        self._base_system_prompt_options: SystemPromptOptions | None = None
        self._base_system_prompt_sections: dict[str, str] = {}  # the options' sections
        self._prompt_options_of: SystemPromptOptions | None = None  # describe_tools_as
        self._run_sections: dict[str, str] = {}  # extensions' sections for the current run
        self._restore_branch_tools()
        self._apply_active_tools()
        self._agent.prompt_ledger = PromptLedger(
            self._current_prompt, self._record_prompt, self._pipeline.catch_up
        )
        self._compaction.last_request = self._request_now
        self._compaction.route_direct = self._routing.route_direct
        self._routing.fit_context = self._compaction.fit_for_route
        agent.request_preparer = self._routing
        agent.next_turn_preparer = self._compaction.before_next_turn

    # -- what the session is -------------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        return self._agent

    @property
    def session_manager(self) -> SessionManager:
        return self._session

    @property
    def services(self) -> AgentSessionServices:
        return self._services

    @property
    def cwd(self) -> str:
        return self._services.cwd

    @property
    def session_file(self) -> str | None:
        return self._session.get_session_file()

    @property
    def session_id(self) -> str:
        return self._session.get_session_id()

    @property
    def session_name(self) -> str | None:
        return self._session.get_session_name()

    @property
    def model(self) -> Model | None:
        return self._models.model

    @property
    def thinking_level(self) -> ThinkingLevelOrOff:
        return self._models.thinking_level

    @property
    def routed_model(self) -> tuple[Model, str | None] | None:
        """Under a virtual selection, the physical model and thinking level of the latest
        successful response; ``None`` otherwise (or before any response)."""
        model = self.model
        if model is None or not is_virtual_model(model):
            return None
        latest = find_latest_response(self._agent.state.messages)
        physical = (
            self._services.model_registry.get_physical(latest.provider, latest.model) if latest else None
        )
        return (physical, latest.thinking_level) if physical is not None and latest is not None else None

    def image_limits(self) -> ImageLimits:
        """How images are fitted now: the ``inputLimits.images.resize`` of the model answering (the
        routed one under a virtual selection, as pi 1.6), pi's defaults without one."""
        routed = self.routed_model
        return ImageLimits.of_model(routed[0] if routed is not None else self.model)

    @property
    def scoped_models(self) -> list[ScopedModel]:
        return list(self._models.scoped_models)

    def set_scoped_models(self, scoped: Sequence[ScopedModel]) -> None:
        """The models ``cycle_model`` goes through (empty: every available model)."""
        self._models.scoped_models = list(scoped)

    @property
    def is_streaming(self) -> bool:
        return self._agent.is_running

    @property
    def is_bash_running(self) -> bool:
        return self._bash.is_running

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of the conversation as the agent holds it, without the prompt records (the
        ``role: "system"`` messages the agent keeps to send prompt changes in place)."""
        return [m for m in self._agent.state.messages if not isinstance(m, SystemMessage)]

    @property
    def pending_message_count(self) -> int:
        return len(self._queues)

    @property
    def steering_messages(self) -> list[str]:
        return list(self._queues.steering)

    @property
    def follow_up_messages(self) -> list[str]:
        return list(self._queues.follow_up)

    @property
    def system_prompt(self) -> str:
        """The system prompt of the next request."""
        return self._agent.state.system_prompt

    @property
    def base_system_prompt(self) -> str:
        """The prompt built from the active tools and resources (runs may override it)."""
        return self._base_system_prompt

    @property
    def base_system_prompt_options(self) -> SystemPromptOptions | None:
        return self._base_system_prompt_options

    # -- listening -----------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call ``listener(event)`` (awaited if it returns an awaitable) for every agent and session
        event, in order; returns a function that unsubscribes it."""
        return self._pipeline.subscribe(listener)

    async def catch_up_events(self, then: Callable[[], None] | None = None) -> None:
        """Wait until the listeners have seen every event queued so far (not later ones); ``then``
        runs at that point, before any later event reaches them (an RPC host answers there)."""
        await self._pipeline.catch_up(then)

    # -- prompting -----------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        *,
        images: Sequence[ImageContent] | None = None,
        streaming_behavior: StreamingBehavior | None = None,
        source: InputSource = "interactive",
        expand_prompt_templates: bool = True,
        on_accepted: Callable[[InputDisposition], None] | None = None,
    ) -> None:
        """Send ``text`` to the agent and return when the run is over (spec 30 §1.3).

        While the agent works, ``streaming_behavior`` says whether to steer or follow up (else
        ``SessionBusyError``). Raises ``NoModelError`` / ``MissingAuthError`` before any request
        when the model cannot be used, and after the run the first error a listener raised.
        ``on_accepted`` is called with what became of the input once it is taken (``handled``: a
        command or extension took it; ``queued``; ``started``: the run is about to start), after the
        listeners have seen the events that came before and before the run's first event: an RPC
        host answers the command there.
        """
        if expand_prompt_templates and text.startswith("/") and await self._hooks.run_command(text):
            await self._accepted(on_accepted, "handled")
            return
        outcome = await self._hooks.on_input(text, images, source)
        if outcome.handled:
            await self._accepted(on_accepted, "handled")
            return
        text, images = outcome.text, outcome.images
        if expand_prompt_templates:
            text = self._expand(text)
        if images:  # as pi 1.6: after the input hook, so images an extension adds are fitted too
            from tau.tools.image_resize import fit_prompt_images  # only for a prompt with images

            auto_resize = self._services.settings_manager.auto_resize_images
            limits = self.image_limits()
            fitted, notes = await asyncio.to_thread(
                fit_prompt_images, list(images), auto_resize=auto_resize, limits=limits
            )
            images = fitted
            if notes:
                text = f"{text}\n\n" + "\n".join(notes)
        if self.is_streaming:
            if streaming_behavior is None:
                raise SessionBusyError(
                    "The agent is already working: pass streaming_behavior='steer' or 'follow_up' to queue this message"
                )
            self._queue(text, images, streaming_behavior)
            await self._accepted(on_accepted, "queued")
            return
        self._retry.abort_retry()  # new input supersedes a retry still waiting out its delay
        self._flush_deferred_bash()
        self._models.require_usable_model()
        self._record_selection()
        await self._compaction.check_before_prompt()  # spec 30 §1.5: aborted replies count here
        messages: list[AgentMessage] = [user_message(text, images), *self._next_turn]
        self._next_turn = []
        options = self._base_system_prompt_options
        run_options = msgspec.structs.replace(options, sections={}) if options is not None else None
        overrides = await self._hooks.before_agent_start(text, images, self._base_system_prompt, run_options)
        messages.extend(overrides.messages)
        self._use_run_sections(run_options.sections if run_options is not None else {})
        self._agent.state.system_prompt = overrides.system_prompt or self._base_system_prompt
        self._record_system_prompt()
        await self._accepted(on_accepted, "started")
        await self._run(messages)

    def _record_selection(self) -> None:
        """Record the live model on the branch when the branch implies another one and a virtual
        model is involved (as pi 1.6), so a resume restores what is in use."""
        model = self.model
        if model is None or not selection_needs_recording(
            self._session.get_branch(), self._services.model_registry, model
        ):
            return
        entry = self._session.get_entry(self._session.append_model_change(model.provider, model.id))
        if entry is not None:
            self._pipeline.enqueue_for_listeners(EntryAppended(entry))

    def _restore_branch_tools(self) -> None:
        """A resumed branch that recorded its tools (pi 1.x system messages) gets them back, as in
        pi, instead of the defaults; an explicit tool list (``--tools``, ``--no-tools``) wins."""
        recorded = self._session.branch_system_message()
        if recorded is not None and not self._tools.has_allowlist:
            self._tools.set_active(t["name"] for t in recorded.tools_added or [])

    def _record_system_prompt(self) -> None:
        """Keep the branch's prompt and tools in its transcript, as pi 1.x does, so a resumed branch
        (in tau or pi) knows what it had, and in the conversation before the run's prompt, where
        the request sends it (issue #31). The base prompt's sections, not an extension's override:
        pi records the structured prompt and sends a forced one without recording it."""
        sections, _, tools = self._current_prompt()
        recorded = self._record_prompt(sections, [declaration(t) for t in tools])
        if recorded is not None:
            self._agent.state.messages.append(recorded)
            self._pipeline.announce_system_message(recorded)

    def _record_prompt(
        self, sections: Mapping[str, str], tools: Sequence[JsonObject]
    ) -> SystemMessage | None:
        recorded = self._session.record_system_prompt(sections, tools)
        entry = self._session.get_entry(recorded) if recorded is not None else None
        if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage):
            return entry.message
        return None

    async def _request_now(self) -> Context | None:
        """The request the agent would send now for its conversation (as the loop builds it)."""
        agent = self._agent
        messages: list[AgentMessage] = list(agent.state.messages)
        if agent.transform_context is not None:
            messages = await resolve(agent.transform_context(messages, None))
        request = Context(
            messages=await resolve(agent.convert_to_llm(messages)),
            system_prompt=agent.state.system_prompt,
            tools=[tool.to_tool() for tool in agent.state.tools],
        )
        return agent.prompt_ledger.project(messages, request) if agent.prompt_ledger is not None else request

    def _current_prompt(self) -> tuple[dict[str, str], str, list[AgentTool]]:
        """The next request's prompt sections (base and the run's extension sections), its text
        (an extension may have forced one for the run) and its tools."""
        if self._base_system_prompt_options is None:
            sections = {"preamble": self._base_system_prompt} if self._base_system_prompt else {}
        else:  # built with the base prompt (twice per turn otherwise); a copy for the caller to keep
            sections = dict(self._base_system_prompt_sections)
        return sections, self._agent.state.system_prompt, list(self._agent.state.tools)

    def _use_run_sections(self, sections: Mapping[str, str]) -> None:
        """The extensions' sections for this run (``before_agent_start``; the runner has left out
        any with a bad name): the base prompt is rebuilt with them."""
        kept = dict(sections)
        if kept != self._run_sections:
            self._run_sections = kept
            self._apply_active_tools()

    async def _accepted(
        self, on_accepted: Callable[[InputDisposition], None] | None, disposition: InputDisposition
    ) -> None:
        if on_accepted is not None:
            await self._pipeline.catch_up(lambda: on_accepted(disposition))

    async def _run(self, messages: list[AgentMessage]) -> None:
        """One agent run and everything it sets off (retries, a compaction's continuation), then
        ``agent_settled``: a pi 1.x client waits for it, not for ``agent_end``."""
        self._run_active, self._run_aborted = True, False
        try:
            try:
                await self._agent.prompt(messages)
            finally:
                await self._pipeline.drain()
            await self._retry.wait()
            await self._compaction.wait_for_continuation(self._retry.wait)
            while await self._before_settle():
                try:
                    await self._agent.continue_()
                finally:
                    await self._pipeline.drain()
                await self._retry.wait()
                await self._compaction.wait_for_continuation(self._retry.wait)
        finally:
            self._run_active = False
            self._warmer.on_agent_settled()
            self._pipeline.enqueue_for_listeners(AgentSettled(aborted=self._run_aborted))
            try:
                await self._pipeline.drain()
            finally:
                waiters, self._settle_waiters = self._settle_waiters, []
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)
        self._pipeline.raise_errors()

    async def _before_settle(self) -> bool:
        """``agent_before_settle``: append the entries handlers proposed (a ``custom_message`` joins
        the context); whether to make one more model request. Not after an abort."""
        runner = self._extensions.current_runner()
        if runner is None or self._run_aborted or not runner.has_handlers("agent_before_settle"):
            return False
        messages = self._agent.state.messages
        last = messages[-1] if messages else None
        outcome: Literal["completed", "error"] = (
            "error" if isinstance(last, AssistantMessage) and last.stop_reason == "error" else "completed"
        )
        entries, go_on = await runner.emit_agent_before_settle(outcome, list(messages))
        problem = self._boundary_problem(entries)
        if problem is not None:
            runner.report_boundary(f"the proposed entries were not appended: {problem}")
            entries = []
        edited = False
        for draft in entries:
            if draft["type"] in ("context_edit", "compaction"):
                self._append_structural(draft)
                edited = True
                continue
            custom_type = str(draft.get("customType", draft.get("custom_type")))
            if draft["type"] == "custom":
                self._session.append_custom_entry(custom_type, draft.get("data"))
                continue
            from tau.extensions.results import to_content

            content = draft["content"]
            message = CustomMessage(
                custom_type,
                content
                if isinstance(content, str)
                else to_content(content, "content", "agent_before_settle"),
                bool(draft.get("display", True)),
                draft.get("details"),
            )
            if edited:
                # After an edit the context is rebuilt from the session, so the message is recorded
                # first and joins it from there.
                self._session.append_custom_message_entry(
                    message.custom_type, message.content, message.display, message.details
                )
                self._rebuild_context()
                self._pipeline.enqueue_for_listeners(MessageStart(message))
                self._pipeline.enqueue_for_listeners(MessageEnd(message))
                continue
            self.send_custom_message(message)
        if edited:
            self._rebuild_context()
        await self._pipeline.drain()
        if not go_on or self._run_aborted or outcome == "error":
            return False
        last = self._agent.state.messages[-1] if self._agent.state.messages else None
        if isinstance(last, AssistantMessage) and not self._agent.has_queued_messages():
            runner.report_boundary("agent_before_settle requested a continuation with nothing new to answer")
            return False
        return True

    def _boundary_problem(self, drafts: list[JsonObject]) -> str | None:
        """Why the proposal cannot be appended as a whole (a ``context_edit`` or ``compaction``
        naming an entry that is not on the branch, or an edit of an entry without a message)."""
        branch = {entry.id: entry for entry in self._session.get_branch()}
        for draft in drafts:
            if draft["type"] == "context_edit":
                target = str(draft.get("targetId", draft.get("target_id")))
                entry = branch.get(target)
                if entry is None:
                    return f"context_edit: no entry {target!r} on the current branch"
                if entry.type not in ("message", "custom_message"):
                    return f"context_edit: entry {target!r} is a {entry.type} entry, not a message"
            elif draft["type"] == "compaction":
                kept = draft.get("firstKeptEntryId", draft.get("first_kept_entry_id"))
                if kept is not None and str(kept) not in branch:
                    return f"compaction: no entry {kept!r} on the current branch"
        return None

    def _append_structural(self, draft: JsonObject) -> None:
        if draft["type"] == "context_edit":
            target = str(draft.get("targetId", draft.get("target_id")))
            replacement = draft.get("replacement")
            self._session.append_context_edit(target, dict(replacement) if replacement is not None else None)
            return
        usage = self.get_context_usage()
        kept = draft.get("firstKeptEntryId", draft.get("first_kept_entry_id"))
        self._session.append_compaction(
            str(draft["summary"]),
            str(kept) if kept is not None else None,
            usage.tokens if usage is not None and usage.tokens is not None else 0,
            details=draft.get("details"),
            from_hook=True,
        )

    def _rebuild_context(self) -> None:
        """The agent's messages as the session's context now reads (after edits or a compaction)."""
        self._agent.state.messages = self._session.build_session_context(system_messages=True).messages

    def send_custom_message(
        self, message: CustomMessage, *, trigger_turn: bool = False, deliver_as: DeliverAs = "steer"
    ) -> None:
        """Put an extension's message in the conversation (spec 30 §1.3.1): ``next_turn`` holds it
        for the next prompt; while the agent works it is queued (steer or follow-up); when idle it
        starts a run (``trigger_turn``) or is just recorded."""
        if deliver_as == "next_turn":
            self._next_turn.append(message)
        elif self.is_streaming:
            (self._agent.steer if deliver_as == "steer" else self._agent.follow_up)(message)
        elif trigger_turn:
            self._extensions.spawn(self._run([message]), "turn")
        else:
            self._agent.state.messages.append(message)
            self._session.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details
            )
            self._pipeline.enqueue_for_listeners(MessageStart(message))
            self._pipeline.enqueue_for_listeners(MessageEnd(message))

    def send_user_message(
        self,
        content: str | Sequence[TextContent | ImageContent],
        *,
        deliver_as: StreamingBehavior | None = None,
    ) -> None:
        """Prompt as if the user typed ``content``, without command or template expansion (the
        ``input`` event sees source ``extension``). Starts in the background."""
        if self.is_streaming and deliver_as is None:
            raise SessionBusyError("The agent is already working: pass deliver_as='steer' or 'follow_up'")
        text, images = split_user_content(content)
        prompt = self.prompt(
            text,
            images=images,
            streaming_behavior=deliver_as,
            source="extension",
            expand_prompt_templates=False,
        )
        self._extensions.spawn(prompt, "prompt")

    async def wait_for_idle(self) -> None:
        """Return once the agent is idle and the work extensions started in the background is done."""
        await self._extensions.settle()
        await self._agent.wait_for_idle()
        await self._pipeline.drain()

    async def steer(
        self, text: str, images: Sequence[ImageContent] | None = None, *, source: InputSource = "interactive"
    ) -> InputDisposition:
        """Queue a message for the agent's next turn (after the current tool calls), unless an
        extension's ``input`` handler takes it; says which (``queued`` or ``handled``)."""
        return await self._queue_input(text, images, source, "steer")

    async def follow_up(
        self, text: str, images: Sequence[ImageContent] | None = None, *, source: InputSource = "interactive"
    ) -> InputDisposition:
        """Queue a message for when the agent would otherwise stop, unless an extension's ``input``
        handler takes it; says which (``queued`` or ``handled``)."""
        return await self._queue_input(text, images, source, "follow_up")

    async def _queue_input(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        source: InputSource,
        behavior: StreamingBehavior,
    ) -> InputDisposition:
        self._refuse_command(text)
        outcome = await self._hooks.on_input(text, images, source)
        if outcome.handled:
            return "handled"
        self._queue(self._expand(outcome.text), outcome.images, behavior)
        return "queued"

    def clear_queue(self) -> tuple[list[str], list[str]]:
        """Drop every queued message; returns the ``(steering, follow_up)`` texts (for the editor)."""
        steering, follow_up = self._queues.clear()
        self._agent.clear_all_queues()
        self._pipeline.enqueue(self._queues.snapshot())
        return steering, follow_up

    async def abort(self) -> None:
        """Stop the current run (or cancel a pending retry, a compaction or a branch summary) and
        wait until it has ended and its
        events are handled, ``agent_settled`` included (as in pi, an RPC ``abort`` is answered after
        it). Never await it from inside the run itself (an event listener): spawn it."""
        settled: asyncio.Future[None] | None = None
        if self._run_active:  # a retry's wait or a compaction's continuation counts too
            self._run_aborted = True
            settled = asyncio.get_running_loop().create_future()
            self._settle_waiters.append(settled)
        self._retry.abort_retry()
        self._compaction.abort()  # a running compaction or branch summary too, as in pi
        self._agent.abort()
        await self._agent.wait_for_idle()
        await self._pipeline.drain()
        if settled is not None:
            await settled

    # -- auto-retry (spec 30 §1.4; the logic is in ``retry``) -----------------------------------

    @property
    def is_retrying(self) -> bool:
        """Whether a retry chain is under way (waiting out its delay or running)."""
        return self._retry.is_retrying

    @property
    def retry_attempt(self) -> int:
        return self._retry.attempt

    @property
    def auto_retry_enabled(self) -> bool:
        return self._retry.enabled

    def set_auto_retry_enabled(self, enabled: bool) -> None:
        """Turn retries of transient provider errors on or off (saved in the settings)."""
        self._retry.set_enabled(enabled)

    def abort_retry(self) -> None:
        """Cancel a retry waiting out its delay (``auto_retry_end`` with "Retry cancelled")."""
        self._retry.abort_retry()

    async def wait_for_retry(self) -> None:
        """Return once no retry is pending or running."""
        await self._retry.wait()

    def set_steering_mode(self, mode: QueueMode) -> None:
        self._agent.steering_mode = mode
        self._services.settings_manager.set_steering_mode(mode)

    def set_follow_up_mode(self, mode: QueueMode) -> None:
        self._agent.follow_up_mode = mode
        self._services.settings_manager.set_follow_up_mode(mode)

    def _expand(self, text: str) -> str:
        # As pi 1.6: enableSkillCommands only lists skills among the commands; one typed is expanded.
        return expand_input(text, self._services.resource_loader)

    def _refuse_command(self, text: str) -> None:
        if self._hooks.is_command(text):
            raise SessionBusyError(f"Commands cannot be queued; run {text.split()[0]} once the agent is idle")

    def _queue(self, text: str, images: Sequence[ImageContent] | None, behavior: StreamingBehavior) -> None:
        message = user_message(text, images)
        if behavior == "steer":
            self._queues.steering.append(text)
            self._agent.steer(message)
        else:
            self._queues.follow_up.append(text)
            self._agent.follow_up(message)
        self._pipeline.enqueue(self._queues.snapshot())

    # -- compaction and tree navigation (the logic is in ``compaction_control``) ----------------

    @property
    def is_compacting(self) -> bool:
        return self._compaction.is_compacting

    @property
    def auto_compaction_enabled(self) -> bool:
        return self._compaction.settings.enabled

    def set_auto_compaction_enabled(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (saved as ``compaction.enabled``)."""
        self._compaction.set_auto_compaction_enabled(enabled)

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Summarise older history now (``/compact``); stops the running turn first. Raises
        ``NothingToCompactError`` (no model call, no entry) when there is nothing to summarise: no
        message, everything still within ``keepRecentTokens``, or right after a compaction."""
        result = await self._compaction.compact(custom_instructions)
        self._pipeline.raise_errors()
        return result

    def abort_compaction(self) -> None:
        """Stop a running compaction or branch summary; the session stays as it was."""
        self._compaction.abort()

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigateTreeResult:
        """Move to another entry of the session tree (``/tree``), optionally leaving a summary of
        the abandoned branch there."""
        return await self._compaction.navigate_tree(
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )

    # -- model and thinking level --------------------------------------------------------------

    async def set_model(self, model: Model, *, persist: bool = False) -> None:
        """Use ``model`` from the next run (``MissingAuthError`` without credentials); ``persist``
        also saves it (and the thinking level it brings) as the default in the settings (the
        terminal UI's choice; the SDK, RPC and extensions change the session only, as pi's)."""
        previous = self.model
        self._models.set_model(model, persist=persist)
        await self._extensions.model_selected(self.model, previous, "set")

    async def cycle_model(
        self, direction: Literal["forward", "backward"] = "forward", *, persist: bool = False
    ) -> ModelCycle | None:
        previous = self.model
        cycled = self._models.cycle_model(direction, persist=persist)
        await self._extensions.model_selected(self.model, previous, "cycle")
        return cycled

    def set_thinking_level(self, level: ThinkingLevelOrOff, *, persist: bool = False) -> None:
        """Set the thinking level, clamped to what the model supports (``persist``: saved as the
        default too)."""
        self._models.set_thinking_level(level, persist=persist)

    def cycle_thinking_level(self, *, persist: bool = False) -> ThinkingLevelOrOff | None:
        return self._models.cycle_thinking_level(persist=persist)

    def get_available_thinking_levels(self) -> list[ThinkingLevelOrOff]:
        return self._models.supported_thinking_levels()

    # -- the user's shell commands -------------------------------------------------------------

    async def execute_bash(
        self,
        command: str,
        *,
        on_chunk: Callable[[str], None] | None = None,
        exclude_from_context: bool | None = None,
    ) -> BashResult:
        """Run a ``!command`` in the session's cwd and record it in the conversation.

        ``exclude_from_context`` (``!!command``) keeps it in the session but away from the model.
        While the agent works the record waits for the next prompt, so it never lands between a
        tool call and its result.
        """
        if self._bash.is_running:
            raise BashBusyError("A shell command is already running; wait for it or abort it first")
        result, operations = await self._extensions.user_bash(command, bool(exclude_from_context), self.cwd)
        if result is None:
            result = await self._bash.run(command, on_chunk, operations=operations)
        message = result.to_message(command, exclude_from_context=exclude_from_context)
        if self.is_streaming:
            self._deferred_bash.append(message)
        else:
            self._record(message)
        return result

    def abort_bash(self) -> None:
        self._bash.abort()

    def _flush_deferred_bash(self) -> None:
        deferred, self._deferred_bash = self._deferred_bash, []
        for message in deferred:
            self._record(message)

    def _record(self, message: BashExecutionMessage) -> None:
        self._agent.state.messages.append(message)
        self._session.append_message(message)

    # -- tools and system prompt ---------------------------------------------------------------

    @property
    def sandbox(self) -> Sandbox:
        """The fence of the session's commands and file writes."""
        return self._services.sandbox

    def set_sandbox(self, mode: str) -> None:
        """Fence commands and writes by ``mode`` (``off``, ``read-only``, ``workspace-write``) from
        the next call on, with the writable roots and network of the ``sandbox`` setting; the system
        prompt's sandbox line and bash's ``escalate`` parameter follow (sent as changes appended
        after the cached prefix). Raises ``SandboxConfigError`` (one line) and keeps the current
        fence when that cannot be."""
        from tau.config.sandbox_config import checked_sandbox_policy
        from tau.tools.bash import declared_for_sandbox

        setting = self._services.settings_manager.get("sandbox")
        policy, bwrap = checked_sandbox_policy(setting, self.cwd, self._services.agent_dir, mode=mode)
        sandbox = self._services.sandbox
        sandbox.set_policy(policy, bwrap=bwrap)
        self.sandbox_mode_chosen = mode
        # bash has ``escalate`` while commands are fenced: the next request declares it anew (an
        # appended change, ``tau.ai.prompt_updates``), or without it after ``off``.
        self._tools.replace_builtin("bash", lambda tool: declared_for_sandbox(tool, sandbox))
        self._apply_active_tools()

    async def _ask_escalation(self, request: EscalationRequest) -> EscalationDecision | None:
        """The mode's UI asks the user (``None`` when the mode has none: print mode, batch)."""
        binding = self._extensions.binding
        ui = binding.ui if binding is not None else None
        if ui is None:
            return None
        from tau.extensions.ui import (
            NoUI,  # only when a command asks: a run without extensions loads none of them
        )

        if isinstance(ui, NoUI):
            return None
        answer = await ui.select(f"Sandbox: {request.question()}", list(ESCALATION_CHOICES))
        return ESCALATION_CHOICES.get(answer, "denied") if answer is not None else "denied"

    def _record_escalation(self, request: EscalationRequest, decision: EscalationDecision, why: str) -> None:
        """Every grant or refusal goes into the session (a custom entry, not part of the context)."""
        data = {
            "decision": decision,
            "why": why,
            "reason": request.reason,
            "command": request.command,
            "toolCallId": request.tool_call_id,
            "grant": request.grant.to_json(),
            "mode": self._services.sandbox.policy.mode,
        }
        self.append_custom_entry(ESCALATION_ENTRY, data)

    def get_active_tool_names(self) -> list[str]:
        return self._tools.active_names

    def get_all_tools(self) -> list[AgentTool]:
        return self._tools.all_tools()

    def set_active_tools(self, names: Iterable[str]) -> None:
        """Activate the named tools (unknown names are ignored) from the next run; rebuilds the base
        system prompt."""
        self._tools.set_active(names)
        self._apply_active_tools()

    def describe_tools_as(self, options: SystemPromptOptions | None) -> None:
        """Build the base prompt from ``options`` (another session's, whose tools include this
        one's) rather than from the active tools: a sub-agent keeps its parent's prompt byte for
        byte, so its first request reuses the parent's cached prefix, and its fewer tools reach
        the model as removals (``tau.ai.prompt_updates``) instead of a rewritten tool section.
        ``None``: from the active tools again."""
        self._prompt_options_of = options
        self._apply_active_tools()

    def _apply_active_tools(self) -> None:
        self._agent.state.tools = self._tools.active_tools
        self._agent.state.callable_tools = self._tools.callable_tools
        if self._prompt_options_of is not None:
            options = self._prompt_options_of
        else:
            _, options = self._tools.build_system_prompt(self._services.resource_loader)
        sandbox = self._services.sandbox
        line = sandbox.policy.describe() if sandbox.policy.fenced else None
        options = msgspec.structs.replace(options, sections=dict(self._run_sections), sandbox=line)
        self._base_system_prompt_sections = build_system_prompt_sections(options)
        self._base_system_prompt = render_sections(self._base_system_prompt_sections)
        self._base_system_prompt_options = options
        self._agent.state.system_prompt = self._base_system_prompt

    # -- extensions (the logic is in ``session_extensions``) ------------------------------------

    @property
    def extensions(self) -> SessionExtensions:
        return self._extensions

    @property
    def extension_runner(self) -> ExtensionRunner | None:
        """The loaded extensions; ``None`` when there are none."""
        return self._extensions.runner

    async def bind_extensions(
        self,
        ui: ExtensionUI | None = None,
        *,
        on_error: ErrorListener | None = None,
        shutdown_handler: Callable[[], None] | None = None,
        mode: ExtensionMode | None = None,
    ) -> None:
        """Called by the mode once: give the extensions its UI (``None``: no UI), where their
        errors go, what ``ctx.shutdown()`` does and its name (``ctx.mode``; by default ``"tui"``
        with a UI, ``"print"`` without); emits ``session_start`` and ``resources_discover``."""
        await self._extensions.bind(ExtensionBinding(ui, on_error, shutdown_handler, mode))

    async def reload(self) -> list[ServiceDiagnostic]:
        """Re-read settings, extensions, skills, prompt templates and context files, and rebuild
        the base system prompt (spec 30 §8.9). Extensions start afresh, keeping their flag values
        and the active tools. Returns the problems found loading extensions."""
        return await self._extensions.reload()

    # -- the rest of the surface ---------------------------------------------------------------

    @property
    def cache_warming_status(self) -> WarmingStatus:
        """What prompt-cache warming does now (``cacheWarming``; shown by ``/session``)."""
        return self._warmer.status

    def _last_prompt_tokens(self) -> int:
        for message in reversed(self._agent.state.messages):
            if isinstance(message, AssistantMessage):
                usage = message.usage
                return usage.input + usage.cache_read + usage.cache_write
        return 0

    async def _cache_warming_decision(self, decision: WarmingDecision) -> str:
        """The extensions' say on a refresh (``cache_warming_decision``; the last answer wins)."""
        action: Literal["warm", "stop"] = "warm" if decision.warm else "stop"
        runner = self._extensions.runner
        if runner is None:
            return action
        from tau.extensions.events import CacheWarmingDecisionEvent  # only with extensions loaded

        event = CacheWarmingDecisionEvent(
            decision.warm_cost, decision.miss_cost, decision.continuation_probability, action
        )
        return await runner.emit_cache_warming_decision(event)

    async def _record_cache_warm(self, reply: AssistantMessage) -> None:
        """A refresh's cost, as pi 1.6 records it: a ``usage`` entry of kind ``cache_warm``."""
        entry_id = self._session.append_usage(
            "cache_warm", reply.provider, reply.response_model or reply.model, reply.usage
        )
        entry = self._session.get_entry(entry_id)
        if entry is not None:
            self._pipeline.enqueue_for_listeners(EntryAppended(entry))

    def _omit_failed_attempt(self, message: AssistantMessage) -> list[SessionEntry]:
        """Record, as pi 1.6 does, that a failed attempt and its tool results stay out of the
        context: a ``context_edit`` entry without replacement for each (the entries are kept).
        Returns the entries appended."""
        messages = [entry for entry in self._session.get_branch() if isinstance(entry, MessageEntry)]
        at = len(messages) - 1
        while at >= 0 and messages[at].message != message:
            at -= 1
        if at < 0:
            return []
        call_ids = {block.id for block in message.content if isinstance(block, ToolCall)}
        targets = [messages[at].id]
        for entry in messages[at + 1 :]:
            if isinstance(entry.message, AssistantMessage):
                break
            if isinstance(entry.message, ToolResultMessage) and entry.message.tool_call_id in call_ids:
                targets.append(entry.id)
        appended: list[SessionEntry] = []
        for target in targets:
            edit = self._session.get_entry(self._session.append_context_edit(target, None))
            if edit is not None:
                appended.append(edit)
        return appended

    def append_custom_entry(self, custom_type: str, data: object = None) -> str:
        """Record an extension's own entry (not part of the conversation) and announce it
        (``entry_appended``); returns its id."""
        entry_id = self._session.append_custom_entry(custom_type, data)
        entry = self._session.get_entry(entry_id)
        if entry is not None:
            self._pipeline.enqueue_for_listeners(EntryAppended(entry))
        return entry_id

    def set_session_name(self, name: str) -> None:
        """Name the session (a blank name clears it); recorded in the file and announced."""
        self._session.append_session_info(name)
        self._pipeline.enqueue(SessionInfoChanged(self._session.get_session_name()))

    def export_to_html(self, output_path: str | None = None, *, theme: Any = None) -> str:
        """Write the session as a self-contained HTML page, with the current system prompt and
        active tools in its header; returns the absolute path (default:
        ``tau-session-<file name>.html`` in the current directory). Tools are drawn as the
        extensions' tool renderers draw them, given ``theme`` (the terminal UI's). Raises
        ``ExportError`` for an in-memory session or one whose file is not written yet."""
        from tau.export import export_session_html  # markdown and highlighting: only now
        from tau.export.extension_tools import ExtensionToolHtml

        tools = [tool.to_tool() for tool in self._tools.active_tools]
        runner = self.extension_runner
        renderers = None
        if runner is not None and (runner.registry.tool_renderers() or _draws_tools(runner)):
            definitions = {t.definition.name: t.definition for t in runner.tool_definitions}
            renderers = ExtensionToolHtml(
                lambda name: runner.resolve_tool_renderer(name, lambda: definitions.get(name)), theme
            )
        return export_session_html(
            self._session,
            output_path,
            system_prompt=self.system_prompt,
            tools=tools,
            tool_renderers=renderers,
        )

    def get_last_assistant_text(self) -> str | None:
        """The text of the last reply, trimmed (``None`` if blank). A reply without text from a turn
        that did not end normally (aborted, failed, only calling tools) is skipped, as in pi 1.6; one
        that ended normally counts even without text."""
        for message in reversed(self._agent.state.messages):
            if not isinstance(message, AssistantMessage):
                continue
            text = message.text()
            if message.stop_reason != "stop" and not text.strip():
                continue
            return text.strip() or None
        return None

    def get_context_usage(self) -> ContextUsage | None:
        """How full the context window is; ``None`` without a model."""
        model = self.model
        if model is None:
            return None
        return self._compaction.get_context_usage()

    async def dispose(
        self, *, reason: ShutdownReason = "quit", target_session_file: str | None = None
    ) -> None:
        """Tell the extensions (``session_shutdown``), stop any run and shell command, flush pending
        events, detach from the agent and delete the session's spill files. The session must not
        be used afterwards."""
        await self._extensions.shutdown(reason, target_session_file)
        self._warmer.close()
        self._bash.abort()
        await self.abort()
        self._unsubscribe_agent()
        self._pipeline.clear_listeners()
        self._spill.close()
        cleanup_session_resources(self.session_id)  # provider state kept for it (message threads, ...)
        # The fence's command server and folders (started again if these services serve on).
        self._services.sandbox.close()


def _draws_tools(runner: ExtensionRunner) -> bool:
    """Whether an extension tool has a renderer of its own."""
    return any(t.definition.render_call or t.definition.render_result for t in runner.tool_definitions)
