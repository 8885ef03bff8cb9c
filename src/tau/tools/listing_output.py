"""The result of a tool that lists things (grep, find, ls): lines within the byte budget, then notes."""

from __future__ import annotations

import sys
from typing import Any

from tau.agent.tool import AgentToolResult, text_result
from tau.ai.types import JsonObject
from tau.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head


class ListingOutput:
    """Lines cut to the byte budget, followed by one bracketed line of notes telling the model what
    was left out and how to get it. ``details`` records the same for the UI."""

    def __init__(self, lines: list[str], *, limit_reached: tuple[str, str, int] | None = None) -> None:
        """``limit_reached`` = (notice, details key, limit) when the tool stopped at its count limit."""
        self._cut = truncate_head("\n".join(lines), max_lines=sys.maxsize)
        self._notices: list[str] = []
        self.details: JsonObject = {}
        if limit_reached is not None:
            notice, key, limit = limit_reached
            self.note(notice, key, limit)
        if self._cut.truncated:
            self.note(f"{format_size(DEFAULT_MAX_BYTES)} limit reached", "truncation", self._cut.to_json())

    def note(self, notice: str, key: str | None = None, value: Any = None) -> None:
        self._notices.append(notice)
        if key is not None:
            self.details[key] = value

    def result(self) -> AgentToolResult:
        notes = f"\n\n[{'. '.join(self._notices)}]" if self._notices else ""
        return text_result(self._cut.content + notes, self.details or None)
