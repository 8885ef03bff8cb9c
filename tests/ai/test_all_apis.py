"""Behaviour every API shares, checked against the fake server for each wire protocol."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from codex_token import codex_access_token

from tau.ai import (
    AbortSignal,
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
    stream,
)
from tau.runtime.retry import is_retryable_error
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn

BASE_PATHS = {
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "anthropic-messages": "",
    "google-generative-ai": "/v1beta",
    "azure-openai-responses": "/openai/v1",
    "openai-codex-responses": "/backend-api",
    "mistral-conversations": "/mistral",
    "bedrock-converse-stream": "",
    "google-vertex": "",
    "google-gemini-cli": "",
    "pi-messages": "/pi/v1",
}
APIS = list(BASE_PATHS)
# The api that sends pi's context unchanged (to a gateway that adapts it to the provider it routes to).
PASS_THROUGH = "pi-messages"
READ_TOOL = Tool(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    # The keys are Vertex API keys the fake accepts (so scripted errors are what the tests see), and
    # bare Cloud Code Assist access tokens whose project comes from the environment.
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "test-project")
    with FakeLLMServer() as fake:
        fake.google.allow_api_key("k")
        fake.google.allow_api_key("bad")
        yield fake


def _model(server: FakeLLMServer, api: str, model_id: str = "test-model") -> Model:
    return Model(id=model_id, api=api, provider="fake", base_url=server.url(BASE_PATHS[api]), reasoning=True)


def _key(api: str) -> str:
    """A key the api accepts: Codex's is a ChatGPT access token (a JWT naming the account)."""
    return codex_access_token("acct-1") if api == "openai-codex-responses" else "k"


def _throttled(api: str) -> Turn:
    """A 429 asking to come back at once (Codex's default 429 is a spent plan quota, not throttling)."""
    body = {"error": {"type": "rate_limit_exceeded", "message": "Slow down"}}
    headers = {"retry-after": "0"}
    if api == "openai-codex-responses":
        return Turn(fault=Fault("status", status=429, body=body, headers=headers))
    return Turn(fault=Fault("status", status=429, headers=headers))


@pytest.mark.parametrize("api", APIS)
async def test_a_text_reply_streams_and_completes(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(text="Hello there, friend.", usage=ScriptedUsage(input=12, output=4)))
    reply = await complete(_model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api))
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "Hello there, friend."
    usage = reply.usage
    assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
    assert usage.output == 4


@pytest.mark.parametrize("api", APIS)
async def test_a_tool_call_round_trip_reaches_the_server_as_the_protocol_expects(
    server: FakeLLMServer, api: str
) -> None:
    server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "src/main.py"}, id="call_1")]),
        Turn(text="It prints hello."),
    )
    model = _model(server, api)
    context = Context(messages=[UserMessage("what does main.py do?")], tools=[READ_TOOL])
    first = await complete(model, context, api_key=_key(api))
    assert first.stop_reason == "toolUse", first.error_message
    call = first.tool_calls()[0]
    assert (call.name, call.arguments) == ("read", {"path": "src/main.py"})
    context.messages += [first, ToolResultMessage(call.id, "read", [TextContent("print('hello')")])]
    second = await complete(model, context, api_key=_key(api))
    assert second.text() == "It prints hello."
    assert "print('hello')" in str(server.last_request.body)


@pytest.mark.parametrize("api", APIS)
async def test_every_start_event_has_one_end_event_at_the_same_index(server: FakeLLMServer, api: str) -> None:
    server.add(
        Turn(
            thinking="Consider the file.",
            text="Reading it.",
            tool_calls=[ScriptedToolCall("read", {"path": "a"}), ScriptedToolCall("read", {"path": "b"})],
        )
    )
    s = stream(
        _model(server, api), Context(messages=[UserMessage("go")], tools=[READ_TOOL]), api_key=_key(api)
    )
    events = [e async for e in s]
    assert events[0].type == "start" and events[-1].type == "done"
    starts = [
        (e.type.split("_")[0], e.content_index)
        for e in events
        if e.type.endswith("_start") and e.type != "start"
    ]
    ends = [(e.type.split("_")[0], e.content_index) for e in events if e.type.endswith("_end")]
    assert sorted(starts) == sorted(ends)
    assert [i for _, i in starts] == sorted(i for _, i in starts)
    partials = {id(e.partial) for e in events if hasattr(e, "partial")}
    assert len(partials) == 1


