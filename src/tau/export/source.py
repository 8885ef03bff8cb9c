"""What an export reads: a session's header, entries, leaf and labels.

From a live ``SessionManager`` (``/export``, RPC) or from a file (``tau --export``). A file is parsed
with the session layer's own readers and migrated in memory, so pi's v1/v2 files export too; unlike
``SessionManager.open`` nothing is ever written back to the input file.
"""

from __future__ import annotations

import os

from msgspec import Struct

from tau.export.errors import ExportError
from tau.session.entries import LabelEntry, SessionEntry, SessionHeader, SessionInfoEntry, entry_from_json
from tau.session.errors import SessionFileError
from tau.session.ids import IdSource
from tau.session.jsonl import read_session_file
from tau.session.manager import SessionManager
from tau.session.migrations import migrate_objects
from tau.session.tree import Label, apply_label

NOTHING_YET = "Nothing to export yet - start a conversation first"  # pi 1.6's words


class ExportSource(Struct):
    """One session as the export sees it; ``leaf_id`` is the branch shown when the page opens."""

    session_file: str
    header: SessionHeader
    entries: list[SessionEntry]
    leaf_id: str | None
    labels: dict[str, str]

    @property
    def name(self) -> str | None:
        """The display name of the latest ``session_info`` entry (empty clears it)."""
        for entry in reversed(self.entries):
            if isinstance(entry, SessionInfoEntry):
                return (entry.name or "").strip() or None
        return None


def source_from_manager(manager: SessionManager) -> ExportSource:
    """The manager's session; it must be persisted and its file written (i.e. the model answered)."""
    session_file = manager.get_session_file()
    if not manager.is_persisted() or session_file is None:
        raise ExportError("Cannot export an in-memory session to HTML")
    if not os.path.exists(session_file):
        raise ExportError(NOTHING_YET)
    entries = manager.get_entries()
    labels = {e.id: text for e in entries if (text := manager.get_label(e.id))}
    return ExportSource(session_file, manager.get_header(), entries, manager.get_leaf_id(), labels)


def source_from_file(path: str) -> ExportSource:
    """The session in ``path``, old formats migrated in memory; the leaf is the last entry."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ExportError(f"{'Not a file' if os.path.exists(path) else 'File not found'}: {path}")
    try:
        raw = read_session_file(path)
    except SessionFileError as exc:
        raise ExportError(str(exc)) from None
    objects = raw.objects()
    if not objects or SessionHeader.from_json(objects[0]) is None:
        raise ExportError(f"Not a session file: {path}")
    migrate_objects(objects, IdSource().entry_id)  # mutates the parsed copy only
    header = SessionHeader.from_json(objects[0])
    assert header is not None  # migration keeps the header's type and id
    entries: list[SessionEntry] = []
    for obj in objects[1:]:
        if obj.get("type") == "session":
            continue  # a stray second header, as older pi could write: not an entry
        try:
            entries.append(entry_from_json(obj))
        except ValueError:
            continue  # an entry without an id cannot be placed in the tree
    if not entries:
        raise ExportError(f"Nothing to export: {path} holds no entries")
    labels: dict[str, Label] = {}
    for entry in entries:
        if isinstance(entry, LabelEntry):
            apply_label(labels, entry)
    return ExportSource(path, header, entries, entries[-1].id, {k: v.text for k, v in labels.items()})
