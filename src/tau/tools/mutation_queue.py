"""One writer at a time per file: parallel write/edit calls on the same file run in turn.

Calls are keyed by the file's real path (symlinks resolved), so two names for one file share a
lock; different files proceed in parallel. A lock lives only while someone holds or waits for it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from msgspec import Struct, field


class _QueuedMutation(Struct, dict=True):
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


_entries: dict[str, _QueuedMutation] = {}


def mutation_key(path: str) -> str:
    """The identity of the file at ``path``: its real path, or the absolute path if that fails."""
    try:
        return os.path.realpath(path)
    except OSError:
        return os.path.abspath(path)


@asynccontextmanager
async def file_mutation(path: str) -> AsyncIterator[None]:
    """Hold the lock of the file at ``path`` for the body of an ``async with``."""
    key = mutation_key(path)
    entry = _entries.get(key)
    if entry is None:
        entry = _entries[key] = _QueuedMutation()
    entry.users += 1
    try:
        async with entry.lock:
            yield
    finally:
        entry.users -= 1
        if entry.users == 0 and _entries.get(key) is entry:
            del _entries[key]
