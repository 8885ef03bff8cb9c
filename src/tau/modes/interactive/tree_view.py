"""The session tree as picker rows for ``/tree``: depth-first, indented where the conversation
branches, the path to the current leaf marked and, at each fork, its branch first (as pi 1.6's).

Filters (pi's ``treeFilterMode``): ``default`` leaves out bookkeeping entries (model and thinking
changes, labels, names); ``no-tools`` also tool results and replies that only call tools;
``user-only`` shows your messages; ``labeled-only`` the labelled entries; ``all`` everything.

``tree_rows`` also gives what the picker folds by (``tree_dialog``): each row's parent in the whole
tree, its indentation, and when its label was set."""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct

from tau.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.modes.interactive.dialogs import ListItem
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from tau.session.manager import SessionManager
from tau.session.messages import BashExecutionMessage, SystemMessage
from tau.session.tree import SessionTreeNode

__all__ = [
    "FILTER_MODES",
    "TreeRows",
    "child_session_of",
    "describe_entry",
    "format_label_time",
    "tree_items",
    "tree_rows",
]

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
_CHILD = "child-session:"
"""A row's value that opens a sub-agent's transcript rather than naming an entry (ids are hex)."""


class TreeRows(Struct):
    """The picker's rows and the tree they come from."""

    items: list[ListItem[str]]
    selected: int
    """The current leaf's row (or the last row on the leaf's path)."""
    parents: dict[str, str | None]
    """Every entry's parent (``None`` for a root), and each sub-agent row's entry, in the order of a
    depth-first walk: a parent comes before its children."""
    indents: dict[str, int]
    """The characters of indentation before each row's marker."""
    label_times: dict[str, str]
    """When each labelled row's label was set (its ISO timestamp)."""


def tree_items(manager: SessionManager, filter_mode: str = "default") -> tuple[list[ListItem[str]], int]:
    """The rows, and the index of the current leaf (or the last row on the leaf's path)."""
    rows = tree_rows(manager, filter_mode)
    return rows.items, rows.selected


def tree_rows(manager: SessionManager, filter_mode: str = "default") -> TreeRows:
    """The rows of ``filter_mode`` with the whole tree's shape (see ``TreeRows``)."""
    leaf = manager.get_leaf_id()
    on_path = {entry.id for entry in manager.get_branch()} if leaf else set()
    rows = TreeRows([], 0, {}, {}, {})
    stack: list[tuple[SessionTreeNode, int, str | None]] = [
        (node, 0, None) for node in reversed(_current_first(manager.get_tree(), on_path))
    ]
    while stack:
        node, depth, parent = stack.pop()
        rows.parents[node.entry.id] = parent
        text = describe_entry(node.entry)
        if text is None and filter_mode == "all":
            text = f"[{node.entry.type}]"
        if text is not None and _shown(node.entry, text, node.label, filter_mode):
            marker = "● " if node.entry.id == leaf else ("│ " if node.entry.id in on_path else "  ")
            label = f" [{node.label}]" if node.label else ""
            rows.items.append(
                ListItem("  " * depth + marker + text + label, node.entry.id, search_text=text + label)
            )
            rows.indents[node.entry.id] = 2 * depth
            if node.label and node.label_timestamp:
                rows.label_times[node.entry.id] = node.label_timestamp
            if node.entry.id in on_path:
                rows.selected = len(rows.items) - 1
        if filter_mode in ("default", "no-tools", "all"):
            for child_row in _child_rows(node.entry, depth):
                rows.items.append(child_row)
                rows.parents[child_row.value] = node.entry.id
                rows.indents[child_row.value] = 2 * depth + 2
        child_depth = depth + 1 if len(node.children) > 1 else depth
        for child in reversed(_current_first(node.children, on_path)):
            stack.append((child, child_depth, node.entry.id))
    return rows


