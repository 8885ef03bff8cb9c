"""Prompt-cache warming, as pi 1.6's ``cacheWarming`` setting (issue #31).

A provider keeps a prompt's cache entry for a while (the model's ``promptCache`` lifetime in
seconds, per retention tier: ``{"short": 300, "long": 3600}``). When a long tool run or a pause
between prompts would let it expire, the next request pays the whole prompt again. The warmer
re-sends the session's last request with a one-token output limit shortly before the entry
expires (at 90% of its lifetime, at least ten seconds early), which reads the entry and so keeps it,
as long as the refresh is expected to save money: the cost of a miss, weighted by the chance that
a real request comes before expiry (1 while the agent works, 0.15 when idle), must exceed the
refresh's own cost by $0.05. It stops after an hour from the real request (30 minutes when idle),
when the conversation moves on in a way that does not extend that request, and on ``cacheWarming``
``"off"`` (``"streaming"`` warms only while the agent runs; ``"idle"``, the default, also between
prompts). Each refresh is recorded as a ``usage`` entry of kind ``cache_warm`` (counted in the
session's totals, never in the context).
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from msgspec import Struct

from tau.agent._awaitable import resolve
from tau.agent.config import StreamFn
from tau.agent.messages import AgentMessage
from tau.ai.cost import calculate_cost
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, resolve_cache_retention
from tau.ai.types import AssistantMessage, Context, Model, Usage

CacheWarmingMode = Literal["off", "streaming", "idle"]
CACHE_WARMING_MODES: tuple[CacheWarmingMode, ...] = ("off", "streaming", "idle")
MAX_AGE_S = 60 * 60.0
MAX_IDLE_AGE_S = 30 * 60.0
MINIMUM_EXPECTED_SAVINGS = 0.05
IDLE_CONTINUATION_PROBABILITY = 0.15


def cache_ttl_s(model: Model, options: SimpleStreamOptions) -> float | None:
    """How long the cache entry a request writes lives, from the model's ``promptCache``."""
    retention = resolve_cache_retention(options.cache_retention)
    if retention == "none":
        return None
    seconds = (model.prompt_cache or {}).get(retention)
    return float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None


def warm_delay_s(ttl_s: float) -> float | None:
    """When to refresh: at 90% of the lifetime, at least ten seconds before it ends."""
    if ttl_s <= 10:
        return None
    return max(0.001, min(ttl_s * 0.9, ttl_s - 10))


def replayable(model: Model, options: SimpleStreamOptions) -> bool:
    """Whether a one-token replay keeps the cache entry: not for Anthropic thinking by budget,
    whose budget (part of the cache key) follows the output limit."""
    if not options.reasoning or model.api != "anthropic-messages":
        return True
    from tau.ai.providers.anthropic_compat import anthropic_compat

    compat = anthropic_compat(model)
    return compat.force_adaptive_thinking or compat.supports_mid_convo_effort


class WarmingDecision(Struct, frozen=True):
    phase: Literal["streaming", "idle"]
    warm_cost: float
    miss_cost: float
    continuation_probability: float
    expected_savings: float
    economics_available: bool

    @property
    def warm(self) -> bool:
        return self.economics_available and self.expected_savings >= MINIMUM_EXPECTED_SAVINGS


def evaluate(model: Model, prompt_tokens: int, phase: Literal["streaming", "idle"]) -> WarmingDecision:
    """Whether refreshing the entry of a ``prompt_tokens`` prompt pays for itself."""
    hit = _price(model, cache_read=prompt_tokens)
    miss = (
        _price(model, cache_write=prompt_tokens)
        if model.cost.cache_write > 0
        else _price(model, input=prompt_tokens)
    )
    warm_cost = _price(model, cache_read=prompt_tokens, output=1)
    miss_cost = max(0.0, miss - hit)
    probability = IDLE_CONTINUATION_PROBABILITY if phase == "idle" else 1.0
    return WarmingDecision(
        phase,
        warm_cost,
        miss_cost,
        probability,
        probability * miss_cost - warm_cost,
        prompt_tokens > 0 and (hit > 0 or miss > 0),
    )


def _price(
    model: Model, *, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
) -> float:
    usage = Usage(input=input, output=output, cache_read=cache_read, cache_write=cache_write)
    return calculate_cost(model, usage).total


class _Run(Struct):
    model: Model
    context: Context
    options: SimpleStreamOptions
    messages: tuple[AgentMessage, ...]  # the conversation the request was built from
    ttl_s: float
    delay_s: float
    started: float
    phase: Literal["streaming", "idle"] = "streaming"
    next_warm_at: float = 0.0
    deadline: float = 0.0
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task[None] | None = None


class WarmingStatus(Struct, frozen=True):
    state: Literal["inactive", "scheduled", "refreshing"]
    reason: str = ""
    next_warm_at: float | None = None  # time.time() of the next decision
    decision: WarmingDecision | None = None


