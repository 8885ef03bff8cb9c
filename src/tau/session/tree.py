"""The session as a tree: labels resolved, children ordered by time, orphans as extra roots."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec import Struct, field

from tau.session.entries import LabelEntry, SessionEntry
from tau.session.ids import ms_from_iso


class Label(Struct, frozen=True):
    """The current label of an entry and when it was set."""

    text: str
    timestamp: str


class SessionTreeNode(Struct):
    entry: SessionEntry
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None


def apply_label(labels: dict[str, Label], entry: LabelEntry) -> None:
    """Replay one label entry: a non-empty label sets, anything else clears."""
    if entry.label:
        labels[entry.target_id] = Label(entry.label, entry.timestamp)
    else:
        labels.pop(entry.target_id, None)


def build_tree(entries: Sequence[SessionEntry], labels: Mapping[str, Label]) -> list[SessionTreeNode]:
    """Roots (entries without a parent, their own parent, or a missing parent) with their subtrees.

    Built without recursion, so a session thousands of entries deep is fine.
    """
    nodes: dict[str, SessionTreeNode] = {}
    for entry in entries:
        label = labels.get(entry.id)
        nodes[entry.id] = SessionTreeNode(
            entry,
            label=label.text if label else None,
            label_timestamp=label.timestamp if label else None,
        )
    roots: list[SessionTreeNode] = []
    for entry in entries:
        node = nodes[entry.id]
        parent = nodes.get(entry.parent_id) if entry.parent_id not in (None, entry.id) else None
        if parent is None or parent is node:
            roots.append(node)
        else:
            parent.children.append(node)
    for node in nodes.values():
        if len(node.children) > 1:
            node.children.sort(key=_time_key)
    return roots


def _time_key(node: SessionTreeNode) -> int:
    ms = ms_from_iso(node.entry.timestamp)
    return ms if ms is not None else 0
