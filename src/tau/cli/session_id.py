"""``--session-id``: a session of this folder by its exact id, created with that id when there is none."""

from __future__ import annotations

import os
import re

# What pi 1.6 accepts as a session id: it becomes part of the file name.
_VALID_ID = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"


MAX_SESSION_ID = 200
"""The id is part of the session's file name (``<timestamp>_<id>.jsonl``, at most 255 bytes)."""


def session_id_problem(session_id: str) -> str | None:
    """Why ``session_id`` cannot name a session, or ``None`` when it can."""
    if len(session_id) > MAX_SESSION_ID and re.fullmatch(_VALID_ID, session_id):
        return f"--session-id: an id of {len(session_id)} characters is too long (at most {MAX_SESSION_ID})"
    if re.fullmatch(_VALID_ID, session_id):
        return None
    return (
        f'--session-id {_quoted(session_id)}: use letters, digits, ".", "-" and "_", starting and ending '
        "with a letter or digit"
    )


def _quoted(text: str) -> str:
    """``text`` in double quotes on one line (JSON escapes), cut to a readable length."""
    import json

    quoted = json.dumps(text, ensure_ascii=False)
    return quoted if len(quoted) <= 120 else quoted[:100] + "…" + quoted[-16:]


def find_local_session(session_dir: str, session_id: str) -> str | None:
    """The file in ``session_dir`` (the folder's own sessions, not other projects') whose header has
    exactly ``session_id``."""
    from tau.session.listing import read_header

    try:
        names = sorted(os.listdir(session_dir))
    except OSError:
        return None
    for name in names:
        path = os.path.join(session_dir, name)
        if name.endswith(".jsonl") and os.path.isfile(path):
            header = read_header(path)
            if header is not None and header.get("id") == session_id:
                return path
    return None