@pytest.mark.parametrize("api", APIS)
async def test_an_http_error_is_a_value_with_status_and_message(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(fault=Fault("status", status=401)))
    reply = await complete(_model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api))
    assert reply.stop_reason == "error"
    assert "401" in (reply.error_message or "")


@pytest.mark.parametrize("api", APIS)
async def test_throttling_is_retried_after_its_retry_after_and_then_succeeds(
    server: FakeLLMServer, api: str
) -> None:
    server.add(_throttled(api), Turn(text="after the wait"))
    before = len(server.requests)
    reply = await complete(
        _model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api), max_retries=1
    )
    assert reply.text() == "after the wait", reply.error_message
    assert len(server.requests) - before == 2


@pytest.mark.parametrize("api", APIS)
async def test_throttling_without_retries_left_is_a_retryable_error_value_naming_the_429(
    server: FakeLLMServer, api: str
) -> None:
    server.add(_throttled(api))
    reply = await complete(_model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api))
    assert reply.stop_reason == "error"
    assert "429" in (reply.error_message or "") and "\n" not in (reply.error_message or "")
    assert is_retryable_error(reply)


@pytest.mark.parametrize("api", APIS)
async def test_a_dropped_connection_is_an_error_not_a_hang(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(text="x" * 200, chunk_size=10, fault=Fault("cut", after_events=4)))
    reply = await complete(_model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api))
    assert reply.stop_reason == "error"


@pytest.mark.parametrize("api", APIS)
async def test_a_stalled_stream_ends_with_an_idle_timeout(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(text="x" * 100, chunk_size=10, fault=Fault("stall", after_events=3, seconds=20)))
    reply = await complete(
        _model(server, api), Context(messages=[UserMessage("hi")]), api_key=_key(api), idle_timeout_ms=300
    )
    assert reply.stop_reason == "error"
    assert "idle" in (reply.error_message or "").lower()


@pytest.mark.parametrize("api", APIS)
async def test_an_aborted_reply_is_dropped_from_history_and_the_follow_up_succeeds(
    server: FakeLLMServer, api: str
) -> None:
    # The stall keeps the reply unfinished until the abort lands.
    server.add(
        Turn(text="word " * 400, chunk_size=5, fault=Fault("stall", after_events=6, seconds=30)),
        Turn(text="Fresh answer."),
    )
    model = _model(server, api)
    context = Context(messages=[UserMessage("tell me a story")])
    signal = AbortSignal()
    s = stream(model, context, api_key=_key(api), signal=signal)
    async for event in s:
        if event.type == "text_delta":
            signal.abort()
    aborted = await s.result()
    assert aborted.stop_reason == "aborted"
    context.messages += [aborted, UserMessage("shorter please")]
    follow_up = await complete(model, context, api_key=_key(api))
    assert follow_up.text() == "Fresh answer."
    if api == PASS_THROUGH:  # the gateway gets the context as it is and adapts it itself, as from pi
        sent = server.last_request.body["context"]["messages"]
        assert [m.get("stopReason") for m in sent] == [None, "aborted", None]
    else:
        assert "word word" not in str(server.last_request.body)


