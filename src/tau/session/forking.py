"""``--fork``: copy a whole session (every branch, same entry ids) into a new file for another cwd."""

from __future__ import annotations

import os

from tau._contained import contained_path
from tau.session.entries import SessionHeader
from tau.session.errors import SessionFileError, SessionWriteError
from tau.session.ids import IdSource
from tau.session.jsonl import append_lines, dump_line, read_session_file
from tau.session.migrations import migrate_objects
from tau.session.paths import session_file_name


def write_fork(source_path: str, target_cwd: str, session_dir: str, ids: IdSource) -> str:
    """Write the fork of ``source_path`` into ``session_dir`` at once and return its path.

    The new header has a new id, ``cwd=target_cwd`` and ``parentSession=source_path``. An old source
    is migrated in memory (its file is left alone) so the copy is a valid version-3 file.
    """
    source_path = os.path.abspath(source_path)
    try:
        objects = read_session_file(source_path).objects()
    except SessionFileError as exc:
        raise SessionFileError(f"Cannot fork: {exc}") from exc
    if not objects or SessionHeader.from_json(objects[0]) is None:
        raise SessionFileError(f"Cannot fork: source session file is empty or invalid: {source_path}")
    migrate_objects(objects, ids.entry_id)
    header = SessionHeader(
        id=ids.session_id(), timestamp=ids.now_iso(), cwd=target_cwd, parent_session=source_path
    )
    try:
        os.makedirs(session_dir, exist_ok=True)
    except OSError as exc:
        raise SessionWriteError.for_folder(session_dir, exc) from None
    path = contained_path(session_dir, session_file_name(header.timestamp, header.id), follow_links=False)
    lines = [dump_line(header.to_json())]
    lines.extend(dump_line(obj) for obj in objects[1:] if obj.get("type") != "session")
    append_lines(path, lines)
    return path
