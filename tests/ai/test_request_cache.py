"""Each history message is converted and encoded once: request bytes stay exactly what a fresh build sends.

Every scenario runs twice through a real agent loop against the fake server: once as is (later
requests reuse the wire form of earlier messages) and once with every request's messages deep-
copied by ``convert_to_llm``, so nothing can be reused and each body is built from scratch.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import pytest

from tau.agent import Agent, AgentMessage, AgentTool, AgentToolResult, text_result
from tau.ai.transport.request_cache import CachedFragment, FragmentList, encode_body
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    JsonObject,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn

BASE_PATHS = {
    "anthropic-messages": "",
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
}
APIS = list(BASE_PATHS)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def _read(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    return text_result(f"contents of {args['path']}: caf\u00e9 \u2603")


def _model(server: FakeLLMServer, api: str) -> Model:
    return Model(
        id=f"{api}-model", api=api, provider="fake", base_url=server.url(BASE_PATHS[api]), reasoning=True
    )


def _history() -> list[Message]:
    """Turns written by another model (foreign ids, signatures, reasoning) and an image the model cannot see."""
    call = ToolCall(
        id="call_1|fc_weird/id", name="read", arguments={"path": "a.py"}, thought_signature="c2ln"
    )
    return [
        UserMessage([TextContent("Look at this."), ImageContent("aGVsbG8=", "image/png")], timestamp=1),
        AssistantMessage(
            content=[ThinkingContent("I should read a.py", "sig-other"), TextContent("Reading."), call],
            api="other-api",
            provider="other",
            model="other-model",
            usage=Usage(),
            stop_reason="toolUse",
            timestamp=2,
        ),
        ToolResultMessage(
            tool_call_id=call.id, tool_name="read", content=[TextContent("print(1)")], timestamp=3
        ),
        UserMessage("Now read more files, two at a time.", timestamp=4),
    ]


def _script(prefix: str) -> list[Turn]:
    return [
        Turn(
            thinking="Two files next.",
            text="Reading two.",
            tool_calls=[
                ScriptedToolCall("read", {"path": f"{prefix}b.py"}, id=f"{prefix}call_2"),
                ScriptedToolCall("read", {"path": f"{prefix}c.py"}, id=f"{prefix}call_3"),
            ],
            response_id=f"{prefix}resp_1",
        ),
        Turn(
            text="One more.",
            tool_calls=[ScriptedToolCall("read", {"path": f"{prefix}d.py"}, id=f"{prefix}call_4")],
            response_id=f"{prefix}resp_2",
        ),
        Turn(text="Done reading.", response_id=f"{prefix}resp_3"),
    ]


def _fresh_copies(messages: Sequence[AgentMessage]) -> list[Message]:
    return copy.deepcopy(
        [m for m in messages if isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))]
    )


def _agent(model: Model, *, fresh: bool, on_payload: Any = None) -> Agent:
    tool = AgentTool(name="read", description="Read a file", parameters=SCHEMA, execute=_read)
    if fresh:
        return Agent(
            model=model, tools=[tool], messages=_history(), get_api_key=lambda _p: "k",
            convert_to_llm=_fresh_copies, on_payload=on_payload,
        )  # fmt: skip
    return Agent(
        model=model, tools=[tool], messages=_history(), get_api_key=lambda _p: "k", on_payload=on_payload
    )


async def _bodies(apis: Sequence[str], *, fresh: bool) -> list[bytes]:
    """The request bodies of one tool-loop prompt per API in ``apis``, switching models in between."""
    bodies: list[bytes] = []
    agent: Agent | None = None
    for number, api in enumerate(apis):
        with FakeLLMServer(_script(f"p{number}_")) as server:
            model = _model(server, api)
            if agent is None:
                agent = _agent(model, fresh=fresh)
            agent.state.model = model
            await agent.prompt(f"Prompt {number}.")
            assert server.pending == 0, [m for m in agent.state.messages if getattr(m, "error_message", None)]
            bodies.extend(request.raw_body for request in server.requests)
    return bodies


def _plain_encoding(raw: bytes) -> bytes:
    return json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("api", APIS)
async def test_a_tool_loop_sends_the_same_bytes_as_bodies_built_from_scratch(api: str) -> None:
    reused = await _bodies([api], fresh=False)
    fresh = await _bodies([api], fresh=True)
    assert len(reused) == 3
    assert reused == fresh
    assert all(raw == _plain_encoding(raw) for raw in reused)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("anthropic-messages", "openai-completions"),
        ("openai-completions", "openai-responses"),
        ("openai-responses", "google-generative-ai"),
        ("google-generative-ai", "anthropic-messages"),
    ],
)
async def test_switching_model_mid_session_sends_the_same_bytes_as_bodies_built_from_scratch(
    first: str, second: str
) -> None:
    reused = await _bodies([first, second, first], fresh=False)
    fresh = await _bodies([first, second, first], fresh=True)
    assert len(reused) == 9
    assert reused == fresh


def _replace_strings(value: Any, old: str, new: str) -> None:
    """Edit every string equal to ``old`` inside ``value`` in place."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(items):
        if item == old:
            value[key] = new
        else:
            _replace_strings(item, old, new)


