"""The openai-responses provider against the fake server: streams, failures and request bodies."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tau.ai import (
    AbortSignal,
    AssistantMessage,
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    stream,
    stream_simple,
)
from tau.ai.options import StreamOptions
from tau.ai.providers.openai_responses import ResponsesEventReader
from tau.ai.short_hash import short_hash
from tau.ai.stream_writer import StreamWriter, run_stream
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn, sse_frame
from tau.testing.fake_llm import openai_responses as fake_protocol

READ_TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def make_model(server: FakeLLMServer, **changes: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "gpt-5",
        "api": "openai-responses",
        "provider": "openai",
        "base_url": server.url("/v1"),
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=1.25, output=10, cache_read=0.125),
    }
    fields.update(changes)
    return Model(**fields)


def ask(text: str = "hi", **kwargs: Any) -> Context:
    return Context(messages=[UserMessage(text)], **kwargs)


async def run(
    events_of: AssistantMessageEventStream,
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    events = [event async for event in events_of]
    return events, await events_of.result()


def assert_protocol(events: list[AssistantMessageEvent], message: AssistantMessage) -> None:
    """The stream invariants: one start first, one terminal last, blocks opened and closed once."""
    types = [e.type for e in events]
    assert types.count("start") <= 1
    assert types[-1] in ("done", "error")
    assert sum(t in ("done", "error") for t in types) == 1
    if "start" in types:
        assert types[0] == "start"
    for event in events[:-1]:
        assert getattr(event, "partial", message) is message
    if types[-1] == "done":
        opened = [
            (getattr(e, "content_index", None), e.type[: -len("_start")])
            for e in events
            if e.type.endswith("_start")
        ]
        closed = [
            (getattr(e, "content_index", None), e.type[: -len("_end")])
            for e in events
            if e.type.endswith("_end")
        ]
        assert opened == closed
    dumped = json.dumps(message.to_json())
    for scratch in ("partialJson", "partialArgs", "streamIndex"):
        assert scratch not in dumped


# --- successful streams ------------------------------------------------------------------------------


async def test_a_text_turn_streams_deltas_and_stores_the_message_id(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hello there, world", chunk_size=5, response_id="resp_1"))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert [e.type for e in events] == ["start", "text_start", *["text_delta"] * 4, "text_end", "done"]
    assert message.stop_reason == "stop"
    assert message.text() == "Hello there, world"
    block = message.content[0]
    assert isinstance(block, TextContent)
    signature = json.loads(block.text_signature or "")
    assert signature["v"] == 1
    assert signature["id"].startswith("msg_")
    assert message.response_id == "resp_1"
    assert message.response_model is None


async def test_a_reasoning_turn_keeps_the_whole_reasoning_item_as_signature(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="Look at the file.\n\nThen answer.", text="Done", thinking_signature="enc-xyz"))
    events, message = await run(stream(make_model(server), ask(), api_key="k", reasoning_effort="low"))
    assert_protocol(events, message)
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Look at the file.\n\nThen answer."
    streamed = "".join(e.delta for e in events if e.type == "thinking_delta")
    assert streamed == thinking.thinking
    item = json.loads(thinking.thinking_signature or "")
    assert item["type"] == "reasoning"
    assert item["encrypted_content"] == "enc-xyz"
    assert [part["text"] for part in item["summary"]] == ["Look at the file.", "Then answer."]


async def test_a_function_call_turn_ends_with_tool_use_and_parsed_arguments(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "src/app.py"}, id="call_1")], chunk_size=4))
    events, message = await run(stream(make_model(server), ask(tools=[READ_TOOL]), api_key="k"))
    assert_protocol(events, message)
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls()
    call_id, item_id = call.id.split("|")
    assert call_id == "call_1"
    assert item_id.startswith("fc_")
    assert call.name == "read"
    deltas = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert call.arguments == json.loads(deltas) == {"path": "src/app.py"}
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call is call


async def test_reasoning_text_and_two_tool_calls_land_in_their_own_blocks(server: FakeLLMServer) -> None:
    calls = [ScriptedToolCall("read", {"path": "a"}), ScriptedToolCall("read", {"path": "b"})]
    server.add(Turn(thinking="hmm", text="Reading both.", tool_calls=calls))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]
    assert [c.arguments["path"] for c in message.tool_calls()] == ["a", "b"]


async def test_a_different_served_model_is_recorded_as_response_model(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok", response_model="gpt-5-2025-08-07"))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert message.model == "gpt-5"
    assert message.response_model == "gpt-5-2025-08-07"


async def read_events(server: FakeLLMServer, frames: list[dict[str, Any]]) -> AssistantMessage:
    """Run ``ResponsesEventReader`` over hand-written events (no HTTP)."""

    async def produce(writer: StreamWriter) -> None:
        writer.start()
        reader = ResponsesEventReader(writer)
        for frame in frames:
            reader.handle(frame)
        reader.finish()

    _, message = await run(run_stream(make_model(server), StreamOptions(), produce))
    return message


async def test_message_phase_is_kept_and_refusals_become_text(server: FakeLLMServer) -> None:
    message_item = {"type": "message", "id": "msg_p", "phase": "final_answer", "content": []}
    done_item = {**message_item, "content": [{"type": "refusal", "refusal": "I can't help."}]}
    message = await read_events(
        server,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": message_item},
            {"type": "response.refusal.delta", "output_index": 0, "delta": "I can't "},
            {"type": "response.refusal.delta", "output_index": 0, "delta": "help."},
            {"type": "response.output_item.done", "output_index": 0, "item": done_item},
            {"type": "response.done", "response": {"status": "completed"}},
        ],
    )
    assert message.stop_reason == "stop"
    block = message.content[0]
    assert isinstance(block, TextContent)
    assert block.text == "I can't help."
    assert json.loads(block.text_signature or "") == {"v": 1, "id": "msg_p", "phase": "final_answer"}


async def test_encrypted_reasoning_without_summary_is_kept_with_empty_text(server: FakeLLMServer) -> None:
    item = {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "opaque"}
    message = await read_events(
        server,
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "encrypted_content": None},
            },
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
    )
    block = message.content[0]
    assert isinstance(block, ThinkingContent)
    assert block.thinking == ""
    assert json.loads(block.thinking_signature or "") == item


# --- usage, cost and stop reasons --------------------------------------------------------------------


async def test_usage_separates_cached_input_and_counts_reasoning_once(server: FakeLLMServer) -> None:
    usage = ScriptedUsage(input=200, cache_read=800, output=50, reasoning=30)
    server.add(Turn(text="ok", usage=usage))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    got = message.usage
    assert (got.input, got.cache_read, got.cache_write, got.output) == (200, 800, 0, 50)
    assert got.total_tokens == got.input + got.output + got.cache_read + got.cache_write == 1050
    assert got.cost.input == pytest.approx(200 * 1.25 / 1e6)
    assert got.cost.cache_read == pytest.approx(800 * 0.125 / 1e6)
    assert got.cost.total == pytest.approx(got.cost.input + got.cost.output + got.cost.cache_read)


@pytest.mark.parametrize(("tier", "multiplier"), [("flex", 0.5), ("priority", 2.0), ("auto", 1.0)])
async def test_the_service_tier_scales_the_cost(server: FakeLLMServer, tier: str, multiplier: float) -> None:
    server.add(Turn(text="ok", usage=ScriptedUsage(input=1_000_000, output=0)))
    _, message = await run(stream(make_model(server), ask(), api_key="k", service_tier=tier))
    assert server.last_request.body["service_tier"] == tier
    assert message.usage.cost.input == pytest.approx(1.25 * multiplier)
    assert message.usage.cost.total == pytest.approx(1.25 * multiplier)


async def test_an_incomplete_response_stops_with_length(server: FakeLLMServer) -> None:
    server.add(Turn(text="truncated answ", stop_reason="incomplete", usage=ScriptedUsage(input=5, output=7)))
    events, message = await run(stream(make_model(server), ask(), api_key="k", max_tokens=7))
    assert_protocol(events, message)
    assert events[-1].type == "done"
    assert message.stop_reason == "length"
    assert message.text() == "truncated answ"
    assert message.usage.output == 7
    assert server.last_request.body["max_output_tokens"] == 7


async def test_a_failed_response_is_an_error_with_the_servers_reason(server: FakeLLMServer) -> None:
    server.add(Turn(text="partial", stop_reason="failed"))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "server_error: The model failed to generate a response."
    assert message.text() == "partial"


async def test_a_cancelled_status_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="x", stop_reason="cancelled"))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert message.stop_reason == "error"
    assert "cancelled" in (message.error_message or "")


async def test_an_unknown_status_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="x", stop_reason="exploded"))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert message.stop_reason == "error"
    assert "exploded" in (message.error_message or "")


async def test_reasoning_the_api_removed_is_kept_as_a_diagnostic_in_pi_16s_shape(
    server: FakeLLMServer,
) -> None:
    reported = [
        {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "prefix_mismatch", "x": 1},
        {"type": "reasoning", "id": "rs_2", "action": "removed", "reason": "turn_boundary"},
        {"type": "reasoning", "id": "rs_3", "action": "kept", "reason": "prefix_mismatch"},
        {"type": "message", "id": "msg_1", "action": "removed", "reason": "prefix_mismatch"},
        {"type": "reasoning", "action": "removed"},
        None,
    ]
    server.add(Turn(text="ok", input_transformations=reported))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    [diagnostic] = message.diagnostics or []
    assert diagnostic["type"] == "openai_input_transformations"
    assert isinstance(diagnostic["timestamp"], int) and diagnostic["timestamp"] > 0
    assert diagnostic["details"] == {
        "transformations": [
            {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "prefix_mismatch"},
            {"type": "reasoning", "action": "removed"},
        ]
    }
    assert message.to_json()["diagnostics"] == [diagnostic]  # as the session stores it
    # Only turn-boundary removals (a model that uses the current turn's reasoning only), or no
    # report at all: nothing recorded.
    boundary = [{"type": "reasoning", "id": "rs_2", "action": "removed", "reason": "turn_boundary"}]
    server.add(Turn(text="ok", input_transformations=boundary), Turn(text="ok"))
    for _ in range(2):
        _, quiet = await run(stream(make_model(server), ask(), api_key="k"))
        assert quiet.diagnostics is None


async def test_an_incomplete_response_keeps_its_reasoning_removals(server: FakeLLMServer) -> None:
    removed = [{"type": "reasoning", "id": "rs_9", "action": "removed", "reason": "model_mismatch"}]
    server.add(Turn(text="cut", stop_reason="incomplete", input_transformations=removed))
    _, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert message.stop_reason == "length"
    assert [d["details"]["transformations"] for d in message.diagnostics or []] == [removed]


# --- failures -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 500])
async def test_an_http_error_status_becomes_an_error_event_only(server: FakeLLMServer, status: int) -> None:
    server.add(
        Turn(fault=Fault("status", status=status, body=fake_protocol.error_body(status, "Bad things")))
    )
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == f"{status} Bad things"
    assert message.content == []


async def test_a_long_retry_after_fails_at_once_without_retrying(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"Retry-After": "3600"})))
    started = time.monotonic()
    _, message = await run(stream(make_model(server), ask(), api_key="k", max_retries=2))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert "429" in (message.error_message or "")
    assert "3600" in (message.error_message or "")
    assert len(server.requests) == 1


async def test_an_error_event_mid_stream_ends_with_its_code_and_message(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def render(turn: Turn, request: Any) -> Iterator[bytes]:
        yield sse_frame({"type": "response.created", "response": {"id": "resp_e"}}, event="response.created")
        yield sse_frame(
            {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None},
            event="error",
        )

    monkeypatch.setattr(fake_protocol, "render", render)
    server.add(Turn(text="unused"))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert [e.type for e in events] == ["start", "error"]
    assert message.error_message == "Error Code rate_limit_exceeded: Slow down"
    assert message.response_id == "resp_e"


async def test_a_cut_connection_is_an_error_that_keeps_the_partial_text(server: FakeLLMServer) -> None:
    server.add(Turn(text="abcdefghijklmnop", chunk_size=2, fault=Fault("cut", after_events=6)))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert message.stop_reason == "error"
    assert message.text() == "abcd"


async def test_a_body_that_ends_before_completion_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="abcdef", chunk_size=2, fault=Fault("truncate", after_events=6)))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert message.stop_reason == "error"
    assert "before response.completed" in (message.error_message or "")
    assert message.text() == "abcd"


async def test_a_malformed_event_is_an_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="abcdef", fault=Fault("malformed", after_events=3)))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert message.stop_reason == "error"
    assert "Invalid JSON" in (message.error_message or "")


async def test_a_stalled_stream_ends_with_an_idle_timeout_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="abc", fault=Fault("stall", after_events=2, seconds=10)))
    started = time.monotonic()
    _, message = await run(stream(make_model(server), ask(), api_key="k", idle_timeout_ms=200))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert "idle timeout" in (message.error_message or "")


async def test_invalid_tool_json_yields_a_best_effort_object(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", raw_arguments='{"path": "a.py", oops')]))
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert message.stop_reason == "toolUse"
    assert isinstance(message.tool_calls()[0].arguments, dict)


async def test_arguments_done_replaces_what_the_deltas_built(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def render(turn: Turn, request: Any) -> Iterator[bytes]:
        item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""}
        frames: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": "resp_x", "status": "in_progress"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"path": "wro'},
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"path": "right"}',
            },
            {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": ""}},
            {"type": "response.completed", "response": {"id": "resp_x", "status": "completed"}},
        ]
        for frame in frames:
            yield sse_frame(frame, event=frame["type"])

    monkeypatch.setattr(fake_protocol, "render", render)
    server.add(Turn())
    events, message = await run(stream(make_model(server), ask(), api_key="k"))
    assert_protocol(events, message)
    assert message.tool_calls()[0].arguments == {"path": "right"}
    assert message.tool_calls()[0].id == "call_1|fc_1"


async def test_missing_api_key_is_an_error_event(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    events, message = await run(stream(make_model(server), ask()))
    assert [e.type for e in events] == ["error"]
    assert "openai" in (message.error_message or "")
    assert server.requests == []


# --- aborts --------------------------------------------------------------------------------------------


async def test_abort_before_the_request_yields_aborted_with_nothing(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    signal.abort()
    server.add(Turn(text="never"))
    events, message = await run(stream(make_model(server), ask(), api_key="k", signal=signal))
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted"
    assert message.content == []
    assert message.usage.output == 0


async def test_abort_before_the_first_event_yields_aborted_with_empty_content(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    server.add(Turn(text="never", fault=Fault("stall", after_events=0, seconds=10)))
    events_of = stream(make_model(server), ask(), api_key="k", signal=signal)
    seen: list[str] = []
    async for event in events_of:
        seen.append(event.type)
        if event.type == "start":
            signal.abort()
    message = await events_of.result()
    assert seen == ["start", "error"]
    assert message.stop_reason == "aborted"
    assert message.content == []
    assert message.usage.output == 0


async def test_abort_mid_text_keeps_the_partial_text(server: FakeLLMServer) -> None:
    signal = AbortSignal()
    server.add(Turn(text="abcdefgh", chunk_size=2, fault=Fault("stall", after_events=5, seconds=10)))
    events_of = stream(make_model(server), ask(), api_key="k", signal=signal)
    async for event in events_of:
        if event.type == "text_delta":
            signal.abort()
    message = await asyncio.wait_for(events_of.result(), 5)
    assert message.stop_reason == "aborted"
    assert message.text() == "ab"


# --- request building --------------------------------------------------------------------------------


async def send(server: FakeLLMServer, model: Model, context: Context, **options: Any) -> dict[str, Any]:
    server.add(Turn(text="ok"))
    _, message = await run(stream(model, context, api_key="k", **options))
    assert message.stop_reason == "stop", message.error_message
    body: dict[str, Any] = server.last_request.body
    return body


async def test_the_request_has_system_prompt_tools_and_no_storage(server: FakeLLMServer) -> None:
    body = await send(
        server, make_model(server), ask("hi", system_prompt="Be brief.", tools=[READ_TOOL]), temperature=0.2
    )
    assert server.last_request.path == "/v1/responses"
    assert server.last_request.headers["authorization"] == "Bearer k"
    assert body["model"] == "gpt-5"
    assert body["stream"] is True
    assert body["store"] is False
    assert body["temperature"] == 0.2
    assert body["input"] == [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": READ_TOOL.parameters,
        }
    ]


async def test_tools_say_strict_false_only_where_compat_supports_strict_mode(server: FakeLLMServer) -> None:
    # As pi 1.6: a tool's ``strict`` is left out unless the model's compat has supportsStrictMode.
    model = make_model(server, compat={"supportsStrictMode": True})
    body = await send(server, model, ask("hi", tools=[READ_TOOL]))
    assert [tool["strict"] for tool in body["tools"]] == [False]
    body = await send(
        server, make_model(server, compat={"supportsStrictMode": False}), ask("hi", tools=[READ_TOOL])
    )
    assert "strict" not in body["tools"][0]


async def test_a_non_reasoning_model_gets_a_system_item_and_no_reasoning(server: FakeLLMServer) -> None:
    body = await send(server, make_model(server, reasoning=False), ask(system_prompt="S"))
    assert body["input"][0] == {"role": "system", "content": "S"}
    assert "reasoning" not in body
    assert "include" not in body


async def test_prompt_cache_key_and_affinity_headers_follow_the_session(server: FakeLLMServer) -> None:
    model = make_model(server)
    body = await send(server, model, ask(), session_id="sess-1")
    assert body["prompt_cache_key"] == "sess-1"
    assert "prompt_cache_retention" not in body
    headers = server.last_request.headers
    assert headers["session-id"] == "sess-1"  # pi 1.6's spelling
    assert headers["x-client-request-id"] == "sess-1"

    body = await send(server, model, ask(), session_id="sess-1", cache_retention="none")
    assert "prompt_cache_key" not in body
    # Affinity headers route the conversation whatever the caching, as in pi 1.6.
    assert server.last_request.headers["session-id"] == "sess-1"

    body = await send(server, model, ask(), session_id="sess-1", cache_retention="long")
    assert body["prompt_cache_retention"] == "24h"


async def test_compat_flags_turn_off_the_session_header_and_long_retention(server: FakeLLMServer) -> None:
    model = make_model(server, compat={"sendSessionIdHeader": False, "supportsLongCacheRetention": False})
    body = await send(server, model, ask(), session_id="s", cache_retention="long")
    assert "prompt_cache_retention" not in body
    assert "session-id" not in server.last_request.headers
    assert server.last_request.headers["x-client-request-id"] == "s"


async def test_session_affinity_format_openrouter_sends_x_session_id(server: FakeLLMServer) -> None:
    model = make_model(server, compat={"sessionAffinityFormat": "openrouter"})
    await send(server, model, ask(), session_id="s")
    headers = server.last_request.headers
    assert headers["x-session-id"] == "s"
    assert "session-id" not in headers and "x-client-request-id" not in headers


async def test_caller_headers_override_model_and_session_headers(server: FakeLLMServer) -> None:
    model = make_model(server, headers={"X-Team": "model", "X-Model-Only": "1"})
    await send(server, model, ask(), session_id="s", headers={"x-team": "caller", "session-id": "override"})
    headers = server.last_request.headers
    assert headers["x-team"] == "caller"
    assert headers["x-model-only"] == "1"
    assert headers["session-id"] == "override"


async def test_the_payload_hook_can_replace_the_body(server: FakeLLMServer) -> None:
    def hook(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**payload, "metadata": {"via": "hook"}}

    body = await send(server, make_model(server), ask(), on_payload=hook)
    assert body["metadata"] == {"via": "hook"}


def assistant(
    content: list[Any], *, model: str = "gpt-5", provider: str = "openai", **kw: Any
) -> AssistantMessage:
    return AssistantMessage(
        content=content, api=kw.pop("api", "openai-responses"), provider=provider, model=model, **kw
    )


REASONING_ITEM = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "ENC+/="}


async def test_same_model_replay_sends_reasoning_items_verbatim_with_message_and_call_ids(
    server: FakeLLMServer,
) -> None:
    long_id = "msg_" + "x" * 80
    history: list[Message] = [
        UserMessage("go"),
        assistant(
            [
                ThinkingContent("", thinking_signature=json.dumps(REASONING_ITEM)),
                TextContent(
                    "Reading.", text_signature=json.dumps({"v": 1, "id": "msg_a", "phase": "commentary"})
                ),
                TextContent("More.", text_signature=long_id),
                ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a"}),
            ],
            stop_reason="toolUse",
        ),
        ToolResultMessage(
            tool_call_id="call_1|fc_1", tool_name="read", content=[TextContent("x"), TextContent("y")]
        ),
    ]
    body = await send(server, make_model(server), Context(messages=history))
    assert body["input"][1:] == [
        REASONING_ITEM,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
            "status": "completed",
            "id": "msg_a",
            "phase": "commentary",
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "More.", "annotations": []}],
            "status": "completed",
            "id": f"msg_{short_hash(long_id)}",
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path":"a"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "x\ny"},
    ]


async def test_a_streamed_turn_replays_into_the_next_request(server: FakeLLMServer) -> None:
    model = make_model(server)
    server.add(
        Turn(thinking="plan", text="Let me look.", tool_calls=[ScriptedToolCall("read", {"path": "a"})])
    )
    _, first = await run(stream(model, ask("go", tools=[READ_TOOL]), api_key="k"))
    [call] = first.tool_calls()
    result = ToolResultMessage(tool_call_id=call.id, tool_name="read", content=[TextContent("contents")])
    body = await send(server, model, Context(messages=[UserMessage("go"), first, result], tools=[READ_TOOL]))
    kinds = [item.get("type") for item in body["input"]]
    assert kinds == [None, "reasoning", "message", "function_call", "function_call_output"]
    first_thinking = first.content[0]
    assert isinstance(first_thinking, ThinkingContent)
    assert body["input"][1] == json.loads(first_thinking.thinking_signature or "")
    assert body["input"][3]["call_id"] + "|" + body["input"][3]["id"] == call.id


async def test_another_model_of_the_same_api_loses_reasoning_and_fc_item_ids(server: FakeLLMServer) -> None:
    history: list[Message] = [
        UserMessage("go"),
        assistant(
            [
                ThinkingContent("I thought", thinking_signature=json.dumps(REASONING_ITEM)),
                ToolCall(id="call_1|fc_1", name="read", arguments={}),
            ],
            model="gpt-4.1",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="read", content=[TextContent("r")]),
    ]
    body = await send(server, make_model(server), Context(messages=history))
    assert body["input"][1]["type"] == "message"
    assert body["input"][1]["content"][0]["text"] == "I thought"
    assert body["input"][2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read",
        "arguments": "{}",
    }


async def test_a_foreign_providers_turn_becomes_plain_text_and_safe_ids(server: FakeLLMServer) -> None:
    history: list[Message] = [
        UserMessage("go"),
        assistant(
            [
                ThinkingContent("claude thinking", thinking_signature="sig"),
                ToolCall(id="toolu_01", name="read"),
            ],
            model="claude-sonnet-4-5",
            provider="anthropic",
            api="anthropic-messages",
            stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="toolu_01", tool_name="read", content=[TextContent("r")]),
    ]
    body = await send(server, make_model(server), Context(messages=history))
    items = body["input"][1:]
    assert items[0]["content"][0]["text"] == "claude thinking"
    assert "phase" not in items[0]
    assert items[1]["call_id"] == items[2]["call_id"] == "toolu_01"
    assert "id" not in items[1]


async def test_errored_turns_are_not_replayed(server: FakeLLMServer) -> None:
    history: list[Message] = [
        UserMessage("go"),
        assistant([ThinkingContent("", thinking_signature=json.dumps(REASONING_ITEM))], stop_reason="error"),
        UserMessage("again"),
    ]
    body = await send(server, make_model(server), Context(messages=history))
    assert [item["role"] for item in body["input"]] == ["user", "user"]


async def test_images_go_to_vision_models_only(server: FakeLLMServer) -> None:
    image = ImageContent(data="AAAA", mime_type="image/png")
    history: list[Message] = [
        UserMessage([TextContent("see"), image]),
        assistant([ToolCall(id="call_1|fc_1", name="shot")], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="shot", content=[image]),
    ]
    body = await send(server, make_model(server), Context(messages=history))
    picture = {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"}
    assert body["input"][0]["content"] == [{"type": "input_text", "text": "see"}, picture]
    assert body["input"][2]["output"] == [picture]

    blind = make_model(server, input=["text"])
    body = await send(server, blind, Context(messages=history))
    assert [part["type"] for part in body["input"][0]["content"]] == ["input_text", "input_text"]
    assert isinstance(body["input"][2]["output"], str)


async def test_unpaired_surrogates_are_removed_and_emoji_kept(server: FakeLLMServer) -> None:
    history: list[Message] = [
        UserMessage("bad \ud800 text 🎉"),
        assistant(
            [ToolCall(id="call_1|fc_1", name="read", arguments={"p": "x\udfffy"})], stop_reason="toolUse"
        ),
        ToolResultMessage(
            tool_call_id="call_1|fc_1", tool_name="read", content=[TextContent("out \udc00🎉")]
        ),
    ]
    body = await send(server, make_model(server), Context(messages=history, system_prompt="sys \ud83d"))
    assert body["input"][0]["content"] == "sys "
    assert body["input"][1]["content"][0]["text"] == "bad  text 🎉"
    assert json.loads(body["input"][2]["arguments"]) == {"p": "xy"}
    assert body["input"][3]["output"] == "out 🎉"


# --- reasoning levels (stream_simple) ----------------------------------------------------------------


async def simple(server: FakeLLMServer, model: Model, **options: Any) -> dict[str, Any]:
    server.add(Turn(text="ok"))
    _, message = await run(stream_simple(model, ask(), api_key="k", **options))
    assert message.stop_reason == "stop", message.error_message
    body: dict[str, Any] = server.last_request.body
    return body


async def test_simple_reasoning_level_requests_a_summary_and_encrypted_content(server: FakeLLMServer) -> None:
    body = await simple(server, make_model(server), reasoning="medium")
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 16_384


async def test_simple_without_reasoning_turns_it_off_explicitly(server: FakeLLMServer) -> None:
    body = await simple(server, make_model(server))
    assert body["reasoning"] == {"effort": "none"}
    assert "include" not in body
    body = await simple(server, make_model(server, thinking_level_map={"off": "minimal"}))
    assert body["reasoning"] == {"effort": "minimal"}
    body = await simple(server, make_model(server, thinking_level_map={"off": None}))
    assert "reasoning" not in body
    body = await simple(server, make_model(server, provider="github-copilot"))
    assert "reasoning" not in body
    assert server.last_request.headers["x-initiator"] == "user"


async def test_xhigh_is_sent_only_where_supported(server: FakeLLMServer) -> None:
    body = await simple(server, make_model(server), reasoning="xhigh")
    assert body["reasoning"]["effort"] == "high"
    body = await simple(server, make_model(server, thinking_level_map={"xhigh": "xhigh"}), reasoning="xhigh")
    assert body["reasoning"]["effort"] == "xhigh"


async def test_the_thinking_level_map_translates_the_effort(server: FakeLLMServer) -> None:
    body = await simple(
        server, make_model(server, thinking_level_map={"minimal": "low"}), reasoning="minimal"
    )
    assert body["reasoning"]["effort"] == "low"


async def test_a_reasoning_level_is_ignored_for_non_reasoning_models(server: FakeLLMServer) -> None:
    body = await simple(server, make_model(server, reasoning=False), reasoning="high")
    assert "reasoning" not in body
