"""The data model: exact camelCase JSON round trips (spec 10 §9, tests 1-4)."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from tau.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_from_json,
    models_are_equal,
)

# Shaped like the lines of a pi 0.73 session file (the message part of a "message" entry).
PI_USER = {"role": "user", "content": [{"type": "text", "text": "read main.py"}], "timestamp": 1765233665292}
PI_USER_STRING = {"role": "user", "content": "hello", "timestamp": 1765233665000}
PI_ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "EqQBCkYIBxgCKkB"},
        {
            "type": "text",
            "text": "Reading it now.",
            "textSignature": '{"v":1,"id":"msg_1","phase":"commentary"}',
        },
        {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "main.py"}},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-opus-4-5",
    "responseId": "msg_abc",
    "usage": {
        "input": 2775,
        "output": 141,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2916,
        "cost": {"input": 0.013875, "output": 0.003525, "cacheRead": 0, "cacheWrite": 0, "total": 0.0174},
    },
    "stopReason": "toolUse",
    "timestamp": 1765233665294,
}
PI_ERROR_ASSISTANT = {
    "role": "assistant",
    "content": [],
    "api": "openai-completions",
    "provider": "groq",
    "model": "llama",
    "usage": {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    },
    "stopReason": "error",
    "errorMessage": "429 rate limit",
    "timestamp": 1765233665300,
}
PI_TOOL_RESULT = {
    "role": "toolResult",
    "toolCallId": "toolu_01",
    "toolName": "read",
    "content": [
        {"type": "text", "text": "print('hi')"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ],
    "details": {"truncation": None},
    "isError": False,
    "timestamp": 1765233665394,
}


def test_pi_messages_load_and_dump_to_equal_json() -> None:
    for data in (PI_USER, PI_USER_STRING, PI_ASSISTANT, PI_ERROR_ASSISTANT, PI_TOOL_RESULT):
        assert message_from_json(data).to_json() == data


def test_dumped_json_is_byte_identical_after_a_second_round_trip() -> None:
    for data in (PI_USER, PI_ASSISTANT, PI_TOOL_RESULT):
        once = json.dumps(message_from_json(data).to_json())
        twice = json.dumps(message_from_json(json.loads(once)).to_json())
        assert once == twice


def test_a_0_58_message_without_new_fields_loads() -> None:
    data = {k: v for k, v in PI_ASSISTANT.items() if k not in ("responseId",)}
    message = message_from_json(data)
    assert isinstance(message, AssistantMessage)
    assert message.response_id is None and message.diagnostics is None
    assert "responseId" not in message.to_json()


def test_unknown_keys_are_ignored_not_fatal() -> None:
    data = dict(PI_USER, someFutureField={"x": 1})
    assert message_from_json(data).to_json() == PI_USER


def test_user_content_may_be_a_string_or_blocks() -> None:
    assert message_from_json(PI_USER_STRING).content == "hello"  # type: ignore[union-attr]
    blocks = message_from_json(PI_USER).content  # type: ignore[union-attr]
    assert blocks == [TextContent("read main.py")]


def test_optional_block_fields_are_omitted_when_unset() -> None:
    assert TextContent("a").to_json() == {"type": "text", "text": "a"}
    assert ThinkingContent("t").to_json() == {"type": "thinking", "thinking": "t"}
    assert ToolCall("id", "ls").to_json() == {"type": "toolCall", "id": "id", "name": "ls", "arguments": {}}


def test_context_round_trips_through_json() -> None:
    context = Context(
        system_prompt="You are terse.",
        messages=[
            message_from_json(PI_USER),
            message_from_json(PI_ASSISTANT),
            message_from_json(PI_TOOL_RESULT),
        ],
        tools=[Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})],
    )
    data = context.to_json()
    assert Context.from_json(json.loads(json.dumps(data))).to_json() == data


def test_models_are_equal_compares_provider_and_id() -> None:
    a = Model(id="m", api="openai-completions", provider="p", base_url="u")
    assert models_are_equal(a, Model(id="m", api="anthropic-messages", provider="p", base_url="v"))
    assert not models_are_equal(a, Model(id="m", api="openai-completions", provider="q", base_url="u"))
    assert not models_are_equal(a, None)
    assert not models_are_equal(None, None)


def test_streamed_text_appends_are_joined_on_read() -> None:
    block = TextContent()
    for piece in ("a", "b", "c"):
        block.append(piece)
    assert block.text == "abc"
    block.append("d")
    assert block.to_json() == {"type": "text", "text": "abcd"}


def test_a_hand_built_model_takes_its_id_as_name() -> None:
    model = Model(
        id="qwen3:8b", api="openai-completions", provider="ollama", base_url="http://localhost:11434/v1"
    )
    assert model.name == "qwen3:8b"
    assert Model.from_json(model.to_json()) == model


texts = st.text(max_size=30)
blocks = st.one_of(
    st.builds(lambda t, s: TextContent(t, s), texts, st.none() | texts),
    st.builds(lambda t, s, r: ThinkingContent(t, s, r), texts, st.none() | texts, st.none() | st.booleans()),
    st.builds(
        lambda i, n, a: ToolCall(i, n, a),
        texts,
        texts,
        st.dictionaries(texts, st.integers() | texts, max_size=3),
    ),
)


@given(st.lists(blocks, max_size=5), st.integers(min_value=0, max_value=10**13))
def test_any_assistant_message_round_trips(content: list, timestamp: int) -> None:  # type: ignore[type-arg]
    message = AssistantMessage(content=content, api="a", provider="p", model="m", timestamp=timestamp)
    data = json.loads(json.dumps(message.to_json()))
    assert message_from_json(data).to_json() == data


@given(st.lists(st.one_of(st.builds(TextContent, texts), st.builds(ImageContent, texts, texts)), max_size=4))
def test_any_tool_result_round_trips(content: list) -> None:  # type: ignore[type-arg]
    message = ToolResultMessage("c", "read", content, is_error=True, timestamp=1)
    assert message_from_json(message.to_json()).to_json() == message.to_json()


def test_user_message_with_image_round_trips() -> None:
    message = UserMessage([TextContent("see"), ImageContent("AAAA", "image/png")], timestamp=5)
    assert message.to_json() == {
        "role": "user",
        "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ],
        "timestamp": 5,
    }


def test_a_copied_assistant_message_shares_every_field_with_the_original() -> None:
    original = AssistantMessage(content=[TextContent("hi")], api="a", provider="p", model="m")
    fields = AssistantMessage.__struct_fields__  # not the constant role, a class variable
    for name in fields:
        setattr(original, name, object())  # a distinct value in every field
    clone = copy.copy(original)
    assert clone is not original and clone.role == "assistant"
    for name in fields:
        assert getattr(clone, name) is getattr(original, name), name


def test_tool_result_nested_calls_round_trip_as_pi_writes_them() -> None:
    from tau.ai.types import ToolResultMessage

    record = {
        "calls": [{"id": "c/1", "name": "bash", "status": "ok", "arguments": {"command": "ls"}}],
        "complete": True,
    }
    data = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "codemode",
        "content": [{"type": "text", "text": "done"}],
        "isError": False,
        "timestamp": 5,
        "nestedCalls": record,
    }
    message = ToolResultMessage.from_json(data)
    assert message.nested_calls == record
    assert message.to_json() == data
    plain = {k: v for k, v in data.items() if k != "nestedCalls"}
    assert ToolResultMessage.from_json(plain).to_json() == plain


def test_a_constrained_tool_is_written_and_read_in_pis_shape() -> None:
    from tau.ai.types import GrammarSampling, JsonSchemaSampling, Tool
    from tau.session.system_record import declared_sampling, tool_declaration

    data = {
        "name": "find",
        "description": "Find files",
        "parameters": {"type": "object", "properties": {}},
        "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
    }
    tool = Tool.from_json(data)
    assert tool.constrained_sampling == JsonSchemaSampling("prefer")
    assert tool.to_json() == data
    assert "constrainedSampling" not in Tool("plain", "", {}).to_json()
    declared = tool_declaration(
        tool.name, tool.description, tool.parameters, constrained_sampling=tool.constrained_sampling
    )
    assert declared == data and declared_sampling(declared) == JsonSchemaSampling("prefer")
    assert declared_sampling(tool_declaration("plain", "", {})) is None
    # pi's other shapes: strict required, a grammar, and ``false`` (none).
    required = {**data, "constrainedSampling": {"type": "json_schema", "strict": "require"}}
    assert Tool.from_json(required).constrained_sampling == JsonSchemaSampling("require")
    assert Tool.from_json(required).to_json() == required
    grammar = {
        "name": "apply_patch",
        "description": "Apply a patch",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
        "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": "start: /.+/s"}},
    }
    assert Tool.from_json(grammar).constrained_sampling == GrammarSampling({"openai_lark": "start: /.+/s"})
    assert Tool.from_json(grammar).to_json() == grammar
    assert declared_sampling(grammar) == GrammarSampling({"openai_lark": "start: /.+/s"})
    assert Tool.from_json({**data, "constrainedSampling": False}).constrained_sampling is None
    assert Tool.from_json({**data, "constrainedSampling": {"type": "other"}}).constrained_sampling is None
