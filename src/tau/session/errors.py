"""The session layer's errors."""

from __future__ import annotations

from tau.errors import TauError


class SessionError(TauError):
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


class SessionWriteError(SessionError):
    """A session file or folder could not be written: full disk, read-only file or folder, ..."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path

    @classmethod
    def for_file(cls, path: str, error: OSError) -> SessionWriteError:
        return cls(f"could not save the session to {path}: {os_reason(error)}", path)

    @classmethod
    def for_folder(cls, path: str, error: OSError) -> SessionWriteError:
        if isinstance(error, FileExistsError):  # makedirs(exist_ok=True) on a file
            return cls(f"the session folder {path} is a file, not a folder", path)
        return cls(f"could not create the session folder {path}: {os_reason(error)}", path)


def os_reason(error: OSError) -> str:
    """The system's words for ``error`` (``No space left on device``), clearer where they mislead."""
    if isinstance(error, NotADirectoryError):
        return "part of the path is a file, not a folder"
    return error.strerror or str(error)
