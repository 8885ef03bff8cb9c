"""Provider-level retries in ``tau.ai.transport.http.open_stream``: what is re-sent, and what fails at once."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tau.ai import Model, StreamOptions
from tau.ai.stream_writer import ProviderError
from tau.ai.transport import http as ai_http
from tau.ai.transport.http import HttpStatusError, close_clients, open_stream
from tau.testing.fake_llm import FakeLLMServer, Fault, Turn

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
async def _close_http_clients() -> AsyncIterator[None]:
    yield
    await close_clients()


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ai_http, "_backoff_s", lambda attempt: 0.0)


def model_at(base_url: str) -> Model:
    return Model(id="m", api="openai-completions", provider="fake", base_url=base_url)


async def post(base_url: str, **options: Any) -> int:
    response = await open_stream(
        model_at(base_url),
        base_url + "/chat/completions",
        headers={},
        body=BODY,
        options=StreamOptions(**options),
    )
    await response.aclose()
    return response.status_code


@pytest.mark.parametrize("code", [429, 500, 502, 503, 504, 529])
async def test_a_retryable_status_is_re_sent_with_the_same_bytes(server: FakeLLMServer, code: int) -> None:
    server.add(Turn(fault=Fault("status", status=code)), Turn(text="ok"))
    assert await post(server.url("/v1"), max_retries=2) == 200
    first, second = server.requests
    assert first.body == second.body == BODY


async def test_a_connection_dropped_before_the_response_is_re_sent(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("close_before_headers")), Turn(text="ok"))
    assert await post(server.url("/v1"), max_retries=1) == 200
    assert len(server.requests) == 2


async def test_without_retries_a_dropped_connection_is_a_retryable_error(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("close_before_headers")), Turn(text="never"))
    with pytest.raises(ProviderError) as failure:
        await post(server.url("/v1"))
    assert failure.value.retryable and "Connection error" in str(failure.value)
    assert len(server.requests) == 1


async def test_retries_stop_after_max_retries(server: FakeLLMServer) -> None:
    server.add(*[Turn(fault=Fault("status", status=503)) for _ in range(5)])
    with pytest.raises(HttpStatusError) as failure:
        await post(server.url("/v1"), max_retries=2)
    assert failure.value.status == 503 and failure.value.retryable
    assert len(server.requests) == 3


async def test_a_bad_request_is_never_re_sent(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=400)), Turn(text="never"))
    with pytest.raises(HttpStatusError) as failure:
        await post(server.url("/v1"), max_retries=3)
    assert failure.value.status == 400 and not failure.value.retryable
    assert len(server.requests) == 1


async def test_a_retry_after_beyond_the_cap_fails_at_once_naming_the_wait(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429, headers={"Retry-After": "259200"})), Turn(text="never"))
    started = time.monotonic()
    with pytest.raises(HttpStatusError) as failure:
        await post(server.url("/v1"), max_retries=3, max_retry_delay_ms=60000)
    assert time.monotonic() - started < 2
    assert "259200 s (3 days)" in str(failure.value) and "retry delay cap of 60 s" in str(failure.value)
    assert len(server.requests) == 1


async def test_timeout_ms_bounds_the_wait_for_the_response_headers() -> None:
    # A listening socket nobody answers: the request is sent, no response ever comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        started = time.monotonic()
        with pytest.raises(ProviderError) as failure:
            await post(base_url, timeout_ms=200, max_retries=1)
        assert time.monotonic() - started < 3
    assert failure.value.retryable and "timed out after 200 ms" in str(failure.value)


def test_without_a_timeout_option_the_wait_for_the_first_byte_is_bounded() -> None:
    assert StreamOptions().timeout_ms == 300_000


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("localhost:8080/v1", "it must start with http:// or https://"),
        ("ftp://127.0.0.1/v1", "it must start with http:// or https://"),
        ("http://127.0.0.1:port/v1", "Invalid port"),
    ],
)
async def test_an_invalid_base_url_fails_at_once_without_retries(base_url: str, problem: str) -> None:
    started = time.monotonic()
    with pytest.raises(ProviderError) as failure:
        await post(base_url, max_retries=3)
    assert not failure.value.retryable
    assert str(failure.value).startswith(f"Invalid base URL in '{base_url}/chat/completions': ")
    assert problem in str(failure.value) and "Connection error" not in str(failure.value)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("value", ["sk-live-0123456789\r", "sk-live-01\n23456789", "sk-live-01234567…"])
async def test_a_header_http_cannot_carry_fails_at_once_naming_the_header_not_the_value(
    server: FakeLLMServer, value: str
) -> None:
    server.add(Turn(text="never"))
    with pytest.raises(ProviderError) as failure:
        response = await open_stream(
            model_at(server.url("/v1")),
            server.url("/v1/chat/completions"),
            headers={"Authorization": f"Bearer {value}"},
            body=BODY,
            options=StreamOptions(max_retries=3),
        )
        await response.aclose()
    assert not failure.value.retryable
    assert str(failure.value).startswith('Invalid request header "Authorization": its value contains ')
    assert "sk-live" not in str(failure.value)
    assert server.requests == []


async def test_a_529_is_re_sent_whatever_its_body_says(server: FakeLLMServer) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}
    server.add(Turn(fault=Fault("status", status=529, body=body)), Turn(text="ok"))
    assert await post(server.url("/v1"), max_retries=1) == 200
    assert len(server.requests) == 2


async def test_an_error_status_whose_body_never_comes_fails_within_the_idle_timeout() -> None:
    # Sends the status line and headers of a 500 announcing a body, then nothing more.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"

        async def answer_with_a_stalled_error() -> None:
            loop = asyncio.get_running_loop()
            listener.setblocking(False)
            connection, _ = await loop.sock_accept(listener)
            with connection:
                await loop.sock_recv(connection, 65536)
                await loop.sock_sendall(connection, b"HTTP/1.1 500 Oops\r\nContent-Length: 100\r\n\r\n")
                await asyncio.sleep(5)

        server = asyncio.ensure_future(answer_with_a_stalled_error())
        started = time.monotonic()
        with pytest.raises(HttpStatusError) as failure:
            await post(base_url, idle_timeout_ms=300)
        server.cancel()
    assert time.monotonic() - started < 3
    assert failure.value.status == 500 and str(failure.value) == "500 status code (no body)"
