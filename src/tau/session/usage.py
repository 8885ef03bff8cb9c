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
