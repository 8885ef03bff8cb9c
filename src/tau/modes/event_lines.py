"""Events as JSON lines, with streamed deltas merged when they arrive in a burst.

A fast stream sends hundreds of deltas of a few characters each; one line per delta makes a consumer
parse a hundred bytes of framing per handful of characters. Deltas of the same block that arrive
within ``window_s`` of the first pending one are merged into one ``message_update`` line (their texts
concatenated, so the deltas still add up to the whole block). Any other event flushes what is pending
first, so the order of events is unchanged.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from tau.agent.events import MessageUpdate
from tau.ai.events import TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent
from tau.runtime.events import session_event_to_json

_DELTA_EVENTS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)


def dumps(data: Any) -> str:
    """Compact JSON as JavaScript writes it (no spaces, non-ASCII kept)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class EventLineWriter:
    """Writes session events as JSON lines through ``write_line``; call ``flush()`` at the end."""

    def __init__(self, write_line: Callable[[str], None], *, window_s: float = 0.025) -> None:
        self._write_line = write_line
        self._window_s = window_s
        self._pending: dict[str, Any] | None = None
        self._pieces: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def __call__(self, event: Any) -> None:
        if isinstance(event, MessageUpdate) and isinstance(event.assistant_message_event, _DELTA_EVENTS):
            delta = event.assistant_message_event
            key = (delta.type, delta.content_index)
            if self._pending is not None and (
                (self._pending["type"], self._pending["contentIndex"]) == key
            ):
                self._pieces.append(delta.delta)
                return
            self.flush()
            self._pending = {"type": delta.type, "contentIndex": delta.content_index}
            self._pieces = [delta.delta]
            self._arm_timer()
            return
        self.flush()
        self._write_line(dumps(session_event_to_json(event, include_partials=False)))

    def flush(self) -> None:
        """Write the merged delta that is waiting, if any."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending is None:
            return
        update = {**self._pending, "delta": "".join(self._pieces)}
        self._pending = None
        self._pieces = []
        self._write_line(dumps({"type": "message_update", "assistantMessageEvent": update}))

    def _arm_timer(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(self._window_s, self.flush)
