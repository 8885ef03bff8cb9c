"""What a session's entries cost: the usage every entry records, for token and cost totals.

As in pi 1.x, totals count every entry of the file (all branches): assistant replies, tool results
that report usage (a tool that called a model), ``usage`` entries (such as cache warming) and the
usage of making compaction and branch summaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tau.ai.types import AssistantMessage, ToolResultMessage, Usage
from tau.session.entries import BranchSummaryEntry, CompactionEntry, MessageEntry, SessionEntry, UsageEntry


def entry_usage(entry: SessionEntry) -> Usage | None:
    """The usage ``entry`` records, if any."""
    if isinstance(entry, UsageEntry | CompactionEntry | BranchSummaryEntry):
        return entry.usage
    if not isinstance(entry, MessageEntry):
        return None
    if isinstance(entry.message, AssistantMessage):
        return entry.message.usage
    if isinstance(entry.message, ToolResultMessage) and entry.message.usage is not None:
        return entry.message.usage
    if isinstance(entry.message, ToolResultMessage) and entry.raw is not None:
        # A line written before tool results had a usage field kept it in the raw line.
        raw = entry.raw.get("message")
        usage = raw.get("usage") if isinstance(raw, dict) else None
        if isinstance(usage, dict):
            return Usage.from_json(usage)
    return None


def usages(entries: Iterable[SessionEntry]) -> Iterator[Usage]:
    """The usage of each entry that records one, in order."""
    for entry in entries:
        usage = entry_usage(entry)
        if usage is not None:
            yield usage


def usage_by_model(entries: Iterable[SessionEntry]) -> list[tuple[str, float, int]]:
    """``(provider/model, cost, tokens)`` per model that answered (its ``responseModel`` when the
    provider named one), the usage of tools and summaries as ``Tools/summaries``; costliest first,
    as pi 1.6's ``/session`` lists them."""
    totals: dict[str, tuple[float, int]] = {}
    for entry in entries:
        usage = entry_usage(entry)
        if usage is None:
            continue
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            key = f"{entry.message.provider}/{entry.message.response_model or entry.message.model}"
        elif isinstance(entry, UsageEntry):
            key = f"{entry.provider}/{entry.model}"
        else:
            key = "Tools/summaries"
        cost, tokens = totals.get(key, (0.0, 0))
        counted = usage.input + usage.output + usage.cache_read + usage.cache_write
        totals[key] = (cost + usage.cost.total, tokens + counted)
    found = [(key, cost, tokens) for key, (cost, tokens) in totals.items() if cost > 0 or tokens > 0]
    return sorted(found, key=lambda item: -item[1])