@pytest.mark.parametrize("target", APIS)
async def test_a_conversation_from_another_api_hands_off_cleanly(server: FakeLLMServer, target: str) -> None:
    foreign = AssistantMessage(
        content=[
            ThinkingContent("private reasoning", thinking_signature="c2lnbmF0dXJl"),
            TextContent("Let me look."),
            ToolCall("call_abc|fc_" + "x" * 80, "read", {"path": "a.py"}),
        ],
        api="openai-responses" if target != "openai-responses" else "anthropic-messages",
        provider="other",
        model="other-model",
        stop_reason="toolUse",
    )
    context = Context(
        messages=[
            UserMessage("look at a.py"),
            foreign,
            ToolResultMessage(foreign.tool_calls()[0].id, "read", [TextContent("x = 1")]),
        ],
        tools=[READ_TOOL],
    )
    server.add(Turn(text="It sets x."))
    reply = await complete(_model(server, target), context, api_key=_key(target))
    assert reply.stop_reason == "stop", reply.error_message
    body = str(server.last_request.body)
    assert "private reasoning" in body  # foreign thinking travels as plain text
    if target == PASS_THROUGH:  # the gateway routes it, so it decides: pi's context goes as it is
        head, _, sent, *_ = server.last_request.body["context"]["messages"]
        assert head == {"role": "system", "content": "", "toolsAdded": [READ_TOOL.to_json()], "timestamp": 0}
        assert sent == foreign.to_json()
    else:
        assert "c2lnbmF0dXJl" not in body  # but never with its signature


@pytest.mark.parametrize("api", APIS)
async def test_consecutive_requests_reuse_one_connection(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(text="one"), Turn(text="two"), Turn(text="three"))
    model = _model(server, api)
    for _ in range(3):
        reply = await complete(model, Context(messages=[UserMessage("hi")]), api_key=_key(api))
        assert reply.stop_reason == "stop", reply.error_message
    assert len({request.client_port for request in server.requests}) == 1


# With deltas of 8 characters the high half of the emoji ends one delta and the low half starts the
# next: the protocols' JSON carries each half as a lone \ud83d / \ude00 escape.
SPLIT_EMOJI = "abcdefg\ud83d\ude00 end"
SPLIT_ARGUMENTS = '{"p":"x\ud83d\ude00"}'


@pytest.mark.parametrize("api", APIS)
async def test_an_emoji_split_across_two_deltas_arrives_whole(server: FakeLLMServer, api: str) -> None:
    server.add(
        Turn(
            thinking=SPLIT_EMOJI,
            text=SPLIT_EMOJI,
            tool_calls=[ScriptedToolCall("read", raw_arguments=SPLIT_ARGUMENTS, id="call_1")],
            chunk_size=8,
        )
    )
    s = stream(
        _model(server, api), Context(messages=[UserMessage("go")], tools=[READ_TOOL]), api_key=_key(api)
    )
    text_deltas = [event.delta async for event in s if event.type == "text_delta"]
    reply = await s.result()
    assert reply.stop_reason == "toolUse", reply.error_message
    assert reply.text() == "abcdefg😀 end"
    thinking = [block.thinking for block in reply.content if isinstance(block, ThinkingContent)]
    assert thinking in ([], ["abcdefg😀 end"])  # an API that streams no reasoning drops it whole
    assert reply.tool_calls()[0].arguments == {"p": "x😀"}
    assert "".join(text_deltas).encode("utf-16-le", "surrogatepass").decode("utf-16-le") == "abcdefg😀 end"


@pytest.mark.parametrize("api", APIS)
async def test_lone_surrogates_in_the_context_are_sent_without_failing(
    server: FakeLLMServer, api: str
) -> None:
    lone = "half \ud83d and \ude00 alone"
    server.add(Turn(text="fine"))
    context = Context(
        system_prompt=lone,
        messages=[
            UserMessage(lone),
            AssistantMessage(
                content=[TextContent(lone), ToolCall(id="call_1", name="read", arguments={"path": lone})],
                api=api,
                provider="fake",
                model="test-model",
                stop_reason="toolUse",
            ),
            ToolResultMessage("call_1", "read", [TextContent(lone)]),
            UserMessage([TextContent(lone)]),
        ],
        tools=[READ_TOOL],
    )
    reply = await complete(_model(server, api), context, api_key=_key(api))
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "fine"
    assert isinstance(server.last_request.body, dict)  # valid UTF-8 JSON on the wire
