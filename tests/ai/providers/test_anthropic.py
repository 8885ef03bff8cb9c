"""The anthropic-messages provider against the fake LLM server: streams, failures, request building."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tau.ai import (
    AbortSignal,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    JsonSchemaSampling,
    Message,
    Model,
    ModelCost,
    TextContent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    Tool,
    ToolCall,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultMessage,
    UserMessage,
    stream,
    stream_simple,
)
from tau.ai.transport.http import close_clients
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn
from tau.testing.fake_llm import anthropic as fake_anthropic
from tau.testing.fake_llm.server import sse_frame

BLOCK_STARTS = (TextStartEvent, ThinkingStartEvent, ToolCallStartEvent)
BLOCK_ENDS = (TextEndEvent, ThinkingEndEvent, ToolCallEndEvent)
API_KEY = "sk-ant-api-test"
OAUTH_TOKEN = "sk-ant-oat01-test"
READ_TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake
        assert fake.pending == 0, "a scripted turn was never requested"


@pytest.fixture(autouse=True)
async def _close_pooled_clients() -> AsyncIterator[None]:
    yield
    await close_clients()


def claude(server: FakeLLMServer, model_id: str = "claude-sonnet-4-5", **fields: Any) -> Model:
    return Model(
        id=model_id,
        api="anthropic-messages",
        provider=fields.pop("provider", "anthropic"),
        base_url=server.base_url,
        reasoning=fields.pop("reasoning", True),
        input=["text", "image"],
        max_tokens=fields.pop("max_tokens", 64_000),
        **fields,
    )


def ask(text: str = "hi", **fields: Any) -> Context:
    return Context(messages=[UserMessage(text)], **fields)


async def run(
    model: Model, context: Context, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    options.setdefault("api_key", API_KEY)
    events_stream = stream(model, context, **options)
    events = [event async for event in events_stream]
    return events, await events_stream.result()


async def run_simple(model: Model, context: Context, **options: Any) -> AssistantMessage:
    options.setdefault("api_key", API_KEY)
    return await stream_simple(model, context, **options).result()


def serve_raw_frames(monkeypatch: pytest.MonkeyPatch, events: list[dict[str, Any]]) -> None:
    """Make the fake answer every Anthropic request with exactly these events."""
    frames = [sse_frame(event, event=event["type"]) for event in events]
    monkeypatch.setattr(fake_anthropic, "render", lambda turn, request: iter(frames))


def message_start(**usage: Any) -> dict[str, Any]:
    counts = {"input_tokens": 10, "output_tokens": 1, **usage}
    return {
        "type": "message_start",
        "message": {"id": "msg_raw", "model": "claude-sonnet-4-5", "usage": counts},
    }


def text_block(text: str, index: int = 0) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": index},
    ]


def message_end(stop_reason: str = "end_turn", **usage: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"output_tokens": 7, **usage},
        },
        {"type": "message_stop"},
    ]


# --- successful streams ---------------------------------------------------------------------------


async def test_a_text_turn_streams_the_text_and_ends_with_stop(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello from the fake", chunk_size=4))
    events, message = await run(claude(server), ask())
    assert [e.type for e in events][:2] == ["start", "text_start"]
    assert "".join(e.delta for e in events if e.type == "text_delta") == "Hello from the fake"
    assert isinstance(events[-1], DoneEvent)
    assert events[-1].reason == "stop"
    assert message.text() == "Hello from the fake"
    assert message.response_id == "msg_fake_0001"


async def test_a_thinking_turn_keeps_the_thinking_text_and_its_signature(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="Let me think.", thinking_signature="sig-123", text="Done."))
    _, message = await run(claude(server), ask())
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Let me think."
    assert thinking.thinking_signature == "sig-123"
    assert message.text() == "Done."


async def test_a_tool_call_turn_ends_with_tool_use_and_parsed_arguments(server: FakeLLMServer) -> None:
    server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "src/main.py"}, id="toolu_1")], chunk_size=3)
    )
    events, message = await run(claude(server), ask(tools=[READ_TOOL]))
    assert message.stop_reason == "toolUse"
    assert message.tool_calls() == [ToolCall(id="toolu_1", name="read", arguments={"path": "src/main.py"})]
    deltas = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert json.loads(deltas) == message.tool_calls()[0].arguments


async def test_events_keep_the_protocol_invariants(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="hmm", text="answer", tool_calls=[ScriptedToolCall("read", {"path": "a"})]))
    events, message = await run(claude(server), ask(tools=[READ_TOOL]))
    assert [e.type for e in events].count("start") == 1
    assert events[0].type == "start"
    starts = [(e.content_index, e.type) for e in events if isinstance(e, BLOCK_STARTS)]
    ends = [(e.content_index, e.type.replace("_end", "_start")) for e in events if isinstance(e, BLOCK_ENDS)]
    assert starts == ends == [(0, "thinking_start"), (1, "text_start"), (2, "toolcall_start")]
    partials = {id(e.partial) for e in events if hasattr(e, "partial")}
    assert partials == {id(message)}
    assert isinstance(events[-1], DoneEvent)
    assert events[-1].message is message


async def test_total_tokens_is_the_sum_of_input_output_and_cache_counts(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok", usage=ScriptedUsage(input=100, output=20, cache_read=300, cache_write=50)))
    model = claude(server, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    _, message = await run(model, ask())
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (100, 20, 300, 50)
    assert usage.total_tokens == 470
    assert usage.cost.total == pytest.approx((100 * 3 + 20 * 15 + 300 * 0.3 + 50 * 3.75) / 1e6)


async def test_message_delta_with_null_input_tokens_keeps_the_message_start_value(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_raw_frames(
        monkeypatch,
        [
            message_start(input_tokens=42, cache_read_input_tokens=8),
            *text_block("hi"),
            *message_end(input_tokens=None, cache_read_input_tokens=None, output_tokens=9),
        ],
    )
    server.add(Turn())
    _, message = await run(claude(server), ask())
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (42, 8, 9)
    assert message.usage.total_tokens == 59


async def test_a_differing_server_model_is_recorded_as_the_response_model(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok", response_model="claude-sonnet-4-5-20250929", response_id="msg_42"))
    _, message = await run(claude(server), ask())
    assert message.model == "claude-sonnet-4-5"
    assert message.response_model == "claude-sonnet-4-5-20250929"
    assert message.response_id == "msg_42"


async def test_redacted_thinking_becomes_a_redacted_block_holding_the_payload(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque-payload"}
    serve_raw_frames(
        monkeypatch,
        [
            message_start(),
            {"type": "content_block_start", "index": 0, "content_block": redacted},
            {"type": "content_block_stop", "index": 0},
            *text_block("visible", index=1),
            *message_end(),
        ],
    )
    server.add(Turn())
    _, message = await run(claude(server), ask())
    assert message.content[0] == ThinkingContent("[Reasoning redacted]", "opaque-payload", redacted=True)
    assert message.text() == "visible"


async def test_thinking_the_api_withheld_is_kept_as_a_diagnostic_in_pi_16s_shape(
    server: FakeLLMServer,
) -> None:
    reported = [
        {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_mismatch", "x": 1},
        {"type": "thinking_dropped", "path": "messages.3.content.0", "reason": None},
        "not an object",
    ]
    server.add(Turn(text="ok", input_transformations=reported))
    _, message = await run(claude(server), ask())
    [diagnostic] = message.diagnostics or []
    assert diagnostic["type"] == "anthropic_input_transformations"
    assert isinstance(diagnostic["timestamp"], int) and diagnostic["timestamp"] > 0
    assert diagnostic["details"] == {
        "transformations": [
            {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_mismatch"},
            {"type": "thinking_dropped", "path": "messages.3.content.0"},
            {},
        ]
    }
    assert message.to_json()["diagnostics"] == [diagnostic]  # as the session stores it
    server.add(Turn(text="ok", input_transformations=[]), Turn(text="ok"))
    for _ in range(2):  # an empty report, or none: no diagnostic
        _, quiet = await run(claude(server), ask())
        assert quiet.diagnostics is None


async def test_the_input_transformations_of_message_delta_replace_those_of_message_start(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = message_start()
    start["message"]["input_transformations"] = [{"type": "thinking_dropped", "reason": "early"}]
    delta, stop = message_end()
    delta["input_transformations"] = [{"type": "thinking_dropped", "reason": "late"}]
    serve_raw_frames(monkeypatch, [start, *text_block("ok"), delta, stop])
    server.add(Turn(text="ignored"))
    _, message = await run(claude(server), ask())
    [diagnostic] = message.diagnostics or []
    assert diagnostic["details"] == {"transformations": [{"type": "thinking_dropped", "reason": "late"}]}


async def test_a_refused_reply_records_no_input_transformations(server: FakeLLMServer) -> None:
    server.add(Turn(text="no", stop_reason="refusal", input_transformations=[{"type": "thinking_dropped"}]))
    _, message = await run(claude(server), ask())
    assert message.stop_reason == "error" and message.diagnostics is None


# --- stop reasons ---------------------------------------------------------------------------------


async def test_max_tokens_maps_to_length(server: FakeLLMServer) -> None:
    server.add(Turn(text="cut sh", stop_reason="max_tokens"))
    events, message = await run(claude(server), ask())
    assert isinstance(events[-1], DoneEvent)
    assert message.stop_reason == "length"


async def test_a_refusal_becomes_an_error_with_a_descriptive_message(server: FakeLLMServer) -> None:
    server.add(Turn(text="I can't", stop_reason="refusal"))
    events, message = await run(claude(server), ask())
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "refus" in message.error_message


async def test_an_unknown_stop_reason_becomes_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="?", stop_reason="brand_new_reason"))
    _, message = await run(claude(server), ask())
    assert message.stop_reason == "error"
    assert message.error_message == "Unhandled stop reason: brand_new_reason"


# --- failures -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text"),
    [
        (401, "invalid x-api-key"),
        (400, "prompt is too long: 210000 tokens > 200000 maximum"),
        (500, "Internal"),
    ],
)
async def test_an_http_error_status_becomes_an_error_event_with_status_and_message(
    server: FakeLLMServer, status: int, text: str
) -> None:
    server.add(Turn(fault=Fault("status", status=status, body=fake_anthropic.error_body(status, text))))
    events, message = await run(claude(server), ask())
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == f"{status} {text}"


async def test_abort_before_the_request_gives_aborted_with_no_content(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    signal.abort()
    events, message = await run(claude(server), ask(), signal=signal)
    assert server.requests == []
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted"
    assert message.content == []
    assert message.usage.output == 0


async def test_abort_before_the_first_event_gives_aborted_with_zero_usage(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    server.add(Turn(text="late", fault=Fault("stall", after_events=0, seconds=5)))
    events_stream = stream(claude(server), ask(), api_key=API_KEY, signal=signal)
    async for event in events_stream:
        if event.type == "start":
            signal.abort()
    message = await events_stream.result()
    assert message.stop_reason == "aborted"
    assert message.content == []
    assert message.usage.total_tokens == 0


async def test_abort_mid_text_keeps_the_partial_text_and_the_input_usage(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    # message_start, ping, block start, two deltas, then nothing for a while.
    server.add(
        Turn(
            text="abcdefghij",
            chunk_size=2,
            usage=ScriptedUsage(input=77),
            fault=Fault("stall", after_events=5, seconds=5),
        )
    )
    events_stream = stream(claude(server), ask(), api_key=API_KEY, signal=signal)
    seen = ""
    async for event in events_stream:
        if event.type == "text_delta":
            seen += event.delta
            if seen == "abcd":
                asyncio.get_running_loop().call_later(0.05, signal.abort)
    message = await events_stream.result()
    assert message.stop_reason == "aborted"
    assert message.text() == "abcd"
    assert message.usage.input == 77


@pytest.mark.parametrize("kind", ["cut", "truncate"])
async def test_a_body_ending_before_message_stop_is_an_error(server: FakeLLMServer, kind: str) -> None:
    server.add(Turn(text="abcdefgh", chunk_size=2, fault=Fault(kind, after_events=4)))  # type: ignore[arg-type]
    events, message = await run(claude(server), ask())
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert "ended before message_stop" in (message.error_message or "")
    assert message.text() == "ab"


async def test_a_stalled_stream_ends_with_an_idle_timeout_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="slow", fault=Fault("stall", after_events=3, seconds=3)))
    events, message = await asyncio.wait_for(run(claude(server), ask(), idle_timeout_ms=200), 2)
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert "idle timeout" in (message.error_message or "")


async def test_a_retry_after_above_the_cap_fails_at_once_with_the_delay(server: FakeLLMServer) -> None:
    body = fake_anthropic.error_body(429, "rate limited")
    server.add(Turn(fault=Fault("status", status=429, body=body, headers={"retry-after": "120"})))
    _, message = await asyncio.wait_for(run(claude(server), ask(), max_retries=3), 2)
    assert message.stop_reason == "error"
    assert "120" in (message.error_message or "")
    assert len(server.requests) == 1


async def test_a_malformed_event_becomes_an_error_event(server: FakeLLMServer) -> None:
    server.add(Turn(text="abc", fault=Fault("malformed", after_events=3)))
    events, message = await run(claude(server), ask())
    assert isinstance(events[-1], ErrorEvent)
    assert "Malformed Anthropic stream event" in (message.error_message or "")


async def test_an_event_with_raw_control_characters_is_repaired(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\tb"}}\n\n'
    frames = [sse_frame(e, event=e["type"]) for e in [message_start(), *text_block("x")[:1]]]
    tail = [sse_frame(e, event=e["type"]) for e in [*text_block("x")[2:], *message_end()]]
    monkeypatch.setattr(fake_anthropic, "render", lambda turn, request: iter([*frames, broken, *tail]))
    server.add(Turn())
    _, message = await run(claude(server), ask())
    assert message.text() == "a\tb"


async def test_an_error_event_in_the_stream_becomes_an_error_with_its_message(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    serve_raw_frames(monkeypatch, [message_start(), *text_block("par"), overloaded])
    server.add(Turn())
    _, message = await run(claude(server), ask())
    assert message.stop_reason == "error"
    assert message.error_message == "overloaded_error: Overloaded"
    assert message.text() == "par"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [('{"path": "a.py", "limit": 5', {"path": "a.py", "limit": 5}), ("not json at all", {})],
)
async def test_invalid_tool_call_json_gives_best_effort_arguments(
    server: FakeLLMServer, raw: str, expected: dict[str, Any]
) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", raw_arguments=raw)]))
    events, message = await run(claude(server), ask(tools=[READ_TOOL]))
    assert isinstance(events[-1], DoneEvent)
    assert message.tool_calls()[0].arguments == expected


# --- request building -----------------------------------------------------------------------------


def tool_history() -> list[Message]:
    calls = [ToolCall("toolu_a", "read", {"path": "a"}), ToolCall("toolu_b", "read", {"path": "b"})]
    assistant = AssistantMessage(
        content=[TextContent("reading"), *calls],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="toolUse",
    )
    return [
        UserMessage("read both"),
        assistant,
        ToolResultMessage("toolu_a", "read", [TextContent("line 1"), TextContent("line 2")]),
        ToolResultMessage("toolu_b", "read", [TextContent("boom")], is_error=True),
    ]


async def test_consecutive_tool_results_become_one_user_message(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server), Context(messages=tool_history(), tools=[READ_TOOL]))
    messages = server.last_request.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    results = messages[2]["content"]
    assert [(r["tool_use_id"], r["content"], r["is_error"]) for r in results] == [
        ("toolu_a", "line 1\nline 2", False),
        ("toolu_b", "boom", True),
    ]
    assert messages[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "read",
        "input": {"path": "a"},
    }


async def test_cache_markers_go_on_the_system_the_last_user_block_and_the_last_tool(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    tools = [Tool("write", "Write a file"), READ_TOOL]
    await run(claude(server), ask("plain string", system_prompt="be brief", tools=tools))
    body = server.last_request.body
    marker = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "be brief", "cache_control": marker}]
    assert body["messages"][-1]["content"] == [
        {"type": "text", "text": "plain string", "cache_control": marker}
    ]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == marker
    assert all(tool["eager_input_streaming"] is True for tool in body["tools"])


async def test_the_last_tool_result_carries_the_cache_marker(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server), Context(messages=tool_history(), tools=[READ_TOOL]))
    results = server.last_request.body["messages"][-1]["content"]
    assert "cache_control" not in results[0]
    assert results[1]["cache_control"] == {"type": "ephemeral"}


async def test_no_cache_markers_are_sent_when_retention_is_none(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server), ask(system_prompt="sys", tools=[READ_TOOL]), cache_retention="none")
    assert "cache_control" not in json.dumps(server.last_request.body)


async def test_long_retention_adds_a_one_hour_ttl(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server), ask(system_prompt="sys"), cache_retention="long")
    assert server.last_request.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_long_retention_has_no_ttl_where_the_endpoint_does_not_support_it(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    model = claude(server, compat={"supportsLongCacheRetention": False})
    await run(model, ask(system_prompt="sys"), cache_retention="long")
    assert server.last_request.body["system"][0]["cache_control"] == {"type": "ephemeral"}


def own_turn(*content: Any) -> AssistantMessage:
    return AssistantMessage(
        content=list(content), api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5"
    )


async def test_unsigned_thinking_is_replayed_as_plain_text(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    history: list[Message] = [
        UserMessage("q"),
        own_turn(ThinkingContent("pondering"), TextContent("a")),
        UserMessage("q2"),
    ]
    await run(claude(server), Context(messages=history))
    assert server.last_request.body["messages"][1]["content"] == [
        {"type": "text", "text": "pondering"},
        {"type": "text", "text": "a"},
    ]


async def test_signed_thinking_is_replayed_byte_identical(server: FakeLLMServer) -> None:
    captured: list[dict[str, Any]] = []
    server.add(Turn(text="ok"))
    odd_text = "keep \ud800 exactly"
    history: list[Message] = [
        UserMessage("q"),
        own_turn(ThinkingContent(odd_text, "sig"), TextContent("a \ud800b")),
        UserMessage("q2"),
    ]
    await run(claude(server), Context(messages=history), on_payload=lambda body, model: captured.append(body))
    blocks = captured[0]["messages"][1]["content"]
    assert blocks[0] == {"type": "thinking", "thinking": odd_text, "signature": "sig"}
    assert blocks[1] == {"type": "text", "text": "a b"}
    assert server.last_request.body["messages"][1]["content"][0]["thinking"] == odd_text


async def test_redacted_thinking_is_replayed_as_redacted_thinking(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    redacted = ThinkingContent("[Reasoning redacted]", "opaque", redacted=True)
    await run(
        claude(server),
        Context(messages=[UserMessage("q"), own_turn(redacted, TextContent("a")), UserMessage("q2")]),
    )
    assert server.last_request.body["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "opaque",
    }


async def test_temperature_is_omitted_when_thinking_is_on(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    await run_simple(claude(server), ask(), temperature=0.5, reasoning="low")
    assert "temperature" not in server.last_request.body
    await run_simple(claude(server), ask(), temperature=0.5)
    assert server.last_request.body["temperature"] == 0.5


async def test_unpaired_surrogates_are_removed_and_emoji_kept(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    history: list[Message] = [
        UserMessage([TextContent("bad \ud83d here 😀")]),
        own_turn(TextContent("x \udc00y")),
        UserMessage("again \ud800"),
    ]
    await run(claude(server), Context(messages=history, system_prompt="sys \udfff"))
    body = server.last_request.body
    assert body["system"][0]["text"] == "sys "
    assert body["messages"][0]["content"][0]["text"] == "bad  here 😀"
    assert body["messages"][1]["content"][0]["text"] == "x y"
    assert body["messages"][2]["content"][0]["text"] == "again "


async def test_images_are_sent_as_base64_sources(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    await run(claude(server), Context(messages=[UserMessage([TextContent("look"), image])]))
    assert server.last_request.body["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
        "cache_control": {"type": "ephemeral"},
    }


async def test_on_payload_can_replace_the_request_body(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))

    def shrink(body: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**body, "max_tokens": 123}

    await run(claude(server), ask(), on_payload=shrink)
    assert server.last_request.body["max_tokens"] == 123


async def test_max_tokens_defaults_to_the_model_limit(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server, max_tokens=30_000), ask())
    assert server.last_request.body["max_tokens"] == 30_000


async def test_tool_choice_and_user_id_are_forwarded(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(
        claude(server), ask(tools=[READ_TOOL]), tool_choice="any", metadata={"user_id": "u-1", "other": 1}
    )
    body = server.last_request.body
    assert body["tool_choice"] == {"type": "any"}
    assert body["metadata"] == {"user_id": "u-1"}


async def test_a_foreign_model_history_with_responses_ids_becomes_a_valid_request(
    server: FakeLLMServer,
) -> None:
    long_id = "call_abc|fc_" + "x+/=" * 100
    foreign = AssistantMessage(
        content=[
            ThinkingContent("I should read it", thinking_signature='{"type":"reasoning","id":"rs_1"}'),
            ToolCall(long_id, "read", {"path": "a"}),
        ],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    history: list[Message] = [
        UserMessage("go"),
        foreign,
        ToolResultMessage(long_id, "read", [TextContent("data")]),
        UserMessage("next"),
    ]
    server.add(Turn(text="ok"))
    _, message = await run(claude(server), Context(messages=history, tools=[READ_TOOL]))
    assert message.stop_reason == "stop"
    messages = server.last_request.body["messages"]
    assistant_blocks = messages[1]["content"]
    assert assistant_blocks[0] == {"type": "text", "text": "I should read it"}
    tool_use_id = assistant_blocks[1]["id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", tool_use_id)
    assert messages[2]["content"][0]["tool_use_id"] == tool_use_id
    assert messages[3]["content"][0]["text"] == "next"


# --- headers and auth -----------------------------------------------------------------------------


async def test_api_key_requests_carry_the_anthropic_headers(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run(claude(server), ask())
    headers = server.last_request.headers
    assert server.last_request.path == "/v1/messages"
    assert headers["x-api-key"] == API_KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["accept"] == "text/event-stream"
    assert "anthropic-beta" not in headers  # no thinking asked for, no tools
    assert "authorization" not in headers


async def test_options_headers_override_model_headers_which_override_defaults(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = claude(server, headers={"anthropic-version": "2099-01-01", "X-Layer": "model"})
    await run(model, ask(), headers={"x-layer": "options"})
    headers = server.last_request.headers
    assert headers["anthropic-version"] == "2099-01-01"
    assert headers["x-layer"] == "options"


async def test_fine_grained_streaming_beta_is_used_when_eager_streaming_is_unsupported(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    model = claude(server, compat={"supportsEagerToolInputStreaming": False})
    await run(model, ask(tools=[READ_TOOL]))
    assert "fine-grained-tool-streaming-2025-05-14" in server.last_request.headers["anthropic-beta"]
    assert "eager_input_streaming" not in server.last_request.body["tools"][0]


async def test_an_oauth_token_speaks_as_claude_code(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("Read", {"path": "a"})]))
    history: list[Message] = [
        UserMessage("q"),
        own_turn(ToolCall("toolu_1", "read", {"path": "x"})),
        ToolResultMessage("toolu_1", "read", [TextContent("x")]),
    ]
    _, message = await run(
        claude(server),
        Context(messages=history, system_prompt="mine", tools=[READ_TOOL]),
        api_key=OAUTH_TOKEN,
    )
    request = server.last_request
    assert request.headers["authorization"] == f"Bearer {OAUTH_TOKEN}"
    assert "x-api-key" not in request.headers
    assert request.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
    assert [block["text"] for block in request.body["system"]] == [
        "You are Claude Code, Anthropic's official CLI for Claude.",
        "mine",
    ]
    assert request.body["tools"][0]["name"] == "Read"
    assert request.body["messages"][1]["content"][0]["name"] == "Read"
    assert message.tool_calls()[0].name == "read"


async def test_copilot_uses_bearer_auth_and_marks_agent_turns(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = claude(
        server,
        "claude-sonnet-4.5",
        provider="github-copilot",
        compat={"supportsEagerToolInputStreaming": False},
    )
    await run(model, Context(messages=tool_history(), tools=[READ_TOOL]), api_key="copilot-token")
    headers = server.last_request.headers
    assert headers["authorization"] == "Bearer copilot-token"
    assert headers["x-initiator"] == "agent"
    assert headers["openai-intent"] == "conversation-edits"
    assert headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"  # as for any host


# --- thinking levels ------------------------------------------------------------------------------


ADAPTIVE = {"forceAdaptiveThinking": True}


async def test_adaptive_models_send_adaptive_thinking_with_an_effort(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run_simple(
        claude(server, "any-id", compat=ADAPTIVE, max_tokens=128_000, context_window=1_000_000),
        ask(),
        reasoning="medium",
    )
    body = server.last_request.body
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "medium"}
    assert body["max_tokens"] == 128_000  # no budget to make room for
    assert "anthropic-beta" not in server.last_request.headers


async def test_adaptive_thinking_is_decided_by_the_compat_flag_not_the_model_id(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    await run_simple(claude(server, "claude-opus-4-6"), ask(), reasoning="medium")
    assert server.last_request.body["thinking"]["type"] == "enabled"
    assert server.last_request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_xhigh_sends_the_mapped_effort_on_models_that_map_it(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = claude(server, "claude-opus-4-7", compat=ADAPTIVE, thinking_level_map={"xhigh": "xhigh"})
    await run_simple(model, ask(), reasoning="xhigh")
    assert server.last_request.body["output_config"] == {"effort": "xhigh"}


async def test_xhigh_is_clamped_to_high_where_unsupported(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run_simple(claude(server, "claude-sonnet-4-6", compat=ADAPTIVE), ask(), reasoning="xhigh")
    assert server.last_request.body["output_config"] == {"effort": "high"}


async def test_a_model_that_cannot_turn_thinking_off_gets_no_disabled_thinking(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run_simple(claude(server, compat=ADAPTIVE, thinking_level_map={"off": None}), ask())
    assert "thinking" not in server.last_request.body


async def test_allowed_fallback_models_are_sent_with_their_beta(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    fallback = {"provider": "anthropic", "model": "claude-opus-5", "cost": {"input": 5, "output": 25}}
    await run_simple(claude(server, compat={**ADAPTIVE, "allowedFallbackModels": [fallback]}), ask())
    assert server.last_request.body["fallbacks"] == [{"model": "claude-opus-5"}]
    assert server.last_request.headers["anthropic-beta"] == "server-side-fallback-2026-07-01"


async def test_a_fallback_model_that_answered_is_billed_at_its_own_prices(server: FakeLLMServer) -> None:
    # compat.allowedFallbackModels[].cost, as pi 1.6: the usage is priced as the model that answered.
    usage = ScriptedUsage(input=1_000_000, output=1_000_000)
    server.add(
        Turn(text="ok", response_model="claude-opus-5", usage=usage),
        Turn(text="ok", response_model="claude-other", usage=usage),
    )
    fallback = {"provider": "anthropic", "model": "claude-opus-5", "cost": {"input": 5, "output": 25}}
    model = claude(
        server, compat={**ADAPTIVE, "allowedFallbackModels": [fallback]}, cost=ModelCost(input=3, output=15)
    )
    answered = await run_simple(model, ask())
    assert answered.response_model == "claude-opus-5"
    assert (answered.usage.cost.input, answered.usage.cost.output) == (5, 25)
    unlisted = await run_simple(model, ask())  # a model not among the fallbacks: the model's own prices
    assert (unlisted.usage.cost.input, unlisted.usage.cost.output) == (3, 15)


async def test_temperature_is_left_out_where_the_model_rejects_it(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    await run_simple(claude(server), ask(), temperature=0.3)
    assert server.last_request.body["temperature"] == 0.3
    await run_simple(claude(server, compat={"supportsTemperature": False}), ask(), temperature=0.3)
    assert "temperature" not in server.last_request.body


async def test_a_configured_anthropic_beta_header_replaces_the_computed_list(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = claude(server, headers={"Anthropic-Beta": " a-1 ,b-2,a-1,, "})
    await run_simple(model, ask(), reasoning="high")
    assert server.last_request.headers["anthropic-beta"] == "a-1,b-2"


async def test_openrouter_models_get_the_session_affinity_header(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    await run_simple(claude(server, provider="openrouter"), ask(), session_id="s-1")
    assert server.last_request.headers["x-session-id"] == "s-1"
    await run_simple(claude(server), ask(), session_id="s-1")
    assert "x-session-id" not in server.last_request.headers


async def test_older_models_send_a_thinking_budget_and_raise_max_tokens(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await run_simple(claude(server), ask(), reasoning="high", max_tokens=32_000)
    body = server.last_request.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16_384, "display": "summarized"}
    assert body["max_tokens"] == 48_384
    assert "output_config" not in body


async def test_thinking_is_disabled_explicitly_when_off_on_a_reasoning_model(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    await run_simple(claude(server), ask())
    assert server.last_request.body["thinking"] == {"type": "disabled"}
    await run_simple(claude(server, reasoning=False), ask(), reasoning="high")
    assert "thinking" not in server.last_request.body


# --- strict tools (compat.supportsStrictTools) ------------------------------------------------------

FIND_TOOL = Tool(
    name="find",
    description="Find files",
    parameters={
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["pattern"],
    },
    constrained_sampling=JsonSchemaSampling(),
)


async def test_a_constrained_tool_goes_strict_with_a_strict_schema(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    strict_model = claude(server, compat={"supportsStrictTools": True})
    context = Context(messages=[UserMessage("go")], tools=[READ_TOOL, FIND_TOOL])
    await stream(strict_model, context, api_key=API_KEY).result()
    await stream(claude(server), context, api_key=API_KEY).result()
    strict_tools, plain_tools = (request.body["tools"] for request in server.requests)
    assert "strict" not in strict_tools[0]  # read does not ask for it
    assert strict_tools[1]["strict"] is True
    assert strict_tools[1]["input_schema"] == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["pattern", "limit"],
        "additionalProperties": False,
    }
    # Without the compat key the tool goes as any other.
    assert "strict" not in plain_tools[1]
    assert plain_tools[1]["input_schema"] == {**FIND_TOOL.parameters}


async def test_strict_tools_over_claudes_limits_go_again_non_strict_for_the_session(
    server: FakeLLMServer,
) -> None:
    refusal = fake_anthropic.error_body(400, "Too many strict tools (25). The maximum is 20.")
    server.add(Turn(fault=Fault("status", status=400, body=refusal)), Turn(text="ok"), Turn(text="ok"))
    model = claude(server, compat={"supportsStrictTools": True})
    context = Context(messages=[UserMessage("go")], tools=[FIND_TOOL])
    first = await stream(model, context, api_key=API_KEY, session_id="strict-limits-session").result()
    assert first.stop_reason == "stop", first.error_message
    assert [d["type"] for d in first.diagnostics or []] == ["anthropic_strict_tools_fallback"]
    later = await stream(model, context, api_key=API_KEY, session_id="strict-limits-session").result()
    assert later.stop_reason == "stop" and not later.diagnostics
    refused, resent, next_turn = (request.body["tools"][0] for request in server.requests)
    assert refused["strict"] is True
    assert "strict" not in resent and "strict" not in next_turn


async def test_other_400s_are_not_resent_without_strict(server: FakeLLMServer) -> None:
    server.add(
        Turn(fault=Fault("status", status=400, body=fake_anthropic.error_body(400, "prompt is too long")))
    )
    model = claude(server, compat={"supportsStrictTools": True})
    context = Context(messages=[UserMessage("go")], tools=[FIND_TOOL])
    result = await stream(model, context, api_key=API_KEY, session_id="other-400-session").result()
    assert result.stop_reason == "error" and "prompt is too long" in (result.error_message or "")
    assert len(server.requests) == 1


# --- message threads (compat.supportsMessageThreads) -------------------------------------------------


def _thread_refusal(code: str) -> dict[str, Any]:
    body = fake_anthropic.error_body(400, f"thread refused: {code}")
    body["error"]["details"] = {"error_code": code}
    return body


async def _threaded_turns(server: FakeLLMServer, session: str, *, system: str = "Be brief.") -> list[Any]:
    """Two turns of one session; returns both results."""
    model = claude(server, compat={"supportsMessageThreads": True})
    messages: list[Message] = [UserMessage("go", timestamp=1)]
    first = await stream(
        model,
        Context(messages=messages, system_prompt=system, tools=[READ_TOOL]),
        api_key=API_KEY,
        session_id=session,
    ).result()
    messages += [first, UserMessage("next", timestamp=3)]
    second = await stream(
        model,
        Context(messages=messages, system_prompt=system, tools=[READ_TOOL]),
        api_key=API_KEY,
        session_id=session,
    ).result()
    return [first, second]


async def test_a_threaded_session_sends_only_the_new_messages(server: FakeLLMServer) -> None:
    server.add(Turn(text="one", response_id="msg_one"), Turn(text="two", response_id="msg_two"))
    await _threaded_turns(server, "threads-continue")
    create, cont = server.requests
    assert create.body["thread"] == {"type": "create"}
    assert "message-threads-2026-08-12" in create.headers["anthropic-beta"].split(",")
    assert cont.body["thread"] == {"type": "continue", "previous_message_id": "msg_one"}
    assert "system" not in cont.body and "tools" not in cont.body
    assert [m["role"] for m in cont.body["messages"]] == ["user"]
    assert cont.body["messages"][0]["content"][0]["text"] == "next"


async def test_a_changed_setting_starts_a_new_thread(server: FakeLLMServer) -> None:
    server.add(Turn(text="one", response_id="msg_a"), Turn(text="two"))
    model = claude(server, compat={"supportsMessageThreads": True})
    messages: list[Message] = [UserMessage("go", timestamp=1)]
    first = await stream(
        model, Context(messages=messages, system_prompt="A"), api_key=API_KEY, session_id="threads-changed"
    ).result()
    messages += [first, UserMessage("next", timestamp=3)]
    await stream(
        model, Context(messages=messages, system_prompt="B"), api_key=API_KEY, session_id="threads-changed"
    ).result()
    assert server.requests[1].body["thread"] == {"type": "create"}
    assert len(server.requests[1].body["messages"]) == 3


async def test_without_a_session_or_with_caching_off_there_is_no_thread(server: FakeLLMServer) -> None:
    server.add(Turn(text="a"), Turn(text="b"))
    model = claude(server, compat={"supportsMessageThreads": True})
    context = Context(messages=[UserMessage("go")])
    await stream(model, context, api_key=API_KEY).result()
    await stream(model, context, api_key=API_KEY, session_id="threads-off", cache_retention="none").result()
    for request in server.requests:
        assert "thread" not in request.body
        assert "message-threads-2026-08-12" not in request.headers.get("anthropic-beta", "")


async def test_a_thread_that_cannot_go_on_is_sent_again_as_a_new_one(server: FakeLLMServer) -> None:
    server.add(
        Turn(text="one", response_id="msg_gone"),
        Turn(fault=Fault("status", status=404, body=_thread_refusal("thread_not_found"))),
        Turn(text="two"),
    )
    _first, second = await _threaded_turns(server, "threads-expired")
    assert second.stop_reason == "stop", second.error_message
    assert [d["type"] for d in second.diagnostics or []] == ["anthropic_thread_fallback"]
    assert (second.diagnostics or [])[0]["details"] == {"reason": "thread_not_found"}
    resent = server.requests[2].body
    assert resent["thread"] == {"type": "create"} and len(resent["messages"]) == 3 and "system" in resent


async def test_an_endpoint_that_refuses_threads_gets_none_for_the_rest_of_the_session(
    server: FakeLLMServer,
) -> None:
    server.add(
        Turn(
            fault=Fault(
                "status",
                status=400,
                body=fake_anthropic.error_body(400, "thread: Extra inputs are not permitted"),
            )
        ),
        Turn(text="one", response_id="msg_plain"),
        Turn(text="two"),
    )
    first, second = await _threaded_turns(server, "threads-unsupported")
    assert first.stop_reason == "stop" and second.stop_reason == "stop"
    assert (first.diagnostics or [])[0]["details"] == {"reason": "400"}
    refused, plain, later = (request.body for request in server.requests)
    assert refused["thread"] == {"type": "create"}
    assert "thread" not in plain and "thread" not in later and len(later["messages"]) == 3
    # The beta stays: the request that turned threads off was accepted with it.
    assert "message-threads-2026-08-12" in server.requests[2].headers["anthropic-beta"]


async def test_other_errors_of_a_thread_request_are_not_resent(server: FakeLLMServer) -> None:
    server.add(
        Turn(fault=Fault("status", status=400, body=fake_anthropic.error_body(400, "prompt is too long")))
    )
    model = claude(server, compat={"supportsMessageThreads": True})
    result = await stream(
        model, Context(messages=[UserMessage("go")]), api_key=API_KEY, session_id="threads-other-error"
    ).result()
    assert result.stop_reason == "error" and len(server.requests) == 1


async def test_a_session_that_ended_starts_a_new_thread(server: FakeLLMServer) -> None:
    from tau.ai.session_resources import cleanup_session_resources

    server.add(Turn(text="one", response_id="msg_end"), Turn(text="two"))
    model = claude(server, compat={"supportsMessageThreads": True})
    messages: list[Message] = [UserMessage("go", timestamp=1)]
    first = await stream(
        model, Context(messages=messages), api_key=API_KEY, session_id="threads-ended"
    ).result()
    cleanup_session_resources("threads-ended")
    messages += [first, UserMessage("next", timestamp=3)]
    await stream(model, Context(messages=messages), api_key=API_KEY, session_id="threads-ended").result()
    assert server.requests[1].body["thread"] == {"type": "create"}