def _current_first(nodes: list[SessionTreeNode], on_path: set[str]) -> list[SessionTreeNode]:
    """The branch holding the current leaf first, then the others in time order, as pi 1.6's."""
    return sorted(nodes, key=lambda node: node.entry.id not in on_path)


def format_label_time(timestamp: str, now: datetime | None = None) -> str:
    """When a label was set, in local time as pi 1.6 shows it: ``14:05`` today, ``3/7 14:05`` this
    year, ``25/3/7 14:05`` before; ``""`` for a timestamp that does not read."""
    try:
        when = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return ""
    now = now or datetime.now().astimezone()
    clock = f"{when.hour:02d}:{when.minute:02d}"
    if when.date() == now.date():
        return clock
    if when.year == now.year:
        return f"{when.month}/{when.day} {clock}"
    return f"{when.year % 100:02d}/{when.month}/{when.day} {clock}"


def child_session_of(value: str) -> str | None:
    """The sub-agent transcript a row opens, or ``None`` for a row that names an entry."""
    return value[len(_CHILD) :] if value.startswith(_CHILD) else None


def _child_rows(entry: SessionEntry, depth: int) -> list[ListItem[str]]:
    """Under a ``task`` call's result: a row for the child's transcript (issue #35)."""
    message = entry.message if isinstance(entry, MessageEntry) else None
    if not isinstance(message, ToolResultMessage) or message.tool_name != "task":
        return []
    details = message.details
    path = details.get("sessionFile") if isinstance(details, dict) else None
    if not isinstance(path, str) or not path:
        return []
    agent = details.get("agent") if isinstance(details, dict) else None
    turns = details.get("turns") if isinstance(details, dict) else None
    about = ", ".join(
        part for part in (agent if isinstance(agent, str) else None, _turns(turns)) if part is not None
    )
    text = f"    ⤷ sub-agent{f' ({about})' if about else ''}: open its transcript"
    return [ListItem("  " * depth + "  " + text, _CHILD + path, search_text=f"{text} {path}")]


def _turns(turns: object) -> str | None:
    if not isinstance(turns, int) or isinstance(turns, bool):
        return None
    return f"{turns} turn" + ("" if turns == 1 else "s")


def _shown(entry: SessionEntry, text: str, label: str | None, filter_mode: str) -> bool:
    message = entry.message if isinstance(entry, MessageEntry) else None
    if filter_mode == "user-only":
        return isinstance(message, UserMessage)
    if filter_mode == "labeled-only":
        return label is not None
    if filter_mode == "no-tools":
        if isinstance(message, ToolResultMessage):
            return False
        return not (
            isinstance(message, AssistantMessage) and not message.text().strip() and message.tool_calls()
        )
    return True


def describe_entry(entry: SessionEntry) -> str | None:
    """One line for an entry, or ``None`` for entries the tree leaves out."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else "".join(b.text for b in content if isinstance(b, TextContent))
            )
            return "user: " + _line(text)
        if isinstance(message, AssistantMessage):
            text = message.text()
            calls = [b.name for b in message.content if isinstance(b, ToolCall)]
            if text.strip():
                return "assistant: " + _line(text) + (f" [{', '.join(calls)}]" if calls else "")
            if calls:
                return "assistant: [" + ", ".join(calls) + "]"
            return f"assistant: ({message.stop_reason})"
        if isinstance(message, ToolResultMessage):
            return f"  ↳ {message.tool_name}" + (" (error)" if message.is_error else "")
        if isinstance(message, BashExecutionMessage):
            return "! " + _line(message.command)
        if isinstance(message, SystemMessage):
            return "[system]"  # the prompt and tools recorded, as pi shows the entry
        return None
    if isinstance(entry, CompactionEntry):
        return f"[compaction: {entry.tokens_before:,} tokens summarized]"
    if isinstance(entry, BranchSummaryEntry):
        return "[branch summary] " + _line(entry.summary)
    if isinstance(entry, CustomMessageEntry):
        return f"[{entry.custom_type}]" if entry.display else None
    return None


def _line(text: str, limit: int = 90) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
