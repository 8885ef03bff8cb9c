"""What an ``AgentSession`` reports: the agent's events plus the session's own.

Session events are dataclasses with a ``type`` of pi's names and a ``to_json()`` giving pi's
shape. ``session_event_to_json`` turns any event a session listener receives into JSON for the
JSON and RPC modes.

Where tau differs from pi: by default (``include_partials=False``) a ``message_update`` carries only
the provider event without its ``partial`` message, and no ``message`` key, so a reply of N bytes
streams as O(N) output instead of O(N²); ``message_end`` still carries the whole message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from tau.agent.events import AgentEvent, MessageUpdate, agent_event_to_json
from tau.ai.events import event_to_json
from tau.ai.types import JsonObject, ThinkingLevelOrOff

__all__ = [
    "AgentSessionEvent",
    "QueueUpdate",
    "SessionEvent",
    "SessionInfoChanged",
    "ThinkingLevelChanged",
    "session_event_to_json",
]


@dataclass(slots=True)
class QueueUpdate:
    """The texts waiting in the steering and follow-up queues changed."""

    steering: list[str]
    follow_up: list[str]
    type: Literal["queue_update"] = field(default="queue_update", init=False)

    def to_json(self) -> JsonObject:
        return {"type": self.type, "steering": list(self.steering), "followUp": list(self.follow_up)}


@dataclass(slots=True)
class ThinkingLevelChanged:
    level: ThinkingLevelOrOff
    type: Literal["thinking_level_changed"] = field(default="thinking_level_changed", init=False)

    def to_json(self) -> JsonObject:
        return {"type": self.type, "level": self.level}


@dataclass(slots=True)
class SessionInfoChanged:
    """The session's display name changed (``None``: cleared)."""

    name: str | None
    type: Literal["session_info_changed"] = field(default="session_info_changed", init=False)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": self.type}
        if self.name is not None:
            out["name"] = self.name
        return out


SessionEvent: TypeAlias = QueueUpdate | ThinkingLevelChanged | SessionInfoChanged
AgentSessionEvent: TypeAlias = AgentEvent | SessionEvent


def session_event_to_json(event: AgentSessionEvent, *, include_partials: bool = False) -> JsonObject:
    """``event`` in pi's JSON shape; without ``include_partials`` a ``message_update`` is only its delta."""
    if isinstance(event, MessageUpdate) and not include_partials:
        return {
            "type": event.type,
            "assistantMessageEvent": event_to_json(event.assistant_message_event, include_partial=False),
        }
    if isinstance(event, (QueueUpdate, ThinkingLevelChanged, SessionInfoChanged)):
        return event.to_json()
    return agent_event_to_json(event, include_partial=True)
