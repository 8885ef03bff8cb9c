"""tau's own HTTP/1.1 client (``tau.ai.transport.wire``) as the providers use it through ``tau.ai.transport.http``:
verified TLS, an HTTP proxy's CONNECT tunnel, kept-alive connections, chunked gzip bodies, a stale
connection replaced, an https redirect followed. Real sockets and a real TLS certificate."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from certificates import self_signed_certificate, server_context

from tau.ai import Model, StreamOptions
from tau.ai.stream_writer import ProviderError
from tau.ai.transport import wire
from tau.ai.transport.http import close_clients, iter_sse, open_stream
from tau.testing.fake_llm import FakeLLMServer, Turn

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
async def _clean(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield
    await close_clients()


class _Serving:
    """A running server whose ``async with`` ends by dropping the connections still open: since
    Python 3.12.1 ``asyncio.Server.wait_closed`` waits for them, and a relay holding a kept-alive
    client connection would keep it waiting for ever."""

    def __init__(self, server: asyncio.Server, open_writers: set[asyncio.StreamWriter]) -> None:
        self._server = server
        self._open_writers = open_writers

    async def __aenter__(self) -> _Serving:
        return self

    async def __aexit__(self, *_: object) -> None:
        self._server.close()
        for writer in list(self._open_writers):
            writer.transport.abort()  # not close(): a TLS close waits up to 30 s for the client's reply
        await self._server.wait_closed()


async def _serve(handler: Handler, tls: object = None) -> tuple[_Serving, int, list[int]]:
    """A server on 127.0.0.1; the list counts the connections it accepted."""
    accepted: list[int] = []
    open_writers: set[asyncio.StreamWriter] = set()

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        open_writers.add(writer)
        try:
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            open_writers.discard(writer)
            writer.close()

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0, ssl=tls)  # type: ignore[arg-type]
    return _Serving(server, open_writers), server.sockets[0].getsockname()[1], accepted


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


def _relay_to(port: int) -> Handler:
    """Forwards a connection to 127.0.0.1:``port`` (a TLS front for the fake server)."""

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    return relay


async def _ask(url: str) -> list[str]:
    """POST to ``url`` and return the data of the events of the reply."""
    model = Model(id="m", api="openai-completions", provider="fake", base_url=url.rsplit("/", 2)[0])
    response = await open_stream(model, url, headers={}, body=BODY, options=StreamOptions())
    return [event.data async for event in iter_sse(response, StreamOptions())]


def _texts(events: list[str]) -> str:
    return "".join(
        (choice.get("delta") or {}).get("content") or ""
        for data in events
        if data != "[DONE]"
        for choice in json.loads(data).get("choices", [])
    )


async def test_https_is_verified_against_ssl_cert_file_and_one_connection_serves_both_requests(
    fake: FakeLLMServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    fake.add(Turn(text="first"), Turn(text="second"))
    server, port, accepted = await _serve(_relay_to(fake.port), server_context(certificate))
    async with server:
        url = f"https://localhost:{port}/v1/chat/completions"
        assert _texts(await _ask(url)) == "first"
        assert _texts(await _ask(url)) == "second"
    assert len(accepted) == 1


async def test_a_certificate_the_store_does_not_trust_is_a_connection_error(
    fake: FakeLLMServer, certificate: tuple[Path, Path]
) -> None:
    server, port, _ = await _serve(_relay_to(fake.port), server_context(certificate))
    async with server:
        with pytest.raises(ProviderError) as failure:
            await _ask(f"https://localhost:{port}/v1/chat/completions")
    assert failure.value.retryable
    assert "Connection error calling https://localhost:" in str(failure.value)
    assert "CERTIFICATE_VERIFY_FAILED" in str(failure.value)
    assert fake.requests == []


async def test_https_through_an_http_proxy_goes_through_a_connect_tunnel_with_the_proxy_credentials(
    fake: FakeLLMServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bytes] = []

    async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        host, _, port = head.split(b" ")[1].decode().rpartition(":")
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    fake.add(Turn(text="tunnelled"))
    tls_server, tls_port, _ = await _serve(_relay_to(fake.port), server_context(certificate))
    proxy, proxy_port, _ = await _serve(tunnel)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    monkeypatch.setenv("HTTPS_PROXY", f"http://me:s%40cret@127.0.0.1:{proxy_port}")
    async with tls_server, proxy:
        assert _texts(await _ask(f"https://localhost:{tls_port}/v1/chat/completions")) == "tunnelled"
    (head,) = seen
    assert head.startswith(f"CONNECT localhost:{tls_port} HTTP/1.1\r\n".encode())
    assert b"Proxy-Authorization: Basic " + base64.b64encode(b"me:s@cret") in head


def _reply(body: bytes, *headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    """A request's head and body."""
    head = await reader.readuntil(b"\r\n\r\n")
    size = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return head + await reader.readexactly(size)


