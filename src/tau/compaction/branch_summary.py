"""Summaries of abandoned branches, for moving elsewhere in the session tree (``/tree``).

When the user leaves the current leaf for another point of the tree, the stretch of work between
the old leaf and the point both share can be summarised and hung under the new position, so the
model still knows what was tried there.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct, field

from tau.agent.messages import AgentMessage
from tau.ai.types import ToolResultMessage, Usage
from tau.compaction.errors import CompactionAbortedError
from tau.compaction.file_ops import FileDetails, FileOperations, format_file_lists
from tau.compaction.prompts import (
    BRANCH_SUMMARY_INSTRUCTIONS,
    BRANCH_SUMMARY_PREAMBLE,
    NO_BRANCH_CONTENT,
    conversation_block,
    with_focus,
)
from tau.compaction.serialize import serialize_conversation
from tau.compaction.settings import DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS
from tau.compaction.summarize import SummaryRequest, failure, reply_text, request_summary
from tau.compaction.tokens import estimate_tokens
from tau.context.convert import convert_to_llm
from tau.session.context import entry_message, project_context_edits
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from tau.session.ids import ms_from_iso
from tau.session.manager import SessionManager
from tau.session.messages import CompactionSummaryMessage

__all__ = [
    "BranchEntries",
    "BranchPreparation",
    "BranchSummaryResult",
    "collect_entries_for_branch_summary",
    "generate_branch_summary",
    "prepare_branch_entries",
]

_SQUEEZE_RATIO = 0.9
_DEFAULT_CONTEXT_WINDOW = 128_000


class BranchEntries(Struct, frozen=True):
    """The entries from the old leaf back to (not including) the point both branches share."""

    entries: list[SessionEntry]
    common_ancestor_id: str | None


def collect_entries_for_branch_summary(
    session: SessionManager, old_leaf_id: str | None, target_id: str
) -> BranchEntries:
    """What leaving ``old_leaf_id`` for ``target_id`` abandons, oldest first (compactions included)."""
    if old_leaf_id is None:
        return BranchEntries([], None)
    old_path = session.get_branch(old_leaf_id)
    on_old_path = {entry.id for entry in old_path}
    ancestor = next((e.id for e in reversed(session.get_branch(target_id)) if e.id in on_old_path), None)
    abandoned: list[SessionEntry] = []
    for entry in reversed(old_path):
        if entry.id == ancestor:
            break
        abandoned.append(entry)
    abandoned.reverse()
    return BranchEntries(abandoned, ancestor)


class BranchPreparation(Struct):
    messages: list[AgentMessage] = field(default_factory=list)
    file_ops: FileOperations = field(default_factory=FileOperations)
    total_tokens: int = 0


def _branch_message(entry: SessionEntry) -> AgentMessage | None:
    if isinstance(entry, MessageEntry):
        return None if isinstance(entry.message, ToolResultMessage) else entry.message
    if isinstance(entry, CompactionEntry):
        return CompactionSummaryMessage(entry.summary, entry.tokens_before, ms_from_iso(entry.timestamp) or 0)
    if isinstance(entry, (CustomMessageEntry, BranchSummaryEntry)):
        return entry_message(entry)
    return None


def prepare_branch_entries(entries: Sequence[SessionEntry], token_budget: int = 0) -> BranchPreparation:
    """The messages to summarise, newest kept first within ``token_budget`` (0: no limit).

    Tool results are left out (the calls say what was done). A summary entry that would overflow
    the budget still gets in while less than 90% of it is used: it stands for a lot of history.
    File lists carry over from earlier branch summaries made by tau or pi.
    """
    prepared = BranchPreparation()
    entries = project_context_edits(entries)  # the branch as its model saw it
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry) and not entry.from_hook:
            carried = FileDetails.from_json(entry.details)
            if carried is not None:
                prepared.file_ops.add_details(carried)
    newest_first: list[AgentMessage] = []
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        prepared.file_ops.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and prepared.total_tokens + tokens > token_budget:
            is_summary = isinstance(entry, (CompactionEntry, BranchSummaryEntry))
            if is_summary and prepared.total_tokens < _SQUEEZE_RATIO * token_budget:
                newest_first.append(message)
                prepared.total_tokens += tokens
            break
        newest_first.append(message)
        prepared.total_tokens += tokens
    newest_first.reverse()
    prepared.messages = newest_first
    return prepared


class BranchSummaryResult(Struct, frozen=True):
    """A summary with its file lists and what writing it cost, or why there is none (``aborted`` /
    ``error``)."""

    summary: str | None = None
    details: FileDetails | None = None
    usage: Usage | None = None
    aborted: bool = False
    error: str | None = None


async def generate_branch_summary(
    entries: Sequence[SessionEntry],
    request: SummaryRequest,
    *,
    reserve_tokens: int = DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummaryResult:
    """Summarise abandoned ``entries``; no model call when they hold no message.

    ``custom_instructions`` add a focus to the default instructions, or replace them entirely with
    ``replace_instructions``. The stored text starts with a preamble saying a branch was left.
    """
    budget = (request.model.context_window or _DEFAULT_CONTEXT_WINDOW) - reserve_tokens
    prepared = prepare_branch_entries(entries, budget)
    if not prepared.messages:
        return BranchSummaryResult(summary=NO_BRANCH_CONTENT, details=FileDetails())
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    else:
        instructions = with_focus(BRANCH_SUMMARY_INSTRUCTIONS, custom_instructions)
    text = conversation_block(serialize_conversation(convert_to_llm(prepared.messages))) + instructions
    try:
        reply = await request_summary(request, text)
    except CompactionAbortedError:
        return BranchSummaryResult(aborted=True)
    problem = failure(reply, "Branch summarization")
    if problem is not None:
        return BranchSummaryResult(error=problem)
    details = prepared.file_ops.details()
    summary = f"{BRANCH_SUMMARY_PREAMBLE}\n\n{reply_text(reply)}{format_file_lists(details)}"
    return BranchSummaryResult(summary=summary, details=details, usage=reply.usage)
