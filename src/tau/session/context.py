"""What the model sees of a session: the messages on the root → leaf path, compaction and
context edits applied (pi's session projection)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec
from msgspec import Struct, field

from tau.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    content_from_json,
)
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
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
    SystemMessage,
    content_list_from_json,
    replay_system_messages,
)


class _Leaf(enum.Enum):
    LAST_ENTRY = enum.auto()


LAST_ENTRY = _Leaf.LAST_ENTRY
"""``build_session_context(entries, LAST_ENTRY)``: project the branch ending at the last entry."""


class ModelRef(Struct, frozen=True):
    """The model a session was last using: ``{provider, modelId}`` in pi."""

    provider: str
    model_id: str


class SessionContext(Struct):
    messages: list[SessionMessage | SystemMessage] = field(default_factory=list)
    """The conversation; system records are among it only when asked for (``system_messages``)."""
    thinking_level: str = "off"
    model: ModelRef | None = None
    system_message: SystemMessage | None = None
    """The prompt and tools the branch's pi 1.x system messages declare, replayed into one
    (the compaction's checkpoint first, if any); ``None`` when the branch declares none."""
    recorded_system: list[tuple[int, SystemMessage]] = field(default_factory=list)
    """The system messages recorded on the branch as it is projected (a compaction's checkpoint
    just before its summary), each with the index in ``messages`` it stands before."""


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


def context_entries(path: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The entries of a branch (root first) that make the model's context, as pi 1.6's
    ``buildContextEntries``: the whole branch, or after its latest compaction that compaction,
    the entries from its ``first_kept_entry_id`` up to it (system records left out: its checkpoint
    stands for them) and everything after it."""
    compaction_index = max(
        (i for i, entry in enumerate(path) if isinstance(entry, CompactionEntry)), default=-1
    )
    if compaction_index < 0:
        return list(path)
    compaction = path[compaction_index]
    assert isinstance(compaction, CompactionEntry)
    before = path[:compaction_index]
    first_kept = next((i for i, e in enumerate(before) if e.id == compaction.first_kept_entry_id), None)
    kept = [e for e in before[first_kept:] if not _is_system(e)] if first_kept is not None else []
    return [compaction, *kept, *path[compaction_index + 1 :]]


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | _Leaf | None = LAST_ENTRY,
    by_id: Mapping[str, SessionEntry] | None = None,
    *,
    path: Sequence[SessionEntry] | None = None,
    system_messages: bool = False,
) -> SessionContext:
    """The context of the branch ending at ``leaf_id``.

    With ``system_messages`` the branch's system records stay among the messages where they were
    written (after a compaction, its checkpoint first), as the agent keeps them so each request
    can send a change where it happened (issue #31).

    ``None`` means "before the first entry" (empty context); ``LAST_ENTRY`` or an unknown id means
    the last entry of ``entries``. Only the latest compaction on the path counts: its summary comes
    first, then the kept entries from ``first_kept_entry_id`` up to it, then everything after it.
    ``path`` is the branch to ``leaf_id`` when the caller has it already (``path_to``).
    """
    if leaf_id is None or not entries:
        return SessionContext()
    if by_id is None:
        by_id = {entry.id: entry for entry in entries}
    if path is None:
        leaf = by_id.get(leaf_id) if isinstance(leaf_id, str) else None
        path = path_to(leaf if leaf is not None else entries[-1], by_id)

    context = SessionContext()
    for entry in path:
        if isinstance(entry, ThinkingLevelChangeEntry):
            context.thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            context.model = ModelRef(entry.provider, entry.model_id)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            context.model = ModelRef(entry.message.provider, entry.message.model)
    selected = context_entries(path)

    edits = {e.target_id: e for e in selected if isinstance(e, ContextEditEntry)}
    for index, entry in enumerate(selected):
        if isinstance(entry, CompactionEntry):
            # Only the latest compaction (first) counts; an older one kept in range adds nothing.
            if index == 0:
                if entry.system_message is not None:
                    context.recorded_system.append((len(context.messages), entry.system_message))
                    if system_messages:
                        context.messages.append(entry.system_message)
                context.messages.append(
                    CompactionSummaryMessage(entry.summary, entry.tokens_before, _ms(entry.timestamp))
                )
            continue
        if _is_system(entry):
            assert isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage)
            context.recorded_system.append((len(context.messages), entry.message))
            if system_messages:
                context.messages.append(entry.message)
            continue
        message = entry_message(entry)
        edit = edits.get(entry.id)
        if message is not None and edit is not None:
            message = apply_context_edit(message, edit)
        if message is not None:
            context.messages.append(message)
    context.system_message = branch_system_message(path)
    return context


def branch_system_message(path: Sequence[SessionEntry]) -> SystemMessage | None:
    """The system message requests on this branch carry, without building its messages: the
    branch's system records replayed from the latest compaction's checkpoint on (that checkpoint
    stands for the records before it)."""
    system: list[SystemMessage] = []
    start = 0
    for index in range(len(path) - 1, -1, -1):
        entry = path[index]
        if isinstance(entry, CompactionEntry):
            if entry.system_message is not None:
                system.append(entry.system_message)
            start = index + 1
            break
    for entry in path[start:]:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage):
            system.append(entry.message)
    return replay_system_messages(system)


def project_context_edits(
    entries: Sequence[SessionEntry], *, keep_omitted: bool = False
) -> list[SessionEntry]:
    """``entries`` (part of a branch, oldest first) as the model sees them once the context edits
    among them apply: an entry an edit omits is left out (``keep_omitted``: kept as it is, see
    ``omitted_entry_ids``), one it replaces carries the replacement under its own id. Compaction
    and branch summaries work on this, so that what an edit took out of the conversation is
    neither summarised nor counted (as in pi 1.6)."""
    edits = {e.target_id: e for e in entries if isinstance(e, ContextEditEntry)}
    if not edits:
        return list(entries)
    out: list[SessionEntry] = []
    for entry in entries:
        edit = edits.get(entry.id)
        message = entry_message(entry) if edit is not None else None
        if edit is None or message is None:
            out.append(entry)
            continue
        edited = apply_context_edit(message, edit)
        if edited is None:
            if keep_omitted:
                out.append(entry)
            continue
        if isinstance(entry, MessageEntry):
            out.append(msgspec.structs.replace(entry, message=edited, raw=None))
        elif isinstance(entry, CustomMessageEntry) and isinstance(edited, CustomMessage):
            out.append(msgspec.structs.replace(entry, content=edited.content, raw=None))
        else:
            out.append(entry)
    return out


def omitted_entry_ids(entries: Sequence[SessionEntry]) -> set[str]:
    """The ids of the entries among ``entries`` whose message the latest context edit on them
    takes out of the context (replacement ``null``)."""
    edits = {e.target_id: e for e in entries if isinstance(e, ContextEditEntry)}
    if not edits:
        return set()
    out: set[str] = set()
    for entry in entries:
        edit = edits.get(entry.id)
        message = entry_message(entry) if edit is not None else None
        if edit is not None and message is not None and apply_context_edit(message, edit) is None:
            out.add(entry.id)
    return out


def entry_message(entry: SessionEntry) -> SessionMessage | None:
    """The message an entry contributes to the context, if any."""
    if isinstance(entry, MessageEntry):
        return None if isinstance(entry.message, SystemMessage) else entry.message
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


def apply_context_edit(message: SessionMessage, edit: ContextEditEntry) -> SessionMessage | None:
    """``message`` as ``edit`` leaves it in the context: gone (``None``), or with the edit's
    content in place of its own. Messages of other roles (shell runs, summaries) are unchanged."""
    if edit.replacement is None:
        return None
    content: Any = edit.replacement.get("content")
    if isinstance(message, AssistantMessage):
        blocks = [TextContent(content)] if isinstance(content, str) else _blocks(content)
        assistant = [b for b in blocks if isinstance(b, TextContent | ThinkingContent | ToolCall)]
        return msgspec.structs.replace(message, content=assistant)
    if isinstance(message, ToolResultMessage):
        return msgspec.structs.replace(message, content=_user_content(content, as_list=True))
    if isinstance(message, UserMessage | CustomMessage):
        return msgspec.structs.replace(message, content=_user_content(content, as_list=False))
    return message


def _blocks(content: Any) -> list[Any]:
    return [content_from_json(b) for b in _known(content)] if isinstance(content, list) else []


def _user_content(content: Any, *, as_list: bool) -> Any:
    value = content_list_from_json(_known(content) if isinstance(content, list) else content)
    return [TextContent(value)] if as_list and isinstance(value, str) else value


def _known(blocks: list[Any]) -> list[Any]:
    """The blocks tau can read; an edit written by a newer tool may hold others."""
    return [b for b in blocks if isinstance(b, dict) and b.get("type") in _EDITABLE_BLOCKS]


_EDITABLE_BLOCKS = frozenset({"text", "thinking", "image", "toolCall"})


def _is_system(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage)


_M = TypeVar("_M")


def interleave_system_messages(messages: Sequence[_M], context: SessionContext) -> list[_M | SystemMessage]:
    """``messages`` (the agent's) with ``context``'s recorded system messages where they were
    recorded, each before the message that follows it in ``context.messages`` (one the agent no
    longer holds: before the next one it does), the rest at the end: the transcript pi 1.6's agent
    holds (``get_messages``)."""
    before: dict[int, list[SystemMessage]] = {}
    trailing: list[SystemMessage] = []
    held = [m for m in messages if isinstance(m, SystemMessage)]
    for position, system in context.recorded_system:
        if any(m is system or m == system for m in held):
            continue  # the agent holds it where it was recorded already (issue #31)
        following = context.messages[position:]
        target = next((i for i in (_index(messages, m) for m in following) if i >= 0), None)
        if target is None:
            trailing.append(system)
        else:
            before.setdefault(target, []).append(system)
    out: list[_M | SystemMessage] = []
    for index, message in enumerate(messages):
        out += before.get(index, [])
        out.append(message)
    return out + trailing


def _index(messages: Sequence[object], wanted: object) -> int:
    for index, message in enumerate(messages):
        if message is wanted:
            return index
    for index, message in enumerate(messages):
        if message == wanted:
            return index
    return -1
