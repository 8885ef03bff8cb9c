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
from tau.compaction.summarize import CompactionResult

__all__ = [
    "AgentSessionEvent",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CompactionEnd",
    "CompactionReason",
    "CompactionStart",
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


@dataclass(slots=True)
class AutoRetryStart:
    """A transient provider error ended the run; the session retries after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)

    def to_json(self) -> JsonObject:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "maxAttempts": self.max_attempts,
            "delayMs": self.delay_ms,
            "errorMessage": self.error_message,
        }


@dataclass(slots=True)
class AutoRetryEnd:
    """A retry chain is over: a reply came through, the retries ran out, or it was cancelled."""

    success: bool
    attempt: int
    final_error: str | None = None
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "success": self.success, "attempt": self.attempt}
        if self.final_error is not None:
            out["finalError"] = self.final_error
        return out


CompactionReason: TypeAlias = Literal["manual", "threshold", "overflow"]


@dataclass(slots=True)
class CompactionStart:
    """A compaction began: asked for (``manual``), the context neared the window (``threshold``),
    or the provider refused it as too long (``overflow``)."""

    reason: CompactionReason
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)

    def to_json(self) -> JsonObject:
        return {"type": self.type, "reason": self.reason}


@dataclass(slots=True)
class CompactionEnd:
    """A compaction ended: with its ``result``, ``aborted``, failed (``error_message``), or with
    nothing to do (no result, no error). ``will_retry``: the agent continues by itself."""

    reason: CompactionReason
    result: CompactionResult | None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "type": self.type,
            "reason": self.reason,
            "result": None if self.result is None else self.result.to_json(),  # null: pi's rpc.md
        }
        out["aborted"] = self.aborted
        out["willRetry"] = self.will_retry
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        return out


SessionEvent: TypeAlias = (
    QueueUpdate | ThinkingLevelChanged | SessionInfoChanged | AutoRetryStart | AutoRetryEnd
    | CompactionStart | CompactionEnd
)
AgentSessionEvent: TypeAlias = AgentEvent | SessionEvent


def session_event_to_json(event: AgentSessionEvent, *, include_partials: bool = False) -> JsonObject:
    """``event`` in pi's JSON shape; without ``include_partials`` a ``message_update`` is only its delta."""
    if isinstance(event, MessageUpdate) and not include_partials:
        return {
            "type": event.type,
            "assistantMessageEvent": event_to_json(event.assistant_message_event, include_partial=False),
        }
    if isinstance(event, (QueueUpdate, ThinkingLevelChanged, SessionInfoChanged, AutoRetryStart, AutoRetryEnd)):
        return event.to_json()
    if isinstance(event, (CompactionStart, CompactionEnd)):
        return event.to_json()
    return agent_event_to_json(event, include_partial=True)
