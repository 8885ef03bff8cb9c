"""The official ``google-genai`` client must accept the fake server's Gemini streams as real ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

genai = pytest.importorskip("google.genai")
genai_types = pytest.importorskip("google.genai.types")
genai_errors = pytest.importorskip("google.genai.errors")

SIGNATURE = "c2lnbmF0dXJl"  # base64 of "signature"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer) -> Any:
    # The SDK appends "/v1beta/models/<id>:streamGenerateContent?alt=sse" to the bare origin.
    options = genai_types.HttpOptions(base_url=server.base_url, api_version="v1beta")
    return genai.Client(api_key="x", http_options=options)


def _parts(chunks: list[Any]) -> list[Any]:
    return [part for chunk in chunks for part in (chunk.candidates[0].content.parts or [])]


def test_the_sdk_streams_a_text_turn(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello from the fake server", usage=ScriptedUsage(input=12, output=6, cache_read=4)))
    client = _client(server)  # keep a reference: a collected client closes its connection pool
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert "".join(chunk.text for chunk in chunks) == "Hello from the fake server"
    final = chunks[-1]
    assert final.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert final.usage_metadata.prompt_token_count == 16
    assert final.usage_metadata.cached_content_token_count == 4
    assert final.usage_metadata.candidates_token_count == 6
    assert final.model_version == "gemini-2.5-flash"
    assert final.response_id
    assert server.last_request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert server.last_request.query == "alt=sse"


async def test_the_async_sdk_streams_a_thinking_turn(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            thinking="Weighing options.",
            thinking_signature=SIGNATURE,
            text="Answer.",
            usage=ScriptedUsage(input=5, output=30, reasoning=20),
        )
    )
    config = genai_types.GenerateContentConfig(
        thinking_config=genai_types.ThinkingConfig(include_thoughts=True, thinking_budget=1024)
    )
    client = _client(server)
    stream = await client.aio.models.generate_content_stream(
        model="gemini-2.5-pro", contents="think", config=config
    )
    chunks = [chunk async for chunk in stream]
    parts = _parts(chunks)
    thoughts = [p for p in parts if p.thought]
    assert "".join(p.text for p in thoughts) == "Weighing options."
    assert thoughts[-1].thought_signature == b"signature"
    assert "".join(p.text for p in parts if not p.thought) == "Answer."
    usage = chunks[-1].usage_metadata
    assert (usage.thoughts_token_count, usage.candidates_token_count) == (20, 10)


def test_the_sdk_parses_a_function_call_turn(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("read", {"path": "src/main.py"}),
                ScriptedToolCall("grep", {"pattern": "def", "paths": ["a", "b"]}, id="call-2"),
            ]
        )
    )
    tool = genai_types.Tool(
        function_declarations=[
            genai_types.FunctionDeclaration(name="read", parameters_json_schema={"type": "object"}),
            genai_types.FunctionDeclaration(name="grep", parameters_json_schema={"type": "object"}),
        ]
    )
    client = _client(server)
    chunks = list(
        client.models.generate_content_stream(
            model="gemini-2.5-flash",
            contents="read it",
            config=genai_types.GenerateContentConfig(tools=[tool]),
        )
    )
    calls = [part.function_call for part in _parts(chunks) if part.function_call]
    assert [(c.name, c.args, c.id) for c in calls] == [
        ("read", {"path": "src/main.py"}, None),
        ("grep", {"pattern": "def", "paths": ["a", "b"]}, "call-2"),
    ]
    assert chunks[-1].candidates[0].finish_reason == genai_types.FinishReason.STOP


def test_the_sdk_reports_the_error_body_of_a_failed_request(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=400)))
    client = _client(server)
    with pytest.raises(genai_errors.ClientError) as raised:
        list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert raised.value.code == 400
    assert raised.value.status == "INVALID_ARGUMENT"
    assert raised.value.message == "fake server error 400"
