"""A full tool loop through a real provider and the fake HTTP server (openai-completions)."""

from __future__ import annotations

from typing import Any

from tau.agent import Agent, AgentTool, AgentToolResult, text_result
from tau.ai import Model, ToolResultMessage
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn


async def test_a_tool_round_trip_over_openai_completions() -> None:
    received: list[dict[str, Any]] = []

    async def add(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        received.append(args)
        return text_result(str(args["a"] + args["b"]))

    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    tool = AgentTool(name="add", description="Add two integers", parameters=schema, execute=add)
    with FakeLLMServer() as server:
        server.add(
            Turn(text="Let me add.", tool_calls=[ScriptedToolCall("add", {"a": 2, "b": "3"}, id="call_1")]),
            Turn(text="The sum is 5."),
        )
        model = Model(id="fake-model", api="openai-completions", provider="fake", base_url=server.url("/v1"))
        agent = Agent(model=model, system_prompt="You add numbers.", tools=[tool], get_api_key=lambda p: "x")
        await agent.prompt("What is 2 + 3?")
        requests = server.requests

    assert agent.state.error_message is None, agent.state.error_message
    assert received == [{"a": 2, "b": 3}]
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result = agent.state.messages[2]
    assert isinstance(result, ToolResultMessage) and result.tool_call_id == "call_1"
    assert agent.state.messages[-1].text() == "The sum is 5."  # type: ignore[union-attr]
    assert len(requests) == 2
    second = requests[1].body
    assert second["tools"][0]["function"]["name"] == "add"
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1" and "5" in str(tool_message["content"])
    assert requests[1].headers.get("authorization") == "Bearer x"
