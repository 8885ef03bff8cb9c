"""Provider limits shared by every worker of a run (setting ``batch.limits``).

``{"batch": {"limits": {"openai": {"concurrency": 4, "requestsPerMinute": 120}}}}``: at most 4
requests to the provider ``openai`` at once and 120 started in any minute, over all workers. One
``LimitBook`` in the driver holds the count; workers ask it before each request and give the slot
back when the response stream ends. A worker that dies has its slots given back by the driver.
A 429 or 5xx that still happens is retried by the session's own retries, each retry asking again.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections import deque
from collections.abc import Awaitable
from typing import Any, Protocol

from msgspec import Struct

from tau.agent.config import StreamFn
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions
from tau.ai.types import Context, Model

__all__ = ["LimitBook", "LimitClient", "ProviderLimit", "limited_stream_fn", "parse_limits"]

_POLL_SECONDS = 0.02


class ProviderLimit(Struct, frozen=True):
    concurrency: int | None = None
    requests_per_minute: int | None = None

    def to_wire(self) -> dict[str, int | None]:
        return {"concurrency": self.concurrency, "requestsPerMinute": self.requests_per_minute}


def parse_limits(value: object) -> tuple[dict[str, ProviderLimit], list[str]]:
    """The limits of the ``batch.limits`` setting, and a warning for each entry that is ignored."""
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return {}, ["batch.limits must be an object of provider names; ignored"]
    limits: dict[str, ProviderLimit] = {}
    warnings: list[str] = []
    for provider, entry in value.items():
        numbers: dict[str, int | None] = {}
        for key in ("concurrency", "requestsPerMinute"):
            number = entry.get(key) if isinstance(entry, dict) else None
            if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
                warnings.append(
                    f"batch.limits.{provider}.{key} must be a whole number of at least 1; ignored"
                )
                number = None
            numbers[key] = number
        if numbers["concurrency"] is None and numbers["requestsPerMinute"] is None:
            warnings.append(
                f"batch.limits.{provider} sets neither concurrency nor requestsPerMinute; ignored"
            )
            continue
        limits[provider] = ProviderLimit(numbers["concurrency"], numbers["requestsPerMinute"])
    return limits, warnings


class LimitBook:
    """The one place that counts requests in flight and started per provider (thread-safe)."""

    def __init__(self, limits: dict[str, dict[str, int | None]]) -> None:
        self._limits = {
            name: ProviderLimit(v.get("concurrency"), v.get("requestsPerMinute"))
            for name, v in limits.items()
        }
        self._lock = threading.Lock()
        self._in_flight: dict[str, list[str]] = {}
        self._started: dict[str, deque[float]] = {}

    def try_acquire(self, provider: str, holder: str) -> float:
        """Take a slot for ``holder``: 0 when taken, else the seconds worth waiting before asking again."""
        limit = self._limits.get(provider)
        if limit is None:
            return 0.0
        with self._lock:
            holders = self._in_flight.setdefault(provider, [])
            if limit.concurrency is not None and len(holders) >= limit.concurrency:
                return _POLL_SECONDS
            started = self._started.setdefault(provider, deque())
            now = time.monotonic()
            while started and started[0] <= now - 60:
                started.popleft()
            if limit.requests_per_minute is not None and len(started) >= limit.requests_per_minute:
                return max(_POLL_SECONDS, started[0] + 60 - now)
            holders.append(holder)
            started.append(now)
            return 0.0

    def release(self, provider: str, holder: str) -> None:
        with self._lock:
            holders = self._in_flight.get(provider, [])
            if holder in holders:
                holders.remove(holder)

    def release_holder(self, holder: str) -> None:
        """Give back every slot ``holder`` still has (its task ended or its process died)."""
        with self._lock:
            for holders in self._in_flight.values():
                while holder in holders:
                    holders.remove(holder)


class LimitClient(Protocol):
    """What a worker sees of the book: a local proxy, a Ray actor handle, or the book itself."""

    def try_acquire(self, provider: str, holder: str) -> float: ...

    def release(self, provider: str, holder: str) -> None: ...


def limited_stream_fn(inner: StreamFn, providers: set[str], client: LimitClient, holder: str) -> StreamFn:
    """``inner`` with a slot of the book taken for each request to a limited provider, and given
    back when the response ends (done, failed or abandoned)."""
    keep: set[asyncio.Task[None]] = set()

    async def release_after(stream: AssistantMessageEventStream, provider: str) -> None:
        try:
            await stream.result()
        finally:
            client.release(provider, holder)  # however the stream ended

    async def limited(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        provider = model.provider
        while (wait := client.try_acquire(provider, holder)) > 0:
            await asyncio.sleep(min(wait, 1.0))
        try:
            started: Any = inner(model, context, options)
            stream: AssistantMessageEventStream = await started if inspect.isawaitable(started) else started
        except BaseException:
            client.release(provider, holder)
            raise
        task = asyncio.ensure_future(release_after(stream, provider))
        keep.add(task)
        task.add_done_callback(keep.discard)
        return stream

    def stream(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
        if model.provider not in providers:
            return inner(model, context, options)
        return limited(model, context, options)

    return stream
