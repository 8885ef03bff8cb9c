"""pi's WebSocket transport for the Codex backend, against the fake server's WebSocket side: the
frames and handshake, a session's socket kept and continued, and the fall back to HTTP/SSE."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from codex_token import codex_access_token

from tau.ai import AssistantMessage, Context, Model, UserMessage, complete
from tau.testing.fake_llm import FakeLLMServer, Fault, Turn

TOKEN = codex_access_token("acct-ws")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.codex_websocket = True
        yield fake


def _model(server: FakeLLMServer) -> Model:
    return Model(
        id="gpt-5.1-codex",
        api="openai-codex-responses",
        provider="openai-codex",
        base_url=server.url("/backend-api"),
    )


async def _ask(server: FakeLLMServer, context: Context, **options: object) -> AssistantMessage:
    reply = await complete(_model(server), context, api_key=TOKEN, **options)
    context.messages.append(reply)
    return reply


async def test_a_call_is_one_response_create_frame_with_pis_handshake_headers(server: FakeLLMServer) -> None:
    server.add(Turn(text="Over the socket."))
    reply = await _ask(server, Context(messages=[UserMessage("hi")]), session_id="s-1")
    assert (reply.stop_reason, reply.text()) == ("stop", "Over the socket."), reply.error_message
    request = server.last_request
    assert request.method == "WEBSOCKET"
    assert request.headers["openai-beta"] == "responses_websockets=2026-02-06"
    assert (request.headers["session-id"], request.headers["x-client-request-id"]) == ("s-1", "s-1")
    assert request.headers["chatgpt-account-id"] == "acct-ws"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "type" not in request.body and request.body["store"] is False
    assert [item["content"] for item in request.body["input"] if item.get("role") == "user"] == [
        [{"type": "input_text", "text": "hi"}]
    ]


async def test_a_session_keeps_its_socket_and_sends_only_the_new_input_after_the_last_response(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="First.", response_id="resp_1"), Turn(text="Second."))
    context = Context(messages=[UserMessage("one")])
    await _ask(server, context, session_id="s-2")
    context.messages.append(UserMessage("two"))
    reply = await _ask(server, context, session_id="s-2")
    assert reply.text() == "Second.", reply.error_message
    assert server.websocket_attempts == 1
    first, second = server.requests
    assert first.client_port == second.client_port
    assert second.body["previous_response_id"] == "resp_1"
    assert second.body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "two"}]}]


async def test_transport_websocket_sends_the_whole_input_on_the_kept_socket(server: FakeLLMServer) -> None:
    server.add(Turn(text="First.", response_id="resp_1"), Turn(text="Second."))
    context = Context(messages=[UserMessage("one")])
    await _ask(server, context, session_id="s-3", transport="websocket")
    context.messages.append(UserMessage("two"))
    await _ask(server, context, session_id="s-3", transport="websocket")
    assert server.websocket_attempts == 1
    assert "previous_response_id" not in server.last_request.body
    assert len(server.last_request.body["input"]) == 3


async def test_a_lost_continuation_is_retried_once_with_the_whole_input(server: FakeLLMServer) -> None:
    lost = {"error": {"code": "previous_response_not_found", "message": "Previous response not found"}}
    server.add(
        Turn(text="First.", response_id="resp_1"), Turn(fault=Fault("status", body=lost)), Turn(text="Again.")
    )
    context = Context(messages=[UserMessage("one")])
    await _ask(server, context, session_id="s-4")
    context.messages.append(UserMessage("two"))
    reply = await _ask(server, context, session_id="s-4")
    assert reply.text() == "Again.", reply.error_message
    assert "previous_response_id" in server.requests[1].body
    assert "previous_response_id" not in server.requests[2].body


async def test_a_backend_error_event_is_the_reply_error_without_falling_back(server: FakeLLMServer) -> None:
    limit = {"error": {"code": "usage_limit_reached", "message": "The usage limit has been reached"}}
    server.add(Turn(fault=Fault("status", status=429, body=limit)))
    reply = await _ask(server, Context(messages=[UserMessage("hi")]), session_id="s-5")
    assert reply.stop_reason == "error"
    assert reply.error_message == "Codex error: The usage limit has been reached"
    assert [request.method for request in server.requests] == ["WEBSOCKET"]


async def test_a_refused_upgrade_falls_back_to_sse_for_the_rest_of_the_session(server: FakeLLMServer) -> None:
    server.codex_websocket = False
    server.add(Turn(text="Over SSE."), Turn(text="Still SSE."))
    context = Context(messages=[UserMessage("hi")])
    assert (await _ask(server, context, session_id="s-6")).text() == "Over SSE."
    context.messages.append(UserMessage("again"))
    assert (await _ask(server, context, session_id="s-6")).text() == "Still SSE."
    assert [request.method for request in server.requests] == ["POST", "POST"]
    assert server.websocket_attempts == 1
    assert server.last_request.headers["accept"] == "text/event-stream"


async def test_a_socket_lost_mid_reply_is_a_retryable_error_not_a_second_request(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="word " * 50, chunk_size=5, fault=Fault("cut", after_events=4)))
    reply = await _ask(server, Context(messages=[UserMessage("hi")]), session_id="s-7")
    assert reply.stop_reason == "error"
    assert reply.error_message is not None and reply.error_message.startswith(
        "Connection lost while streaming"
    )
    assert [request.method for request in server.requests] == ["WEBSOCKET"]


async def test_transport_sse_never_opens_a_socket(server: FakeLLMServer) -> None:
    server.add(Turn(text="Plain."))
    reply = await _ask(server, Context(messages=[UserMessage("hi")]), session_id="s-8", transport="sse")
    assert reply.text() == "Plain."
    assert (server.websocket_attempts, server.last_request.method) == (0, "POST")


async def test_the_websocket_connect_timeout_comes_from_the_options() -> None:
    # A server that accepts the connection and never answers the upgrade (nor the HTTP fallback).
    silent: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        silent.append(writer)

    listener = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    model = Model(
        id="gpt-5.1-codex",
        api="openai-codex-responses",
        provider="openai-codex",
        base_url=f"http://127.0.0.1:{port}/backend-api",
    )
    started = time.monotonic()
    async with listener:
        reply = await complete(
            model,
            Context(messages=[UserMessage("hi")]),
            api_key=TOKEN,
            session_id="s-timeout",
            websocket_connect_timeout_ms=200,
            timeout_ms=300,
        )
        # Closed before the listener's end, which waits for open connections (Python 3.12.1+).
        for writer in silent:
            writer.close()
    # Gave up on the socket after 0.2 s (not pi's default 15 s), then on the HTTP fallback.
    assert reply.stop_reason == "error"
    assert time.monotonic() - started < 5
