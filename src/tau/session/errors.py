"""The session layer's errors."""

from __future__ import annotations


class SessionError(Exception):
    """Base class of the session layer's errors."""


class SessionFileError(SessionError):
    """A session file is missing, unreadable or not a session."""


class EntryNotFoundError(SessionError, LookupError):
    """An entry id that is not in the session."""

    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id


class SessionNotFoundError(SessionError, LookupError):
    """No session matches a ``--session`` / ``--fork`` argument."""

    def __init__(self, query: str) -> None:
        super().__init__(f"No session found matching '{query}'")
        self.query = query