@pytest.mark.parametrize("api", APIS)
async def test_a_payload_hook_editing_the_body_in_place_changes_only_that_request(api: str) -> None:
    calls = 0

    def edit_first_request(payload: JsonObject, model: Model) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            _replace_strings(payload, "Now read more files, two at a time.", "EDITED BY HOOK")

    with FakeLLMServer(_script("")) as server:
        agent = _agent(_model(server, api), fresh=False, on_payload=edit_first_request)
        await agent.prompt("Go.")
        bodies = [request.raw_body for request in server.requests]
    assert b"EDITED BY HOOK" in bodies[0]
    assert all(b"EDITED BY HOOK" not in raw and b"two at a time" in raw for raw in bodies[1:])


@pytest.mark.parametrize("api", APIS)
async def test_a_replaced_history_message_is_sent_as_it_is_now(api: str) -> None:
    with FakeLLMServer([Turn(text="First."), Turn(text="Second.")]) as server:
        agent = _agent(_model(server, api), fresh=False)
        await agent.prompt("One.")
        messages = agent.state.messages
        index = next(i for i, m in enumerate(messages) if isinstance(m, ToolResultMessage))
        old = messages[index]
        assert isinstance(old, ToolResultMessage)
        messages[index] = ToolResultMessage(old.tool_call_id, old.tool_name, [TextContent("compacted away")])
        await agent.prompt("Two.")
        first, second = (request.raw_body for request in server.requests)
    assert b"print(1)" in first and b"compacted away" not in first
    assert b"compacted away" in second and b"print(1)" not in second


@pytest.mark.parametrize("api", APIS)
async def test_a_message_given_new_content_in_place_is_sent_as_it_is_now(api: str) -> None:
    with FakeLLMServer([Turn(text="First."), Turn(text="Second.")]) as server:
        agent = _agent(_model(server, api), fresh=False)
        await agent.prompt("One.")
        result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
        result.content = [TextContent("rewritten in place")]
        await agent.prompt("Two.")
        second = server.requests[1].raw_body
    assert b"rewritten in place" in second and b"print(1)" not in second


def _fragment_body(count: int) -> tuple[JsonObject, list[Any]]:
    fragments = [
        CachedFragment({"role": "user", "content": f"message {i} caf\u00e9 " + "x" * 90})
        for i in range(count)
    ]
    return {"model": "m", "messages": FragmentList(fragments), "stream": True}, fragments


def test_encodings_are_kept_for_the_first_limit_bytes_of_the_messages_only() -> None:
    body, fragments = _fragment_body(100)
    expected = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    for _ in range(2):  # a first request, and a second one reusing what was kept
        assert encode_body(body, check_edits=False, limit=1000) == expected
        kept = [f.kept_bytes for f in fragments]
        assert 1000 <= sum(kept) < 1000 + max(kept)
        assert kept[-1] == 0 and kept[0] > 0


def test_a_history_under_the_limit_keeps_every_encoding() -> None:
    body, fragments = _fragment_body(100)
    encode_body(body, check_edits=False)
    assert all(f.kept_bytes > 0 for f in fragments)
