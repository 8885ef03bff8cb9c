"""The session's side of compaction (spec 30 §1.5, spec 50 §3): when to compact, and what follows.

Automatic compaction is checked between the turns of a run (``before_next_turn``, the agent
loop's next-turn point: the next request then sent compacted, as pi 1.6), after every run (once
auto-retry has declined the run's end), before every prompt, and before a request a virtual model
routes to another model (``fit_for_route``: that model's window, the request then sent
compacted). It runs for two reasons: ``threshold`` (the context grew larger than the window minus
the reserve; after a run the work stops there unless messages are queued) and
``overflow`` (the provider refused the prompt as too long, or cut a reply off by the output limit
below the model's own ``maxTokens``: the history is compacted and the agent continues on its own,
once per user message; a cut reply, and the results of a tool call it made, first leave the
context through ``context_edit`` entries, as pi 1.6). With nothing to summarise no compaction
starts (no events, no retry). ``compaction.enabled`` governs both.

Manual ``compact()`` always works (it stops the running turn first). ``navigate_tree`` moves the
session to another point of its tree, optionally hanging a summary of the abandoned branch there.

Every compaction appends one ``compaction`` entry and rebuilds the agent's messages from the
session; nothing else changes, and a failure leaves the session as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from msgspec.structs import replace

from tau.accounts.model_registry import is_virtual_model
from tau.agent.agent import Agent, AgentBusyError
from tau.agent.context import AgentContext
from tau.agent.events import AgentEnd, MessageEnd, MessageStart
from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortController, AbortSignal
from tau.ai.overflow import is_context_overflow, is_recoverable_length
from tau.ai.types import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    ThinkingLevelOrOff,
    Usage,
    UserMessage,
)

# The summariser, the cut-point search and the branch summaries load on the first compaction:
# a run that never compacts imports only the settings, the errors and the token estimates.
from tau.compaction.errors import (
    CompactionAbortedError,
    CompactionCancelledError,
    CompactionError,
    NothingToCompactError,
    SummarizationError,
)
from tau.compaction.settings import CompactionSettings, for_model
from tau.compaction.tokens import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_projected_context_tokens,
    estimate_tokens,
    should_compact,
)
from tau.runtime.compaction_hooks import (
    BeforeCompactEvent,
    BeforeTreeEvent,
    CompactionFailure,
    CompactionHooks,
    NavigateTreeResult,
)
from tau.runtime.context_usage import ContextUsage, context_usage
from tau.runtime.errors import MissingAuthError, NoModelError
from tau.runtime.event_pipeline import EventPipeline
from tau.runtime.events import (
    AgentSessionEvent,
    CompactionEnd,
    CompactionReason,
    CompactionStart,
    EntryAppended,
    SummarizationRetryAttemptStart,
    SummarizationRetryFinished,
    SummarizationRetryScheduled,
    SummarizationSource,
)
from tau.runtime.model_control import auth_error
from tau.runtime.retry import is_retryable_error
from tau.runtime.services import AgentSessionServices
from tau.runtime.virtual_routing import limits_model
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from tau.session.errors import EntryNotFoundError
from tau.session.ids import ms_from_iso
from tau.session.manager import SessionManager

if TYPE_CHECKING:
    from tau.compaction import (
        BranchSummaryResult,
        CompactionPreparation,
        CompactionResult,
        SummaryRequest,
        SummaryRetry,
    )

__all__ = ["OVERFLOW_RECOVERY_FAILED", "TRUNCATED_RECOVERY_FAILED", "CompactionControl"]

OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed: the context is still too large after compacting once. "
    "Reduce the context (start a new session or navigate the tree) or switch to a model with a "
    "larger context window."
)

TRUNCATED_RECOVERY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


class CompactionControl:
    """Compaction for one ``AgentSession``: register ``on_event`` as a pipeline listener and
    ``on_run_end`` as a run-end check (after auto-retry); call ``check_before_prompt`` before a
    prompt and ``wait_for_continuation`` after it."""

    continue_delay_s = 0.1
    """Pause before an automatic continue, so listeners see the compaction's end first."""

    def __init__(
        self,
        agent: Agent,
        session_manager: SessionManager,
        services: AgentSessionServices,
        pipeline: EventPipeline,
        *,
        get_model: Callable[[], Model | None],
        abort_run: Callable[[], Awaitable[None]],
        hooks: CompactionHooks | None = None,
        omit: Callable[[AssistantMessage], list[SessionEntry]] | None = None,
    ) -> None:
        self._omit = omit
        """Records that a failed attempt stays out of the context for good (``context_edit``
        entries, as pi 1.6 writes them); returns the entries it appended."""
        self._agent = agent
        self._session = session_manager
        self._services = services
        self._pipeline = pipeline
        self._get_model = get_model
        self._abort_run = abort_run
        self.hooks = hooks or CompactionHooks()
        self.last_request: Callable[[], Awaitable[Context | None]] | None = None
        self.route_direct: (
            Callable[
                [Model, ThinkingLevelOrOff, AbortSignal | None], Awaitable[tuple[Model, ThinkingLevelOrOff]]
            ]
            | None
        ) = None
        """Routes a request outside the agent loop made with a virtual model (the session's)."""
        """The conversation as the agent would send it now: a compaction asks for its summary as
        that request plus one instruction, so the provider's cache serves the rest (issue #31)."""
        self._overflow_attempted = False
        self._from_extension = False
        """Whether the running compaction stores a ``session_before_compact`` handler's summary."""
        self._controller: AbortController | None = None
        self._manual = False
        self._in_worker = False
        self._continuation: asyncio.Task[None] | None = None
        self._failed_reply: AssistantMessage | None = None

    # -- state ---------------------------------------------------------------------------------

    @property
    def is_compacting(self) -> bool:
        """Whether a compaction (or a branch summary) is being written."""
        return self._controller is not None

    @property
    def settings(self) -> CompactionSettings:
        """``compaction.*`` for the current model (its ``compaction.modelOverrides`` entry applied)."""
        manager = self._services.settings_manager
        current = manager.compaction
        ordinary = CompactionSettings(current.enabled, current.reserve_tokens, current.keep_recent_tokens)
        model = self._get_model()
        key = f"{model.provider}/{model.id}" if model is not None else None
        return for_model(ordinary, manager.compaction_model_overrides, key)

    def set_auto_compaction_enabled(self, enabled: bool) -> None:
        """Turn automatic compaction on or off (saved as ``compaction.enabled``)."""
        self._services.settings_manager.set_compaction_enabled(enabled)

    def get_context_usage(self) -> ContextUsage | None:
        messages = self._agent.state.messages
        model = limits_model(self._services.model_registry, self._get_model(), messages)
        return context_usage(model, self._session.get_branch(), messages)

    # -- events and checks ---------------------------------------------------------------------

    def on_event(self, event: AgentSessionEvent) -> None:
        """Pipeline listener: a new user message, or a reply that came through (not cut off by the
        output limit), allows one more overflow recovery."""
        user_started = isinstance(event, MessageStart) and isinstance(event.message, UserMessage)
        reply_done = (
            isinstance(event, MessageEnd)
            and isinstance(event.message, AssistantMessage)
            and event.message.stop_reason not in ("error", "length")
        )
        if user_started or reply_done:
            self._overflow_attempted = False

    async def on_run_end(self, event: AgentEnd) -> bool:
        """Run-end check: compact if the run's last reply calls for it (never after an abort)."""
        if self._manual:
            return False
        message = _last_assistant(event.messages)
        if message is None:
            return False
        self._in_worker = True
        try:
            await self._check(message, skip_aborted=True, may_continue=True)
        finally:
            self._in_worker = False
        return False

    async def check_before_prompt(self) -> None:
        """Before a prompt: compact if the last reply (aborted ones included) calls for it. The
        prompt that follows carries the work on, so nothing is continued automatically."""
        message = _last_assistant(self._agent.state.messages)
        if message is not None:
            await self._check(message, skip_aborted=False, may_continue=False)

    async def _check(self, message: AssistantMessage, *, skip_aborted: bool, may_continue: bool) -> None:
        settings = self.settings
        if not settings.enabled or (skip_aborted and message.stop_reason == "aborted"):
            return
        model = self._get_model()
        if model is not None and is_virtual_model(model):
            # Under a virtual selection the limits are those of the model that answered.
            model = self._services.model_registry.get_physical(message.provider, message.model)
        if model is None:
            return
        compacted_at = self._latest_compaction_ms()
        if compacted_at is not None and message.timestamp <= compacted_at:
            return  # usage measured before the latest compaction says nothing about now
        same_model = message.provider == model.provider and message.model == model.id
        overflow = same_model and is_context_overflow(message, model.context_window)
        # A reply cut off below the model's own output limit (pi 1.6): context pressure or the
        # provider cut it, so it leaves the context and the turn is compacted and retried once.
        truncated = same_model and not overflow and is_recoverable_length(message, model.max_tokens)
        if overflow or truncated:
            if message.stop_reason == "stop":
                # A reply that overflowed silently but finished is kept and not retried (pi 1.6).
                await self._run_auto("overflow", will_retry=False, may_continue=may_continue)
                return
            if self._overflow_attempted:
                self._from_extension = False
                await self._failed(
                    CompactionEnd(
                        "overflow",
                        None,
                        aborted=False,
                        will_retry=False,
                        error_message=OVERFLOW_RECOVERY_FAILED if overflow else TRUNCATED_RECOVERY_FAILED,
                    )
                )
                return
            self._overflow_attempted = True
            # The failed attempt leaves the context for good before the history is summarised
            # (pi 1.6). The compaction reports ``willRetry`` before a prompt too, as pi's does,
            # though there the prompt carries the work on instead of a retry.
            failed = message if await self._omit_failed_attempt(message) else None
            await self._run_auto("overflow", will_retry=True, may_continue=may_continue, failed_reply=failed)
            return
        if message.stop_reason == "error":
            estimate = estimate_context_tokens(self._agent.state.messages)
            if estimate.last_usage_index is None:
                return
            anchor = self._agent.state.messages[estimate.last_usage_index]
            if compacted_at is not None and anchor.timestamp <= compacted_at:
                return
            tokens = estimate.tokens
        else:
            tokens = calculate_context_tokens(message.usage)
        if should_compact(tokens, model.context_window, settings):
            await self._run_auto("threshold", will_retry=False, may_continue=may_continue)

    async def fit_for_route(self, model: Model) -> list[AgentMessage] | None:
        """Before a request a virtual model routed to ``model``: compact (reason ``threshold``)
        when the conversation exceeds that model's threshold, as pi 1.6 does, so a router that
        switches to a smaller window gets no overflow. The conversation after the compaction, or
        ``None`` when nothing was compacted."""
        settings = self.settings
        if not settings.enabled or model.context_window <= 0 or self._manual or self.is_compacting:
            return None
        tokens = estimate_context_tokens(self._agent.state.messages).tokens
        if not should_compact(tokens, model.context_window, settings):
            return None
        await self._pipeline.catch_up()  # the run's messages are in the session first
        before = self._latest_compaction_id()
        await self._run_auto("threshold", will_retry=False, may_continue=False)
        if self._latest_compaction_id() == before:
            return None  # it failed or found nothing to compact: the request goes as it is
        return list(self._agent.state.messages)

    async def before_next_turn(self, context: AgentContext) -> list[AgentMessage] | None:
        """The agent loop's ``NextTurnPreparer``: between two turns of a run (after the tool
        results, before the next request), compact (reason ``threshold``, no retry) when the
        conversation, measured as pi 1.6 does (the last reply's usage plus estimates of what came
        after), exceeds the selected model's threshold; the next request then carries the
        compacted conversation. A virtual selection is checked before its routed request instead
        (``fit_for_route``). The conversation after the compaction, or ``None`` when nothing was
        compacted: a failed or stopped compaction lets the run go on as it was."""
        model = self._get_model()
        if model is None or is_virtual_model(model) or model.context_window <= 0:
            return None
        settings = self.settings
        if not settings.enabled or self._manual or self.is_compacting:
            return None
        await self._pipeline.catch_up()  # the run's messages are in the session first
        messages = self._session.build_session_context(system_messages=True).messages
        tokens = estimate_projected_context_tokens(messages, self._session.get_branch()).tokens
        if not should_compact(tokens, model.context_window, settings):
            return None
        before = self._latest_compaction_id()
        await self._run_auto("threshold", will_retry=False, may_continue=False)
        if self._latest_compaction_id() == before:
            return None
        return list(self._agent.state.messages)

    async def _omit_failed_attempt(self, message: AssistantMessage) -> bool:
        """Leave a failed attempt (an overflow error, a cut-off reply) out of the context for good:
        the session's ``omit`` writes a ``context_edit`` entry removing it and one for each result
        of a tool call it made (a result without its call would make every later request fail);
        each is announced (``entry_appended``) and the agent's messages are rebuilt from the
        session, which keeps the reply itself. ``False`` when nothing was written (the reply is
        not in the session)."""
        await self._pipeline.catch_up()
        appended = self._omit(message) if self._omit is not None else []
        if not appended:
            return False
        for edit in appended:
            await self._emit(EntryAppended(edit))
        self._agent.state.messages = self._session.build_session_context(system_messages=True).messages
        return True

    def _latest_compaction_id(self) -> str | None:
        entry = next(
            (e for e in reversed(self._session.get_branch()) if isinstance(e, CompactionEntry)), None
        )
        return entry.id if entry is not None else None

    def _latest_compaction_ms(self) -> int | None:
        for entry in reversed(self._session.get_branch()):
            if isinstance(entry, CompactionEntry):
                return ms_from_iso(entry.timestamp) or 0
        return None

    # -- automatic compaction ------------------------------------------------------------------

    async def _run_auto(
        self,
        reason: CompactionReason,
        *,
        will_retry: bool,
        may_continue: bool = True,
        failed_reply: AssistantMessage | None = None,
    ) -> None:
        """Compact for ``reason``; with ``will_retry`` and ``may_continue``, continue the run
        afterwards (a router sees ``failed_reply``, or the dropped overflow error, as the failed
        attempt). Without ``may_continue`` (before a prompt) nothing is continued: the prompt
        replaces the retry, as in pi 1.6."""
        from tau.compaction.prepare import prepare_compaction

        # As pi 1.6: with nothing to summarise (or no model), no compaction starts, whatever the
        # reason: no events, nothing retried.
        preparation = prepare_compaction(self._session.get_branch(), self.settings)
        if preparation is None or self._get_model() is None:
            return
        await self._emit(CompactionStart(reason))
        controller = self._begin()
        try:
            request = await self._request(controller, "compaction", reason)
            if request is None:
                await self._emit(CompactionEnd(reason, None, aborted=False, will_retry=False))
                return
            saved = await self._summarize_and_save(
                preparation, request, None, controller, reason=reason, will_retry=will_retry
            )
        except (CompactionAbortedError, CompactionCancelledError):
            await self._failed(CompactionEnd(reason, None, aborted=True, will_retry=False))
            return
        except Exception as exc:
            prefix = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            await self._failed(
                CompactionEnd(reason, None, aborted=False, will_retry=False, error_message=f"{prefix}: {exc}")
            )
            return
        finally:
            self._end(controller)
        await self._emit(CompactionEnd(reason, saved, aborted=False, will_retry=will_retry))
        if will_retry and may_continue:
            self._drop_trailing_error()
            if failed_reply is not None:
                self._failed_reply = failed_reply
            self._schedule_continue()
        elif may_continue and self._agent.has_queued_messages():
            self._schedule_continue()

    async def _failed(self, end: CompactionEnd) -> None:
        """Report a compaction that failed or was stopped: ``compaction_end``, then
        ``session_compact_failed``."""
        await self._emit(end)
        await self.hooks.session_compact_failed(
            CompactionFailure(
                end.reason, end.error_message, end.aborted, end.will_retry, self._from_extension
            )
        )
        self._from_extension = False

    def _drop_trailing_error(self) -> None:
        messages = self._agent.state.messages
        if messages and isinstance(last := messages[-1], AssistantMessage) and last.stop_reason == "error":
            messages.pop()
            self._failed_reply = last

    def take_failed_reply(self) -> AssistantMessage | None:
        """The overflowed reply the retry after an overflow compaction dropped, once (a virtual
        model's router sees it as ``request.failed``)."""
        failed, self._failed_reply = self._failed_reply, None
        return failed

    def _schedule_continue(self) -> None:
        self._continuation = asyncio.get_running_loop().create_task(self._continue_later())

    async def _continue_later(self) -> None:
        await asyncio.sleep(self.continue_delay_s)
        await self._agent.wait_for_idle()
        try:
            await self._agent.continue_()
        except (AgentBusyError, ValueError):
            return  # the user started a run meanwhile, or there is nothing to continue from
        await self._pipeline.drain()

    async def wait_for_continuation(self, settle: Callable[[], Awaitable[None]] | None = None) -> None:
        """Return once no automatic continue is pending or running; ``settle`` is awaited after
        each one (auto-retry's wait), since a continued run may end in a retry and vice versa."""
        while self._continuation is not None:
            task = self._continuation
            await asyncio.wait([task])
            if self._continuation is task:
                self._continuation = None
            if settle is not None:
                await settle()

    def cancel_continuation(self) -> None:
        """Forget an automatic continue that has not started its run yet (the user aborted)."""
        task = self._continuation
        if task is not None and not task.done() and not self._agent.is_running:
            task.cancel()

    # -- manual compaction ---------------------------------------------------------------------

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult:
        """Stop the running turn, then summarise the branch now (``/compact [instructions]``).

        Raises ``NoModelError`` / ``MissingAuthError`` without a usable model,
        ``NothingToCompactError`` when there is nothing to summarise: no message, everything
        still kept by ``keepRecentTokens``, or a branch ending in a compaction (no model call, no
        entry: pi 1.6's refusal),
        ``CompactionCancelledError`` / ``CompactionAbortedError`` when stopped, and
        ``SummarizationError`` when the summariser fails; the session is unchanged in every case.
        """
        if self.is_compacting:
            raise CompactionError("A compaction is already running")
        self._manual = True
        try:
            await self._abort_run()
            self.cancel_continuation()
            self._require_model()
            await self._emit(CompactionStart("manual"))
            controller = self._begin()
            try:
                request = await self._require_request(controller, "compaction", "manual")
                path = self._session.get_branch()
                from tau.compaction.prepare import nothing_to_compact_reason, prepare_compaction

                preparation = prepare_compaction(path, self.settings)
                if preparation is None:
                    raise NothingToCompactError(nothing_to_compact_reason(path))
                saved = await self._summarize_and_save(preparation, request, custom_instructions, controller)
            except (CompactionAbortedError, CompactionCancelledError):
                await self._failed(CompactionEnd("manual", None, aborted=True, will_retry=False))
                raise
            except Exception as exc:
                message = f"Compaction failed: {exc}"
                await self._failed(
                    CompactionEnd("manual", None, aborted=False, will_retry=False, error_message=message)
                )
                raise
            finally:
                self._end(controller)
            await self._emit(CompactionEnd("manual", saved, aborted=False, will_retry=False))
            return saved
        finally:
            self._manual = False

    def abort(self) -> None:
        """Stop a running compaction or branch summary (manual or automatic), and forget an
        automatic continue that has not started."""
        if self._controller is not None:
            self._controller.abort()
        self.cancel_continuation()

    # -- shared steps --------------------------------------------------------------------------

    def _begin(self) -> AbortController:
        controller = AbortController()
        self._controller = controller
        return controller

    def _end(self, controller: AbortController) -> None:
        if self._controller is controller:
            self._controller = None

    def _require_model(self) -> Model:
        """The current model, or ``NoModelError`` / ``MissingAuthError`` saying what to configure."""
        model = self._get_model()
        problem = auth_error(self._services.model_registry, model)
        if model is None:
            raise NoModelError(problem or "No model selected")
        if problem is not None:
            raise MissingAuthError(problem)
        return model

    async def _require_request(
        self, controller: AbortController, source: SummarizationSource, reason: CompactionReason | None
    ) -> SummaryRequest:
        request = await self._request(controller, source, reason)
        if request is None:
            model = self._require_model()
            raise MissingAuthError(f'The credentials for provider "{model.provider}" could not be resolved')
        return request

    async def _request(
        self, controller: AbortController, source: SummarizationSource, reason: CompactionReason | None
    ) -> SummaryRequest | None:
        """How to call the current model, or ``None`` without a model or usable credentials. A
        virtual model is routed first (``direct``): the summary is sized for the model it gets.
        A routing failure raises."""
        model = self._get_model()
        registry = self._services.model_registry
        if model is None or auth_error(registry, model) is not None:
            return None
        level = self._agent.state.thinking_level
        if is_virtual_model(model):
            if self.route_direct is None:
                return None
            model, level = await self.route_direct(model, level, controller.signal)
        auth = registry.get_api_key_and_headers(model)
        if auth.error is not None:
            return None
        from tau.compaction.summarize import SummaryRequest

        return SummaryRequest(
            replace(model, base_url=auth.base_url) if auth.base_url else model,
            api_key=auth.api_key,
            headers=dict(auth.headers) or None,
            signal=controller.signal,
            thinking_level=level,
            retry=self._retry_policy(model, source, reason),
        )

    def _retry_policy(
        self, model: Model, source: SummarizationSource, reason: CompactionReason | None
    ) -> SummaryRetry | None:
        """The session's ``retry.*`` policy for summary requests, reporting each step as a
        ``summarization_retry_*`` event; ``None`` when retries are off."""
        settings = self._services.settings_manager.retry
        if not settings.enabled or settings.max_retries <= 0:
            return None

        async def scheduled(attempt: int, max_attempts: int, delay_ms: int, error: str) -> None:
            await self._emit(SummarizationRetryScheduled(attempt, max_attempts, delay_ms, error))

        async def attempt_start() -> None:
            await self._emit(SummarizationRetryAttemptStart(source, reason))

        async def finished() -> None:
            await self._emit(SummarizationRetryFinished())

        from tau.compaction.retry import SummaryRetry

        return SummaryRetry(
            max_retries=settings.max_retries,
            base_delay_ms=settings.base_delay_ms,
            max_delay_ms=settings.provider_max_retry_delay_ms,
            is_transient=lambda reply: is_retryable_error(reply, model.context_window),
            on_scheduled=scheduled,
            on_attempt_start=attempt_start,
            on_finished=finished,
        )

    async def _summarize_and_save(
        self,
        preparation: CompactionPreparation,
        request: SummaryRequest,
        custom_instructions: str | None,
        controller: AbortController,
        *,
        reason: CompactionReason = "manual",
        will_retry: bool = False,
    ) -> CompactionResult:
        from tau.compaction.file_ops import FileDetails
        from tau.compaction.summarize import CompactionResult, compact

        branch = self._session.get_branch()
        self._from_extension = False
        hooked = await self.hooks.session_before_compact(
            BeforeCompactEvent(
                preparation, branch, custom_instructions, controller.signal, reason, will_retry
            )
        )
        if hooked is not None and hooked.cancel:
            raise CompactionCancelledError("Compaction cancelled")
        record = hooked.compaction if hooked is not None else None
        from_extension = self._from_extension = record is not None
        if record is None:
            conversation = await self.last_request() if self.last_request is not None else None
            record = await compact(
                preparation, request, custom_instructions=custom_instructions, conversation=conversation
            )
        if controller.signal.aborted:
            raise CompactionAbortedError("Compaction aborted")
        details = record.details_json()
        entry_id = self._session.append_compaction(
            record.summary,
            record.first_kept_entry_id,
            record.tokens_before,
            details,
            from_extension,  # pi writes fromHook: false too
            record.usage if isinstance(record, CompactionResult) else None,
        )
        result = (
            record
            if isinstance(record, CompactionResult)
            else CompactionResult(
                record.summary,
                record.first_kept_entry_id,
                record.tokens_before,
                FileDetails.from_json(details),
            )
        )
        self._agent.state.messages = self._session.build_session_context(system_messages=True).messages
        after = sum(estimate_tokens(message) for message in self._agent.state.messages)
        result = replace(result, estimated_tokens_after=after)
        entry = self._session.get_entry(entry_id)
        assert isinstance(entry, CompactionEntry)
        await self.hooks.session_compact(entry, from_extension, reason, will_retry)
        return result

    async def _emit(self, event: AgentSessionEvent) -> None:
        """Deliver a session event in order: at once inside the pipeline's worker (a run-end
        check), else after whatever is queued before it."""
        if self._in_worker:
            await self._pipeline.notify_now(event)
        else:
            self._pipeline.enqueue(event)
            await self._pipeline.drain()

    # -- moving in the tree --------------------------------------------------------------------

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigateTreeResult:
        """Move the session's leaf to ``target_id`` (spec 40 §10.1), with a summary of the branch
        left behind when ``summarize``. Navigating to a user message moves to its parent and
        returns its text for the input box. Raises ``EntryNotFoundError`` for an unknown entry,
        ``NoModelError`` when a summary is wanted without a usable model, ``SummarizationError``
        when the summary fails; an aborted summary cancels the move."""
        old_leaf = self._session.get_leaf_id()
        if target_id == old_leaf:
            return NavigateTreeResult()
        target = self._session.get_entry(target_id)
        if target is None:
            raise EntryNotFoundError(target_id)
        if summarize:
            self._require_model()
        from tau.compaction.branch_summary import collect_entries_for_branch_summary

        collected = collect_entries_for_branch_summary(self._session, old_leaf, target_id)
        hooked = await self.hooks.session_before_tree(
            BeforeTreeEvent(
                target_id,
                old_leaf,
                collected.common_ancestor_id,
                collected.entries,
                summarize,
                custom_instructions,
                replace_instructions,
                label,
            )
        )
        if hooked is not None:
            if hooked.cancel:
                return NavigateTreeResult(cancelled=True)
            custom_instructions = hooked.custom_instructions or custom_instructions
            if hooked.replace_instructions is not None:
                replace_instructions = hooked.replace_instructions
            label = hooked.label or label

        summary_text: str | None = None
        details: object = None
        usage: Usage | None = None
        from_extension = False
        if summarize and hooked is not None and hooked.summary is not None:
            summary_text, details, from_extension = hooked.summary, hooked.details, True
        elif summarize and collected.entries:
            outcome = await self._branch_summary(collected.entries, custom_instructions, replace_instructions)
            if outcome.aborted:
                return NavigateTreeResult(cancelled=True, aborted=True)
            if outcome.error is not None:
                raise SummarizationError(outcome.error)
            summary_text = outcome.summary
            details = outcome.details.to_json() if outcome.details is not None else None
            usage = outcome.usage

        new_leaf, editor_text = _landing(target)
        summary_entry: BranchSummaryEntry | None = None
        if summary_text is not None:
            summary_id = self._session.branch_with_summary(
                new_leaf, summary_text, details, from_extension, usage
            )
            found = self._session.get_entry(summary_id)
            assert isinstance(found, BranchSummaryEntry)
            summary_entry = found
            if label:
                self._session.append_label_change(summary_id, label)
        else:
            if new_leaf is None:
                self._session.reset_leaf()
            else:
                self._session.branch(new_leaf)
            if label:
                self._session.append_label_change(target_id, label)
        self._agent.state.messages = self._session.build_session_context(system_messages=True).messages
        await self.hooks.session_tree(self._session.get_leaf_id(), old_leaf, summary_entry, from_extension)
        return NavigateTreeResult(editor_text=editor_text, summary_entry=summary_entry)

    async def _branch_summary(
        self, entries: list[SessionEntry], custom_instructions: str | None, replace_instructions: bool
    ) -> BranchSummaryResult:
        controller = self._begin()
        try:
            request = await self._require_request(controller, "branchSummary", None)
            from tau.compaction.branch_summary import generate_branch_summary

            return await generate_branch_summary(
                entries,
                request,
                reserve_tokens=self._services.settings_manager.branch_summary_reserve_tokens,
                custom_instructions=custom_instructions,
                replace_instructions=replace_instructions,
            )
        finally:
            self._end(controller)


def _landing(target: SessionEntry) -> tuple[str | None, str | None]:
    """Where the leaf goes for a target, and the text to put back in the input box: a user message
    or an extension message is re-typed, so the leaf goes to its parent."""
    if isinstance(target, MessageEntry) and isinstance(target.message, UserMessage):
        return target.parent_id, _text(target.message.content)
    if isinstance(target, CustomMessageEntry):
        return target.parent_id, _text(target.content)
    return target.id, None


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def _last_assistant(messages: list[AgentMessage]) -> AssistantMessage | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