class CacheWarmer:
    """Keeps the cache entry of the session's last request warm (module docstring)."""

    def __init__(
        self,
        mode: Callable[[], str],
        conversation: Callable[[], tuple[Model | None, Sequence[AgentMessage]]],
        prompt_tokens: Callable[[], int],
        record: Callable[[AssistantMessage], Awaitable[None]],
        decide: Callable[[WarmingDecision], Awaitable[str]] | None = None,
    ) -> None:
        """``conversation`` gives the current model and messages (a refresh goes out only while
        they extend the request's), ``prompt_tokens`` the size of the last real prompt, and
        ``record`` stores a refresh's usage; ``decide`` may overrule the decision before each
        refresh (extensions' ``cache_warming_decision``: ``"warm"`` or ``"stop"``)."""
        self._mode = mode
        self._conversation = conversation
        self._prompt_tokens = prompt_tokens
        self._record = record
        self._decide = decide
        self._run: _Run | None = None
        self._send: StreamFn | None = None
        self._inactive = WarmingStatus("inactive", "waiting for first request")

    @property
    def mode(self) -> CacheWarmingMode:
        mode = self._mode()
        for known in CACHE_WARMING_MODES:
            if mode == known:
                return known
        return "idle"

    def wrap(self, stream_fn: StreamFn) -> StreamFn:
        """``stream_fn`` that starts warming from each request it sends (refreshes go through it too)."""
        self._send = stream_fn

        def send(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
            self.start(model, context, options)
            return stream_fn(model, context, options)

        return send

    @property
    def status(self) -> WarmingStatus:
        if self.mode == "off":
            return WarmingStatus("inactive", "cache warming disabled")
        run = self._run
        if run is None:
            return self._inactive
        if not self._current(run):
            return WarmingStatus("inactive", "conversation context changed")
        decision = evaluate(run.model, self._prompt_tokens(), run.phase)
        if run.timer is None:
            return WarmingStatus("refreshing", decision=decision)
        return WarmingStatus("scheduled", next_warm_at=run.next_warm_at, decision=decision)

    def start(self, model: Model, context: Context, options: SimpleStreamOptions) -> None:
        """Keep the entry ``context`` writes warm, replacing any earlier run."""
        self._clear()
        if self.mode == "off":
            return self._stop("cache warming disabled")
        if not replayable(model, options):
            return self._stop("request cannot be replayed safely")
        ttl = cache_ttl_s(model, options)
        if ttl is None:
            return self._stop("cache lifetime unavailable")
        delay = warm_delay_s(ttl)
        if delay is None:
            return self._stop("the prompt cache lifetime is too short")
        replay = copy.copy(options)
        replay.max_tokens, replay.max_retries, replay.signal = 1, 0, None
        # A warming request neither starts nor continues an Anthropic message thread (as pi 1.6's).
        replay.extra = {**options.extra, "disable_continuation": True}
        _, messages = self._conversation()
        run = _Run(model, context, replay, tuple(messages), ttl, delay, time.time())
        self._run = run
        self._schedule(run)

    def on_agent_settled(self) -> None:
        """The agent stopped: warming goes on only with ``"idle"``, for up to 30 minutes."""
        run = self._run
        if run is None:
            return
        if self.mode != "idle":
            return self._stop("agent run settled")
        run.phase = "idle"
        if time.time() >= run.started + MAX_IDLE_AGE_S or run.next_warm_at > run.started + MAX_IDLE_AGE_S:
            self._stop("30-minute idle safety limit reached")

    def close(self) -> None:
        self._stop("the session ended")

    # -- internals -----------------------------------------------------------------------------

    def _clear(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            if run.timer is not None:
                run.timer.cancel()
            if run.task is not None and not run.task.done():
                run.task.cancel()

    def _stop(self, reason: str) -> None:
        self._clear()
        self._inactive = WarmingStatus("inactive", reason)

    def _schedule(self, run: _Run) -> None:
        now = time.time()
        run.next_warm_at = now + run.delay_s
        run.deadline = run.next_warm_at + (run.ttl_s - run.delay_s) / 2  # late is a full-price write
        limit = run.started + (MAX_IDLE_AGE_S if run.phase == "idle" else MAX_AGE_S)
        if run.next_warm_at > limit:
            return self._stop(
                "30-minute idle limit reached" if run.phase == "idle" else "one-hour limit reached"
            )
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._stop("no event loop")
        run.timer = loop.call_later(run.delay_s, self._fire, run)

    def _fire(self, run: _Run) -> None:
        run.timer = None
        if self._run is run:
            run.task = asyncio.ensure_future(self._refresh(run))

    def _current(self, run: _Run) -> bool:
        model, messages = self._conversation()
        if model is None or (model.provider, model.id) != (run.model.provider, run.model.id):
            return False
        if len(messages) < len(run.messages):
            return False
        return all(a is b for a, b in zip(run.messages, messages, strict=False))

    async def _refresh(self, run: _Run) -> None:
        if self._run is not run:
            return
        if self.mode == "off" or (self.mode == "streaming" and run.phase == "idle"):
            return self._stop("cache warming is off" if self.mode == "off" else "the agent run settled")
        if not self._current(run):
            return self._stop("the conversation changed")
        if time.time() > run.deadline:
            return self._stop("the refresh came too late")
        decision = evaluate(run.model, self._prompt_tokens(), run.phase)
        action = "warm" if decision.warm else "stop"
        if self._decide is not None:
            try:
                action = await self._decide(decision)
            except Exception:  # an extension's failure leaves tau's own decision
                action = "warm" if decision.warm else "stop"
            if self._run is not run:
                return
        if action != "warm":
            if decision.warm:
                return self._stop("stopped by an extension")
            reason = (
                "expected savings below $0.05" if decision.economics_available else "no prices for the model"
            )
            return self._stop(reason)
        try:
            send = self._send
            assert send is not None
            reply = await (await resolve(send(run.model, run.context, copy.copy(run.options)))).result()
            if self._run is not run:
                return
            if reply.stop_reason not in ("error", "aborted"):
                await self._record(reply)
        except asyncio.CancelledError:
            raise
        except Exception:  # best effort: a refresh must never disturb the session
            pass
        if self._run is run:
            self._schedule(run)
