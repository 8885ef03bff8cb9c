"""Grammar-constrained tools (pi 1.6's ``constrainedSampling: {type: "grammar"}``): custom tools on
OpenAI's Chat Completions, Responses, Azure and Codex where ``compat.supportsOpenAIGrammarTools``
is on, function tools elsewhere; the model's raw input becomes ``{<property>: <text>}`` and goes
back as a custom call. Against the fake server over real HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tau.ai import (
    AssistantMessage,
    Context,
    GrammarSampling,
    JsonSchemaSampling,
    Model,
    StreamOptions,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    stream,
)
from tau.ai.constrained_sampling import (
    GrammarInput,
    grammar_input_properties,
    json_schema_parameters,
    resolve_grammar,
)
from tau.ai.events import ToolCallDeltaEvent
from tau.ai.providers.openai_responses import ResponsesEventReader
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transport.http import close_clients
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn

LARK = 'start: "*** Begin Patch" /(.|\\n)*/'
PATCH_TOOL = Tool(
    name="apply_patch",
    description="Apply a patch",
    parameters={
        "type": "object",
        "properties": {"patch": {"type": "string"}},
        "required": ["patch"],
        "additionalProperties": False,
    },
    constrained_sampling=GrammarSampling({"openai_lark": LARK, "openai_regex": ".*"}),
)
READ_TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
PATCH = '*** Begin Patch\n"quoted" \\ back\\slash\ttab \u00e9\n*** End Patch'
GRAMMAR_COMPAT = {"supportsOpenAIGrammarTools": True}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
async def _close_http_clients() -> AsyncIterator[None]:
    yield
    await close_clients()


def model_for(server: FakeLLMServer, api: str, compat: dict[str, Any] | None = None) -> Model:
    path = {"openai-codex-responses": "/backend-api", "azure-openai-responses": "/openai/v1"}.get(api, "/v1")
    provider = {
        "openai-codex-responses": "openai-codex",
        "azure-openai-responses": "azure",
    }.get(api, "openai")
    return Model(
        id="gpt-5.5",
        api=api,
        provider=provider,
        base_url=server.url(path),
        reasoning=False,
        compat=compat,
    )


def codex_token() -> str:
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct"}}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"h.{payload}.s"


def options_for(api: str) -> StreamOptions:
    if api == "openai-codex-responses":
        return StreamOptions(api_key=codex_token(), extra={"transport": "sse"})
    if api == "azure-openai-responses":
        return StreamOptions(api_key="k", extra={"azure_deployment_name": "gpt-5.5"})
    return StreamOptions(api_key="k")


def patch_call_turn(**changes: Any) -> Turn:
    call = ScriptedToolCall(name="apply_patch", id="call_1", custom_input=PATCH, **changes)
    return Turn(tool_calls=[call], chunk_size=7)


# --- the conversion, unit by unit ---------------------------------------------------------------


def test_lark_is_preferred_and_the_input_property_is_the_one_required_string() -> None:
    grammar = resolve_grammar(PATCH_TOOL, True)
    assert grammar is not None and grammar == ("lark", LARK, "patch")
    regex_only = Tool("t", "", PATCH_TOOL.parameters, GrammarSampling({"openai_regex": "a+"}))
    assert resolve_grammar(regex_only, True) == ("regex", "a+", "patch")
    # Without the compat, or for a tool without a grammar, nothing changes.
    assert resolve_grammar(PATCH_TOOL, False) is None
    assert resolve_grammar(READ_TOOL, True) is None
    assert grammar_input_properties([READ_TOOL, PATCH_TOOL], True) == {"apply_patch": "patch"}
    assert grammar_input_properties([READ_TOOL, PATCH_TOOL], False) == {}


@pytest.mark.parametrize(
    ("variants", "parameters", "message"),
    [
        ({}, PATCH_TOOL.parameters, "no supported grammar variant was provided."),
        ({"openai_lark": "  "}, PATCH_TOOL.parameters, "no supported grammar variant was provided."),
        (
            {"openai_lark": "start: /x/"},
            {"type": "array"},
            "grammar constrained sampling requires an object parameter schema.",
        ),
        (
            {"openai_lark": "start: /x/"},
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "grammar constrained sampling requires exactly one required string property.",
        ),
        (
            {"openai_lark": "start: /x/"},
            {"type": "object", "properties": {}, "required": ["a"]},
            "grammar constrained sampling requires a properties entry for a.",
        ),
        (
            {"openai_lark": "start: /x/"},
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            "grammar constrained sampling property a must have type string.",
        ),
    ],
)
def test_a_tool_that_cannot_use_its_grammar_is_refused_with_pis_message(
    variants: dict[str, str], parameters: dict[str, Any], message: str
) -> None:
    tool = Tool("bad", "", parameters, GrammarSampling(variants))
    with pytest.raises(ProviderError) as caught:
        resolve_grammar(tool, True)
    assert str(caught.value) == f'Tool "bad" cannot use grammar constrained sampling: {message}'
    assert resolve_grammar(tool, False) is None  # a model without grammar tools sends it as a function


def test_grammar_input_becomes_json_argument_text_piece_by_piece() -> None:
    tool_input = GrammarInput("patch")
    pieces = [tool_input.append(part) for part in ('a"b', "", "\\c\n", "\u00e9")]
    assert pieces == ['{"patch":"a\\"b', None, "\\\\c\\n", "\u00e9"]
    rest = tool_input.close('a"b\\c\n\u00e9 end')
    assert rest == ' end"}'
    text = "".join(p for p in pieces if p) + rest
    assert json.loads(text) == {"patch": 'a"b\\c\n\u00e9 end'} == tool_input.arguments()
    assert tool_input.close('a"b\\c\n\u00e9 end') is None  # the same input again: nothing more
    with pytest.raises(ProviderError, match="changed after it was closed"):
        tool_input.append("x")
    other = GrammarInput("patch")
    other.append("abc")
    with pytest.raises(ProviderError, match="changed non-monotonically"):
        other.close("abX")
    assert GrammarInput("p").close() == '{"p":""}'


def test_strict_require_fails_where_the_tool_cannot_be_strict() -> None:
    tool = Tool("find", "", READ_TOOL.parameters, JsonSchemaSampling("require"))
    assert json_schema_parameters(tool, True) is not None
    with pytest.raises(ProviderError) as caught:
        json_schema_parameters(tool, False)
    assert str(caught.value) == (
        'Tool "find" requires JSON-schema constrained sampling, but strict tools are unsupported.'
    )
    loose = Tool("loose", "", {"type": "object", "additionalProperties": True}, JsonSchemaSampling("require"))
    with pytest.raises(ProviderError, match="schema-valued or true additionalProperties is unsupported"):
        json_schema_parameters(loose, True)
    assert json_schema_parameters(Tool("p", "", loose.parameters, JsonSchemaSampling()), True) is None


# --- Chat Completions over HTTP -----------------------------------------------------------------


async def test_completions_sends_a_custom_tool_and_streams_its_input_as_arguments(
    server: FakeLLMServer,
) -> None:
    server.add(patch_call_turn())
    model = model_for(server, "openai-completions", GRAMMAR_COMPAT)
    events = stream(
        model, Context(messages=[UserMessage("fix")], tools=[READ_TOOL, PATCH_TOOL]), options_for(model.api)
    )
    deltas = [e.delta for e in [e async for e in events] if isinstance(e, ToolCallDeltaEvent)]
    message = await events.result()
    assert message.stop_reason == "toolUse", message.error_message
    call = message.tool_calls()[0]
    assert (call.id, call.name, call.arguments) == ("call_1", "apply_patch", {"patch": PATCH})
    assert json.loads("".join(deltas)) == {"patch": PATCH}
    tools = server.last_request.body["tools"]
    assert tools[1] == {
        "type": "custom",
        "custom": {
            "name": "apply_patch",
            "description": "Apply a patch",
            "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": LARK}},
        },
    }
    assert tools[0]["type"] == "function"


async def test_completions_without_the_compat_sends_a_function_tool(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = model_for(server, "openai-completions")
    await stream(
        model, Context(messages=[UserMessage("fix")], tools=[PATCH_TOOL]), options_for(model.api)
    ).result()
    assert server.last_request.body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "apply_patch",
                "description": "Apply a patch",
                "parameters": PATCH_TOOL.parameters,
            },
        }
    ]


def patch_history(model: Model, call_id: str) -> list[Any]:
    reply = AssistantMessage(
        content=[TextContent("patching"), ToolCall(call_id, "apply_patch", {"patch": PATCH})],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="toolUse",
    )
    result = ToolResultMessage(call_id, "apply_patch", [TextContent("applied")])
    return [UserMessage("fix"), reply, result]


async def test_completions_replays_a_grammar_call_as_a_custom_call(server: FakeLLMServer) -> None:
    server.add(Turn(text="done"), Turn(text="done"))
    model = model_for(server, "openai-completions", GRAMMAR_COMPAT)
    history = patch_history(model, "call_1")
    await stream(model, Context(messages=history, tools=[PATCH_TOOL]), options_for(model.api)).result()
    sent = server.last_request.body["messages"]
    assert sent[1]["tool_calls"] == [
        {"id": "call_1", "type": "custom", "custom": {"name": "apply_patch", "input": PATCH}}
    ]
    assert sent[2] == {"role": "tool", "content": "applied", "tool_call_id": "call_1"}
    # The same history to a model without grammar tools: a function call with JSON arguments.
    plain = model_for(server, "openai-completions")
    await stream(plain, Context(messages=history, tools=[PATCH_TOOL]), options_for(plain.api)).result()
    call = server.last_request.body["messages"][1]["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"patch": PATCH}


async def test_a_tool_that_cannot_use_its_grammar_fails_the_request_as_a_value(server: FakeLLMServer) -> None:
    bad = Tool(
        "bad", "Bad", {"type": "object", "properties": {}}, GrammarSampling({"openai_lark": "start: /x/"})
    )
    for api in ("openai-completions", "openai-responses"):
        model = model_for(server, api, GRAMMAR_COMPAT)
        message = await stream(
            model, Context(messages=[UserMessage("hi")], tools=[bad]), options_for(api)
        ).result()
        assert message.stop_reason == "error"
        assert message.error_message == (
            'Tool "bad" cannot use grammar constrained sampling: '
            "grammar constrained sampling requires exactly one required string property."
        )
    assert not server.requests


# --- the Responses family over HTTP -------------------------------------------------------------


RESPONSES_APIS = ("openai-responses", "azure-openai-responses", "openai-codex-responses")


@pytest.mark.parametrize("api", RESPONSES_APIS)
async def test_responses_send_a_custom_tool_and_stream_its_input_as_arguments(
    server: FakeLLMServer, api: str
) -> None:
    server.add(patch_call_turn())
    model = model_for(server, api, GRAMMAR_COMPAT)
    events = stream(
        model, Context(messages=[UserMessage("fix")], tools=[READ_TOOL, PATCH_TOOL]), options_for(api)
    )
    deltas = [e.delta for e in [e async for e in events] if isinstance(e, ToolCallDeltaEvent)]
    message = await events.result()
    assert message.stop_reason == "toolUse", message.error_message
    call = message.tool_calls()[0]
    assert call.name == "apply_patch" and call.arguments == {"patch": PATCH}
    assert call.id.startswith("call_1|ctc_")
    assert json.loads("".join(deltas)) == {"patch": PATCH}
    tools = server.last_request.body["tools"]
    assert tools[1] == {
        "type": "custom",
        "name": "apply_patch",
        "description": "Apply a patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": LARK},
    }
    assert tools[0]["type"] == "function"


@pytest.mark.parametrize("api", RESPONSES_APIS)
async def test_responses_replay_a_grammar_call_as_a_custom_call(server: FakeLLMServer, api: str) -> None:
    server.add(Turn(text="done"), Turn(text="done"))
    model = model_for(server, api, GRAMMAR_COMPAT)
    history = patch_history(model, "call_1|ctc_abc")
    await stream(model, Context(messages=history, tools=[PATCH_TOOL]), options_for(api)).result()
    items = [i for i in server.last_request.body["input"] if i.get("type", "").startswith("custom")]
    assert items == [
        {
            "type": "custom_tool_call",
            "id": "ctc_abc",
            "call_id": "call_1",
            "name": "apply_patch",
            "input": PATCH,
        },
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": "applied"},
    ]
    # Without grammar tools the call goes back as a function call, without its ctc_ item id.
    plain = model_for(server, api)
    await stream(plain, Context(messages=history, tools=[PATCH_TOOL]), options_for(api)).result()
    body = server.last_request.body
    calls = [i for i in body["input"] if i.get("type") in ("function_call", "function_call_output")]
    assert calls[0] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "apply_patch",
        "arguments": json.dumps({"patch": PATCH}, separators=(",", ":"), ensure_ascii=False),
    }
    assert calls[1]["type"] == "function_call_output"
    assert body["tools"][0]["type"] == "function"


async def test_a_grammar_call_whose_argument_is_not_a_string_cannot_be_replayed(
    server: FakeLLMServer,
) -> None:
    model = model_for(server, "openai-completions", GRAMMAR_COMPAT)
    reply = AssistantMessage(
        content=[ToolCall("call_1", "apply_patch", {"patch": 3})],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="toolUse",
    )
    history = [UserMessage("fix"), reply, ToolResultMessage("call_1", "apply_patch", [TextContent("x")])]
    message = await stream(
        model, Context(messages=history, tools=[PATCH_TOOL]), options_for(model.api)
    ).result()
    assert message.stop_reason == "error"
    assert (
        message.error_message == 'Grammar tool call "apply_patch" requires argument "patch" to be a string.'
    )


# --- the Responses reader, event by event ---------------------------------------------------------


async def read_responses(
    server: FakeLLMServer, frames: list[dict[str, Any]]
) -> tuple[list[str], AssistantMessage]:
    """Run ``ResponsesEventReader`` over hand-written events (no HTTP); the tool-call deltas too."""

    async def produce(writer: StreamWriter) -> None:
        writer.start()
        reader = ResponsesEventReader(writer, grammar_inputs={"apply_patch": "patch"})
        for frame in frames:
            reader.handle(frame)
        reader.finish()

    events = run_stream(model_for(server, "openai-responses", GRAMMAR_COMPAT), StreamOptions(), produce)
    deltas = [e.delta async for e in events if isinstance(e, ToolCallDeltaEvent)]
    return deltas, await events.result()


def custom_item(text: str) -> dict[str, Any]:
    return {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_1",
        "name": "apply_patch",
        "input": text,
    }


async def test_a_custom_call_starts_with_the_added_items_input_and_ends_with_the_servers(
    server: FakeLLMServer,
) -> None:
    deltas, message = await read_responses(
        server,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": custom_item("ab")},
            {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": 'c"'},
            {"type": "response.custom_tool_call_input.done", "output_index": 0, "input": 'abc"d'},
            {"type": "response.output_item.done", "output_index": 0, "item": custom_item('abc"d')},
            {"type": "response.completed", "response": {"status": "completed"}},
        ],
    )
    assert message.stop_reason == "toolUse", message.error_message
    assert deltas == ['{"patch":"abc\\"', 'd"}']  # the added item's input goes with the first piece
    assert message.tool_calls()[0].arguments == {"patch": 'abc"d'}
    assert message.tool_calls()[0].id == "call_1|ctc_1"


async def test_a_custom_call_whose_whole_input_contradicts_its_pieces_is_an_error(
    server: FakeLLMServer,
) -> None:
    _, message = await read_responses(
        server,
        [
            {"type": "response.output_item.added", "output_index": 0, "item": custom_item("")},
            {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": "abc"},
            {"type": "response.custom_tool_call_input.done", "output_index": 0, "input": "abX"},
        ],
    )
    assert message.stop_reason == "error"
    assert message.error_message == 'grammar tool input for property "patch" changed non-monotonically'
