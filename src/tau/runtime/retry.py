"""Failover: a request that failed for a passing reason is sent again, at two levels.

Provider level (inside ``tau.ai.transport.http``): the same request bytes are re-sent after a retryable status
(429, 5xx, 529 overloaded) or a connection failure before any response, honouring ``Retry-After``
up to ``retry.provider.maxRetryDelayMs``. The agent sees one model call; nothing in its context
changes. ``retry.provider.maxRetries`` defaults to 0, as in pi 1.6: a transient failure is then
retried at the session level, where it is seen (``auto_retry_*`` events) and a quota or usage-limit
error is handled instead of re-sent.

Session level (``AutoRetry``, spec 30 §1.4): a run that ended on a transient error (a stream cut
mid-reply, an idle timeout, a status the provider level gave up on) is rolled back: the failed
reply leaves the agent's context (it stays in the session file), the session waits the server's
``Retry-After`` if it gave one, else ``baseDelayMs · 2^(n-1)``, never more than
``retry.provider.maxRetryDelayMs`` (a server asking for longer gets the error, as at the provider
level), and continues the agent, which rebuilds the request from its context.

The two levels add up rather than multiply: while a session-level retry chain is under way the
provider level is switched off, so a server that stays down sees at most
``1 + provider retries + session retries`` requests, not their product.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable

from tau.agent.agent import Agent, AgentBusyError
from tau.agent.config import StreamFn
from tau.agent.events import AgentEnd, MessageEnd
from tau.agent.messages import AgentMessage
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions
from tau.ai.overflow import is_context_overflow
from tau.ai.streaming import stream_simple
from tau.ai.types import AssistantMessage, Context, Model
from tau.config.settings import RetrySettings, SettingsManager
from tau.runtime.event_pipeline import EventPipeline
from tau.runtime.events import AutoRetryEnd, AutoRetryStart, EntryAppended
from tau.session.entries import SessionEntry

__all__ = [
    "DEFAULT_PROVIDER_MAX_RETRIES",
    "AutoRetry",
    "apply_provider_retry_settings",
    "is_retryable_error",
    "retry_after_ms",
]

DEFAULT_PROVIDER_MAX_RETRIES = 0
RETRY_CANCELLED = "Retry cancelled"

# Spec 30 §1.4, matched case-insensitively with the separators between words optional.
_TRANSIENT_PHRASES = (
    "overloaded",
    "provider returned error",
    "rate limit",
    "too many requests",
    "throttling",  # Bedrock's ThrottlingException, also sent as an event mid-stream
    "service unavailable",
    "server error",
    "internal error",
    "network error",
    "connection error",
    "connection refused",
    "connection lost",
    "websocket closed",
    "websocket error",
    "other side closed",
    "fetch failed",
    "upstream connect",
    "reset before headers",
    "socket hang up",
    "ended without",
    "http2 request did not get a response",
    "timeout",
    "timed out",
    "terminated",
    "retry delay",
)
_TRANSIENT_STATUSES = ("429", "500", "502", "503", "504", "529")
# Bad requests and refused credentials fail the same way every time, whatever else the text says.
_NEVER_RETRIED = r"^\s*(?:HTTP\s*)?(?:400|401|403)(?!\d)"
# The server's Retry-After, as ``tau.ai.transport.http`` words it in the error ("retry after 3 s").
_RETRY_AFTER = r"retry after (\d+(?:\.\d+)?(?:e[+-]?\d+)?) s\b"


@functools.cache
def _transient() -> re.Pattern[str]:
    """The transient-error pattern, compiled on the first error looked at (~3 ms: not at start-up)."""
    return re.compile(
        "|".join(
            [r"[\s_-]*".join(map(re.escape, phrase.split())) for phrase in _TRANSIENT_PHRASES]
            # A status on its own, not the digits inside "2500 tokens".
            + [rf"(?<!\d){status}(?!\d)" for status in _TRANSIENT_STATUSES]
        ),
        re.IGNORECASE,
    )


def is_retryable_error(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` ended its run on a transient provider error worth sending again.

    Context overflow is not (compaction handles it), nor are invalid requests and authentication
    failures (400, 401, 403).
    """
    error = message.error_message
    if message.stop_reason != "error" or not error:
        return False
    if is_context_overflow(message, context_window) or re.search(_NEVER_RETRIED, error, re.IGNORECASE):
        return False
    return _transient().search(error) is not None


