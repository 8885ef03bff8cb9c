"""The official ``anthropic`` client must accept the fake server's Messages streams as real ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-sonnet-4-5"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer) -> Any:
    return anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0)


def test_the_sdk_stream_helper_assembles_a_text_turn(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello from the fake server", usage=ScriptedUsage(input=12, output=6, cache_read=4)))
    messages = [{"role": "user", "content": "hi"}]
    with _client(server).messages.stream(model=MODEL, max_tokens=100, messages=messages) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(deltas) == "Hello from the fake server"
    assert [block.type for block in final.content] == ["text"]
    assert final.content[0].text == "Hello from the fake server"
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.cache_read_input_tokens, final.usage.output_tokens) == (
        12,
        4,
        6,
    )
    assert server.last_request.path == "/v1/messages"


def test_the_sdk_parses_a_thinking_turn_with_its_signature(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="Let me think it over.", thinking_signature="sig-abc", text="Answer"))
    with _client(server).messages.stream(
        model=MODEL,
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2048},
        messages=[{"role": "user", "content": "think"}],
    ) as stream:
        thinking_deltas = [e.thinking for e in stream if e.type == "thinking"]
        final = stream.get_final_message()
    thinking, text = final.content
    assert thinking.type == "thinking"
    assert thinking.thinking == "Let me think it over."
    assert thinking.signature == "sig-abc"
    assert "".join(thinking_deltas) == "Let me think it over."
    assert text.text == "Answer"


def test_the_sdk_parses_a_tool_use_turn(server: FakeLLMServer) -> None:
    calls = [
        ScriptedToolCall("read", {"path": "src/main.py", "limit": 20}, id="toolu_01"),
        ScriptedToolCall("bash", {"command": "ls -la"}, id="toolu_02"),
    ]
    server.add(Turn(text="Reading.", tool_calls=calls, chunk_size=5))
    tools = [
        {"name": "read", "description": "Read", "input_schema": {"type": "object"}},
        {"name": "bash", "description": "Run", "input_schema": {"type": "object"}},
    ]
    with _client(server).messages.stream(
        model=MODEL, max_tokens=100, tools=tools, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    text, first, second = final.content
    assert text.text == "Reading."
    assert (first.type, first.id, first.name, first.input) == (
        "tool_use",
        "toolu_01",
        "read",
        {"path": "src/main.py", "limit": 20},
    )
    assert (second.id, second.name, second.input) == ("toolu_02", "bash", {"command": "ls -la"})


def test_the_sdk_reads_an_error_status_in_the_anthropic_shape(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401)))
    with pytest.raises(anthropic.AuthenticationError) as raised:
        _client(server).messages.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.body["error"]["type"] == "authentication_error"
