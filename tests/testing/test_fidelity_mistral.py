"""The official ``mistralai`` client must accept the fake server's Mistral chat streams as real ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mistralai.client import Mistral
from mistralai.client.errors import SDKError

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer) -> Mistral:
    return Mistral(api_key="mistral-key", server_url=server.url("/mistral"))


def _stream(server: FakeLLMServer, messages: list[Any], **kwargs: Any) -> list[Any]:
    return [
        event.data
        for event in _client(server).chat.stream(model="magistral-medium-latest", messages=messages, **kwargs)
    ]


def test_the_client_parses_thinking_text_and_usage(server: FakeLLMServer) -> None:
    server.add(
        Turn(thinking="Weigh it.", text="Forty-two.", usage=ScriptedUsage(input=20, output=7, cache_read=5))
    )
    chunks = _stream(server, [{"role": "user", "content": "answer?"}])
    text = "".join(c.choices[0].delta.content for c in chunks if isinstance(c.choices[0].delta.content, str))
    thinking = [
        part.thinking[0].text
        for c in chunks
        if isinstance(c.choices[0].delta.content, list)
        for part in c.choices[0].delta.content
    ]
    assert text == "Forty-two."
    assert "".join(thinking) == "Weigh it."
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (25, 7)
    assert server.last_request.headers["authorization"] == "Bearer mistral-key"


def test_the_client_parses_a_whole_tool_call_in_one_delta(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "a.py"})]))
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    chunks = _stream(server, [{"role": "user", "content": "read a.py"}], tools=tools)
    calls = [call for c in chunks for call in (c.choices[0].delta.tool_calls or [])]
    assert len(calls) == 1
    assert calls[0].function.name == "read"
    assert json.loads(calls[0].function.arguments) == {"path": "a.py"}
    assert len(calls[0].id) == 9 and calls[0].id.isalnum()
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_a_tool_call_id_mistral_would_refuse_is_a_400(server: FakeLLMServer) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "call_abc|fc_1", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_abc|fc_1", "name": "read", "content": "x"},
    ]
    with pytest.raises(SDKError) as caught:
        _stream(server, messages)
    assert caught.value.status_code == 400
    assert "length of 9" in caught.value.body


def test_a_user_message_before_the_tool_results_is_a_400(server: FakeLLMServer) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "abcDEF123", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "user", "content": "never mind"},
    ]
    with pytest.raises(SDKError) as caught:
        _stream(server, messages)
    assert "Not the same number of function calls and responses" in caught.value.body
