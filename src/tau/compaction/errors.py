"""Why a compaction or branch summary did not happen."""

from __future__ import annotations

from tau.errors import TauError

__all__ = [
    "CompactionAbortedError",
    "CompactionCancelledError",
    "CompactionError",
    "NothingToCompactError",
    "SummarizationError",
]


class CompactionError(TauError):
    """Base class: the session is left as it was."""


class NothingToCompactError(CompactionError):
    """The branch has nothing that could be summarised; no model call was made."""


class SummarizationError(CompactionError):
    """The summariser's reply was an error."""


class CompactionAbortedError(CompactionError):
    """The compaction was aborted (``abort_compaction``) before it finished."""


class CompactionCancelledError(CompactionError):
    """An extension cancelled the compaction."""
