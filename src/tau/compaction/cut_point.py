"""Where to cut a branch: everything before the cut is summarised, everything from it on is kept.

The cut is driven by a token budget for the recent history, walking back from the newest entry.
It never lands on a tool result, which must stay right behind the call that asked for it. When the
cut falls inside a turn (after the user's message, between the model's steps) the turn is "split":
its early part gets a summary of its own so the kept part does not start without its cause.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence, Set

from msgspec import Struct

from tau.ai.types import AssistantMessage, UserMessage
from tau.compaction.tokens import estimate_tokens
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
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


def find_valid_cut_points(
    entries: Sequence[SessionEntry], start: int, end: int, omitted: Set[str] = frozenset()
) -> list[int]:
    """Indices in ``[start, end)`` where the kept history may start, ascending (an entry a context
    edit took out of the context, its id in ``omitted``, is none)."""
    return [i for i in range(start, end) if entries[i].id not in omitted and is_valid_cut_point(entries[i])]


def _starts_turn(entry: SessionEntry, omitted: Set[str] = frozenset()) -> bool:
    if entry.id in omitted:
        return False
    if isinstance(entry, (BranchSummaryEntry, CustomMessageEntry)):
        return True
    return isinstance(entry, MessageEntry) and isinstance(entry.message, (UserMessage, BashExecutionMessage))


def find_turn_start_index(
    entries: Sequence[SessionEntry], index: int, start: int, omitted: Set[str] = frozenset()
) -> int:
    """The nearest index ``<= index`` (not below ``start``) where a turn begins: a user message, a
    user's shell run, a branch summary or an extension message, not in ``omitted``; -1 if there
    is none."""
    for i in range(index, start - 1, -1):
        if _starts_turn(entries[i], omitted):
            return i
    return -1


def find_cut_point(
    entries: Sequence[SessionEntry],
    start: int,
    end: int,
    keep_recent_tokens: int,
    omitted: Set[str] = frozenset(),
) -> CutPoint:
    """The cut for ``entries[start:end]`` keeping at least ``keep_recent_tokens`` of recent messages.

    Walking back from ``end``, message tokens accumulate until the budget is reached at some index;
    the cut is the first valid cut point at or after it, or the last one when none follows (a
    trailing tool result larger than the budget keeps the call before it); everything is kept if
    the budget is never reached. Settings, labels and other entries right before the cut
    are pulled into the kept part, stopping at a message or a compaction.

    ``omitted`` names the entries a context edit took out of the context (pi 1.6's projection):
    they count no tokens, are no cut point and are pulled in like settings. When everything after
    the cut is such an omitted attempt (a failed reply and its edits), the cut moves onto it, so
    the turn it belongs to is split rather than kept whole, as pi's cut does.
    """
    cut_points = find_valid_cut_points(entries, start, end, omitted)
    if not cut_points:
        return CutPoint(start, -1, False)
    cut = cut_points[0]
    accumulated = 0
    exceeded = False
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if not isinstance(entry, MessageEntry) or entry.id in omitted:
            continue
        accumulated += estimate_tokens(entry.message)
        if accumulated >= keep_recent_tokens:
            exceeded = True
            at_or_after = bisect.bisect_left(cut_points, i)
            cut = cut_points[at_or_after] if at_or_after < len(cut_points) else cut_points[-1]
            break
    if exceeded and _only_omitted_attempts(entries[cut + 1 : end], omitted):
        cut += 1
    while cut > start and not _stops_pull(entries[cut - 1], omitted):
        cut -= 1
    cut_entry = entries[cut]
    if (
        isinstance(cut_entry, MessageEntry)
        and isinstance(cut_entry.message, UserMessage)
        and cut_entry.id not in omitted
    ):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start_index(entries, cut, start, omitted)
    return CutPoint(cut, turn_start, turn_start != -1)


def _only_omitted_attempts(suffix: Sequence[SessionEntry], omitted: Set[str]) -> bool:
    """Whether ``suffix`` holds an omitted reply and, besides, only omitted messages and entries
    that carry none (no compaction, no edit putting other content in place of a message)."""
    if not any(
        e.id in omitted and isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
        for e in suffix
    ):
        return False
    for entry in suffix:
        if isinstance(entry, CompactionEntry):
            return False
        if (
            isinstance(entry, ContextEditEntry)
            and entry.replacement is not None
            and entry.target_id not in omitted
        ):
            return False
        visible = isinstance(entry, MessageEntry) and not isinstance(entry.message, SystemMessage)
        visible = visible or isinstance(entry, (CustomMessageEntry, BranchSummaryEntry))
        if visible and entry.id not in omitted:
            return False
    return True


def _stops_pull(entry: SessionEntry, omitted: Set[str] = frozenset()) -> bool:
    """A conversation message or a compaction; a pi 1.x system message is pulled like a setting
    (the compaction's checkpoint carries it anyway), and so is an omitted message."""
    if entry.id in omitted:
        return False
    if isinstance(entry, MessageEntry):
        return not isinstance(entry.message, SystemMessage)
    return isinstance(entry, CompactionEntry)
