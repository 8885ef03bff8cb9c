"""The one error an HTML export raises: its message is a line a user can act on."""

from __future__ import annotations

from tau.errors import TauError


class ExportError(TauError, RuntimeError):
    """The session cannot be exported (in memory, nothing written yet, missing or unreadable file)."""
