"""The google-generative-ai provider against the fake Gemini server: streams, errors, requests."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from msgspec.structs import replace

from tau.ai import (
    AbortSignal,
    AssistantMessage,
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    ImageContent,
    Model,
    ModelCost,
    SimpleStreamOptions,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete_simple,
    get_model,
)
from tau.ai.events import DoneEvent, ErrorEvent
from tau.ai.providers import google
from tau.ai.providers.google_convert import (
    SKIP_THOUGHT_SIGNATURE,
    build_request_body,
    schema_for_google,
    thinking_config,
)
from tau.ai.stream_writer import StreamWriter, run_stream
from tau.ai.transport.sse import ServerSentEvent
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

SIGNATURE = "c2lnbmF0dXJl"  # base64 of "signature"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _model(server: FakeLLMServer, model_id: str = "gemini-2.5-flash", **overrides: Any) -> Model:
    fields: dict[str, Any] = {"reasoning": True, "input": ["text", "image"]} | overrides
    return Model(
        id=model_id,
        api="google-generative-ai",
        provider="google",
        base_url=server.url("/v1beta"),
        **fields,
    )


def _context(*messages: Any, **kwargs: Any) -> Context:
    return Context(messages=list(messages) or [UserMessage("hi")], **kwargs)


def _options(**kwargs: Any) -> StreamOptions:
    return StreamOptions(api_key="test-key", **kwargs)


async def _run(
    model: Model, context: Context, options: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    stream = google.stream(model, context, options or _options())
    events = [event async for event in stream]
    return events, await stream.result()


def _assert_protocol(events: list[AssistantMessageEvent]) -> None:
    """Spec §2.2 invariants for a successful stream (test 10)."""
    types = [e.type for e in events]
    assert types[0] == "start" and types.count("start") == 1
    assert types[-1] == "done" and sum(t in ("done", "error") for t in types) == 1
    open_blocks: dict[int, str] = {}
    closed: set[int] = set()
    for event in events[1:-1]:
        kind, _, phase = event.type.rpartition("_")
        index = event.content_index  # type: ignore[union-attr]
        if phase == "start":
            assert index not in open_blocks and index not in closed
            open_blocks[index] = kind
        elif phase == "delta":
            assert open_blocks[index] == kind
        else:
            assert open_blocks.pop(index) == kind
            closed.add(index)
    assert not open_blocks


# --- streams --------------------------------------------------------------------------------------


async def test_a_text_turn_streams_one_text_block_in_chunks(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello from Gemini!", chunk_size=5, response_id="resp-1"))
    events, message = await _run(_model(server), _context())
    _assert_protocol(events)
    assert [e.type for e in events].count("text_delta") == 4
    assert message.text() == "Hello from Gemini!"
    assert message.stop_reason == "stop"
    assert message.response_id == "resp-1"
    assert message.response_model is None
    assert all(getattr(e, "partial", message) is message for e in events)


async def test_thought_parts_become_a_signed_thinking_block_before_the_text(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            thinking="Let me think about it.",
            thinking_signature=SIGNATURE,
            text="Answer.",
            response_model="gemini-2.5-flash-001",
        )
    )
    events, message = await _run(_model(server), _context())
    _assert_protocol(events)
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Let me think about it."
    assert thinking.thinking_signature == SIGNATURE
    assert isinstance(text, TextContent) and text.text == "Answer."
    assert [e.type for e in events if e.type.endswith(("_start", "_end"))] == [
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
    ]
    assert message.response_model == "gemini-2.5-flash-001"


async def test_function_calls_arrive_as_start_one_delta_end_with_ids(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            text="Reading.",
            tool_calls=[
                ScriptedToolCall("read", {"path": "a.py"}),
                ScriptedToolCall("read", {"path": "b.py"}, id="call-1"),
                ScriptedToolCall("grep", {"pattern": "x"}, id="call-1"),
            ],
        )
    )
    events, message = await _run(_model(server), _context())
    _assert_protocol(events)
    types = [e.type for e in events]
    first = types.index("toolcall_start")
    assert types[first : first + 9] == ["toolcall_start", "toolcall_delta", "toolcall_end"] * 3
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert json.loads(deltas[0]) == {"path": "a.py"}
    calls = message.tool_calls()
    assert [c.arguments for c in calls] == [{"path": "a.py"}, {"path": "b.py"}, {"pattern": "x"}]
    assert re.fullmatch(r"read_\d+_\d+", calls[0].id)
    assert calls[1].id == "call-1"
    assert re.fullmatch(r"grep_\d+_\d+", calls[2].id), "a duplicated server id is replaced"
    assert message.stop_reason == "toolUse"
    assert isinstance(events[-1], DoneEvent) and events[-1].reason == "toolUse"


async def test_string_arguments_from_a_proxy_are_repaired(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", raw_arguments='{"path": "src/ma')]))
    _, message = await _run(_model(server), _context())
    assert message.tool_calls()[0].arguments == {"path": "src/ma"}


async def test_usage_subtracts_cached_tokens_and_counts_thoughts_as_output(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok", usage=ScriptedUsage(input=1000, output=300, cache_read=800, reasoning=120)))
    model = _model(server, cost=ModelCost(input=1.0, output=2.0, cache_read=0.5))
    _, message = await _run(model, _context())
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (1000, 300, 800, 0)
    assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
    assert usage.cost.total == pytest.approx((1000 * 1.0 + 300 * 2.0 + 800 * 0.5) / 1_000_000)


@pytest.mark.parametrize(
    ("finish_reason", "stop_reason"),
    [("STOP", "stop"), ("MAX_TOKENS", "length")],
)
async def test_finish_reasons_map_to_stop_reasons(
    server: FakeLLMServer, finish_reason: str, stop_reason: str
) -> None:
    server.add(Turn(text="partial answer", stop_reason=finish_reason))
    _, message = await _run(_model(server), _context())
    assert message.stop_reason == stop_reason


async def test_a_tool_call_makes_any_successful_finish_tool_use(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "a"})], stop_reason="MAX_TOKENS"))
    _, message = await _run(_model(server), _context())
    assert message.stop_reason == "toolUse"


@pytest.mark.parametrize(
    ("finish_reason", "words"),
    [
        ("SAFETY", "safety"),
        ("RECITATION", "recited"),
        ("MALFORMED_FUNCTION_CALL", "function call"),
        ("OTHER", "unspecified"),
        ("SOMETHING_NEW", "unknown"),
    ],
)
async def test_refusal_finish_reasons_are_errors_with_a_description(
    server: FakeLLMServer, finish_reason: str, words: str
) -> None:
    server.add(Turn(text="I can't", stop_reason=finish_reason))
    events, message = await _run(_model(server), _context())
    assert isinstance(events[-1], ErrorEvent) and events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert finish_reason in message.error_message and words in message.error_message
    assert message.text() == "I can't"


# --- failures -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 500])
async def test_an_http_error_status_is_an_error_event_with_the_server_message(
    server: FakeLLMServer, status: int
) -> None:
    server.add(Turn(fault=Fault("status", status=status)))
    events, message = await _run(_model(server), _context())
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == f"{status} fake server error {status}"


async def test_a_long_retry_after_fails_at_once_without_retrying(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"Retry-After": "120"})), Turn(text="late"))
    started = time.monotonic()
    _, message = await _run(_model(server), _context(), _options(max_retries=2))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert message.error_message is not None and "429" in message.error_message
    assert "120" in message.error_message
    assert len(server.requests) == 1


async def test_a_missing_api_key_is_an_error_event(server: FakeLLMServer, monkeypatch: Any) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    events, message = await _run(_model(server), _context(), StreamOptions())
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "No API key for provider: google"


async def test_abort_before_the_request_reports_aborted_with_nothing(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    signal.abort()
    events, message = await _run(_model(server), _context(), _options(signal=signal))
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted"
    assert message.content == [] and message.usage.output == 0
    assert server.requests == []


async def _abort_after(stream: AssistantMessageEventStream, signal: AbortSignal, event_type: str) -> None:
    async for event in stream:
        if event.type == event_type:
            signal.abort()


async def test_abort_before_the_first_byte_keeps_no_content(server: FakeLLMServer) -> None:
    server.add(Turn(text="never sent", fault=Fault("stall", after_events=0, seconds=10)))
    signal = AbortSignal()
    stream = google.stream(_model(server), _context(), _options(signal=signal))
    await asyncio.wait_for(_abort_after(stream, signal, "start"), 5)
    message = await stream.result()
    assert message.stop_reason == "aborted"
    assert message.content == []
    assert message.usage.output == 0


async def test_abort_mid_text_keeps_the_partial_text_and_input_usage(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            text="one two three four",
            chunk_size=4,
            usage=ScriptedUsage(input=42, output=9),
            fault=Fault("stall", after_events=2, seconds=10),
        )
    )
    signal = AbortSignal()
    stream = google.stream(_model(server), _context(), _options(signal=signal))
    await asyncio.wait_for(_abort_after(stream, signal, "text_delta"), 5)
    message = await stream.result()
    assert message.stop_reason == "aborted"
    assert message.text() in ("one ", "one two ")  # the stall comes after two frames
    assert message.usage.input == 42


async def test_a_dropped_connection_mid_stream_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="some longer text", chunk_size=4, fault=Fault("cut", after_events=2)))
    events, message = await _run(_model(server), _context())
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert message.text() == "some lon"


async def test_a_body_that_ends_without_a_finish_reason_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="some longer text", chunk_size=4, fault=Fault("truncate", after_events=2)))
    _, message = await _run(_model(server), _context())
    assert message.stop_reason == "error"
    assert message.error_message == "Google stream ended without a finish reason"


async def test_a_stalled_stream_ends_by_the_idle_timeout(server: FakeLLMServer) -> None:
    server.add(Turn(text="slow text", chunk_size=4, fault=Fault("stall", after_events=1, seconds=10)))
    started = time.monotonic()
    _, message = await _run(_model(server), _context(), _options(idle_timeout_ms=200))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert message.error_message is not None and "idle timeout" in message.error_message
    assert message.text() == "slow"


async def test_a_malformed_event_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="fine so far", chunk_size=4, fault=Fault("malformed", after_events=1)))
    _, message = await _run(_model(server), _context())
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith("Could not parse a Gemini stream event")


async def _events(*chunks: dict[str, Any]) -> AsyncIterator[ServerSentEvent]:
    for chunk in chunks:
        yield ServerSentEvent(data=json.dumps(chunk))


async def _read_chunks(*chunks: dict[str, Any]) -> AssistantMessage:
    model = Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google", base_url="")

    async def produce(writer: StreamWriter) -> None:
        writer.start()
        await google.read_gemini_stream(writer, _events(*chunks))

    return await run_stream(model, StreamOptions(), produce).result()


async def test_an_error_object_in_the_stream_becomes_the_error_message() -> None:
    text = {"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    message = await _read_chunks(text, error)
    assert message.stop_reason == "error"
    assert message.error_message == "503 The model is overloaded."
    assert message.text() == "Hi"


async def test_a_blocked_prompt_is_an_error() -> None:
    message = await _read_chunks({"promptFeedback": {"blockReason": "SAFETY"}})
    assert message.stop_reason == "error"
    assert message.error_message == "Provider blocked the prompt: SAFETY"


async def test_text_signatures_are_kept_and_a_kind_switch_opens_a_new_block() -> None:
    message = await _read_chunks(
        {"candidates": [{"content": {"parts": [{"text": "a", "thought": True}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "b", "thoughtSignature": SIGNATURE}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "c"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "d", "thought": True}]}, "finishReason": "STOP"}]},
    )
    assert [type(b).__name__ for b in message.content] == [
        "ThinkingContent",
        "TextContent",
        "ThinkingContent",
    ]
    text = message.content[1]
    assert isinstance(text, TextContent) and text.text == "bc" and text.text_signature == SIGNATURE


# --- requests -------------------------------------------------------------------------------------


async def _request_body(server: FakeLLMServer, model: Model, context: Context, **options: Any) -> Any:
    server.add(Turn(text="ok"))
    _, message = await _run(model, context, _options(**options))
    assert message.stop_reason == "stop", message.error_message
    return server.last_request.body


async def test_the_request_goes_to_stream_generate_content_with_the_key_header(server: FakeLLMServer) -> None:
    await _request_body(server, _model(server, "gemini-2.5-pro"), _context())
    request = server.last_request
    assert request.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    assert request.query == "alt=sse"
    assert request.headers["x-goog-api-key"] == "test-key"


async def test_headers_merge_defaults_then_model_then_options(server: FakeLLMServer) -> None:
    model = _model(server, headers={"X-Model": "model", "X-Both": "model", "x-goog-api-key": "model-key"})
    await _request_body(server, model, _context(), headers={"x-both": "options"})
    headers = server.last_request.headers
    assert headers["x-model"] == "model"
    assert headers["x-both"] == "options"
    assert headers["x-goog-api-key"] == "model-key"


async def test_system_prompt_sampling_and_tools_are_sent(server: FakeLLMServer) -> None:
    tool = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
    context = _context(system_prompt="Be brief.", tools=[tool])
    body = await _request_body(
        server, _model(server), context, temperature=0.2, max_tokens=500, extra={"tool_choice": "any"}
    )
    assert body["systemInstruction"] == {"role": "user", "parts": [{"text": "Be brief."}]}
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "read", "description": "Read a file", "parametersJsonSchema": tool.parameters}
            ]
        }
    ]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 500}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


async def test_no_tools_means_no_tool_config(server: FakeLLMServer) -> None:
    body = await _request_body(server, _model(server), _context(), extra={"tool_choice": "none"})
    assert "tools" not in body and "toolConfig" not in body and "generationConfig" not in body


async def test_const_is_removed_from_tool_schemas(server: FakeLLMServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"const": "fast", "type": "string"},
            "kind": {"anyOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]},
            "items": {"type": "array", "items": {"oneOf": [{"const": 1}, {"type": "string"}]}},
        },
        "$defs": {"Flag": {"const": True}},
    }
    body = await _request_body(server, _model(server), _context(tools=[Tool("t", "d", schema)]))
    sent = body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert '"const"' not in json.dumps(sent)
    assert sent["properties"]["mode"] == {"type": "string", "enum": ["fast"]}
    assert sent["properties"]["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert sent["properties"]["items"]["items"] == {"oneOf": [{"enum": [1]}, {"type": "string"}]}
    assert sent["$defs"]["Flag"] == {"enum": [True]}


def test_a_property_named_const_is_not_a_keyword() -> None:
    schema = {"type": "object", "properties": {"const": {"type": "string"}}}
    assert schema_for_google(schema) == schema


def _assistant(model: Model, *content: Any, **kwargs: Any) -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api=model.api, provider=model.provider, model=model.id, **kwargs
    )


async def test_own_signatures_replay_and_foreign_or_invalid_ones_do_not(server: FakeLLMServer) -> None:
    model = _model(server, "gemini-2.5-flash")
    own = _assistant(
        model,
        ThinkingContent("my thoughts", thinking_signature=SIGNATURE),
        TextContent("visible", text_signature="not base64!"),
        ToolCall("c1", "read", {"path": "a"}, thought_signature=SIGNATURE),
    )
    other_model = replace(model, id="gemini-2.0-flash")
    foreign = _assistant(
        other_model,
        ThinkingContent("their thoughts", thinking_signature=SIGNATURE),
        ToolCall("c2", "read", {"path": "b"}, thought_signature=SIGNATURE),
    )
    context = _context(
        UserMessage("q1"),
        own,
        ToolResultMessage("c1", "read", [TextContent("A")]),
        UserMessage("q2"),
        foreign,
        ToolResultMessage("c2", "read", [TextContent("B")]),
    )
    body = await _request_body(server, model, context)
    own_turn, foreign_turn = (c["parts"] for c in body["contents"] if c["role"] == "model")
    assert own_turn == [
        {"thought": True, "text": "my thoughts", "thoughtSignature": SIGNATURE},
        {"text": "visible"},
        {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": SIGNATURE},
    ]
    assert foreign_turn == [
        {"text": "their thoughts"},
        {"functionCall": {"name": "read", "args": {"path": "b"}}},
    ]


async def test_gemini_3_unsigned_function_calls_get_the_skip_sentinel(server: FakeLLMServer) -> None:
    model = _model(server, "gemini-3-pro-preview")
    other = replace(model, id="gemini-2.5-pro")
    context = _context(
        UserMessage("q"),
        _assistant(other, ToolCall("c1", "read", {"path": "a"}, thought_signature=SIGNATURE)),
        ToolResultMessage("c1", "read", [TextContent("A")]),
    )
    body = await _request_body(server, model, context)
    call_part = body["contents"][1]["parts"][0]
    assert call_part["thoughtSignature"] == SKIP_THOUGHT_SIGNATURE
    assert "id" not in call_part["functionCall"]


async def test_parallel_results_share_one_user_turn_and_errors_use_the_error_key(
    server: FakeLLMServer,
) -> None:
    model = _model(server)
    context = _context(
        UserMessage("q"),
        _assistant(model, ToolCall("c1", "read", {"path": "a"}), ToolCall("c2", "read", {"path": "b"})),
        ToolResultMessage("c1", "read", [TextContent("line 1"), TextContent("line 2")]),
        ToolResultMessage("c2", "read", [TextContent("missing")], is_error=True),
    )
    body = await _request_body(server, model, context)
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "line 1\nline 2"}}},
        {"functionResponse": {"name": "read", "response": {"error": "missing"}}},
    ]


async def test_claude_models_on_google_send_sanitised_call_ids(server: FakeLLMServer) -> None:
    model = _model(server, "claude-sonnet-4-5")
    foreign = Model(id="gpt-5", api="openai-responses", provider="openai", base_url="")
    context = _context(
        UserMessage("q"),
        _assistant(foreign, ToolCall("call_1|fc+x/=", "read", {"path": "a"})),
        ToolResultMessage("call_1|fc+x/=", "read", [TextContent("A")]),
    )
    body = await _request_body(server, model, context)
    assert body["contents"][1]["parts"][0]["functionCall"]["id"] == "call_1_fc_x__"
    assert body["contents"][2]["parts"][0]["functionResponse"]["id"] == "call_1_fc_x__"


IMAGE = ImageContent(data="aW1n", mime_type="image/png")


async def test_tool_result_images_nest_in_the_function_response_on_gemini_3(server: FakeLLMServer) -> None:
    model = _model(server, "gemini-3-flash-preview")
    context = _context(
        UserMessage("q"),
        _assistant(model, ToolCall("c1", "screenshot", {})),
        ToolResultMessage("c1", "screenshot", [IMAGE]),
    )
    body = await _request_body(server, model, context)
    assert body["contents"][2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "screenshot",
                    "response": {"output": "(see attached image)"},
                    "parts": [{"inlineData": {"mimeType": "image/png", "data": "aW1n"}}],
                }
            }
        ],
    }


async def test_tool_result_images_follow_in_a_user_turn_on_older_models(server: FakeLLMServer) -> None:
    model = _model(server, "gemini-2.5-flash")
    context = _context(
        UserMessage([TextContent("look"), IMAGE]),
        _assistant(model, ToolCall("c1", "screenshot", {})),
        ToolResultMessage("c1", "screenshot", [TextContent("shot"), IMAGE]),
    )
    body = await _request_body(server, model, context)
    inline = {"inlineData": {"mimeType": "image/png", "data": "aW1n"}}
    assert body["contents"][0]["parts"] == [{"text": "look"}, inline]
    assert body["contents"][2]["parts"] == [
        {"functionResponse": {"name": "screenshot", "response": {"output": "shot"}}}
    ]
    assert body["contents"][3] == {"role": "user", "parts": [{"text": "Tool result image:"}, inline]}


async def test_unpaired_surrogates_are_removed_and_emoji_kept(server: FakeLLMServer) -> None:
    model = _model(server)
    context = _context(
        UserMessage("bad \ud800 text 😀"),
        _assistant(model, TextContent("reply \udc00 🎉")),
        UserMessage("again"),
        system_prompt="sys \ud83d",
    )
    body = await _request_body(server, model, context)
    assert body["contents"][0]["parts"][0]["text"] == "bad  text 😀"
    assert body["contents"][1]["parts"][0]["text"] == "reply  🎉"
    assert body["systemInstruction"]["parts"][0]["text"] == "sys "


async def test_blank_messages_and_errored_turns_are_not_sent(server: FakeLLMServer) -> None:
    model = _model(server)
    context = _context(
        UserMessage("q"),
        _assistant(model, TextContent("half"), stop_reason="error", error_message="boom"),
        UserMessage("   "),
        _assistant(model, TextContent(""), ThinkingContent("  ")),
        UserMessage("q2"),
    )
    body = await _request_body(server, model, context)
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "user", "parts": [{"text": "q2"}]},
    ]


async def test_the_payload_hook_can_replace_the_body(server: FakeLLMServer) -> None:
    def hook(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**payload, "safetySettings": []}

    body = await _request_body(server, _model(server), _context(), on_payload=hook)
    assert body["safetySettings"] == []


# --- thinking ---------------------------------------------------------------------------------------

LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")

# Families pi-ai 1.6 no longer lists (a models.json can still define them), as pi-ai 0.73 listed them.
RETIRED_MODELS = {
    "gemini-3-pro-preview": Model(
        id="gemini-3-pro-preview",
        api="google-generative-ai",
        provider="google",
        base_url="https://generativelanguage.googleapis.com/v1beta",
        reasoning=True,
        thinking_level_map={"off": None, "minimal": None, "low": "LOW", "medium": None, "high": "HIGH"},
    ),
    "gemini-2.0-flash": Model(
        id="gemini-2.0-flash",
        api="google-generative-ai",
        provider="google",
        base_url="https://generativelanguage.googleapis.com/v1beta",
    ),
}


def _thinking_config(model: Model, level: str, budgets: dict[str, int] | None = None) -> Any:
    options = SimpleStreamOptions(
        reasoning=None if level == "off" else level,  # type: ignore[arg-type]
        thinking_budgets=budgets,
    )
    return thinking_config(model, google.simple_thinking_option(model, options))


def _on(**config: Any) -> dict[str, Any]:
    return {"includeThoughts": True, **config}


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        (
            "gemini-3-pro-preview",
            [{"thinkingLevel": "LOW"}]
            + [_on(thinkingLevel=v) for v in ("LOW", "LOW", "HIGH", "HIGH", "HIGH")],
        ),
        (
            "gemini-3-flash-preview",
            [{"thinkingLevel": "MINIMAL"}]
            + [_on(thinkingLevel=v) for v in ("MINIMAL", "LOW", "MEDIUM", "HIGH", "HIGH")],
        ),
        (
            "gemma-4-31b-it",
            [{"thinkingLevel": "MINIMAL"}]
            + [_on(thinkingLevel=v) for v in ("MINIMAL", "HIGH", "HIGH", "HIGH", "HIGH")],
        ),
        (
            "gemini-2.5-pro",
            [{"thinkingBudget": 0}] + [_on(thinkingBudget=v) for v in (128, 2048, 8192, 32768, 32768)],
        ),
        (
            "gemini-2.5-flash",
            [{"thinkingBudget": 0}] + [_on(thinkingBudget=v) for v in (128, 2048, 8192, 24576, 24576)],
        ),
        (
            "gemini-2.5-flash-lite",
            [{"thinkingBudget": 0}] + [_on(thinkingBudget=v) for v in (512, 2048, 8192, 24576, 24576)],
        ),
        (
            "gemini-flash-latest",
            [{"thinkingLevel": "MINIMAL"}]
            + [_on(thinkingLevel=v) for v in ("MINIMAL", "LOW", "MEDIUM", "HIGH", "HIGH")],
        ),
        ("gemini-2.0-flash", [None] * 6),
    ],
)
def test_thinking_config_per_model_family_and_level(model_id: str, expected: list[Any]) -> None:
    model = RETIRED_MODELS.get(model_id) or get_model("google", model_id)
    assert [_thinking_config(model, level) for level in LEVELS] == expected


def test_other_reasoning_gemini_models_think_dynamically() -> None:
    model = Model(
        id="gemini-exp-1206", api="google-generative-ai", provider="google", base_url="", reasoning=True
    )
    assert _thinking_config(model, "medium") == _on(thinkingBudget=-1)
    assert _thinking_config(model, "off") == {"thinkingBudget": 0}


def test_custom_thinking_budgets_win() -> None:
    model = get_model("google", "gemini-2.5-pro")
    assert _thinking_config(model, "low", {"low": 1000}) == _on(thinkingBudget=1000)


async def test_stream_simple_through_the_registry_sends_the_thinking_config(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = replace(RETIRED_MODELS["gemini-3-pro-preview"], base_url=server.url("/v1beta"))
    message = await complete_simple(model, _context(), api_key="k", reasoning="medium", max_tokens=1000)
    assert message.stop_reason == "stop"
    assert server.last_request.body["generationConfig"] == {
        "maxOutputTokens": 1000,
        "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "HIGH"},
    }


def test_a_constrained_tool_goes_strict_and_validated_on_gemini_3_only() -> None:
    find = Tool.from_json(
        {
            "name": "find",
            "description": "Find files",
            "parameters": {
                "type": "object",
                "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["pattern"],
            },
            "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
        }
    )
    context = Context(messages=[UserMessage("go")], tools=[find])

    def body(model_id: str, api: str = "google-generative-ai", choice: str | None = None) -> dict[str, Any]:
        model = Model(id=model_id, api=api, provider="google", base_url="http://127.0.0.1:1")
        extra = {"tool_choice": choice} if choice else {}
        return build_request_body(model, context, extra, temperature=None, max_tokens=None)

    strict = body("gemini-3-flash-preview")
    assert strict["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    schema = strict["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert schema["required"] == ["pattern", "limit"] and schema["additionalProperties"] is False
    # A mode asked for wins over VALIDATED; the schema stays strict.
    assert body("gemini-3-flash-preview", choice="any")["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY"}
    }
    for plain in (body("gemini-2.5-flash"), body("gemini-3-flash-preview", api="google-gemini-cli")):
        assert "toolConfig" not in plain
        assert plain["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == find.parameters
