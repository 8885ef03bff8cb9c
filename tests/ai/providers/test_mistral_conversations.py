"""The mistral-conversations provider: request shape, Mistral's id and order rules, stream and errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tau.ai import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete,
    stream_simple,
)
from tau.ai.providers.mistral_conversations import ToolCallIds, derive_tool_call_id
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

READ_TOOL = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def mistral_model(server: FakeLLMServer, **changes: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "mistral-medium-latest",
        "api": "mistral-conversations",
        "provider": "mistral",
        "base_url": server.url("/mistral"),
        "input": ["text", "image"],
    }
    fields.update(changes)
    return Model(**fields)


def foreign_turn(call_id: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent("Looking."), ToolCall(call_id, "read", {"path": "a.py"})],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )


async def test_a_text_turn_with_thinking_streams_into_blocks_with_usage(server: FakeLLMServer) -> None:
    server.add(
        Turn(thinking="Think first.", text="Answer.", usage=ScriptedUsage(input=30, output=9, cache_read=10))
    )
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="mk")
    assert reply.stop_reason == "stop", reply.error_message
    assert [b.type for b in reply.content] == ["thinking", "text"]
    assert (reply.content[0].thinking, reply.text()) == ("Think first.", "Answer.")  # type: ignore[union-attr]
    assert (reply.usage.input, reply.usage.cache_read, reply.usage.output) == (30, 10, 9)
    assert reply.response_id


async def test_the_request_has_the_system_prompt_tools_and_auth(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    context = Context(system_prompt="Be brief.", messages=[UserMessage("hi")], tools=[READ_TOOL])
    await complete(
        mistral_model(server), context, api_key="mk", session_id="sess-9", max_tokens=100, temperature=0.2
    )
    request = server.last_request
    assert request.path == "/mistral/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer mk"
    assert request.headers["x-affinity"] == "sess-9"
    body = request.body
    assert body["messages"][:2] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"][0]["function"]["name"] == "read"
    assert body["tools"][0]["function"]["strict"] is False
    assert (body["max_tokens"], body["temperature"], body["prompt_cache_key"]) == (100, 0.2, "sess-9")


async def test_a_tool_call_round_trip_keeps_mistrals_own_id(server: FakeLLMServer) -> None:
    server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "a.py"}, id="aB3dE6gH9")]), Turn(text="Done.")
    )
    model = mistral_model(server)
    context = Context(messages=[UserMessage("read a.py")], tools=[READ_TOOL])
    first = await complete(model, context, api_key="mk")
    assert first.stop_reason == "toolUse", first.error_message
    call = first.tool_calls()[0]
    assert (call.id, call.arguments) == ("aB3dE6gH9", {"path": "a.py"})
    context.messages += [first, ToolResultMessage(call.id, "read", [TextContent("x = 1")])]
    second = await complete(model, context, api_key="mk")
    assert second.text() == "Done.", second.error_message
    assistant, tool = server.last_request.body["messages"][1:3]
    assert assistant["tool_calls"][0]["id"] == "aB3dE6gH9" and assistant["prefix"] is False
    assert tool == {
        "role": "tool",
        "tool_call_id": "aB3dE6gH9",
        "name": "read",
        "content": [{"type": "text", "text": "x = 1"}],
    }


async def test_a_foreign_tool_call_id_maps_to_the_same_valid_id_on_every_request(
    server: FakeLLMServer,
) -> None:
    foreign_id = "call_abc|fc_" + "x" * 60
    context = Context(
        messages=[
            UserMessage("look"),
            foreign_turn(foreign_id),
            ToolResultMessage(foreign_id, "read", [TextContent("x = 1")], is_error=True),
        ],
        tools=[READ_TOOL],
    )
    ids = []
    for _ in range(2):
        server.add(Turn(text="It sets x."))
        reply = await complete(mistral_model(server), context, api_key="mk")
        assert reply.stop_reason == "stop", reply.error_message  # the fake refuses invalid ids
        messages = server.last_request.body["messages"]
        ids.append((messages[1]["tool_calls"][0]["id"], messages[2]["tool_call_id"]))
        assert messages[2]["content"][0]["text"] == "[tool error] x = 1"
    assert ids[0] == ids[1]
    assert ids[0][0] == ids[0][1] == derive_tool_call_id(foreign_id)


async def test_an_unanswered_foreign_call_gets_a_result_before_the_next_user_message(
    server: FakeLLMServer,
) -> None:
    context = Context(messages=[UserMessage("look"), foreign_turn("toolu_01"), UserMessage("never mind")])
    server.add(Turn(text="Fine."))
    reply = await complete(mistral_model(server), context, api_key="mk")
    assert reply.stop_reason == "stop", reply.error_message
    roles = [m["role"] for m in server.last_request.body["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]


def test_clashing_ids_get_distinct_ids_in_conversation_order() -> None:
    ids = ToolCallIds()
    first = ids("ab-cd-ef-ghi")  # already nine alphanumerics once the dashes go
    second = ids("abcdefghi")
    assert first == "abcdefghi"
    assert second != first and len(second) == 9 and second.isalnum()
    assert ids("ab-cd-ef-ghi") == first


async def test_a_reasoning_level_uses_prompt_mode_or_the_level_map(server: FakeLLMServer) -> None:
    server.add(Turn(text="a"), Turn(text="b"))
    await stream_simple(
        mistral_model(server, reasoning=True),
        Context(messages=[UserMessage("hi")]),
        api_key="mk",
        reasoning="low",
    ).result()
    assert server.last_request.body["prompt_mode"] == "reasoning"
    mapped = mistral_model(server, reasoning=True, thinking_level_map={"off": "none", "low": "low"})
    await stream_simple(mapped, Context(messages=[UserMessage("hi")]), api_key="mk").result()
    body = server.last_request.body
    assert body["reasoning_effort"] == "none" and "prompt_mode" not in body


async def test_a_foreign_thinking_block_travels_as_text(server: FakeLLMServer) -> None:
    turn = AssistantMessage(
        content=[ThinkingContent("hidden plan", thinking_signature="sig"), TextContent("Hi.")],
        api="anthropic-messages",
        provider="anthropic",
        model="claude",
    )
    server.add(Turn(text="ok"))
    await complete(
        mistral_model(server), Context(messages=[UserMessage("a"), turn, UserMessage("b")]), api_key="mk"
    )
    assistant = server.last_request.body["messages"][1]
    assert assistant["content"] == [{"type": "text", "text": "hidden plan"}, {"type": "text", "text": "Hi."}]
    assert "sig" not in str(server.last_request.body)


@pytest.mark.parametrize(("finish", "reason"), [("length", "length"), ("model_length", "length")])
async def test_length_finishes_stop_with_length(server: FakeLLMServer, finish: str, reason: str) -> None:
    server.add(Turn(text="cut", stop_reason=finish))
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="mk")
    assert reply.stop_reason == reason
    assert reply.raw_stop_reason == finish  # the provider's own word, kept as pi 1.6 keeps it


async def test_an_error_finish_is_a_retryable_server_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="oops", stop_reason="error"))
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="mk")
    assert reply.stop_reason == "error"
    assert reply.error_message == "Provider stopped with: error (server error)"


async def test_a_bad_key_is_a_401_with_mistrals_message(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401, body={"message": "Unauthorized", "request_id": "r1"})))
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="wrong")
    assert reply.stop_reason == "error"
    assert reply.error_message == "401 Unauthorized"


async def test_a_429_is_retried(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"retry-after": "0"})), Turn(text="ok"))
    reply = await complete(
        mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="mk", max_retries=1
    )
    assert reply.text() == "ok", reply.error_message


async def test_a_stream_without_a_finish_reason_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="x" * 40, chunk_size=10, fault=Fault("truncate", after_events=3)))
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]), api_key="mk")
    assert reply.stop_reason == "error"
    assert "finish reason" in (reply.error_message or "")


async def test_no_key_names_the_variable(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    reply = await complete(mistral_model(server), Context(messages=[UserMessage("hi")]))
    assert "MISTRAL_API_KEY" in (reply.error_message or "")
