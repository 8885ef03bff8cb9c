"""The sidebar: every entry of the session tree as one line, in tree order, for navigation.

A single-child chain stays at one indentation; the children of a branch point are indented one
step more, so branches read as in ``/tree``. Each line carries its entry's parent (``data-p``) and
the newest leaf below it (``data-l``, reached by always taking the newest child): the viewer script
shows the branch root → that leaf when the line is clicked.
"""

from __future__ import annotations

from collections.abc import Collection

from tau.ai.types import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.export.formatting import as_text, preview, tokens
from tau.export.markup import escape
from tau.export.tool_html import strip_ansi
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from tau.session.messages import BashExecutionMessage, CustomMessage
from tau.session.tree import SessionTreeNode, build_tree

_SNIPPET_CHARS = 80


def entry_summary(entry: SessionEntry) -> tuple[str, str, str]:
    """CSS kind (ours), short kind label and one-line text of an entry for its sidebar line."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return "user", "user", _content_text(message.content)
        if isinstance(message, AssistantMessage):
            text = as_text(message.text()).strip()
            calls = [as_text(b.name) for b in message.content if isinstance(b, ToolCall)]
            if message.stop_reason in ("error", "aborted") and not text:
                text = as_text(message.error_message) or message.stop_reason
            return "assistant", "assistant", text or ("→ " + ", ".join(calls) if calls else "(thinking)")
        if isinstance(message, ToolResultMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            return "tool", as_text(message.tool_name) or "tool", strip_ansi(text)
        if isinstance(message, BashExecutionMessage):
            return "shell", "shell", "$ " + strip_ansi(as_text(message.command))
        if isinstance(message, CustomMessage):
            return "custom", as_text(message.custom_type), _content_text(message.content)
    if isinstance(entry, CustomMessageEntry):
        return "custom", entry.custom_type, _content_text(entry.content)
    if isinstance(entry, CompactionEntry):
        return "compaction", "compaction", f"{tokens(entry.tokens_before)} tokens summarised"
    if isinstance(entry, BranchSummaryEntry):
        return "branch-summary", "branch summary", entry.summary
    return "minor", entry.type.replace("_", " "), ""


def _content_text(content: str | list[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return " ".join(as_text(b.text) for b in content if isinstance(b, TextContent))


_Line = tuple[SessionTreeNode, int, SessionTreeNode | None, str]


def _walk(roots: list[SessionTreeNode]) -> list[_Line]:
    """Pre-order (node, depth, parent, connector), without recursion: sessions can be thousands deep.

    The connector marks the first entry of each branch: ``├─``, or ``└─`` for the newest branch."""
    order: list[_Line] = []
    seen: set[int] = set()  # a file with duplicate entry ids can tie the tree into a loop
    stack: list[_Line] = [(r, 0, None, "") for r in reversed(roots)]
    while stack:
        node, depth, parent, connector = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append((node, depth, parent, connector))
        children = node.children
        if len(children) > 1:
            last = len(children) - 1
            stack.extend(
                (c, depth + 1, node, "└─" if i == last else "├─")
                for i, c in reversed(list(enumerate(children)))
            )
        else:
            stack.extend((c, depth, node, "") for c in children)
    return order


def render_tree(entries: list[SessionEntry], labels: dict[str, str], on_path: Collection[str]) -> str:
    """The ``<li>`` lines of the sidebar list; lines of ``on_path`` entries are marked."""
    order = _walk(build_tree(entries, {}))
    newest_leaf: dict[str, str] = {}
    for node, _, _, _ in reversed(order):  # children come after their parent in pre-order
        newest = node.children[-1].entry.id if node.children else node.entry.id
        newest_leaf[node.entry.id] = newest_leaf.get(newest, newest)
    lines: list[str] = []
    for node, depth, parent, connector in order:
        entry = node.entry
        kind, kind_label, text = entry_summary(entry)
        classes = f"node k-{kind}"
        if entry.id in on_path:
            classes += " on-path"
        if not node.children:
            classes += " leaf"
        fork = f'<span class="fork">{connector}</span>' if connector else ""
        label = labels.get(entry.id)
        label_html = f'<span class="label-badge">{escape(label)}</span>' if label else ""
        parent_id = escape(parent.entry.id) if parent is not None else ""
        lines.append(
            f'<li class="{classes}" data-id="{escape(entry.id)}" data-p="{parent_id}" '
            f'data-l="{escape(newest_leaf[entry.id])}" style="--depth:{depth}">'
            f'<a href="#e-{escape(entry.id)}">{fork}'
            f'<span class="kind">{escape(kind_label)}</span> '
            f"{escape(preview(text, _SNIPPET_CHARS))}{label_html}</a></li>"
        )
    return "".join(lines)
