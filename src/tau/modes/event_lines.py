"""Events as JSON lines, one line per event in pi's wire shape (``session_event_to_json``).

As in pi 1.x each streamed delta is its own ``message_update`` line, carrying only the new piece and
the reply's usage so far; the deltas of a block add up to its text, and ``message_end`` carries the
whole message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau._unicode import dumps
from tau.runtime.events import session_event_to_json

__all__ = ["EventLineWriter", "dumps"]


class EventLineWriter:
    """Writes each session event it is called with as one JSON line through ``write_line``."""

    def __init__(self, write_line: Callable[[str], None]) -> None:
        self._write_line = write_line

    def __call__(self, event: Any) -> None:
        self._write_line(dumps(session_event_to_json(event, include_partials=False)))
