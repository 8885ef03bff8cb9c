"""A session listener that keeps every event, for assertions on what a run emitted (tests only)."""

from __future__ import annotations

from typing import Any


class EventLog:
    """A session listener keeping every event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]
