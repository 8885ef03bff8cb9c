"""What providers keep per session (Anthropic message threads, strict-tool limits), freed when a
session ends, as pi 1.6's ``cleanupSessionResources``.

A provider module registers its cleanup when it is imported; ``cleanup_session_resources`` runs
each (one session's state, or every session's with ``None``). Nothing is imported for it, so a
session that never used those providers pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable

Cleanup = Callable[[str | None], None]
_cleanups: list[Cleanup] = []


def register_cleanup(cleanup: Cleanup) -> None:
    _cleanups.append(cleanup)


def cleanup_session_resources(session_id: str | None = None) -> None:
    """Drop what providers keep for ``session_id`` (every session: ``None``)."""
    for cleanup in _cleanups:
        cleanup(session_id)
