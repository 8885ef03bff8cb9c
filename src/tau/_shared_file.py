"""Changing a JSON file that other processes (tau or pi) change too, without losing their changes.

``update_json_file(path, change)`` is the one way tau edits such a file: it takes pi's lock of the
file (``tau._lockdir``), reads the file as it is now, lets ``change`` edit that fresh copy, writes the
result to a temporary file and renames it over the old one, then releases the lock. Nothing read
before the lock is written back, so an entry another process added meanwhile is kept. When
``change`` leaves the document as it found it, nothing is written.

``write_file_atomic`` is the write step on its own (temp file in the same folder, then
``os.replace``), for files one process owns.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tau._lockdir import DEFAULT_STALE_S, held, lock_path_for

__all__ = ["dump_json", "read_json_object", "update_json_file", "write_file_atomic"]

R = TypeVar("R")
Document = dict[str, Any]


def read_json_object(path: Path) -> Document:
    """The JSON object in ``path``; ``{}`` when the file does not exist. Raises ``ValueError`` naming
    the file when it is not a JSON object (a damaged file is never written over) and ``OSError``
    when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: invalid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object at the top level")
    return data


def dump_json(data: Any) -> str:
    """The text tau writes a shared JSON file as (two-space indent, as pi writes them; a lone
    surrogate, such as an undecodable byte of a command line, as its ``\\uXXXX`` escape)."""
    from tau._unicode import escape_lone_surrogates

    return escape_lone_surrogates(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def update_json_file(
    path: Path,
    change: Callable[[Document], R],
    *,
    read: Callable[[Path], Document] = read_json_object,
    dump: Callable[[Document], str] = dump_json,
    follow_links: bool = True,
    stale_s: float = DEFAULT_STALE_S,
    timeout_s: float = 5.0,
    mode: int | None = None,
) -> R:
    """Apply ``change`` to the current content of ``path`` under its lock and write the result.

    ``change`` gets the document as ``read`` finds it now (a fresh object it may edit in place) and
    its return value is returned. An exception from ``read`` or ``change`` leaves the file as it
    was. ``follow_links`` and ``stale_s`` as pi locks that file (see ``tau._lockdir``); ``mode``
    the permission bits of the written file (see ``write_file_atomic``). Raises
    ``LockTimeoutError`` when another process holds the lock longer than ``timeout_s``.
    """
    lock = lock_path_for(path, follow_links=follow_links)
    with held(lock, stale_s=stale_s, timeout_s=timeout_s):
        data = read(path)
        before = copy.deepcopy(data)
        result = change(data)
        if data != before:
            write_file_atomic(path, dump(data), mode=mode)
    return result


def write_file_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` in one step (temp file in the same dir, then ``os.replace``).

    ``mode`` sets the permission bits before the content lands (auth.json: 0600); without it an
    existing file keeps its bits and a new one gets 0644. A symlinked file is written through the
    link, so dotfile managers keep their link.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        status = target.stat()
    except FileNotFoundError:
        status = None
    if status is not None and not (stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode)):
        # Renaming over a device or FIFO would replace it (as root: /dev/null itself).
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    if mode is None:
        mode = status.st_mode & 0o777 if status is not None else 0o644
    import tempfile  # imported on the first write, not at start-up

    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.chmod(temp_name, mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
