"""Agent events: pi's type names and camelCase JSON."""

from __future__ import annotations

from tau.agent.events import (
    AgentEnd,
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
from tau.agent.tool import AgentToolResult, text_result
from tau.ai import TextContent, TextDeltaEvent, ToolResultMessage, UserMessage
from tau.testing.faux import faux_message


def test_event_type_names_are_pi_s() -> None:
    reply = faux_message("x")
    events = [
        AgentStart(),
        AgentEnd([]),
        TurnStart(),
        TurnEnd(reply, []),
        MessageStart(reply),
        MessageUpdate(reply, TextDeltaEvent(0, "x", reply)),
        MessageEnd(reply),
        ToolExecutionStart("c", "t", {}),
        ToolExecutionUpdate("c", "t", {}, text_result("p")),
        ToolExecutionEnd("c", "t", text_result("r"), False),
    ]
    assert [e.type for e in events] == [
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
    ]


def test_tool_events_serialise_with_camel_case_keys() -> None:
    assert agent_event_to_json(ToolExecutionStart("c1", "read", {"path": "a"})) == {
        "type": "tool_execution_start",
        "toolCallId": "c1",
        "toolName": "read",
        "args": {"path": "a"},
    }
    update = agent_event_to_json(ToolExecutionUpdate("c1", "read", {}, text_result("half")))
    assert update["partialResult"] == {"content": [{"type": "text", "text": "half"}]}
    end = agent_event_to_json(
        ToolExecutionEnd("c1", "read", AgentToolResult([TextContent("done")], {"n": 1}, terminate=True), True)
    )
    assert end == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "read",
        "result": {"content": [{"type": "text", "text": "done"}], "details": {"n": 1}, "terminate": True},
        "isError": True,
    }


def test_message_events_serialise_their_messages() -> None:
    reply = faux_message("hello")
    result = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent("ok")], timestamp=3)
    turn = agent_event_to_json(TurnEnd(reply, [result]))
    assert turn["message"]["role"] == "assistant"
    assert turn["toolResults"] == [result.to_json()]
    update = agent_event_to_json(MessageUpdate(reply, TextDeltaEvent(0, "he", reply)), include_partial=False)
    assert update["assistantMessageEvent"] == {"type": "text_delta", "contentIndex": 0, "delta": "he"}
    user = UserMessage("hi", timestamp=2)
    assert agent_event_to_json(AgentEnd([user])) == {
        "type": "agent_end",
        "messages": [user.to_json()],
        "willRetry": False,
    }
    assert agent_event_to_json(MessageStart(user))["message"] == user.to_json()
