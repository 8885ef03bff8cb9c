"""Sending a summary request again when it failed for a passing reason (an overloaded server, a
dropped stream), so that one hiccup does not cost the whole compaction or branch summary.

The policy is the session's ``retry.*`` settings; which errors count as passing is the caller's
classifier (the session's, shared with its own retries). Errors that would fail the same way
again, and aborts, come back at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from msgspec import Struct

from tau.ai.abort import AbortSignal
from tau.ai.types import AssistantMessage

__all__ = ["SummaryRetry", "with_retries"]


class SummaryRetry(Struct, frozen=True):
    """Up to ``max_retries`` more attempts, waiting ``base_delay_ms · 2^(n-1)`` (at most
    ``max_delay_ms``; 0 = no cap) before attempt ``n``. The callbacks report the chain:
    ``on_scheduled(attempt, max_attempts, delay_ms, error_message)`` before each wait,
    ``on_attempt_start()`` after it, ``on_finished()`` once when a chain that retried ends."""

    max_retries: int
    base_delay_ms: int
    is_transient: Callable[[AssistantMessage], bool]
    max_delay_ms: int = 60_000
    on_scheduled: Callable[[int, int, int, str], Awaitable[None]] | None = None
    on_attempt_start: Callable[[], Awaitable[None]] | None = None
    on_finished: Callable[[], Awaitable[None]] | None = None

    def delay_ms(self, attempt: int) -> int:
        delay: int = self.base_delay_ms * 2 ** max(0, attempt - 1)
        return min(delay, self.max_delay_ms) if self.max_delay_ms > 0 else delay


async def with_retries(
    produce: Callable[[], Awaitable[AssistantMessage]],
    retry: SummaryRetry | None,
    signal: AbortSignal | None,
) -> AssistantMessage:
    """The first reply of ``produce()`` that is not a passing error, or the last one when the
    retries run out. An abort during a wait returns the failed reply marked ``aborted``."""
    attempt = 0
    while True:
        reply = await produce()
        done = (
            retry is None
            or reply.stop_reason != "error"
            or attempt >= retry.max_retries
            or not retry.is_transient(reply)
        )
        if done:
            if attempt > 0 and retry is not None and retry.on_finished is not None:
                await retry.on_finished()
            return reply
        assert retry is not None
        attempt += 1
        delay_ms = retry.delay_ms(attempt)
        if retry.on_scheduled is not None:
            await retry.on_scheduled(
                attempt, retry.max_retries, delay_ms, reply.error_message or "Unknown error"
            )
        if not await _sleep(delay_ms, signal):
            if retry.on_finished is not None:
                await retry.on_finished()
            reply.stop_reason = "aborted"
            reply.error_message = None
            return reply
        if retry.on_attempt_start is not None:
            await retry.on_attempt_start()


async def _sleep(delay_ms: int, signal: AbortSignal | None) -> bool:
    """Wait ``delay_ms``; False when ``signal`` aborts first."""
    if signal is None:
        await asyncio.sleep(delay_ms / 1000)
        return True
    if signal.aborted:
        return False
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait([waiter], timeout=delay_ms / 1000)
    finally:
        waiter.cancel()
    return not signal.aborted
