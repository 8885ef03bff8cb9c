"""Deciding what a compaction summarises and keeps, without calling any model."""

from __future__ import annotations

from collections.abc import Sequence, Set

from msgspec import Struct

from tau.agent.messages import AgentMessage
from tau.compaction.cut_point import find_cut_point
from tau.compaction.file_ops import FileDetails, FileOperations
from tau.compaction.settings import CompactionSettings
from tau.compaction.tokens import estimate_projected_context_tokens
from tau.session.context import (
    build_session_context,
    entry_message,
    omitted_entry_ids,
    project_context_edits,
)
from tau.session.entries import CompactionEntry, SessionEntry

__all__ = ["CompactionPreparation", "nothing_to_compact_reason", "prepare_compaction"]


class CompactionPreparation(Struct):
    """Everything the summariser needs.

    ``messages_to_summarize`` is the history before the cut (since the previous compaction's kept
    part), ``turn_prefix_messages`` the opening of a turn the cut splits. ``tokens_before`` is the
    estimated size of the context now. ``previous_summary`` is merged into, not re-derived.
    """

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings


def prepare_compaction(
    path: Sequence[SessionEntry], settings: CompactionSettings
) -> CompactionPreparation | None:
    """What compacting the branch ``path`` (root first, every entry type) would summarise and keep,
    with its context edits applied (an omitted message is not summarised and never the cut).

    ``None`` when there is nothing to do: the branch ends in a compaction, it has no message, or
    the cut keeps every message so nothing would be summarised. Manual and automatic compaction
    alike then make no model call and add no entry (pi 1.6 refuses a manual one the same way);
    ``nothing_to_compact_reason`` says why there was nothing, for the user.
    """
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    # Measured as pi 1.6 does: the last reply's usage plus what follows, unless an edit or a
    # compaction came after that reply (then every message is estimated, the system prompt too).
    context = build_session_context(path, path[-1].id, system_messages=True).messages
    tokens_before = estimate_projected_context_tokens(context, path).tokens
    # What the edits took out is neither summarised nor counted; it stays in the list, as in pi
    # 1.6's projection, so the cut may land on (and pull in) an omitted attempt as pi's does.
    omitted = omitted_entry_ids(path)
    path = project_context_edits(path, keep_omitted=True)
    previous_index = _last_compaction_index(path)
    previous = path[previous_index] if previous_index >= 0 else None
    assert previous is None or isinstance(previous, CompactionEntry)
    start = 0
    if previous is not None:
        kept_from = next((i for i, e in enumerate(path) if e.id == previous.first_kept_entry_id), None)
        start = kept_from if kept_from is not None else previous_index + 1
    end = len(path)

    cut = find_cut_point(path, start, end, settings.keep_recent_tokens, omitted)
    if cut.first_kept_entry_index >= end:
        return None
    first_kept = path[cut.first_kept_entry_index]
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages(path[start:history_end], omitted)
    turn_prefix = (
        _messages(path[cut.turn_start_index : cut.first_kept_entry_index], omitted)
        if cut.is_split_turn
        else []
    )
    if not to_summarize and not turn_prefix:
        return None

    file_ops = FileOperations()
    if previous is not None and not previous.from_hook:
        carried = FileDetails.from_json(previous.details)
        if carried is not None:
            file_ops.add_details(carried)
    file_ops.add_messages(to_summarize)
    file_ops.add_messages(turn_prefix)
    return CompactionPreparation(
        first_kept_entry_id=first_kept.id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous.summary if previous is not None else None,
        file_ops=file_ops,
        settings=settings,
    )


def nothing_to_compact_reason(path: Sequence[SessionEntry]) -> str:
    """Why ``prepare_compaction`` found nothing, in the words ``/compact`` shows."""
    if path and isinstance(path[-1], CompactionEntry):
        return "Already compacted"
    return "Nothing to compact (session too small)"


def _last_compaction_index(path: Sequence[SessionEntry]) -> int:
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return -1


def _messages(entries: Sequence[SessionEntry], omitted: Set[str]) -> list[AgentMessage]:
    """The messages the entries contribute; compactions contribute none (their summary travels as
    ``previous_summary``), nor do the entries in ``omitted``."""
    out: list[AgentMessage] = []
    for entry in entries:
        if entry.id in omitted:
            continue
        message = entry_message(entry)
        if message is not None:
            out.append(message)
    return out
