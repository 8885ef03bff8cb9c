"""What the agent loop reports: one dataclass per event, named and shaped as in pi.

Every event has a ``type`` string (``agent_start``, ``turn_end``, ``tool_execution_update``…).
``agent_event_to_json`` gives pi's JSON shape (camelCase keys) for RPC and logs.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

from msgspec import Struct

from tau.agent.messages import AgentMessage, message_to_json
from tau.agent.tool import AgentToolResult
from tau.ai.events import AssistantMessageEvent, event_to_json
from tau.ai.types import AssistantMessage, JsonObject, ToolResultMessage


class AgentStart(Struct):
    type: ClassVar[Literal["agent_start"]] = "agent_start"


class AgentEnd(Struct):
    """``messages``: every message this run created (prompts, injected, assistant, tool results).
    ``will_retry``: the session is going to retry the run (it sets this before its listeners see it)."""

    messages: list[AgentMessage]
    will_retry: bool = False
    type: ClassVar[Literal["agent_end"]] = "agent_end"


class TurnStart(Struct):
    type: ClassVar[Literal["turn_start"]] = "turn_start"


class TurnEnd(Struct):
    """The turn's assistant message and its tool results in call order (empty on error/abort)."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: ClassVar[Literal["turn_end"]] = "turn_end"


class MessageStart(Struct):
    message: AgentMessage
    type: ClassVar[Literal["message_start"]] = "message_start"


class MessageUpdate(Struct):
    """A streaming assistant message: a snapshot of the partial and the provider event behind it."""

    message: AssistantMessage
    assistant_message_event: AssistantMessageEvent
    type: ClassVar[Literal["message_update"]] = "message_update"


class MessageEnd(Struct):
    message: AgentMessage
    type: ClassVar[Literal["message_end"]] = "message_end"


class ToolExecutionStart(Struct):
    """``args`` are the raw arguments the model sent, before preparation and validation."""

    tool_call_id: str
    tool_name: str
    args: JsonObject
    parent_tool_call_id: str | None = None
    """Set for a call another tool made while it ran (a codemode script's, say): the caller's id."""
    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"


class ToolExecutionUpdate(Struct):
    tool_call_id: str
    tool_name: str
    args: JsonObject
    partial_result: AgentToolResult
    parent_tool_call_id: str | None = None
    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"


class ToolExecutionEnd(Struct):
    """The final result of one call, after the ``after_tool_call`` hook. ``duration_ms``: how long the
    tool's ``execute()`` took (monotonic clock); ``None`` when it did not run (unknown, blocked...)."""

    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None
    parent_tool_call_id: str | None = None
    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"


AgentEvent: TypeAlias = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
)


def tool_result_to_json(result: AgentToolResult) -> JsonObject:
    out: JsonObject = {"content": [block.to_json() for block in result.content]}
    if result.details is not None:  # absent rather than null, as pi writes it
        out["details"] = result.details
    if result.usage is not None:
        out["usage"] = result.usage.to_json()
    if result.terminate:
        out["terminate"] = True
    if result.structured_content is not None:
        out["structuredContent"] = result.structured_content
    if result.is_error:
        out["isError"] = True
    return out


def agent_event_to_json(event: AgentEvent, *, include_partial: bool = True) -> JsonObject:
    """The event in pi's JSON shape. ``include_partial=False`` drops the provider event's partial."""
    out: JsonObject = {"type": event.type}
    if isinstance(event, AgentEnd):
        out["messages"] = [message_to_json(m) for m in event.messages]
        out["willRetry"] = event.will_retry
    elif isinstance(event, TurnEnd):
        out["message"] = event.message.to_json()
        out["toolResults"] = [m.to_json() for m in event.tool_results]
    elif isinstance(event, MessageUpdate):
        out["message"] = event.message.to_json()
        out["assistantMessageEvent"] = event_to_json(
            event.assistant_message_event, include_partial=include_partial
        )
    elif isinstance(event, (MessageStart, MessageEnd)):
        out["message"] = message_to_json(event.message)
    elif isinstance(event, (ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd)):
        out["toolCallId"] = event.tool_call_id
        out["toolName"] = event.tool_name
        if isinstance(event, ToolExecutionEnd):
            out["result"] = tool_result_to_json(event.result)
            out["isError"] = event.is_error
            if event.duration_ms is not None:
                out["durationMs"] = event.duration_ms
        else:
            out["args"] = event.args
            if isinstance(event, ToolExecutionUpdate):
                out["partialResult"] = tool_result_to_json(event.partial_result)
        if event.parent_tool_call_id is not None:
            out["parentToolCallId"] = event.parent_tool_call_id
    return out
