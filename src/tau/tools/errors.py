"""Errors the built-in tools raise; the agent loop turns any raised error into an error result."""

from __future__ import annotations

import errno

from tau.ai.abort import AbortSignal


class ToolError(Exception):
    """A tool failed; the message is what the model reads."""


class ToolAborted(ToolError):
    """The call was aborted before or while it ran."""

    def __init__(self, message: str = "Operation aborted") -> None:
        super().__init__(message)


def raise_if_aborted(signal: AbortSignal | None) -> None:
    """Refuse to start (or go on) once the caller has aborted."""
    if signal is not None and signal.aborted:
        raise ToolAborted()


def describe_os_error(error: OSError) -> str:
    """``ENOENT: No such file or directory`` from an OSError, for messages that name the code."""
    code = errno.errorcode.get(error.errno or 0, "")
    reason = error.strerror or str(error)
    return f"{code}: {reason}" if code else reason
