"""Finding sessions: one ``SessionInfo`` per file for the picker, ``-c``, and ``--session <id>``.

Listing reads files raw (no migration) and parses only the lines it needs: tool results and shell
runs, usually most of a file's bytes, are counted from their line prefix without being parsed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from msgspec import Struct

from tau.ai.types import JsonObject
from tau.session.errors import SessionNotFoundError
from tau.session.ids import ms_from_iso
from tau.session.jsonl import parse_json_line
from tau.session.paths import resolve_session_dir, sessions_root

Progress = Callable[[int, int], None]

NO_MESSAGES = "(no messages)"
_TYPE_PREFIX = '{"type":"'
_ROLE_MARK = '"message":{"role":"'
_TEXT_ROLES = ("user", "assistant")


class SessionInfo(Struct):
    """What the session picker shows of one file."""

    path: str
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    """Time of the newest user/assistant message (else the header time, else the file's mtime)."""
    message_count: int
    first_message: str
    all_messages_text: str


def read_header(path: str) -> JsonObject | None:
    """The header object if the first line of ``path`` is a session header with a string id."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return None
    return _header(first)


def _header(line: bytes) -> JsonObject | None:
    obj = _loads(line.decode("utf-8", "replace"))
    if obj is None or obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        return None
    return obj


def build_session_info(path: str) -> SessionInfo | None:
    """The listing facts of one file; ``None`` if it is unreadable or not a session."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
            mtime = os.fstat(f.fileno()).st_mtime
    except OSError:
        return None
    header: JsonObject | None = None
    scan = _Scan()
    for line in text.split("\n"):
        if header is not None:
            scan.line(line)
            continue
        if not line or line.isspace():
            continue
        header = _loads(line)
        if header is None:
            continue
        if header.get("type") != "session" or not isinstance(header.get("id"), str):
            return None
    if header is None:
        return None
    file_time = datetime.fromtimestamp(mtime, tz=UTC)
    header_ms = ms_from_iso(header.get("timestamp"))
    header_time = _datetime(header_ms) if header_ms is not None else None
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=cwd if isinstance(cwd, str) else "",
        name=scan.name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=header_time or file_time,
        modified=_datetime(scan.last_activity) if scan.last_activity > 0 else header_time or file_time,
        message_count=scan.message_count,
        first_message=scan.first_message or NO_MESSAGES,
        all_messages_text=" ".join(scan.texts),
    )


def list_sessions(session_dir: str, on_progress: Progress | None = None) -> list[SessionInfo]:
    """The sessions in one folder, most recently active first; invalid files are left out."""
    return _infos(_jsonl_files(session_dir), on_progress)


def list_all_sessions(root: str | None = None, on_progress: Progress | None = None) -> list[SessionInfo]:
    """The sessions of every project folder under ``root`` (default ``<agent dir>/sessions``)."""
    return _infos(_files_under(root or sessions_root()), on_progress)


def find_most_recent_session(session_dir: str, skipped: list[str] | None = None) -> str | None:
    """The ``.jsonl`` file with a valid header and the newest mtime (``-c``).

    Each newer file that is unreadable or not a session is added to ``skipped`` ("<path>: <why>")."""
    dated: list[tuple[float, str]] = []
    for path in _jsonl_files(session_dir):
        try:
            dated.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    dated.sort(key=lambda item: (-item[0], item[1]))
    for _, path in dated:
        problem = header_problem(path)
        if problem is None:
            return path
        if skipped is not None:
            skipped.append(f"{path}: {problem}")
    return None