async def test_a_chunked_gzip_event_stream_is_decoded() -> None:
    packed = gzip.compress(
        b"data: one\r\n\r\ndata: two\ndata: lines\n\n: comment\n\nevent: end\ndata: [DONE]\n\n"
    )
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in (packed[:7], packed[7:])) + b"0\r\n\r\n"
    )

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_reply(chunked, "Transfer-Encoding: chunked", "Content-Encoding: gzip"))
        await writer.drain()

    server, port, _ = await _serve(answer)
    async with server:
        assert await _ask(f"http://127.0.0.1:{port}/v1/chat/completions") == ["one", "two\nlines", "[DONE]"]


async def test_a_kept_alive_connection_the_server_closed_meanwhile_is_replaced() -> None:
    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        body = b"data: ok\n\n"
        writer.write(_reply(body, f"Content-Length: {len(body)}"))
        await writer.drain()  # then the connection is closed, though the reply did not say so

    server, port, accepted = await _serve(answer_once)
    async with server:
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        assert await _ask(url) == ["ok"]
        await asyncio.sleep(0.05)
        assert await _ask(url) == ["ok"]
    assert len(accepted) == 2


async def test_an_https_redirect_is_followed(
    fake: FakeLLMServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.add(Turn(text="moved here"))

    async def redirect_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await _read_request(reader)
        if request.startswith(b"POST /old"):
            writer.write(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/chat/completions\r\nContent-Length: 0\r\n\r\n"
            )
            await writer.drain()
            request = await _read_request(reader)  # the same request, sent again by httpx
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", fake.port)
        upstream_writer.write(request)
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    server, port, _ = await _serve(redirect_once, server_context(certificate))
    async with server:
        assert _texts(await _ask(f"https://localhost:{port}/old")) == "moved here"
    assert fake.requests[0].body == BODY


def test_a_plain_run_does_not_import_httpx() -> None:
    probe = "import sys, tau.ai.transport.http, tau.ai.providers.openai_completions; print('httpx' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


async def test_a_malformed_chunk_size_is_one_clear_transport_error() -> None:
    """``1_0`` is no hex chunk size (Python's ``int(..., 16)`` would read it as 16)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_reply(b"1_0\r\ndata: sixteen b\n\n\r\n0\r\n\r\n", "Transfer-Encoding: chunked"))
        await writer.drain()

    server, port, _ = await _serve(answer)
    async with server:
        client = wire.Client()
        response = await client.post(f"http://127.0.0.1:{port}/v1", {}, b"{}")
        with pytest.raises(wire.TransportError, match=r"^the server's reply is not valid HTTP/1.1: "):
            await response.aread()
        await client.aclose()
    assert response.is_closed


async def test_a_body_cut_short_says_the_peer_closed_before_its_end() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_reply(b"data: par", "Content-Length: 100"))
        await writer.drain()

    server, port, _ = await _serve(answer)
    async with server:
        client = wire.Client()
        response = await client.post(f"http://127.0.0.1:{port}/v1", {}, b"{}")
        with pytest.raises(
            wire.TransportError, match=r"^peer closed connection without sending complete message body"
        ):
            await response.aread()
        await client.aclose()


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
async def test_a_body_of_several_megabytes_arrives_byte_for_byte(
    fake: FakeLLMServer, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tls: bool
) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "caf\u00e9 " * 700_000}]}
    fake.add(Turn(text="received"))
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    server, port, _ = await _serve(_relay_to(fake.port), server_context(certificate) if tls else None)
    async with server:
        url = f"{'https://localhost' if tls else 'http://127.0.0.1'}:{port}/v1/chat/completions"
        model = Model(id="m", api="openai-completions", provider="fake", base_url=url.rsplit("/", 2)[0])
        response = await open_stream(model, url, headers={}, body=body, options=StreamOptions())
        assert _texts([event.data async for event in iter_sse(response, StreamOptions())]) == "received"
    (request,) = fake.requests
    assert request.raw_body == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def _post_once(answer: Handler) -> tuple[wire.Response, bytes, list[int], wire.Client, asyncio.Server]:
    server, port, accepted = await _serve(answer)
    client = wire.Client()
    response = await client.post(f"http://127.0.0.1:{port}/v1", {"X-Test": "1"}, b"{}")
    return response, await response.aread(), accepted, client, server


async def test_an_interim_100_reply_is_skipped_and_the_final_one_read() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + _reply(b"data: ok\n\n", "Content-Length: 10"))
        await writer.drain()

    response, body, _, client, server = await _post_once(answer)
    async with server:
        assert (response.status_code, response.reason_phrase, body) == (200, "OK", b"data: ok\n\n")
        assert response.headers["content-type"] == "text/event-stream"
        await client.aclose()


async def test_a_body_that_ends_with_the_connection_is_read_whole_and_the_connection_not_kept() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_reply(b"data: one\n\n"))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"data: two\n\n")
        await writer.drain()

    response, body, _, client, server = await _post_once(answer)
    async with server:
        assert body == b"data: one\n\ndata: two\n\n"
        assert response.is_closed and client._idle == []
        await client.aclose()


async def test_a_sized_reply_keeps_its_connection_for_the_next_request() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for n in range(3):
            await _read_request(reader)
            body = b"data: %d\n\n" % n
            writer.write(_reply(body, f"Content-Length: {len(body)}"))
            await writer.drain()

    server, port, accepted = await _serve(answer)
    async with server:
        client = wire.Client()
        bodies = [
            await (await client.post(f"http://127.0.0.1:{port}/v1", {}, b"{}")).aread() for _ in range(3)
        ]
        await client.aclose()
    assert bodies == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n"] and len(accepted) == 1


async def test_bytes_after_the_end_of_a_reply_leave_the_body_whole_and_the_connection_unused() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_reply(b"data: ok\n\n", "Content-Length: 10") + b"GARBAGE\r\n\r\n")
        await writer.drain()

    _, body, _, client, server = await _post_once(answer)
    async with server:
        assert body == b"data: ok\n\n" and client._idle == []
        await client.aclose()


async def _post_to_a_server_answering(reply: bytes, then_wait_s: float = 0) -> None:
    """POST to a server that answers ``reply`` (then holds the connection ``then_wait_s``)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(reply)
        await writer.drain()
        await asyncio.sleep(then_wait_s)

    server, port, _ = await _serve(answer)
    async with server:
        client = wire.Client()
        try:
            await client.post(f"http://127.0.0.1:{port}/v1", {}, b"{}")
        finally:
            await client.aclose()


async def test_a_reply_head_over_256_kb_is_a_transport_error() -> None:
    with pytest.raises(wire.TransportError, match=r"not valid HTTP/1.1: the reply's head is over 256 KB"):
        await _post_to_a_server_answering(b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"a" * 300_000, then_wait_s=1)


async def test_a_status_line_that_is_not_http_is_a_transport_error() -> None:
    with pytest.raises(wire.TransportError, match=r"^the server's reply is not valid HTTP/1.1: "):
        await _post_to_a_server_answering(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")


@pytest.mark.parametrize(
    "name, value",
    [("X Bad", "v"), ("X-Ok", "line\r\nInjected: 1"), ("", "v"), ("X-Ok", "nul\x00"), ("X-Ok", "\u2603")],
)
async def test_a_header_http_cannot_carry_is_refused_without_quoting_it(name: str, value: str) -> None:
    client = wire.Client()
    with pytest.raises(wire.InvalidHeader, match=r"^a header is not valid HTTP$"):
        await client.post("http://127.0.0.1:9/v1", {name: value}, b"{}")
    await client.aclose()


async def test_the_request_head_carries_the_headers_and_the_body_its_length() -> None:
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(_reply(b"", "Content-Length: 0"))
        await writer.drain()

    _, body, _, client, server = await _post_once(answer)
    async with server:
        await client.aclose()
    head, _, content = seen[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1 HTTP/1.1" and content == b"{}" and body == b""
    assert {
        b"Host: 127.0.0.1:%d" % int(lines[1].rsplit(b":", 1)[1]),
        b"X-Test: 1",
        b"Content-Length: 2",
    } <= set(lines)
