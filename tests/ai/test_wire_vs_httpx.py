"""``tau.ai.transport.wire`` sends what httpx sends and reads what httpx reads: the same POSTs go through
both clients to one real server, which answers each in the framing the test asks for (sized,
chunked in any pieces, ended by closing the connection; gzip or not)."""

from __future__ import annotations

import asyncio
import base64
import gzip
import itertools
import json
import socketserver
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.ai.transport import wire
from tau.testing.fake_llm import FakeLLMServer, Turn


class _Handler(socketserver.StreamRequestHandler):
    """Reads POSTs on one connection and answers each as its JSON body says; records what it got."""

    def handle(self) -> None:
        while True:
            request_line = self.rfile.readline()
            if not request_line.strip():
                return
            headers: dict[str, str] = {}
            while (line := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = self.rfile.read(int(headers.get("content-length", "0")))
            self.server.seen.append((request_line.decode("latin-1").split()[:2], headers, body))  # type: ignore[attr-defined]
            if not self._answer(json.loads(body)):
                return

    def _answer(self, spec: dict[str, Any]) -> bool:
        payload = base64.b64decode(spec["payload"])
        if spec["gzip"]:
            payload = gzip.compress(payload)
        head = [f"HTTP/1.1 {spec['status']} Whatever", "Content-Type: text/event-stream", "X-Echo: same"]
        if spec["gzip"]:
            head.append("Content-Encoding: gzip")
        framing = spec["framing"]
        if framing == "length":
            head.append(f"Content-Length: {len(payload)}")
        elif framing == "chunked":
            head.append("Transfer-Encoding: chunked")
        else:
            head.append("Connection: close")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if framing != "chunked":
            self.wfile.write(payload)
            return framing == "length"
        cuts = sorted({c % (len(payload) + 1) for c in spec["cuts"]} | {0, len(payload)})
        for start, end in itertools.pairwise(cuts):
            if end > start:
                self.wfile.write(f"{end - start:x}\r\n".encode() + payload[start:end] + b"\r\n")
                self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        return True


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[list[str], dict[str, str], bytes]] = []


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    with _Server() as running:
        thread = threading.Thread(target=running.serve_forever, daemon=True)
        thread.start()
        yield running
        running.shutdown()


_COMPARED_REQUEST_HEADERS = ("host", "content-length", "content-type", "authorization", "x-api-key")


async def _through_both(url: str, headers: dict[str, str], body: bytes) -> list[tuple[int, str, str, bytes]]:
    client = wire.Client()
    try:
        reply = await client.post(url, headers, body)
        ours = (
            reply.status_code,
            reply.headers.get("content-type", ""),
            reply.headers["x-echo"],
            await reply.aread(),
        )
    finally:
        await client.aclose()
    async with httpx.AsyncClient(trust_env=False) as reference:
        answer = await reference.post(url, headers=headers, content=body)
        theirs = (
            answer.status_code,
            answer.headers["content-type"],
            answer.headers["x-echo"],
            answer.content,
        )
    return [ours, theirs]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payload=st.binary(max_size=3000),
    framing=st.sampled_from(["length", "chunked", "close"]),
    compressed=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=8),
    status=st.sampled_from([200, 400, 429, 500]),
    path=st.sampled_from(["/v1/chat/completions", "/v1beta/models/m:streamGenerateContent?alt=sse"]),
    key=st.text(alphabet="abcdefXYZ0123456789-_", min_size=1, max_size=20),
)
def test_the_same_post_is_sent_and_read_alike_by_wire_and_httpx(
    server: _Server,
    payload: bytes,
    framing: str,
    compressed: bool,
    cuts: list[int],
    status: int,
    path: str,
    key: str,
) -> None:
    spec = {
        "payload": base64.b64encode(payload).decode(),
        "gzip": compressed,
        "framing": framing,
        "cuts": cuts,
        "status": status,
    }
    body = json.dumps(spec).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}", "x-api-key": key}
    host, port = server.server_address[:2]
    server.seen.clear()
    ours, theirs = asyncio.run(_through_both(f"http://{host}:{port}{path}", headers, body))
    assert ours == theirs
    assert ours[3] == payload
    (our_line, our_headers, our_body), (their_line, their_headers, their_body) = server.seen
    assert our_line == their_line == ["POST", path]
    assert our_body == their_body == body
    for name in _COMPARED_REQUEST_HEADERS:
        assert our_headers.get(name) == their_headers.get(name), name


def test_a_provider_stream_from_the_fake_server_reads_the_same_through_both() -> None:
    body = json.dumps(
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer k"}

    async def both(url: str) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
        client = wire.Client()
        try:
            reply = await client.post(url, headers, body)
            ours = (reply.status_code, await reply.aread())
        finally:
            await client.aclose()
        async with httpx.AsyncClient(trust_env=False) as reference:
            answer = await reference.post(url, headers=headers, content=body)
            return ours, (answer.status_code, answer.content)

    with FakeLLMServer() as fake:
        fake.add(
            Turn(text="hello from the fake server, " * 40), Turn(text="hello from the fake server, " * 40)
        )
        ours, theirs = asyncio.run(both(fake.url("/v1/chat/completions")))
    assert ours[0] == theirs[0] == 200
    assert _without_ids(ours[1]) == _without_ids(theirs[1])
    assert b"hello" in ours[1]


def _without_ids(stream: bytes) -> list[Any]:
    """The stream's events with the per-reply fields (id, created) taken out."""
    events = []
    for line in stream.splitlines():
        if line.startswith(b"data: {"):
            event = json.loads(line[6:])
            event.pop("id", None)
            event.pop("created", None)
            events.append(event)
        elif line:
            events.append(line.decode())
    return events
