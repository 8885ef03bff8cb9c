"""The official ``openai`` client must accept the fake server's Chat Completions streams as real ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

openai = pytest.importorskip("openai")

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer) -> Any:
    return openai.OpenAI(base_url=server.url("/v1"), api_key="x", max_retries=0)


def _stream(server: FakeLLMServer, **kwargs: Any) -> list[Any]:
    chunks = _client(server).chat.completions.create(
        model="gpt-4o", messages=MESSAGES, stream=True, stream_options={"include_usage": True}, **kwargs
    )
    return list(chunks)


def test_the_sdk_streams_a_text_turn_and_its_usage_chunk(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            text="Hello from the fake server",
            usage=ScriptedUsage(input=12, output=6, cache_read=4, reasoning=2),
        )
    )
    chunks = _stream(server)
    with_choices = [c for c in chunks if c.choices]
    assert with_choices[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in with_choices) == "Hello from the fake server"
    assert with_choices[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" and c.model == "gpt-4o" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    usage = chunks[-1].usage
    assert chunks[-1].choices == []
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (16, 6, 22)
    assert usage.prompt_tokens_details.cached_tokens == 4
    assert usage.completion_tokens_details.reasoning_tokens == 2


def test_the_sdk_accumulates_parallel_tool_calls(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("read", {"path": "src/main.py"}, id="call_a"),
                ScriptedToolCall("grep", {"pattern": "TODO"}, id="call_b"),
            ],
            chunk_size=5,
        )
    )
    calls: dict[int, dict[str, str]] = {}
    chunks = _stream(server, tools=[{"type": "function", "function": {"name": "read", "parameters": {}}}])
    for chunk in chunks:
        for part in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += part.id or ""
            entry["name"] += (part.function.name or "") if part.function else ""
            entry["arguments"] += (part.function.arguments or "") if part.function else ""
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        ("call_a", "read", {"path": "src/main.py"}),
        ("call_b", "grep", {"pattern": "TODO"}),
    ]
    assert [c for c in chunks if c.choices][-1].choices[0].finish_reason == "tool_calls"


def test_the_sdk_stream_helper_builds_the_final_completion(server: FakeLLMServer) -> None:
    server.add(
        Turn(thinking="pondering", text="Answer", tool_calls=[ScriptedToolCall("read", {"path": "a"})])
    )
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    with _client(server).chat.completions.stream(model="gpt-4o", messages=MESSAGES, tools=tools) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Answer"
    assert message.tool_calls[0].function.name == "read"
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "a"}
    assert final.choices[0].finish_reason == "tool_calls"


def test_reasoning_content_arrives_as_an_extra_delta_field(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="step by step", text="done"))
    chunks = _stream(server)
    reasoning = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content", "") for c in chunks if c.choices
    )
    assert reasoning == "step by step"


def test_the_sdk_reads_error_statuses_in_openais_shape(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401)))
    with pytest.raises(openai.AuthenticationError) as caught:
        _stream(server)
    assert caught.value.status_code == 401
    assert caught.value.code == "invalid_api_key"
    assert "fake server error 401" in caught.value.message


def test_the_sdk_reads_a_whole_answer_and_openrouters_images(server: FakeLLMServer) -> None:
    server.add(
        Turn(text="A fox.", usage=ScriptedUsage(input=7, output=1290), response_id="gen-1"),
        Turn(text="Plain.", tool_calls=[ScriptedToolCall("lookup", {"q": 1}, id="call_1")]),
    )
    client = _client(server)
    painted = client.chat.completions.create(
        model="google/gemini-2.5-flash-image",
        messages=MESSAGES,
        stream=False,
        extra_body={"modalities": ["image", "text"]},
    )
    assert painted.id == "gen-1" and painted.object == "chat.completion"
    message = painted.choices[0].message
    assert message.content == "A fox." and painted.choices[0].finish_reason == "stop"
    images = message.model_extra["images"]  # OpenRouter's field, beyond OpenAI's schema
    assert [image["image_url"]["url"][:22] for image in images] == ["data:image/png;base64,"]
    assert (painted.usage.prompt_tokens, painted.usage.completion_tokens) == (7, 1290)
    plain = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=False)
    assert "images" not in (plain.choices[0].message.model_extra or {})
    call = plain.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "lookup",
        {"q": 1},
    )
    assert plain.choices[0].finish_reason == "tool_calls"
