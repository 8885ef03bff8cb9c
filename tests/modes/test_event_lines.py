"""JSON lines for session events in pi 1.x's wire shape: one line per event, deltas as they came."""

from __future__ import annotations

import json
from typing import Any

from tau.agent.events import MessageEnd, MessageUpdate
from tau.ai import AssistantMessage, TextContent, TextDeltaEvent, ToolCall
from tau.ai.events import ToolCallStartEvent
from tau.ai.types import Usage
from tau.modes.event_lines import EventLineWriter
from tau.runtime.events import AgentSettled

MESSAGE = AssistantMessage(
    content=[TextContent("abc")], api="a", provider="p", model="m", usage=Usage(input=7, output=3)
)


def _writer() -> tuple[EventLineWriter, list[dict[str, Any]]]:
    lines: list[dict[str, Any]] = []
    return EventLineWriter(lambda line: lines.append(json.loads(line))), lines


def test_each_delta_is_its_own_line_with_the_usage_so_far_and_no_partial() -> None:
    writer, lines = _writer()
    for piece in ("a", "b", "c"):
        writer(MessageUpdate(message=MESSAGE, assistant_message_event=TextDeltaEvent(0, piece, MESSAGE)))
    writer(MessageEnd(message=MESSAGE))
    assert [line["assistantMessageEvent"]["delta"] for line in lines[:3]] == ["a", "b", "c"]
    assert set(lines[0]) == {"type", "usage", "assistantMessageEvent"}
    assert lines[0]["usage"]["input"] == 7 and lines[0]["usage"]["totalTokens"] == MESSAGE.usage.total_tokens
    assert lines[3]["type"] == "message_end"


def test_a_toolcall_start_names_the_call_id_and_tool() -> None:
    partial = AssistantMessage(
        content=[ToolCall(id="call_1", name="read", arguments={})], api="a", provider="p", model="m"
    )
    writer, lines = _writer()
    writer(MessageUpdate(message=partial, assistant_message_event=ToolCallStartEvent(0, partial)))
    assert lines[0]["assistantMessageEvent"] == {
        "type": "toolcall_start",
        "contentIndex": 0,
        "id": "call_1",
        "toolName": "read",
    }


def test_a_session_event_is_written_in_its_own_shape() -> None:
    writer, lines = _writer()
    writer(AgentSettled(aborted=True))
    assert lines == [{"type": "agent_settled", "aborted": True}]
