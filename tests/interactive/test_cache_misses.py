"""pi 1.6's cache-miss arithmetic (``core/cache-stats.js``) over tau's session entries."""

from __future__ import annotations

from tau.ai.types import AssistantMessage, Cost, TextContent, Usage, UserMessage
from tau.modes.interactive.cache_misses import (
    CacheMiss,
    compaction_cost_notice,
    detect_cache_miss,
    miss_notice,
)
from tau.session import SessionManager


def _reply(
    *,
    input: int,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = "m",
    at: int = 0,
    cost: Cost | None = None,
) -> AssistantMessage:
    usage = Usage(input=input, output=10, cache_read=cache_read, cache_write=cache_write, cost=cost or Cost())
    return AssistantMessage(
        content=[TextContent("ok")],
        api="anthropic-messages",
        provider="p",
        model=model,
        usage=usage,
        timestamp=at,
    )


def _session(*replies: AssistantMessage) -> SessionManager:
    manager = SessionManager.in_memory("/p")
    for reply in replies:
        manager.append_message(UserMessage(content="q"))
        manager.append_message(reply)
    return manager


def test_a_reply_that_pays_again_for_a_cached_prompt_is_a_miss() -> None:
    paid = _reply(input=40000, at=60_000, cost=Cost(input=0.12))
    miss = detect_cache_miss(_session(_reply(input=100, cache_read=30000)).get_entries(), paid, 0.3)
    assert miss == CacheMiss(30100, 30100 * (0.12 / 40000 - 0.3 / 1_000_000), 60_000, False)
    assert miss_notice(miss) == "Cache miss: 30k tokens re-billed (~$0.08)"


def test_the_reply_itself_already_written_is_not_its_own_previous_request() -> None:
    first = _reply(input=100, cache_read=30000)
    paid = _reply(input=40000, at=400_000)
    manager = _session(first, paid)
    miss = detect_cache_miss(manager.get_entries(), paid)
    assert miss is not None and miss_notice(miss) == "Cache miss after 7m idle: 30k tokens re-billed"


def test_what_is_not_a_miss() -> None:
    never_cached = _session(_reply(input=30000)).get_entries()
    assert detect_cache_miss(never_cached, _reply(input=31000)) is None  # no caching ever reported
    assert detect_cache_miss([], _reply(input=31000)) is None  # the first request
    cached = _session(_reply(input=100, cache_read=30000)).get_entries()
    assert detect_cache_miss(cached, _reply(input=1000, cache_read=29500)) is None  # under the noise floor
    manager = _session(_reply(input=100, cache_read=30000))
    manager.append_compaction("summary", None, 30000)
    assert detect_cache_miss(manager.get_entries(), _reply(input=31000)) is None  # the context was replaced
    small = detect_cache_miss(_session(_reply(input=100, cache_read=5000)).get_entries(), _reply(input=5200))
    assert small is not None and miss_notice(small) is None  # too small to mention


def test_a_model_switch_is_named() -> None:
    miss = detect_cache_miss(
        _session(_reply(input=100, cache_read=30000)).get_entries(), _reply(input=31000, model="n")
    )
    assert miss is not None and miss_notice(miss) == "Cache miss after model switch: 30k tokens re-billed"


def test_what_a_compaction_cost() -> None:
    usage = Usage(input=12000, output=800, cache_read=0, cache_write=0, cost=Cost(total=0.05))
    assert compaction_cost_notice(usage) == "Compaction: 13k tokens billed (~$0.05)"
    assert (
        compaction_cost_notice(Usage(input=500), branch_summary=True) == "Branch summary: 500 tokens billed"
    )


def test_a_cache_refresh_line_as_pis() -> None:
    from tau.modes.interactive.cache_misses import cache_warmed_notice

    assert cache_warmed_notice(0.0012) == "Cache warmed: $0.0012"
    assert cache_warmed_notice(0.0) == "Cache warmed: $0.000"
    assert cache_warmed_notice(1.0) == "Cache warmed: $1.000"
    assert cache_warmed_notice(0.123456) == "Cache warmed: $0.123456"
