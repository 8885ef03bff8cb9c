"""Where the session calls its extensions: the agent's callbacks, the prompt flow, compaction and
tree navigation, and the event pipeline.

Every hook is installed once and asks ``current_runner()`` at call time, so a reload (a new
runner) or a session without extensions (``None``) needs no re-wiring. Without a runner, or
without a handler for the event, a hook returns at once. ``tau.extensions`` is imported only when
there is a runner: a session without extensions never loads it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

import msgspec

from tau.agent.agent import Agent
from tau.agent.hooks import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortSignal
from tau.ai.options import ResponseInfo
from tau.ai.types import ImageContent, JsonObject, Model
from tau.context.system_prompt import SystemPromptOptions
from tau.runtime.compaction_hooks import (
    BeforeCompactEvent,
    BeforeCompactResult,
    BeforeTreeEvent,
    BeforeTreeResult,
    CompactionFailure,
    CompactionHooks,
)
from tau.runtime.events import (
    AgentSessionEvent,
    AgentSettled,
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EntryAppended,
    QueueUpdate,
    SessionInfoChanged,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    ThinkingLevelChanged,
)
from tau.runtime.prompt_ledger import OwnedTranscript
from tau.runtime.session_prompt import AgentStartOverrides, InputOutcome, InputSource, PromptHooks
from tau.session.entries import BranchSummaryEntry, CompactionEntry
from tau.session.messages import SystemMessage, replay_system_messages
from tau.tools.images import DEFAULT_IMAGE_LIMITS, ImageLimits

if TYPE_CHECKING:
    from tau.extensions.runner import ExtensionRunner

__all__ = [
    "AgentExtensionHooks",
    "CurrentRunner",
    "ExtensionCompactionHooks",
    "ExtensionEventForwarder",
    "ExtensionPromptHooks",
]

CurrentRunner: TypeAlias = Callable[[], "ExtensionRunner | None"]

_SESSION_EVENTS = (
    AgentSettled,
    EntryAppended,
    QueueUpdate,
    SessionInfoChanged,
    AutoRetryStart,
    AutoRetryEnd,
    CompactionStart,
    CompactionEnd,
    SummarizationRetryScheduled,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
)


class AgentExtensionHooks:
    """The agent's callbacks: ``context``, ``context_with_system``, ``before_provider_request``,
    ``before_provider_headers``, ``after_provider_response``, ``provider_stream_event``,
    ``tool_call`` and ``tool_result``."""

    def __init__(
        self,
        current_runner: CurrentRunner,
        drain_events: Callable[[], Awaitable[None]],
        auto_resize_images: Callable[[], bool] = lambda: False,
        image_limits: Callable[[], ImageLimits] = lambda: DEFAULT_IMAGE_LIMITS,
    ) -> None:
        self._runner = current_runner
        self._drain_events = drain_events
        self._auto_resize_images = auto_resize_images
        self._image_limits = image_limits

    def install(self, agent: Agent) -> None:
        agent.transform_context = self.transform_context
        agent.on_payload = _PayloadHook(self)
        agent.on_response = self.on_response
        agent.on_headers = _HeadersHook(self)
        agent.on_stream_event = _StreamEventHook(self)
        agent.before_tool_call = self.before_tool_call
        agent.after_tool_call = self.after_tool_call

    async def _runner_for(self, event: str) -> ExtensionRunner | None:
        """The runner if it has ``event`` handlers, once the session's event queue is drained:
        handlers then see the events before this one (``agent_start`` before ``context``; the
        assistant message asking for a tool already in the session file, spec 30 §1.2)."""
        runner = self._runner()
        if runner is None or not runner.has_handlers(event):
            return None
        await self._drain_events()
        return runner

    async def transform_context(
        self, messages: list[AgentMessage], signal: AbortSignal | None
    ) -> list[AgentMessage]:
        runner = self._runner()
        if runner is None:
            return messages
        sent = messages
        if await self._runner_for("context") is not None:
            # Handlers see the conversation without the prompt records (as in pi 1.6). An unchanged
            # list keeps them, so prompt changes still go out in place; a changed one goes without,
            # and the request then carries the current prompt whole.
            conversation = [m for m in messages if not isinstance(m, SystemMessage)]
            changed = await runner.emit_context(conversation, signal)
            sent = messages if changed == conversation else changed
        if await self._runner_for("context_with_system") is None:
            return sent
        # The whole transcript: when ``context`` dropped the records, one leading record holds the
        # prompt and tools they replay to.
        transcript = sent
        if sent is not messages:
            head = replay_system_messages([m for m in messages if isinstance(m, SystemMessage)])
            transcript = [head, *sent] if head is not None else sent
        result = await runner.emit_context_with_system(transcript, signal)
        return sent if result == transcript else OwnedTranscript(result)

    async def on_payload(self, payload: JsonObject, model: Model) -> JsonObject | None:
        runner = await self._runner_for("before_provider_request")
        return None if runner is None else await runner.emit_before_provider_request(payload, model)

    def payload_wanted(self) -> bool:
        """Whether a ``before_provider_request`` handler is there to see the next request body."""
        runner = self._runner()
        return runner is not None and runner.has_handlers("before_provider_request")

    async def on_headers(self, headers: dict[str, str | None], model: Model) -> None:
        runner = await self._runner_for("before_provider_headers")
        if runner is not None:
            await runner.emit_before_provider_headers(headers)

    async def on_stream_event(self, data: object, model: Model) -> None:
        runner = await self._runner_for("provider_stream_event")
        if runner is not None:
            await runner.emit_provider_stream_event(data, model)

    def wanted(self, event: str) -> bool:
        runner = self._runner()
        return runner is not None and runner.has_handlers(event)

    async def on_response(self, info: ResponseInfo, model: Model) -> None:
        runner = await self._runner_for("after_provider_response")
        if runner is not None:
            await runner.emit_after_provider_response(info, model)

    async def before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult | None:
        runner = await self._runner_for("tool_call")
        return None if runner is None else await runner.before_tool_call(context, signal)

    async def after_tool_call(
        self, context: AfterToolCallContext, signal: AbortSignal | None
    ) -> AfterToolCallResult | None:
        runner = self._runner()
        patch = None if runner is None else await runner.after_tool_call(context, signal)
        # As pi 1.6: after the handlers, so images they put in are fitted too (images.autoResize).
        content = patch.content if patch is not None and patch.content is not None else context.result.content
        if not self._auto_resize_images() or not any(isinstance(b, ImageContent) for b in content):
            return patch
        from tau.tools.image_resize import fit_tool_result_images  # only when a result holds an image

        fitted = await asyncio.to_thread(fit_tool_result_images, list(content), limits=self._image_limits())
        if fitted is None:
            return patch
        return (
            AfterToolCallResult(content=fitted)
            if patch is None
            else msgspec.structs.replace(patch, content=fitted)
        )


class _PayloadHook:
    """The agent's ``on_payload``: ``wants_payload`` tells the provider when no handler would see the
    body, so that it is sent unseen (and its encoding is not checked for a handler's edits)."""

    def __init__(self, hooks: AgentExtensionHooks) -> None:
        self._hooks = hooks

    def wants_payload(self) -> bool:
        return self._hooks.payload_wanted()

    def __call__(self, payload: JsonObject, model: Model) -> Awaitable[JsonObject | None]:
        return self._hooks.on_payload(payload, model)


class _HeadersHook:
    """The agent's ``on_headers``: headers are copied for handlers only when there are some."""

    def __init__(self, hooks: AgentExtensionHooks) -> None:
        self._hooks = hooks

    def wants_headers(self) -> bool:
        return self._hooks.wanted("before_provider_headers")

    def __call__(self, headers: dict[str, str | None], model: Model) -> Awaitable[None]:
        return self._hooks.on_headers(headers, model)


class _StreamEventHook:
    """The agent's ``on_stream_event``: asked once per request whether any handler listens, so a
    stream nobody listens to costs no call per event."""

    def __init__(self, hooks: AgentExtensionHooks) -> None:
        self._hooks = hooks

    def wants_events(self) -> bool:
        return self._hooks.wanted("provider_stream_event")

    def __call__(self, data: object, model: Model) -> Awaitable[None]:
        return self._hooks.on_stream_event(data, model)


class ExtensionEventForwarder:
    """The event pipeline's extension step: agent events go to ``emit_agent_event`` (turn numbers,
    ``message_end`` replacements); a thinking-level change becomes ``thinking_level_select``."""

    def __init__(self, current_runner: CurrentRunner, thinking_level: str) -> None:
        self._runner = current_runner
        self._thinking_level = thinking_level

    def __call__(self, event: AgentSessionEvent) -> Awaitable[None] | None:
        """What to wait for, if anything: called for every streamed delta, so no coroutine is
        made when there is no runner."""
        if isinstance(event, ThinkingLevelChanged):
            previous, self._thinking_level = self._thinking_level, event.level
            runner = self._runner()
            if runner is not None and runner.has_handlers("thinking_level_select"):
                from tau.extensions.events import ThinkingLevelSelectEvent

                return runner.emit(ThinkingLevelSelectEvent(event.level, previous))
            return None
        runner = self._runner()
        if runner is None or isinstance(event, _SESSION_EVENTS):
            return None
        return runner.emit_agent_event(event)


class ExtensionPromptHooks(PromptHooks):
    """Commands, ``input`` and ``before_agent_start`` in ``AgentSession.prompt``."""

    def __init__(self, current_runner: CurrentRunner) -> None:
        self._runner = current_runner

    def is_command(self, text: str) -> bool:
        runner = self._runner()
        return runner is not None and runner.is_command(text)

    async def run_command(self, text: str) -> bool:
        runner = self._runner()
        return runner is not None and await runner.run_command(text)

    async def on_input(
        self, text: str, images: Sequence[ImageContent] | None, source: InputSource
    ) -> InputOutcome:
        runner = self._runner()
        if runner is None or not runner.has_handlers("input"):
            return InputOutcome(text, images)
        result = await runner.emit_input(text, images, source)
        if result.action == "handled":
            return InputOutcome(text, images, handled=True)
        return InputOutcome(
            result.text if result.text is not None else text,
            result.images if result.images is not None else images,
        )

    async def before_agent_start(
        self,
        text: str,
        images: Sequence[ImageContent] | None,
        base_system_prompt: str,
        base_system_prompt_options: SystemPromptOptions | None = None,
    ) -> AgentStartOverrides:
        runner = self._runner()
        if runner is None:
            return AgentStartOverrides()
        outcome = await runner.emit_before_agent_start(
            text, images, base_system_prompt, base_system_prompt_options
        )
        return AgentStartOverrides(outcome.system_prompt, list(outcome.messages))


class ExtensionCompactionHooks(CompactionHooks):
    """``session_before_compact`` / ``session_compact`` and ``session_before_tree`` / ``session_tree``."""

    def __init__(self, current_runner: CurrentRunner) -> None:
        self._runner = current_runner

    async def session_before_compact(self, event: BeforeCompactEvent) -> BeforeCompactResult | None:
        runner = self._runner()
        if runner is None:
            return None
        result = await runner.emit_session_before_compact(
            event.preparation,
            event.branch_entries,
            event.custom_instructions,
            event.signal,
            event.reason,
            event.will_retry,
        )
        if result is None:
            return None
        return BeforeCompactResult(cancel=result.cancel, compaction=result.compaction)

    async def session_compact(
        self,
        entry: CompactionEntry,
        from_extension: bool,
        reason: Literal["manual", "threshold", "overflow"] = "manual",
        will_retry: bool = False,
    ) -> None:
        runner = self._runner()
        if runner is not None and runner.has_handlers("session_compact"):
            from tau.extensions.events import SessionCompactEvent

            await runner.emit(SessionCompactEvent(entry, from_extension, reason, will_retry))

    async def session_compact_failed(self, failure: CompactionFailure) -> None:
        runner = self._runner()
        if runner is not None and runner.has_handlers("session_compact_failed"):
            from tau.extensions.events import SessionCompactFailedEvent

            await runner.emit(
                SessionCompactFailedEvent(
                    failure.reason,
                    failure.error_message,
                    failure.aborted,
                    failure.will_retry,
                    failure.from_extension,
                )
            )

    async def session_before_tree(self, event: BeforeTreeEvent) -> BeforeTreeResult | None:
        runner = self._runner()
        if runner is None:
            return None
        from tau.extensions.events import TreePreparation

        preparation = TreePreparation(
            event.target_id,
            event.old_leaf_id,
            event.common_ancestor_id,
            event.entries_to_summarize,
            event.user_wants_summary,
            event.custom_instructions,
            event.replace_instructions,
            event.label,
        )
        result = await runner.emit_session_before_tree(preparation)
        if result is None:
            return None
        summary = result.summary
        return BeforeTreeResult(
            cancel=result.cancel,
            summary=summary.summary if summary is not None else None,
            details=summary.details if summary is not None else None,
            custom_instructions=result.custom_instructions,
            replace_instructions=result.replace_instructions,
            label=result.label,
        )

    async def session_tree(
        self,
        new_leaf_id: str | None,
        old_leaf_id: str | None,
        summary_entry: BranchSummaryEntry | None,
        from_extension: bool,
    ) -> None:
        runner = self._runner()
        if runner is not None and runner.has_handlers("session_tree"):
            from tau.extensions.events import SessionTreeEvent

            await runner.emit(SessionTreeEvent(new_leaf_id, old_leaf_id, summary_entry, from_extension))
