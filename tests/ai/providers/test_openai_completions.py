"""The openai-completions provider against the fake server: streams, failures, and request bodies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tau.ai import (
    AbortSignal,
    AssistantMessage,
    Context,
    DoneEvent,
    ErrorEvent,
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
    stream,
    stream_simple,
)
from tau.ai.events import AssistantMessageEvent
from tau.ai.providers.openai_compat import detect_compat, resolve_compat
from tau.ai.providers.openai_completions import (
    ChunkReader,
    build_body,
    build_headers,
    map_finish_reason,
    simple_reasoning_effort,
    usage_counts,
)
from tau.ai.stream_writer import StreamWriter, run_stream
from tau.ai.transport.http import close_clients
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

API = "openai-completions"
PNG = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
READ_TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
async def _close_http_clients() -> AsyncIterator[None]:
    yield
    await close_clients()


def make_model(base_url: str = "https://llm.example.com/v1", **overrides: Any) -> Model:
    fields: dict[str, Any] = {"id": "test-model", "api": API, "provider": "fake", "base_url": base_url}
    fields.update(overrides)
    return Model(**fields)


def ask(text: str = "hi", **overrides: Any) -> Context:
    return Context(messages=[UserMessage(text)], **overrides)


def assistant(*blocks: Any, model: Model | None = None, stop: Any = "stop") -> AssistantMessage:
    source = model or make_model()
    return AssistantMessage(
        content=list(blocks), api=source.api, provider=source.provider, model=source.id, stop_reason=stop
    )


async def run(
    model: Model, context: Context, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    options.setdefault("api_key", "sk-test")
    events_stream = stream(model, context, **options)
    events = [event async for event in events_stream]
    return events, await events_stream.result()


def assert_well_formed(events: list[AssistantMessageEvent]) -> None:
    """The protocol invariants of a successful stream (spec §2.2, test 10)."""
    types = [e.type for e in events]
    assert types[0] == "start" and types.count("start") == 1
    assert isinstance(events[-1], DoneEvent)
    partial = events[0].partial  # type: ignore[union-attr]
    assert all(getattr(e, "partial", partial) is partial for e in events[:-1])
    for kind in ("text", "thinking", "toolcall"):
        starts = [e.content_index for e in events if e.type == f"{kind}_start"]  # type: ignore[union-attr]
        ends = [e.content_index for e in events if e.type == f"{kind}_end"]  # type: ignore[union-attr]
        assert sorted(starts) == sorted(ends)


async def read_chunks(
    chunks: list[dict[str, Any]], *, supports_finish_reason: bool = True
) -> AssistantMessage:
    """Feed hand-written chunks through the chunk reader, as if they came over the wire."""

    async def produce(writer: StreamWriter) -> None:
        writer.start()
        reader = ChunkReader(writer, supports_finish_reason=supports_finish_reason)
        for chunk in chunks:
            reader.feed(chunk)
        reader.finish()

    return await run_stream(make_model(), StreamOptions(), produce).result()


def tool_delta(
    index: int | None, *, id: str | None = None, name: str | None = None, args: str = ""
) -> dict[str, Any]:
    part: dict[str, Any] = {"function": {"arguments": args}}
    if index is not None:
        part["index"] = index
    if id is not None:
        part["id"] = id
        part["type"] = "function"
        part["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [part]}}]}


def finish(reason: str = "stop") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


# --- streams --------------------------------------------------------------------------------------


async def test_a_text_turn_streams_well_formed_events_and_the_full_text(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello there, general Kenobi", chunk_size=5, response_id="chatcmpl-42"))
    events, message = await run(make_model(server.url("/v1")), ask())
    assert_well_formed(events)
    assert [e.type for e in events if e.type.startswith("text")][:2] == ["text_start", "text_delta"]
    assert message.text() == "Hello there, general Kenobi"
    assert message.stop_reason == "stop"
    assert message.response_id == "chatcmpl-42"
    assert message.response_model is None
    assert server.last_request.path == "/v1/chat/completions"
    assert server.last_request.headers["authorization"] == "Bearer sk-test"


async def test_reasoning_becomes_a_thinking_block_signed_with_its_field_name(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="Let me think this through.", text="42"))
    events, message = await run(make_model(server.url("/v1"), reasoning=True), ask())
    assert_well_formed(events)
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and isinstance(text, TextContent)
    assert thinking.thinking == "Let me think this through."
    assert thinking.thinking_signature == "reasoning_content"
    assert text.text == "42"


async def test_a_tool_call_turn_ends_with_tool_use_and_parsed_arguments(server: FakeLLMServer) -> None:
    server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "src/main.py"}, id="call_1")], chunk_size=4)
    )
    events, message = await run(make_model(server.url("/v1")), ask(tools=[READ_TOOL]))
    assert_well_formed(events)
    assert message.stop_reason == "toolUse"
    assert message.tool_calls() == [ToolCall(id="call_1", name="read", arguments={"path": "src/main.py"})]
    deltas = "".join(e.delta for e in events if e.type == "toolcall_delta")  # type: ignore[union-attr]
    assert deltas == '{"path": "src/main.py"}'


async def test_the_served_model_is_recorded_when_it_differs(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok", response_model="test-model-2025-01-01"))
    _, message = await run(make_model(server.url("/v1")), ask())
    assert message.response_model == "test-model-2025-01-01"
    assert message.to_json()["responseModel"] == "test-model-2025-01-01"


async def test_invalid_tool_json_still_finishes_with_best_effort_arguments(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", raw_arguments='{"path": "a.py", oops')]))
    _, message = await run(make_model(server.url("/v1")), ask())
    assert message.stop_reason == "toolUse"
    assert isinstance(message.tool_calls()[0].arguments, dict)


# --- usage ----------------------------------------------------------------------------------------


async def test_cached_prompt_tokens_are_split_out_and_reasoning_is_not_counted_twice(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok", usage=ScriptedUsage(input=200, cache_read=800, output=50, reasoning=30)))
    model = make_model(server.url("/v1"), cost=ModelCost(input=3, output=15, cache_read=0.3))
    _, message = await run(model, ask())
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (200, 50, 800, 0)
    assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write == 1050
    assert usage.cost.total == pytest.approx((200 * 3 + 50 * 15 + 800 * 0.3) / 1e6)


async def test_cache_writes_reported_inside_cached_tokens_are_not_counted_as_reads(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok", usage=ScriptedUsage(input=100, cache_read=300, cache_write=200, output=7)))
    _, message = await run(make_model(server.url("/v1")), ask())
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.total_tokens) == (100, 300, 200, 607)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"prompt_tokens": 1000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 800}},
            (200, 5, 800, 0),
        ),
        (  # DeepSeek: the canonical field is 0, the compatible one is positive
            {
                "prompt_tokens": 1000,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 0},
                "prompt_cache_hit_tokens": 600,
            },
            (400, 5, 600, 0),
        ),
        (  # gateways with Anthropic-style top-level counters
            {
                "prompt_tokens": 1000,
                "completion_tokens": 5,
                "cache_read_input_tokens": 500,
                "cache_creation_input_tokens": 100,
            },
            (400, 5, 500, 100),
        ),
        ({"prompt_tokens": 10, "completion_tokens": None}, (10, 0, 0, 0)),
        ({"promptTokenCount": 50, "candidatesTokenCount": 3, "thoughtsTokenCount": 4}, (50, 7, 0, 0)),
    ],
)
def test_usage_takes_the_first_positive_of_equivalent_fields(
    raw: dict[str, Any], expected: tuple[int, int, int, int]
) -> None:
    assert usage_counts(raw) == expected


async def test_usage_reported_on_the_choice_is_used_when_the_chunk_has_none() -> None:
    message = await read_chunks(
        [
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": "x"},
                        "finish_reason": "stop",
                        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
                    }
                ]
            }
        ]
    )
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (12, 3, 15)


# --- finish reasons and in-band errors -----------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("stop", ("stop", None)),
        ("end", ("stop", None)),
        ("length", ("length", None)),
        ("tool_calls", ("toolUse", None)),
        ("function_call", ("toolUse", None)),
        ("content_filter", ("error", "Provider finish_reason: content_filter")),
        ("network_error", ("error", "Provider finish_reason: network_error")),
        ("something_new", ("error", "Provider finish_reason: something_new")),
    ],
)
def test_finish_reasons_map_to_stop_reasons(reason: str, expected: tuple[str, str | None]) -> None:
    assert map_finish_reason(reason) == expected


async def test_a_length_finish_is_a_successful_length_stop(server: FakeLLMServer) -> None:
    server.add(Turn(text="cut sho", stop_reason="length"))
    events, message = await run(make_model(server.url("/v1")), ask())
    assert isinstance(events[-1], DoneEvent) and events[-1].reason == "length"
    assert message.text() == "cut sho"


async def test_a_content_filter_finish_is_an_error_naming_the_reason(server: FakeLLMServer) -> None:
    server.add(Turn(text="I was saying", stop_reason="content_filter"))
    events, message = await run(make_model(server.url("/v1")), ask())
    assert isinstance(events[-1], ErrorEvent) and events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "Provider finish_reason: content_filter"
    assert message.text() == "I was saying"


async def test_an_error_object_inside_the_stream_becomes_the_error_message() -> None:
    error = {
        "error": {"message": "Upstream overloaded", "code": 502, "metadata": {"raw": "provider said no"}}
    }
    message = await read_chunks([{"choices": [{"index": 0, "delta": {"content": "par"}}]}, error])
    assert message.stop_reason == "error"
    assert message.error_message == "502 Upstream overloaded\nprovider said no"
    assert message.text() == "par"


async def test_a_stream_ending_without_finish_reason_is_an_error() -> None:
    message = await read_chunks([{"choices": [{"index": 0, "delta": {"content": "half"}}]}])
    assert message.stop_reason == "error"
    assert message.error_message == "Stream ended without finish_reason"
    assert message.text() == "half"


async def test_without_supports_finish_reason_a_stream_ending_without_one_is_a_normal_stop() -> None:
    text = [{"choices": [{"index": 0, "delta": {"content": "fine"}}]}]
    message = await read_chunks(text, supports_finish_reason=False)
    assert message.stop_reason == "stop" and message.text() == "fine"
    message = await read_chunks(
        [tool_delta(0, id="call_1", name="read", args="{}")], supports_finish_reason=False
    )
    assert message.stop_reason == "toolUse"


async def test_a_finish_reason_the_server_sends_is_used_whatever_supports_finish_reason_says() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": "cut"}}]}, finish("length")]
    message = await read_chunks(chunks, supports_finish_reason=False)
    assert message.stop_reason == "length"


@pytest.mark.parametrize("status", [400, 401, 500])
async def test_http_error_statuses_become_error_events_with_the_servers_message(
    server: FakeLLMServer, status: int
) -> None:
    server.add(Turn(fault=Fault("status", status=status, body={"error": {"message": f"nope {status}"}})))
    events, message = await run(make_model(server.url("/v1")), ask())
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert str(status) in message.error_message and f"nope {status}" in message.error_message


async def test_a_long_retry_after_fails_at_once_with_the_delay_and_no_hidden_retry(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"retry-after": "3600"})), Turn(text="never"))
    _, message = await run(make_model(server.url("/v1")), ask())
    assert message.stop_reason == "error"
    assert "3600" in (message.error_message or "")
    assert len(server.requests) == 1


async def test_a_short_retry_after_is_not_retried_by_default(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"retry-after": "1"})), Turn(text="never"))
    _, message = await run(make_model(server.url("/v1")), ask())
    assert message.stop_reason == "error" and len(server.requests) == 1


async def test_an_abort_before_the_request_sends_nothing(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    signal.abort()
    events, message = await run(make_model(server.url("/v1")), ask(), signal=signal)
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted" and message.content == []
    assert message.usage.output == 0
    assert server.requests == []


async def test_an_abort_before_the_first_event_leaves_empty_content(server: FakeLLMServer) -> None:
    server.add(Turn(text="never seen", fault=Fault("stall", after_events=0, seconds=30)))
    signal = AbortSignal()
    events_stream = stream(make_model(server.url("/v1")), ask(), api_key="k", signal=signal)
    async for event in events_stream:
        if event.type == "start":
            signal.abort()
    message = await events_stream.result()
    assert message.stop_reason == "aborted"
    assert message.content == [] and message.usage.output == 0


async def test_an_abort_mid_text_keeps_the_partial_text(server: FakeLLMServer) -> None:
    server.add(Turn(text="abcdefgh" * 8, chunk_size=4, fault=Fault("stall", after_events=4, seconds=30)))
    signal = AbortSignal()
    events_stream = stream(make_model(server.url("/v1")), ask(), api_key="k", signal=signal)
    async for event in events_stream:
        if event.type == "text_delta":
            signal.abort()
    message = await asyncio.wait_for(events_stream.result(), 5)
    assert message.stop_reason == "aborted"
    assert message.text() and ("abcdefgh" * 8).startswith(message.text())


@pytest.mark.parametrize("kind", ["cut", "truncate"])
async def test_a_connection_ending_mid_stream_is_an_error(server: FakeLLMServer, kind: Any) -> None:
    server.add(Turn(text="abcdefgh" * 4, chunk_size=4, fault=Fault(kind, after_events=3)))
    events, message = await run(make_model(server.url("/v1")), ask())
    assert isinstance(events[-1], ErrorEvent)
    assert message.stop_reason == "error"
    assert message.text() == "abcdefgh"


async def test_a_failed_turn_leaves_no_scratch_fields_and_is_dropped_from_the_next_request(
    server: FakeLLMServer,
) -> None:
    partial_call = Turn(
        tool_calls=[ScriptedToolCall("read", raw_arguments='{"path": "abcdefgh')],
        chunk_size=4,
        fault=Fault("cut", after_events=3),
    )
    server.add(partial_call, Turn(text="recovered"))
    model = make_model(server.url("/v1"))
    context = ask("first")
    _, failed = await run(model, context)
    assert failed.stop_reason == "error" and failed.tool_calls()
    assert not {"partialJson", "partialArgs", "index", "streamIndex"} & set(
        json.dumps(failed.to_json()).split('"')
    )
    context.messages += [failed, UserMessage("try again")]
    _, message = await run(model, context)
    assert message.text() == "recovered"
    assert [m["role"] for m in server.last_request.body["messages"]] == ["user", "user"]


async def test_a_stalled_stream_ends_with_an_idle_timeout_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="slow", fault=Fault("stall", after_events=2, seconds=30)))
    _, message = await asyncio.wait_for(run(make_model(server.url("/v1")), ask(), idle_timeout_ms=200), 5)
    assert message.stop_reason == "error"
    assert "idle timeout" in (message.error_message or "")


async def test_a_malformed_event_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="hello world", fault=Fault("malformed", after_events=2)))
    _, message = await run(make_model(server.url("/v1")), ask())
    assert message.stop_reason == "error"
    assert "Malformed" in (message.error_message or "")


# --- chunk reading: parallel calls and reasoning fields -------------------------------------------


async def test_parallel_tool_calls_with_interleaved_deltas_land_in_their_own_blocks() -> None:
    message = await read_chunks(
        [
            tool_delta(0, id="call_a", name="read"),
            tool_delta(1, id="call_b", name="grep"),
            tool_delta(0, args='{"path": '),
            tool_delta(1, args='{"pattern": "TODO"'),
            tool_delta(0, args='"a.py"}'),
            tool_delta(1, args=', "path": "src"}'),
            finish("tool_calls"),
        ]
    )
    assert message.stop_reason == "toolUse"
    assert message.tool_calls() == [
        ToolCall(id="call_a", name="read", arguments={"path": "a.py"}),
        ToolCall(id="call_b", name="grep", arguments={"pattern": "TODO", "path": "src"}),
    ]


async def test_calls_that_all_claim_index_zero_are_told_apart_by_id() -> None:
    message = await read_chunks(
        [
            tool_delta(0, id="call_a", name="read", args='{"path": "a"}'),
            tool_delta(0, id="call_b", name="read", args='{"path": "b"}'),
            finish("tool_calls"),
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls()] == [
        ("call_a", {"path": "a"}),
        ("call_b", {"path": "b"}),
    ]


async def test_fragments_without_index_or_id_continue_the_latest_call() -> None:
    message = await read_chunks(
        [
            tool_delta(None, id="call_a", name="read"),
            tool_delta(None, args='{"path":'),
            tool_delta(None, args='"x"}'),
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls()] == [("call_a", {"path": "x"})]


async def test_reasoning_is_read_from_one_field_when_a_server_sends_two() -> None:
    both = {"reasoning_content": "step one. ", "reasoning": "step one. "}
    message = await read_chunks(
        [
            {"choices": [{"index": 0, "delta": both}]},
            {"choices": [{"index": 0, "delta": {"content": "done"}}]},
        ]
    )
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "step one. "
    assert thinking.thinking_signature == "reasoning_content"


async def test_reasoning_in_the_reasoning_field_is_signed_with_that_name() -> None:
    message = await read_chunks(
        [{"choices": [{"index": 0, "delta": {"reasoning": "hm", "reasoning_content": ""}}]}]
    )
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.thinking_signature == "reasoning"


async def test_encrypted_reasoning_details_become_the_tool_calls_thought_signature() -> None:
    detail = {"type": "reasoning.encrypted", "id": "call_a", "data": "opaque=="}
    early = {"choices": [{"index": 0, "delta": {"reasoning_details": [detail]}}]}
    message = await read_chunks(
        [early, tool_delta(0, id="call_a", name="read", args="{}"), finish("tool_calls")]
    )
    assert (
        message.tool_calls()[0].thought_signature
        == '{"type":"reasoning.encrypted","id":"call_a","data":"opaque=="}'
    )


# --- request building -----------------------------------------------------------------------------


def body_for(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    return build_body(model, context, StreamOptions(**options))


@pytest.mark.parametrize(
    ("reasoning", "compat", "role"),
    [
        (True, None, "system"),  # pi 1.6: the developer role is OpenAI's own, unless compat says so
        (True, {"supportsDeveloperRole": True}, "developer"),
        (False, {"supportsDeveloperRole": True}, "system"),
    ],
)
def test_the_system_prompt_role_follows_reasoning_and_compat(reasoning: bool, compat: Any, role: str) -> None:
    body = body_for(make_model(reasoning=reasoning, compat=compat), ask(system_prompt="Be brief."))
    assert body["messages"][0] == {"role": role, "content": "Be brief."}


def test_openais_own_api_gets_the_developer_role_for_reasoning_models() -> None:
    model = make_model("https://api.openai.com/v1", provider="openai", reasoning=True)
    body = body_for(model, ask(system_prompt="Be brief."))
    assert body["messages"][0] == {"role": "developer", "content": "Be brief."}


def test_the_default_body_streams_with_usage_and_store_off() -> None:
    body = body_for(make_model(), ask(), max_tokens=1000, temperature=0.2)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["store"] is False
    assert body["max_completion_tokens"] == 1000 and "max_tokens" not in body
    assert body["temperature"] == 0.2
    assert "tools" not in body


def test_max_tokens_goes_in_the_field_compat_names() -> None:
    body = body_for(make_model(compat={"maxTokensField": "max_tokens"}), ask(), max_tokens=50)
    assert body["max_tokens"] == 50 and "max_completion_tokens" not in body


def test_assistant_content_is_one_string_and_own_reasoning_returns_in_its_field() -> None:
    model = make_model(reasoning=True)
    turn = assistant(
        ThinkingContent("I should greet.", thinking_signature="reasoning_content"),
        TextContent("Hello"),
        TextContent("  "),
        TextContent(", you."),
        model=model,
    )
    body = body_for(model, Context(messages=[UserMessage("hi"), turn, UserMessage("again")]))
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "Hello, you.",
        "reasoning_content": "I should greet.",
    }


def test_reasoning_is_sent_as_plain_text_when_compat_requires_it() -> None:
    model = make_model(reasoning=True, compat={"requiresThinkingAsText": True})
    turn = assistant(
        ThinkingContent("Plan.", thinking_signature="reasoning"), TextContent("Answer"), model=model
    )
    body = body_for(model, Context(messages=[UserMessage("q"), turn]))
    assert body["messages"][1] == {"role": "assistant", "content": "Plan.\n\nAnswer"}


def test_another_models_reasoning_is_replayed_as_text_without_a_field() -> None:
    other = make_model(id="other-model")
    turn = assistant(ThinkingContent("Foreign idea.", thinking_signature="reasoning_content"), model=other)
    body = body_for(make_model(), Context(messages=[UserMessage("q"), turn]))
    assert body["messages"][1] == {"role": "assistant", "content": "Foreign idea."}


def test_deepseek_gets_an_empty_reasoning_content_on_every_assistant_turn() -> None:
    model = make_model(provider="deepseek", base_url="https://api.deepseek.com", reasoning=True)
    body = body_for(model, Context(messages=[UserMessage("q"), assistant(TextContent("a"), model=model)]))
    assert body["messages"][1] == {"role": "assistant", "content": "a", "reasoning_content": ""}


def test_an_empty_assistant_turn_is_skipped() -> None:
    body = body_for(
        make_model(), Context(messages=[UserMessage("q"), assistant(TextContent(" ")), UserMessage("r")])
    )
    assert [m["role"] for m in body["messages"]] == ["user", "user"]


def tool_history(*, images: bool = False) -> list[Any]:
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.png"})
    result_content: list[Any] = [TextContent("file read")] + ([PNG] if images else [])
    return [
        UserMessage("read it"),
        assistant(call, stop="toolUse"),
        ToolResultMessage(tool_call_id="call_1", tool_name="read", content=result_content),
        UserMessage("thanks"),
    ]


def test_tool_calls_and_results_use_the_chat_completions_shapes() -> None:
    model = make_model(compat={"supportsStrictMode": True})
    body = body_for(model, Context(messages=tool_history(), tools=[READ_TOOL]))
    _, call_turn, tool_turn, _ = body["messages"]
    assert call_turn == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.png"}'},
            }
        ],
    }
    assert tool_turn == {"role": "tool", "content": "file read", "tool_call_id": "call_1"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
                "strict": False,
            },
        }
    ]


def test_tool_history_without_tools_sends_an_empty_tools_list_where_compat_requires_it() -> None:
    # As pi 1.6: only with requiresToolsWithToolHistory (some LiteLLM proxies in front of Anthropic).
    required = make_model(compat={"requiresToolsWithToolHistory": True})
    assert body_for(required, Context(messages=tool_history()))["tools"] == []
    assert "tools" not in body_for(make_model(), Context(messages=tool_history()))


def test_strict_is_left_out_when_the_server_does_not_support_it() -> None:
    body = body_for(make_model(compat={"supportsStrictMode": False}), ask(tools=[READ_TOOL]))
    assert "strict" not in body["tools"][0]["function"]


def test_strict_is_left_out_unless_compat_says_the_server_supports_it() -> None:
    # pi 1.6: OpenAI compatibility alone does not imply strict tool schemas.
    body = body_for(make_model("https://cerebras.example/v1", provider="cerebras"), ask(tools=[READ_TOOL]))
    assert "strict" not in body["tools"][0]["function"]


def test_tool_result_names_and_the_assistant_bridge_are_added_when_compat_asks() -> None:
    compat = {"requiresToolResultName": True, "requiresAssistantAfterToolResult": True}
    body = body_for(make_model(compat=compat), Context(messages=tool_history()))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][1]["content"] == ""
    assert body["messages"][2]["name"] == "read"
    assert body["messages"][3] == {"role": "assistant", "content": "I have processed the tool results."}


def test_tool_result_images_follow_in_one_user_message_for_vision_models() -> None:
    body = body_for(make_model(input=["text", "image"]), Context(messages=tool_history(images=True)))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "user", "user"]
    assert body["messages"][3]["content"] == [
        {"type": "text", "text": "Attached image(s) from tool result:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


def test_tool_result_images_become_a_placeholder_for_text_only_models() -> None:
    body = body_for(make_model(), Context(messages=tool_history(images=True)))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "user"]
    assert "image omitted" in body["messages"][2]["content"]


def test_an_image_only_tool_result_says_see_attached_image() -> None:
    history = tool_history(images=True)
    history[2] = ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[PNG])
    body = body_for(make_model(input=["text", "image"]), Context(messages=history))
    assert body["messages"][2]["content"] == "(see attached image)"


def test_user_images_are_sent_as_data_urls() -> None:
    context = Context(messages=[UserMessage([TextContent("what is this?"), PNG])])
    body = body_for(make_model(input=["text", "image"]), context)
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]


def test_responses_style_tool_call_ids_are_shortened_and_results_follow() -> None:
    long_id = "call_abc|fc_" + "x+/=" * 100
    foreign = make_model(id="gpt-5", provider="openai", api="openai-responses")
    history = [
        UserMessage("q"),
        assistant(ToolCall(id=long_id, name="read"), model=foreign, stop="toolUse"),
        ToolResultMessage(tool_call_id=long_id, tool_name="read", content=[TextContent("ok")]),
    ]
    body = body_for(make_model(), Context(messages=history))
    assert body["messages"][1]["tool_calls"][0]["id"] == "call_abc"
    assert body["messages"][2]["tool_call_id"] == "call_abc"


def test_unpaired_surrogates_are_removed_and_emoji_kept() -> None:
    bad = "ok\ud83d 🎉"
    history = [
        UserMessage(bad),
        assistant(ToolCall(id="c", name="read"), TextContent(bad), stop="toolUse"),
        ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(bad)]),
    ]
    body = body_for(make_model(), Context(messages=history, system_prompt=bad))
    contents = [m["content"] for m in body["messages"]]
    assert contents == ["ok 🎉"] * 4


@pytest.mark.parametrize(
    ("thinking_format", "effort", "expected"),
    [
        ("openai", None, {}),
        ("openai", "low", {"reasoning_effort": "low"}),
        ("openai", "high", {"reasoning_effort": "high"}),
        ("zai", None, {"thinking": {"type": "disabled"}}),
        (
            "zai",
            "medium",
            {"thinking": {"type": "enabled", "clear_thinking": False}, "reasoning_effort": "medium"},
        ),
        ("qwen", None, {"enable_thinking": False}),
        ("qwen", "minimal", {"enable_thinking": True, "reasoning_effort": "minimal"}),
        ("together", None, {"reasoning": {"enabled": False}}),
        ("together", "high", {"reasoning": {"enabled": True}, "reasoning_effort": "high"}),
        ("string-thinking", None, {"thinking": "none"}),
        ("string-thinking", "low", {"thinking": "low"}),
        (
            "qwen-chat-template",
            None,
            {"chat_template_kwargs": {"enable_thinking": False, "preserve_thinking": True}},
        ),
        (
            "qwen-chat-template",
            "high",
            {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}},
        ),
        ("deepseek", None, {"thinking": {"type": "disabled"}}),
        ("deepseek", "high", {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
        ("openrouter", None, {"reasoning": {"effort": "none"}}),
        ("openrouter", "medium", {"reasoning": {"effort": "medium"}}),
    ],
)
def test_each_thinking_format_sends_exactly_its_fields(
    thinking_format: str, effort: str | None, expected: dict[str, Any]
) -> None:
    model = make_model(reasoning=True, compat={"thinkingFormat": thinking_format})
    body = body_for(model, ask(), extra={"reasoning_effort": effort})
    thinking_keys = {"reasoning_effort", "enable_thinking", "chat_template_kwargs", "thinking", "reasoning"}
    assert {k: v for k, v in body.items() if k in thinking_keys} == expected


def test_chat_template_values_fill_in_pis_variables() -> None:
    kwargs = {
        "enable_thinking": {"$var": "thinking.enabled"},
        "effort": {"$var": "thinking.effort", "omitWhenOff": True},
        "budget": {"$var": "thinking.budget"},
        "fixed": 1,
    }
    model = make_model(
        reasoning=True, compat={"thinkingFormat": "chat-template", "chatTemplateKwargs": kwargs}
    )
    on = body_for(model, ask(), max_tokens=10_000, extra={"reasoning_effort": "medium"})
    assert on["chat_template_kwargs"] == {
        "enable_thinking": True,
        "effort": "medium",
        "budget": 8192,
        "fixed": 1,
    }
    off = body_for(model, ask(), max_tokens=10_000)
    assert off["chat_template_kwargs"] == {"enable_thinking": False, "fixed": 1}


def test_baseten_sends_chat_template_args_and_the_mapped_effort() -> None:
    model = make_model(
        reasoning=True,
        compat={
            "thinkingFormat": "baseten",
            "chatTemplateArgs": {"enable_thinking": {"$var": "thinking.enabled"}},
        },
        thinking_level_map={"off": "none"},
    )
    assert body_for(model, ask())["chat_template_args"] == {"enable_thinking": False}
    assert body_for(model, ask())["reasoning_effort"] == "none"
    assert body_for(model, ask(), extra={"reasoning_effort": "high"})["reasoning_effort"] == "high"


def test_ant_ling_sends_only_a_mapped_effort() -> None:
    model = make_model(
        reasoning=True,
        compat={"thinkingFormat": "ant-ling"},
        thinking_level_map={"high": "high", "low": None},
    )
    assert body_for(model, ask(), extra={"reasoning_effort": "high"})["reasoning"] == {"effort": "high"}
    assert "reasoning" not in body_for(model, ask(), extra={"reasoning_effort": "low"})


def test_thinking_level_maps_translate_levels_and_off() -> None:
    level_map: dict[str, str | None] = {"off": "none", "high": "max"}
    model = make_model(reasoning=True, thinking_level_map=level_map)
    assert body_for(model, ask(), extra={"reasoning_effort": "high"})["reasoning_effort"] == "max"
    assert body_for(model, ask())["reasoning_effort"] == "none"


def test_openrouter_says_nothing_when_thinking_off_is_unsupported() -> None:
    model = make_model(
        reasoning=True, compat={"thinkingFormat": "openrouter"}, thinking_level_map={"off": None}
    )
    assert "reasoning" not in body_for(model, ask())


def test_no_thinking_fields_for_non_reasoning_models_or_servers_without_effort() -> None:
    for model in (make_model(), make_model(reasoning=True, compat={"supportsReasoningEffort": False})):
        assert "reasoning_effort" not in body_for(model, ask(), extra={"reasoning_effort": "high"})


def test_groq_qwen3_maps_every_level_to_default() -> None:
    model = make_model(
        id="qwen/qwen3-32b", provider="groq", base_url="https://api.groq.com/openai/v1", reasoning=True
    )
    assert body_for(model, ask(), extra={"reasoning_effort": "low"})["reasoning_effort"] == "default"


@pytest.mark.parametrize(
    ("level_map", "reasoning", "expected"),
    [
        (None, "xhigh", "high"),
        ({"xhigh": "xhigh"}, "xhigh", "xhigh"),
        (None, "minimal", "minimal"),
        ({"minimal": None}, "minimal", "low"),
        (None, None, None),
    ],
)
def test_simple_reasoning_levels_are_clamped_to_what_the_model_supports(
    level_map: Any, reasoning: str | None, expected: str | None
) -> None:
    model = make_model(reasoning=True, thinking_level_map=level_map)
    assert simple_reasoning_effort(model, reasoning) == expected


def test_a_non_reasoning_model_ignores_the_reasoning_level() -> None:
    assert simple_reasoning_effort(make_model(), "high") is None


async def test_stream_simple_sends_the_reasoning_level_and_tool_choice(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = make_model(server.url("/v1"), reasoning=True)
    options = SimpleStreamOptions(api_key="k", reasoning="xhigh", extra={"tool_choice": "required"})
    message = await stream_simple(model, ask(tools=[READ_TOOL]), options).result()
    assert message.stop_reason == "stop"
    body = server.last_request.body
    assert body["reasoning_effort"] == "high"
    assert body["tool_choice"] == "required"
    assert body["max_completion_tokens"] == 16_384


def test_openrouter_anthropic_models_get_cache_markers_on_system_last_tool_and_last_text() -> None:
    model = make_model(
        id="anthropic/claude-sonnet-4.5", provider="openrouter", base_url="https://openrouter.ai/api/v1"
    )
    body = body_for(model, ask("last question", system_prompt="sys", tools=[READ_TOOL]))
    marker = {"type": "ephemeral"}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "sys", "cache_control": marker}]
    assert body["messages"][-1]["content"] == [
        {"type": "text", "text": "last question", "cache_control": marker}
    ]
    assert body["tools"][-1]["cache_control"] == marker
    long_body = body_for(model, ask(system_prompt="sys"), cache_retention="long")
    assert long_body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    plain = body_for(model, ask(system_prompt="sys"), cache_retention="none")
    assert plain["messages"][0]["content"] == "sys"


def test_prompt_cache_key_is_sent_to_openai_and_with_long_retention() -> None:
    openai = make_model(provider="openai", base_url="https://api.openai.com/v1")
    assert body_for(openai, ask(), session_id="s1")["prompt_cache_key"] == "s1"
    assert "prompt_cache_key" not in body_for(openai, ask(), session_id="s1", cache_retention="none")
    assert "prompt_cache_key" not in body_for(make_model(), ask(), session_id="s1")
    long_body = body_for(make_model(), ask(), session_id="s1", cache_retention="long")
    assert (long_body["prompt_cache_key"], long_body["prompt_cache_retention"]) == ("s1", "24h")


def test_routing_preferences_reach_openrouter_and_the_vercel_gateway() -> None:
    routing = {"order": ["anthropic"], "allow_fallbacks": False}
    openrouter = make_model(
        provider="openrouter", base_url="https://openrouter.ai/api/v1", compat={"openRouterRouting": routing}
    )
    assert body_for(openrouter, ask())["provider"] == routing
    vercel = make_model(
        provider="vercel",
        base_url="https://ai-gateway.vercel.sh/v1",
        compat={"vercelGatewayRouting": {"only": ["openai"], "order": []}},
    )
    assert body_for(vercel, ask())["providerOptions"] == {"gateway": {"only": ["openai"]}}


async def test_on_payload_can_replace_the_body_that_is_sent(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))

    def hook(payload: dict[str, Any], _model: Model) -> dict[str, Any]:
        return {**payload, "seed": 7}

    await run(make_model(server.url("/v1")), ask(), on_payload=hook)
    assert server.last_request.body["seed"] == 7


# --- headers --------------------------------------------------------------------------------------


def test_options_headers_override_model_headers_which_override_auth() -> None:
    model = make_model(headers={"X-Team": "model", "Authorization": "Bearer from-model"})
    options = StreamOptions(headers={"x-team": "options"})
    headers = build_headers(model, ask(), options, "sk-key")
    assert {k.lower(): v for k, v in headers.items()} == {
        "authorization": "Bearer from-model",
        "x-team": "options",
    }


def test_copilot_headers_mark_agent_turns_and_images() -> None:
    model = make_model(provider="github-copilot")
    user_turn = build_headers(model, ask(), StreamOptions(), "k")
    assert (user_turn["X-Initiator"], user_turn["Openai-Intent"]) == ("user", "conversation-edits")
    after_tool = build_headers(model, Context(messages=tool_history(images=True)[:3]), StreamOptions(), "k")
    assert after_tool["X-Initiator"] == "agent"
    assert after_tool["Copilot-Vision-Request"] == "true"


def test_session_affinity_headers_are_sent_when_compat_asks_in_its_format() -> None:
    model = make_model(compat={"sendSessionAffinityHeaders": True})
    headers = build_headers(model, ask(), StreamOptions(session_id="s1"), "k")
    assert headers["session_id"] == headers["x-client-request-id"] == headers["x-session-affinity"] == "s1"
    nosession = make_model(
        compat={"sendSessionAffinityHeaders": True, "sessionAffinityFormat": "openai-nosession"}
    )
    headers = build_headers(nosession, ask(), StreamOptions(session_id="s1"), "k")
    assert "session_id" not in headers and headers["x-session-affinity"] == "s1"
    assert "session_id" not in build_headers(make_model(), ask(), StreamOptions(session_id="s1"), "k")


def test_openrouter_gets_its_own_session_header_by_default() -> None:
    model = make_model("https://openrouter.ai/api/v1", provider="openrouter")
    headers = build_headers(model, ask(), StreamOptions(session_id="s1"), "k")
    assert headers["x-session-id"] == "s1"
    assert "session_id" not in headers and "x-session-affinity" not in headers


def test_the_cloudflare_gateway_takes_the_key_in_its_own_header() -> None:
    model = make_model(
        provider="cloudflare-ai-gateway",
        base_url="https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat",
    )
    headers = build_headers(model, ask(), StreamOptions(), "cf-key")
    assert headers == {"cf-aig-authorization": "Bearer cf-key"}


# --- compat ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "base_url", "expected"),
    [
        ("openai", "https://api.openai.com/v1", {"supports_store": True, "thinking_format": "openai"}),
        (
            "cerebras",
            "https://api.cerebras.ai/v1",
            {"supports_store": False, "supports_developer_role": False},
        ),
        ("xai", "https://api.x.ai/v1", {"supports_store": False, "supports_reasoning_effort": False}),
        ("custom", "https://llm.chutes.ai/v1", {"supports_store": False, "max_tokens_field": "max_tokens"}),
        (
            "deepseek",
            "https://api.deepseek.com",
            {
                "thinking_format": "deepseek",
                "supports_store": False,
                "requires_reasoning_content_on_assistant_messages": True,
            },
        ),
        (
            "zai",
            "https://api.z.ai/api/coding/paas/v4",
            {"thinking_format": "zai", "supports_reasoning_effort": False},
        ),
        (
            "moonshotai",
            "https://api.moonshot.ai/v1",
            {
                "max_tokens_field": "max_tokens",
                "supports_strict_mode": False,
                "supports_reasoning_effort": False,
            },
        ),
        ("opencode", "https://opencode.ai/zen/go/v1", {"supports_store": False}),
        (
            "cloudflare-workers-ai",
            "https://api.cloudflare.com/client/v4/accounts/{A}/ai/v1",
            {"supports_long_cache_retention": False, "supports_store": False},
        ),
        (
            "cloudflare-ai-gateway",
            "https://gateway.ai.cloudflare.com/v1/{A}/{G}/compat",
            {
                "max_tokens_field": "max_tokens",
                "supports_strict_mode": False,
                "supports_reasoning_effort": False,
            },
        ),
        ("groq", "https://api.groq.com/openai/v1", {"supports_store": True, "thinking_format": "openai"}),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            {"thinking_format": "openrouter", "cache_control_format": None},
        ),
        ("ollama", "http://localhost:11434/v1", {"supports_store": True, "supports_developer_role": False}),
    ],
)
def test_compat_is_detected_from_provider_and_host(
    provider: str, base_url: str, expected: dict[str, Any]
) -> None:
    compat = detect_compat(make_model(provider=provider, base_url=base_url))
    assert {name: getattr(compat, name) for name in expected} == expected


def test_model_compat_overrides_detection_field_by_field_and_ignores_bad_values() -> None:
    model = make_model(
        provider="xai",
        base_url="https://api.x.ai/v1",
        compat={"supportsStore": True, "thinkingFormat": "bogus", "maxTokensField": 5, "zaiToolStream": True},
    )
    compat = resolve_compat(model)
    assert compat.supports_store is True
    assert compat.supports_developer_role is False
    assert compat.thinking_format == "openai"
    assert compat.max_tokens_field == "max_completion_tokens"
    assert compat.zai_tool_stream is True


async def test_a_local_ollama_style_server_gets_a_plain_request_and_streams(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="thinking locally", text="Local answer."))
    model = Model(
        id="qwen3:8b",
        api=API,
        provider="ollama",
        base_url=server.url("/v1"),
        reasoning=True,
        compat={"supportsDeveloperRole": False, "supportsStore": False, "maxTokensField": "max_tokens"},
    )
    events, message = await run(model, ask(system_prompt="You are local."), api_key="ollama", max_tokens=256)
    assert_well_formed(events)
    assert message.text() == "Local answer."
    assert message.usage.total_tokens == 15
    body = server.last_request.body
    assert body["messages"][0] == {"role": "system", "content": "You are local."}
    assert "store" not in body
    assert body["max_tokens"] == 256 and "max_completion_tokens" not in body
