"""The official ``openai`` client must accept the fake server's Responses streams as real ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn

openai = pytest.importorskip("openai")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer) -> Any:
    return openai.OpenAI(base_url=server.url("/v1"), api_key="x", max_retries=0)


def test_the_sdk_stream_helper_assembles_a_text_turn(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello from the fake server", usage=ScriptedUsage(input=12, output=6, cache_read=4)))
    with _client(server).responses.stream(model="gpt-5", input="hi") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Hello from the fake server"
    assert final.output_text == "Hello from the fake server"
    assert final.status == "completed"
    assert final.usage is not None
    assert final.usage.input_tokens == 16
    assert final.usage.input_tokens_details.cached_tokens == 4
    assert final.usage.output_tokens == 6


def test_the_sdk_parses_a_reasoning_turn_with_encrypted_content(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="First idea.\n\nSecond idea.", text="Answer", thinking_signature="enc-123"))
    with _client(server).responses.stream(
        model="gpt-5",
        input="think",
        reasoning={"effort": "low", "summary": "auto"},
        include=["reasoning.encrypted_content"],
    ) as stream:
        summary_deltas = [e.delta for e in stream if e.type == "response.reasoning_summary_text.delta"]
        final = stream.get_final_response()
    reasoning = final.output[0]
    assert reasoning.type == "reasoning"
    assert [part.text for part in reasoning.summary] == ["First idea.", "Second idea."]
    assert reasoning.encrypted_content == "enc-123"
    assert "".join(summary_deltas) == "First idea.Second idea."
    assert final.output_text == "Answer"


def test_the_sdk_parses_a_function_call_turn(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "src/main.py"}, id="call_abc")]))
    tools = [{"type": "function", "name": "read", "parameters": {"type": "object"}, "strict": False}]
    with _client(server).responses.stream(model="gpt-5", input="read it", tools=tools) as stream:
        argument_deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    call = final.output[0]
    assert call.type == "function_call"
    assert call.call_id == "call_abc"
    assert call.name == "read"
    assert json.loads(call.arguments) == {"path": "src/main.py"}
    assert json.loads("".join(argument_deltas)) == {"path": "src/main.py"}


def test_raw_create_stream_yields_typed_events_in_sequence(server: FakeLLMServer) -> None:
    server.add(Turn(text="abc", thinking="why", tool_calls=[ScriptedToolCall("ls", {})]))
    events = list(_client(server).responses.create(model="gpt-5", input="go", stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]


def test_an_incomplete_turn_ends_with_response_incomplete(server: FakeLLMServer) -> None:
    server.add(Turn(text="cut", stop_reason="incomplete"))
    events = list(_client(server).responses.create(model="gpt-5", input="go", stream=True))
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.status == "incomplete"
    assert last.response.incomplete_details.reason == "max_output_tokens"


def test_an_error_status_raises_the_sdk_error_with_openais_message(server: FakeLLMServer) -> None:
    from tau.testing.fake_llm import Fault

    server.add(Turn(fault=Fault("status", status=401)))
    with pytest.raises(openai.AuthenticationError) as caught:
        _client(server).responses.create(model="gpt-5", input="go", stream=True)
    assert caught.value.code == "invalid_api_key"
    assert "fake server error 401" in str(caught.value)
