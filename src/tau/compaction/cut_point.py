"""Where to cut a branch: everything before the cut is summarised, everything from it on is kept.

The cut is driven by a token budget for the recent history, walking back from the newest entry.
It never lands on a tool result, which must stay right behind the call that asked for it. When the
cut falls inside a turn (after the user's message, between the model's steps) the turn is "split":
its early part gets a summary of its own so the kept part does not start without its cause.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from msgspec import Struct

from tau.ai.types import UserMessage
from tau.compaction.tokens import estimate_tokens
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from tau.session.messages import BashExecutionMessage, SystemMessage

__all__ = [
    "CutPoint",
    "find_cut_point",
    "find_turn_start_index",
    "find_valid_cut_points",
    "is_valid_cut_point",
]

_CUTTABLE_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)


class CutPoint(Struct, frozen=True):
    """``first_kept_entry_index``: the first entry kept verbatim. ``turn_start_index``: where the
    turn containing the cut begins when the cut splits it (else -1)."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def is_valid_cut_point(entry: SessionEntry) -> bool:
    """Whether the kept history may start at ``entry``: a message other than a tool result, or a
    branch summary or extension message entry."""
    if isinstance(entry, MessageEntry):
        return entry.message.role in _CUTTABLE_ROLES
    return isinstance(entry, (BranchSummaryEntry, CustomMessageEntry))


def find_valid_cut_points(entries: Sequence[SessionEntry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where the kept history may start, ascending."""
    return [i for i in range(start, end) if is_valid_cut_point(entries[i])]


def _starts_turn(entry: SessionEntry) -> bool:
    if isinstance(entry, (BranchSummaryEntry, CustomMessageEntry)):
        return True
    return isinstance(entry, MessageEntry) and isinstance(entry.message, (UserMessage, BashExecutionMessage))


def find_turn_start_index(entries: Sequence[SessionEntry], index: int, start: int) -> int:
    """The nearest index ``<= index`` (not below ``start``) where a turn begins: a user message, a
    user's shell run, a branch summary or an extension message; -1 if there is none."""
    for i in range(index, start - 1, -1):
        if _starts_turn(entries[i]):
            return i
    return -1


def find_cut_point(
    entries: Sequence[SessionEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """The cut for ``entries[start:end]`` keeping at least ``keep_recent_tokens`` of recent messages.

    Walking back from ``end``, message tokens accumulate until the budget is reached at some index;
    the cut is the first valid cut point at or after it (everything is kept if the budget is never
    reached, or no valid point follows). Settings, labels and other entries right before the cut
    are pulled into the kept part, stopping at a message or a compaction.
    """
    cut_points = find_valid_cut_points(entries, start, end)
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if not isinstance(entry, MessageEntry):
            continue
        accumulated += estimate_tokens(entry.message)
        if accumulated >= keep_recent_tokens:
            at_or_after = bisect.bisect_left(cut_points, i)
            if at_or_after < len(cut_points):
                cut = cut_points[at_or_after]
            break
    while cut > start and not _stops_pull(entries[cut - 1]):
        cut -= 1
    cut_entry = entries[cut]
    if isinstance(cut_entry, MessageEntry) and isinstance(cut_entry.message, UserMessage):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start_index(entries, cut, start)
    return CutPoint(cut, turn_start, turn_start != -1)


def _stops_pull(entry: SessionEntry) -> bool:
    """A conversation message or a compaction; a pi 1.x system message is pulled like a setting
    (the compaction's checkpoint carries it anyway)."""
    if isinstance(entry, MessageEntry):
        return not isinstance(entry.message, SystemMessage)
    return isinstance(entry, CompactionEntry)
