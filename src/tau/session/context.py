"""What the model sees of a session: the messages on the root → leaf path, compaction applied."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tau.ai.types import AssistantMessage
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from tau.session.ids import ms_from_iso
from tau.session.messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    SessionMessage,
)


class _Leaf(enum.Enum):
    LAST_ENTRY = enum.auto()


LAST_ENTRY = _Leaf.LAST_ENTRY
"""``build_session_context(entries, LAST_ENTRY)``: project the branch ending at the last entry."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """The model a session was last using: ``{provider, modelId}`` in pi."""

    provider: str
    model_id: str


@dataclass(slots=True)
class SessionContext:
    messages: list[SessionMessage] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None


def path_to(leaf: SessionEntry | None, by_id: Mapping[str, SessionEntry]) -> list[SessionEntry]:
    """Root-first list of the entries from the root down to ``leaf``; stops at a missing parent."""
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current = leaf
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id is not None else None
    path.reverse()
    return path


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | _Leaf | None = LAST_ENTRY,
    by_id: Mapping[str, SessionEntry] | None = None,
) -> SessionContext:
    """The context of the branch ending at ``leaf_id``.

    ``None`` means "before the first entry" (empty context); ``LAST_ENTRY`` or an unknown id means
    the last entry of ``entries``. Only the latest compaction on the path counts: its summary comes
    first, then the kept entries from ``first_kept_entry_id`` up to it, then everything after it.
    """
    if leaf_id is None or not entries:
        return SessionContext()
    if by_id is None:
        by_id = {entry.id: entry for entry in entries}
    leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
    path = path_to(leaf if leaf is not None else entries[-1], by_id)

    context = SessionContext()
    compaction_index = -1
    for index, entry in enumerate(path):
        if isinstance(entry, ThinkingLevelChangeEntry):
            context.thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            context.model = ModelRef(entry.provider, entry.model_id)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            context.model = ModelRef(entry.message.provider, entry.message.model)
        elif isinstance(entry, CompactionEntry):
            compaction_index = index

    messages = context.messages
    if compaction_index < 0:
        kept: Sequence[SessionEntry] = path
    else:
        compaction = path[compaction_index]
        assert isinstance(compaction, CompactionEntry)
        messages.append(
            CompactionSummaryMessage(compaction.summary, compaction.tokens_before, _ms(compaction.timestamp))
        )
        before = path[:compaction_index]
        first_kept = next((i for i, e in enumerate(before) if e.id == compaction.first_kept_entry_id), None)
        kept = (before[first_kept:] if first_kept is not None else []) + path[compaction_index + 1 :]
    for entry in kept:
        message = entry_message(entry)
        if message is not None:
            messages.append(message)
    return context


def entry_message(entry: SessionEntry) -> SessionMessage | None:
    """The message an entry contributes to the context, if any."""
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage(
            custom_type=entry.custom_type,
            content=entry.content,
            display=entry.display,
            details=entry.details,
            timestamp=_ms(entry.timestamp),
        )
    if isinstance(entry, BranchSummaryEntry) and entry.summary:
        return BranchSummaryMessage(entry.summary, entry.from_id, _ms(entry.timestamp))
    return None


def _ms(timestamp: str) -> int:
    ms = ms_from_iso(timestamp)
    return ms if ms is not None else 0
