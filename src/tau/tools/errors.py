"""Errors the built-in tools raise; the agent loop turns any raised error into an error result."""

from __future__ import annotations

import errno

from tau.ai.abort import AbortSignal
from tau.errors import TauError


class ToolError(TauError):
    """A tool failed; the message is what the model reads."""


class ToolAborted(ToolError):
    """The call was aborted before or while it ran."""

    def __init__(self, message: str = "Operation aborted") -> None:
        super().__init__(message)


def raise_if_aborted(signal: AbortSignal | None) -> None:
    """Refuse to start (or go on) once the caller has aborted."""
    if signal is not None and signal.aborted:
        raise ToolAborted()


def describe_os_error(error: OSError, path: str | None = None) -> str:
    """``ENOENT: No such file or directory`` from an OSError, for messages that name the code.

    With ``path`` (the absolute path the tool worked on): when the error says a folder on the way
    is not one (``ENOTDIR``, or ``EEXIST`` from creating the parent folders), it names the file that
    stands where a folder is needed."""
    if path is not None and error.errno in (errno.ENOTDIR, errno.EEXIST):
        blocking = file_in_the_way(path)
        if blocking is not None:
            return f"{blocking} is a file, not a directory (a directory is needed there)"
    code = errno.errorcode.get(error.errno or 0, "")
    reason = error.strerror or str(error)
    return f"{code}: {reason}" if code else reason


def file_in_the_way(path: str) -> str | None:
    """The first of ``path``'s parent folders (from the top) that exists but is not a directory."""
    import os
    import stat

    parents: list[str] = []
    parent = os.path.dirname(path)
    while parent and parent not in parents:
        parents.append(parent)
        parent = os.path.dirname(parent)
    for folder in reversed(parents):
        try:
            mode = os.stat(folder).st_mode
        except OSError:
            return None
        if not stat.S_ISDIR(mode):
            return folder
    return None