def header_problem(path: str) -> str | None:
    """Why ``path`` is not a session file, or ``None`` if its first line is a session header."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if not first.strip():
        return "not a session file (its first line is empty)"
    if _header(first) is None:
        return "not a session file (its first line is not a session header)"
    return None


class FoundSession(Struct, frozen=True):
    """Where ``--session``/``--fork`` points: a path, a session of this project, or of another one."""

    path: str
    scope: Literal["path", "local", "global"]
    cwd: str | None = None


def find_session(
    query: str, cwd: str, session_dir: str | None = None, *, agent_dir: str | None = None
) -> FoundSession:
    """Resolve a ``--session`` argument: a path (contains a separator or ends in ``.jsonl``), else a
    session-id prefix matched in this project's folder first, then in every project folder.

    Raises ``SessionNotFoundError`` ("No session found matching '<query>'")."""
    if "/" in query or "\\" in query or query.endswith(".jsonl"):
        return FoundSession(os.path.abspath(query), "path")
    local = _newest_with_prefix(
        _jsonl_files(session_dir or resolve_session_dir(cwd, agent_dir=agent_dir)), query
    )
    if local is not None:
        return FoundSession(local.path, "local", local.cwd)
    found = _newest_with_prefix(_files_under(sessions_root(agent_dir)), query)
    if found is not None:
        return FoundSession(found.path, "global", found.cwd)
    raise SessionNotFoundError(query)


def _newest_with_prefix(paths: Iterable[str], prefix: str) -> SessionInfo | None:
    # Only the headers of non-matching files are read.
    matching = [
        p for p in paths if (header := read_header(p)) is not None and header["id"].startswith(prefix)
    ]
    infos = _infos(matching, None)
    return infos[0] if infos else None


def _infos(paths: list[str], on_progress: Progress | None) -> list[SessionInfo]:
    infos: list[SessionInfo] = []
    for loaded, path in enumerate(paths, start=1):
        info = build_session_info(path)
        if info is not None:
            infos.append(info)
        if on_progress is not None:
            on_progress(loaded, len(paths))
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _jsonl_files(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.endswith(".jsonl")]


def _files_under(root: str) -> list[str]:
    try:
        subdirs = sorted(e.path for e in os.scandir(root) if e.is_dir())
    except OSError:
        return []
    return [path for subdir in subdirs for path in _jsonl_files(subdir)]


class _Scan:
    """Accumulates the listing facts over the entry lines of one file."""

    __slots__ = ("first_message", "last_activity", "message_count", "name", "texts")

    def __init__(self) -> None:
        self.name: str | None = None
        self.message_count = 0
        self.first_message = ""
        self.texts: list[str] = []
        self.last_activity = 0

    def line(self, line: str) -> None:
        if line.startswith(_TYPE_PREFIX):
            kind = line[len(_TYPE_PREFIX) : line.find('"', len(_TYPE_PREFIX))]
            if kind == "message":
                role = _message_role(line)
                if role is not None and role not in _TEXT_ROLES:
                    # Counted without parsing; a cut-off last line (no closing brace) is not counted.
                    if line.rstrip().endswith("}"):
                        self.message_count += 1
                    return
            elif kind != "session_info":
                return
        elif not line or line.isspace():
            return
        obj = _loads(line)
        if obj is not None:
            self.entry(obj)

    def entry(self, obj: JsonObject) -> None:
        kind = obj.get("type")
        if kind == "session_info":
            name = obj.get("name")
            self.name = (name.strip() or None) if isinstance(name, str) else None
            return
        if kind != "message":
            return
        self.message_count += 1
        message = obj.get("message")
        if (
            not isinstance(message, dict)
            or message.get("role") not in _TEXT_ROLES
            or "content" not in message
        ):
            return
        timestamp = message.get("timestamp")
        if isinstance(timestamp, int | float) and not isinstance(timestamp, bool):
            self.last_activity = max(self.last_activity, int(timestamp))
        else:
            entry_ms = ms_from_iso(obj.get("timestamp"))
            if entry_ms is not None:
                self.last_activity = max(self.last_activity, entry_ms)
        text = _text_of(message["content"])
        if text:
            self.texts.append(text)
            if not self.first_message and message["role"] == "user":
                self.first_message = text


def _message_role(line: str) -> str | None:
    start = line.find(_ROLE_MARK)
    if start < 0:
        return None
    start += len(_ROLE_MARK)
    return line[start : line.find('"', start)]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return " ".join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


_loads = parse_json_line


def _datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)
