"""pi 1.6's cache notices (``showCacheMissNotices``, off by default): a reply that paid again for
prompt tokens the previous request had cached ("Cache miss: 25k tokens re-billed (~$0.12)"; "after
model switch" or "after 7m idle" when that is why), and what a compaction or branch summary cost.

Only facts the session records count: the previous request's prompt size, its model and time, and
whether the provider ever reported caching. After a compaction or branch summary the context is new
and nothing is counted; a cache refresh (a ``cache_warm`` usage entry) counts as a request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from tau.ai.types import AssistantMessage, Usage
from tau.modes.interactive.render.format import format_tokens
from tau.session.entries import BranchSummaryEntry, CompactionEntry, MessageEntry, SessionEntry, UsageEntry

__all__ = [
    "CacheMiss",
    "cache_warmed_notice",
    "compaction_cost_notice",
    "detect_cache_miss",
    "miss_notice",
    "restored_miss_notices",
]

CACHE_TTL_MS = 5 * 60 * 1000
"""An idle gap past Anthropic's default cache lifetime is named as the likely cause."""
_NOISE_FLOOR_TOKENS = 1024
"""A miss this small is the granularity of cache breakpoints, not a miss."""


class CacheMiss(NamedTuple):
    missed_tokens: int
    missed_cost: float
    idle_ms: int
    model_changed: bool


class _Request(NamedTuple):
    prompt_tokens: int
    model_key: str
    timestamp_ms: int
    reported_cache: bool


def _prompt_tokens(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


def _previous(entries: Sequence[SessionEntry], until: AssistantMessage) -> _Request | None:
    """The request before ``until`` (its entry, if already written, ends the scan)."""
    from tau.session.ids import ms_from_iso

    previous: _Request | None = None
    for entry in entries:
        if isinstance(entry, CompactionEntry | BranchSummaryEntry):
            previous = None  # the context changed on purpose: the next prompt is new, not re-billed
        elif isinstance(entry, UsageEntry) and entry.kind == "cache_warm":
            if _prompt_tokens(entry.usage) > 0:
                key = f"{entry.provider}/{entry.model}"
                when = ms_from_iso(entry.timestamp) or 0
                previous = _Request(_prompt_tokens(entry.usage), key, when, True)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            message = entry.message
            if message is until or message == until:
                break
            reported = previous.reported_cache if previous is not None else False
            if _prompt_tokens(message.usage) > 0:
                reported = reported or message.usage.cache_read + message.usage.cache_write > 0
                key = f"{message.provider}/{message.model}"
                previous = _Request(_prompt_tokens(message.usage), key, message.timestamp, reported)
    return previous


def detect_cache_miss(
    entries: Sequence[SessionEntry], message: AssistantMessage, cache_read_price: float = 0.0
) -> CacheMiss | None:
    """The prompt tokens ``message`` paid for again though the request before had them cached;
    ``None`` on a first request, after a compaction, where caching was never reported, or below
    the noise floor. ``cache_read_price`` is the model's price per million cached tokens, for a
    reply that read nothing from the cache."""
    previous = _previous(entries, message)
    usage = message.usage
    prompt = _prompt_tokens(usage)
    if (
        previous is None
        or prompt <= 0
        or (usage.cache_read + usage.cache_write == 0 and not previous.reported_cache)
    ):
        return None
    missed = min(previous.prompt_tokens, prompt) - usage.cache_read
    if missed <= _NOISE_FLOOR_TOKENS:
        return None
    paid = usage.input + usage.cache_write
    paid_rate = (usage.cost.input + usage.cost.cache_write) / paid if paid > 0 else 0.0
    read_rate = (
        usage.cost.cache_read / usage.cache_read if usage.cache_read > 0 else cache_read_price / 1_000_000
    )
    return CacheMiss(
        missed,
        missed * max(0.0, paid_rate - read_rate),
        max(0, message.timestamp - previous.timestamp_ms),
        f"{message.provider}/{message.model}" != previous.model_key,
    )


def restored_miss_notices(
    entries: Sequence[SessionEntry], cache_read_price: Callable[[str, str], float]
) -> Callable[[object], str | None]:
    """For a session drawn again (resumed, forked, moved in ``/tree``): each reply's cache-miss
    line, worked out again from the entries as pi does (the lines are not stored)."""
    notices: dict[tuple[int, str, str], str] = {}
    for entry in entries:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            reply = entry.message
            miss = detect_cache_miss(entries, reply, cache_read_price(reply.provider, reply.model))
            if miss is not None and (text := miss_notice(miss)) is not None:
                notices[(reply.timestamp, reply.provider, reply.model)] = text

    def note(message: object) -> str | None:
        if not isinstance(message, AssistantMessage):
            return None
        return notices.get((message.timestamp, message.provider, message.model))

    return note


def miss_notice(miss: CacheMiss) -> str | None:
    """The transcript line for ``miss``; ``None`` when it is too small to mention (under 20k tokens
    and under $0.10)."""
    if miss.missed_tokens < 20_000 and miss.missed_cost < 0.1:
        return None
    cost = f" (~${miss.missed_cost:.2f})" if miss.missed_cost >= 0.01 else ""
    label = "Cache miss"
    if miss.model_changed:
        label = "Cache miss after model switch"
    elif miss.idle_ms >= CACHE_TTL_MS:
        label = f"Cache miss after {round(miss.idle_ms / 60_000)}m idle"
    return f"{label}: {format_tokens(miss.missed_tokens)} tokens re-billed{cost}"


def cache_warmed_notice(cost: float) -> str:
    """A cache refresh's line (pi's ``formatCacheWarmingUsage``): ``Cache warmed: $0.0012``, six
    decimals at most and three at least."""
    import re

    return "Cache warmed: $" + re.sub(r"(\.\d{3}\d*?)0+$", r"\1", f"{cost:.6f}")


def compaction_cost_notice(usage: Usage, *, branch_summary: bool = False) -> str:
    """What a compaction's (or branch summary's) own request was billed."""
    tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    cost = f" (~${usage.cost.total:.2f})" if usage.cost.total >= 0.01 else ""
    label = "Branch summary" if branch_summary else "Compaction"
    return f"{label}: {format_tokens(tokens)} tokens billed{cost}"
