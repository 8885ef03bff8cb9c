"""The official ``openai`` client, pointed at the Codex base URL, must accept the fake's Codex streams."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from codex_token import codex_access_token

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, Turn


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        api_key=codex_access_token("acct-7"),
        base_url=server.url("/backend-api/codex"),
        default_headers={"chatgpt-account-id": "acct-7", "originator": "pi", **headers},
        max_retries=0,
    )


def test_the_client_streams_a_reasoning_and_tool_turn_from_the_codex_path(server: FakeLLMServer) -> None:
    server.add(
        Turn(thinking="Look first.", tool_calls=[ScriptedToolCall("read", {"path": "a"}, id="call_1")])
    )
    with _client(server).responses.stream(
        model="gpt-5.1-codex", input="hi", store=False, include=["reasoning.encrypted_content"]
    ) as events:
        summary = [e.delta for e in events if e.type == "response.reasoning_summary_text.delta"]
        final = events.get_final_response()
    assert "".join(summary) == "Look first."
    reasoning, call = final.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content
    assert (call.type, call.call_id, call.name) == ("function_call", "call_1", "read")
    assert server.last_request.path == "/backend-api/codex/responses"
    assert server.last_request.api == "openai-codex-responses"


def test_a_stored_conversation_is_refused_as_the_backend_does(server: FakeLLMServer) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _client(server).responses.create(model="gpt-5.1-codex", input="hi", store=True, stream=True)
    assert caught.value.body == {"detail": "Store must be set to false"}


def test_a_request_without_the_account_header_is_unauthorised(server: FakeLLMServer) -> None:
    client = openai.OpenAI(
        api_key=codex_access_token("a"), base_url=server.url("/backend-api/codex"), max_retries=0
    )
    with pytest.raises(openai.AuthenticationError):
        client.responses.create(model="gpt-5.1-codex", input="hi", store=False, stream=True)


def test_a_spent_quota_is_a_429_naming_the_plan_and_reset_time(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429)))
    with pytest.raises(openai.RateLimitError) as caught:
        _client(server).responses.create(model="gpt-5.1-codex", input="hi", store=False, stream=True)
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "usage_limit_reached" and body["plan_type"] == "plus" and body["resets_at"] > 0


# The SDK itself opens its socket in a way websockets deprecates; nothing tau or the fake does.
_SDK_SOCKET_WARNING = pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager")


def _events_until_done(connection: Any) -> list[Any]:
    events = []
    for event in connection:
        events.append(event)
        if event.type in ("response.completed", "error"):
            return events
    return events


@_SDK_SOCKET_WARNING
def test_the_clients_websocket_mode_streams_two_turns_on_one_socket(server: FakeLLMServer) -> None:
    server.codex_websocket = True
    server.add(
        Turn(thinking="Look first.", tool_calls=[ScriptedToolCall("read", {"path": "a"}, id="call_1")]),
        Turn(text="Done."),
    )
    try:
        with _client(server).responses.connect() as connection:
            connection.response.create(model="gpt-5.1-codex", input="hi", store=False)
            first = _events_until_done(connection)
            connection.response.create(model="gpt-5.1-codex", input="go on", store=False)
            second = _events_until_done(connection)
    finally:
        server.codex_websocket = False
    first_output = first[-1].response.output
    assert [item.type for item in first_output] == ["reasoning", "function_call"]
    assert (first_output[1].call_id, first_output[1].name) == ("call_1", "read")
    assert "".join(e.delta for e in second if e.type == "response.output_text.delta") == "Done."
    sent = server.requests[-2:]
    assert [r.method for r in sent] == ["WEBSOCKET", "WEBSOCKET"]
    assert len({r.client_port for r in sent}) == 1  # one socket for both turns
    assert sent[1].body["input"] == "go on"


@_SDK_SOCKET_WARNING
def test_the_clients_websocket_mode_gets_a_stored_conversation_as_an_error_event(
    server: FakeLLMServer,
) -> None:
    server.codex_websocket = True
    try:
        with _client(server).responses.connect() as connection:
            connection.response.create(model="gpt-5.1-codex", input="hi", store=True)
            [error] = _events_until_done(connection)
    finally:
        server.codex_websocket = False
    assert error.type == "error"
    assert error.error.message == "Store must be set to false"