def retry_after_ms(error_message: str) -> int | None:
    """The wait the server asked for (``Retry-After``) in milliseconds, if the error names one."""
    found = re.search(_RETRY_AFTER, error_message, re.IGNORECASE)
    return None if found is None else round(float(found.group(1)) * 1000)


def apply_provider_retry_settings(
    options: SimpleStreamOptions, settings: RetrySettings, *, provider_retries: bool = True
) -> None:
    """Give one request the provider client's limits of ``retry.provider.*``; without
    ``provider_retries`` the client sends it once (a session-level retry is in charge)."""
    if settings.provider_timeout_ms is not None:
        options.timeout_ms = settings.provider_timeout_ms
    if settings.provider_idle_timeout_ms is not None:
        options.idle_timeout_ms = settings.provider_idle_timeout_ms
    options.max_retry_delay_ms = settings.provider_max_retry_delay_ms
    max_retries = settings.provider_max_retries
    if max_retries is None:
        max_retries = DEFAULT_PROVIDER_MAX_RETRIES
    options.max_retries = max(0, max_retries) if provider_retries else 0


class AutoRetry:
    """The session-level retry of one session: decides at each run's end, emits
    ``auto_retry_start`` / ``auto_retry_end``, waits and continues the agent.

    Register ``on_message_end`` and ``on_run_end`` with the session's event pipeline, and route the
    agent's requests through ``wrap_stream_fn``.
    """

    def __init__(
        self,
        agent: Agent,
        settings: SettingsManager,
        pipeline: EventPipeline,
        omit: Callable[[AssistantMessage], list[SessionEntry]] | None = None,
    ) -> None:
        self._agent = agent
        self._settings = settings
        self._pipeline = pipeline
        self._omit = omit
        """Records that a failed attempt stays out of the context for good (pi 1.6's
        ``context_edit`` entries); returns the entries it appended, which are announced."""
        self._attempt = 0
        self._task: asyncio.Task[None] | None = None
        self._sleeping = False
        self._failed_reply: AssistantMessage | None = None

    @property
    def attempt(self) -> int:
        """The attempt of the chain under way (1 for the first retry); 0 when none is."""
        return self._attempt

    @property
    def is_retrying(self) -> bool:
        return self._attempt > 0

    @property
    def enabled(self) -> bool:
        return self._settings.retry.enabled

    def set_enabled(self, enabled: bool) -> None:
        """Turn session-level retries on or off (saved as ``retry.enabled``)."""
        self._settings.set_retry_enabled(enabled)

    # -- the provider level --------------------------------------------------------------------

    def wrap_stream_fn(self, inner: StreamFn | None) -> StreamFn:
        """``inner`` (default ``stream_simple``) with ``retry.provider.*`` applied to each request,
        read afresh each time; provider retries are off while a session-level chain runs."""
        send: StreamFn = inner or stream_simple

        def stream(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
            apply_provider_retry_settings(options, self._settings.retry, provider_retries=self._attempt == 0)
            return send(model, context, options)

        return stream

    # -- pipeline checks -----------------------------------------------------------------------

    async def on_message_end(self, event: MessageEnd) -> None:
        """A reply that came through ends the chain under way with success."""
        message = event.message
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            return
        if self._attempt > 0:
            attempt, self._attempt = self._attempt, 0
            await self._pipeline.notify_now(AutoRetryEnd(success=True, attempt=attempt))

    def will_retry(self, event: AgentEnd) -> bool:
        """Whether ``on_run_end`` is going to schedule a retry for this run (pi's ``willRetry`` on
        ``agent_end``, known before the listeners see the event)."""
        message = _last_assistant(event.messages)
        settings = self._settings.retry
        if message is None or not settings.enabled or self._attempt >= settings.max_retries:
            return False
        if not is_retryable_error(message, self._window()):
            return False
        asked_ms = retry_after_ms(message.error_message or "")
        cap_ms = settings.provider_max_retry_delay_ms
        return not (asked_ms is not None and cap_ms > 0 and asked_ms > cap_ms)

    async def on_run_end(self, event: AgentEnd) -> bool:
        """At ``agent_end``: schedule a retry if the run failed transiently (True: later run-end
        checks are skipped), or close the chain under way."""
        message = _last_assistant(event.messages)
        if message is None:
            return False
        settings = self._settings.retry
        wanted = settings.enabled and settings.max_retries > 0
        if not wanted or not is_retryable_error(message, self._window()):
            if self._attempt > 0:  # the chain met an abort or an error no retry can fix
                final_error = message.error_message or "Request was aborted"
                await self._pipeline.notify_now(self._close_chain(final_error))
            return False
        cap_ms = settings.provider_max_retry_delay_ms
        asked_ms = retry_after_ms(message.error_message or "")
        too_long = asked_ms is not None and cap_ms > 0 and asked_ms > cap_ms
        if self._attempt >= settings.max_retries or too_long:
            # A server asking for a longer wait than the cap gets the error, as at the provider level.
            if self._attempt > 0:
                await self._pipeline.notify_now(self._close_chain(message.error_message or ""))
            return False
        self._attempt += 1
        backoff_ms = min(settings.base_delay_ms * 2 ** (self._attempt - 1), settings.max_agent_delay_ms)
        delay_ms = asked_ms if asked_ms is not None else backoff_ms
        if cap_ms > 0:
            delay_ms = min(delay_ms, cap_ms)
        await self._pipeline.notify_now(
            AutoRetryStart(
                attempt=self._attempt,
                max_attempts=settings.max_retries,
                delay_ms=delay_ms,
                error_message=message.error_message or "",
            )
        )
        failed = self._drop_failed_reply()
        if failed is not None and self._omit is not None:
            # As pi 1.6: the file says the failed attempt is out of the context (a session resumed
            # later, by tau or pi, leaves it out too), announced right after auto_retry_start.
            for entry in self._omit(failed):
                await self._pipeline.notify_now(EntryAppended(entry))
        self._sleeping = True
        self._task = asyncio.get_running_loop().create_task(self._retry_after(delay_ms))
        return True

    # -- the chain -----------------------------------------------------------------------------

    async def wait(self) -> None:
        """Return once no retry is pending or running: after the whole chain and its events."""
        while self._task is not None:
            task = self._task
            await asyncio.wait([task])
            if self._task is task:
                self._task = None
        await self._pipeline.drain()

    def abort_retry(self) -> None:
        """Cancel a retry that is waiting out its delay: ``auto_retry_end`` with "Retry cancelled".
        The failed reply stays out of the agent's context, as in pi (the session file keeps it).
        A retried run already under way is stopped with ``abort()`` instead."""
        task = self._task
        if task is None or not self._sleeping:
            return
        self._sleeping = False
        task.cancel()
        self._pipeline.enqueue(self._close_chain(RETRY_CANCELLED))

    async def _retry_after(self, delay_ms: int) -> None:
        await asyncio.sleep(delay_ms / 1000)
        self._sleeping = False
        try:
            await self._agent.continue_()
        except (AgentBusyError, ValueError) as exc:  # a run started meanwhile, or nothing to continue
            self._pipeline.enqueue(self._close_chain(f"Retry not started: {exc}"))
        # The retried run's agent_end decides what follows (success, another retry, giving up).
        await self._pipeline.drain()

    def _close_chain(self, final_error: str) -> AutoRetryEnd:
        """Forget the chain under way; the ``auto_retry_end`` that reports its failure."""
        attempt, self._attempt = self._attempt, 0
        return AutoRetryEnd(success=False, attempt=attempt, final_error=final_error)

    def _drop_failed_reply(self) -> AssistantMessage | None:
        messages = self._agent.state.messages
        if messages and isinstance(last := messages[-1], AssistantMessage):
            messages.pop()
            self._failed_reply = last
            return last
        return None

    def take_failed_reply(self) -> AssistantMessage | None:
        """The reply the retry under way dropped, once (a virtual model's router sees it as
        ``request.failed``); ``None`` for any later request."""
        failed, self._failed_reply = self._failed_reply, None
        return failed

    def _window(self) -> int | None:
        model = self._agent.state.model
        return model.context_window if model is not None else None


def _last_assistant(messages: list[AgentMessage]) -> AssistantMessage | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
