"""What an ``AgentSession`` reports: the agent's events plus the session's own.

Session events are dataclasses with a ``type`` of pi's names and a ``to_json()`` giving pi's
shape. ``session_event_to_json`` turns any event a session listener receives into JSON for the
JSON and RPC modes.

As in pi 1.x, by default (``include_partials=False``) a ``message_update`` carries only the provider
event without its ``partial`` message, plus the reply's ``usage`` so far, and no ``message`` key, so a
reply of N bytes streams as O(N) output instead of O(N²); a ``toolcall_start`` names the call's ``id``
and ``toolName``. ``message_end`` still carries the whole message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

from msgspec import Struct

from tau.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
    agent_event_to_json,
)
from tau.ai.events import AssistantMessageEvent, ToolCallStartEvent, event_to_json
from tau.ai.types import JsonObject, JsonRecord, ThinkingLevelOrOff, ToolCall
from tau.session.entries import SessionEntry

if TYPE_CHECKING:
    from tau.compaction.summarize import CompactionResult  # the summariser loads on the first compaction

__all__ = [
    "AgentSessionEvent",
    "AgentSettled",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CompactionEnd",
    "CompactionReason",
    "CompactionStart",
    "EntryAppended",
    "QueueUpdate",
    "SessionEvent",
    "SessionInfoChanged",
    "SummarizationRetryAttemptStart",
    "SummarizationRetryEvent",
    "SummarizationRetryFinished",
    "SummarizationRetryScheduled",
    "SummarizationSource",
    "ThinkingLevelChanged",
    "session_event_to_json",
]


class AgentSettled(JsonRecord, tag_field="type", tag="agent_settled"):
    """The session will not go on by itself: the run, its retries, a compaction's continuation and
    the queued messages are all over. ``aborted``: the run ended because it was aborted."""

    aborted: bool
    type: ClassVar[Literal["agent_settled"]] = "agent_settled"


class EntryAppended(Struct):
    """An extension added an entry of its own to the session file (``append_entry``)."""

    entry: SessionEntry
    type: ClassVar[Literal["entry_appended"]] = "entry_appended"

    def to_json(self) -> JsonObject:
        return {"type": self.type, "entry": self.entry.to_json()}


class QueueUpdate(JsonRecord, tag_field="type", tag="queue_update"):
    """The texts waiting in the steering and follow-up queues changed."""

    steering: list[str]
    follow_up: list[str]
    type: ClassVar[Literal["queue_update"]] = "queue_update"


class ThinkingLevelChanged(JsonRecord, tag_field="type", tag="thinking_level_changed"):
    level: ThinkingLevelOrOff
    type: ClassVar[Literal["thinking_level_changed"]] = "thinking_level_changed"


class SessionInfoChanged(JsonRecord, tag_field="type", tag="session_info_changed"):
    """The session's display name changed (``None``: cleared)."""

    name: str | None = None
    type: ClassVar[Literal["session_info_changed"]] = "session_info_changed"


class AutoRetryStart(JsonRecord, tag_field="type", tag="auto_retry_start"):
    """A transient provider error ended the run; the session retries after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[Literal["auto_retry_start"]] = "auto_retry_start"


class AutoRetryEnd(JsonRecord, tag_field="type", tag="auto_retry_end"):
    """A retry chain is over: a reply came through, the retries ran out, or it was cancelled."""

    success: bool
    attempt: int
    final_error: str | None = None
    type: ClassVar[Literal["auto_retry_end"]] = "auto_retry_end"


CompactionReason: TypeAlias = Literal["manual", "threshold", "overflow"]


class CompactionStart(JsonRecord, tag_field="type", tag="compaction_start"):
    """A compaction began: asked for (``manual``), the context neared the window (``threshold``),
    or the provider refused it as too long (``overflow``)."""

    reason: CompactionReason
    type: ClassVar[Literal["compaction_start"]] = "compaction_start"


class CompactionEnd(Struct):
    """A compaction ended: with its ``result``, ``aborted``, failed (``error_message``), or with
    nothing to do (no result, no error). ``will_retry``: the agent continues by itself."""

    reason: CompactionReason
    result: CompactionResult | None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: ClassVar[Literal["compaction_end"]] = "compaction_end"

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "reason": self.reason}
        if self.result is not None:  # absent otherwise, as pi 1.x writes it (0.73 wrote null)
            out["result"] = self.result.to_json()
        out["aborted"] = self.aborted
        out["willRetry"] = self.will_retry
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        return out


SummarizationSource: TypeAlias = Literal["compaction", "branchSummary"]


class SummarizationRetryScheduled(JsonRecord, tag_field="type", tag="summarization_retry_scheduled"):
    """A compaction or branch summary request failed for a passing reason; it is sent again after
    ``delay_ms`` (attempt ``attempt`` of at most ``max_attempts`` retries)."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: ClassVar[Literal["summarization_retry_scheduled"]] = "summarization_retry_scheduled"


class SummarizationRetryAttemptStart(JsonRecord, tag_field="type", tag="summarization_retry_attempt_start"):
    """The wait is over and the summary request is sent again; ``reason`` only for a compaction."""

    source: SummarizationSource
    reason: CompactionReason | None = None
    type: ClassVar[Literal["summarization_retry_attempt_start"]] = "summarization_retry_attempt_start"


class SummarizationRetryFinished(JsonRecord, tag_field="type", tag="summarization_retry_finished"):
    """A summary request that was retried is over (it came through, failed for good, or was aborted)."""

    type: ClassVar[Literal["summarization_retry_finished"]] = "summarization_retry_finished"


SummarizationRetryEvent: TypeAlias = (
    SummarizationRetryScheduled | SummarizationRetryAttemptStart | SummarizationRetryFinished
)
SessionEvent: TypeAlias = (
    AgentSettled
    | EntryAppended
    | QueueUpdate
    | ThinkingLevelChanged
    | SessionInfoChanged
    | AutoRetryStart
    | AutoRetryEnd
    | CompactionStart
    | CompactionEnd
    | SummarizationRetryEvent
)
AgentSessionEvent: TypeAlias = AgentEvent | SessionEvent


def session_event_to_json(event: AgentSessionEvent, *, include_partials: bool = False) -> JsonObject:
    """``event`` in pi's JSON shape; without ``include_partials`` a ``message_update`` is only its delta
    and the usage so far. Every other session event gives its own ``to_json()``, so one added later
    (a compaction's retries) passes through as it is."""
    if isinstance(event, MessageUpdate) and not include_partials:
        return {
            "type": event.type,
            "usage": event.message.usage.to_json(),
            "assistantMessageEvent": _delta_to_json(event.assistant_message_event),
        }
    if isinstance(event, _AGENT_EVENTS):
        return agent_event_to_json(event, include_partial=True)
    out: JsonObject = event.to_json()
    return out


_AGENT_EVENTS = (
    AgentStart,
    AgentEnd,
    TurnStart,
    TurnEnd,
    MessageStart,
    MessageUpdate,
    MessageEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolExecutionEnd,
)


def _delta_to_json(event: AssistantMessageEvent) -> JsonObject:
    out = event_to_json(event, include_partial=False)
    if isinstance(event, ToolCallStartEvent):
        blocks = event.partial.content
        call = blocks[event.content_index] if event.content_index < len(blocks) else None
        if isinstance(call, ToolCall):
            out["id"] = call.id
            out["toolName"] = call.name
    return out
