"""A fake LLM server on 127.0.0.1 speaking the streaming wire protocols tau calls.

It answers each POST with the next scripted ``Turn``, rendered in the protocol the path asks for:

=================================  =======================
path ends with                     protocol
=================================  =======================
``/mistral/v1/chat/completions``   Mistral chat
``/chat/completions``              OpenAI Chat Completions (``stream: false``: one JSON answer,
                                   with images for OpenRouter's ``modalities``)
``/openai/v1/responses``           Azure OpenAI Responses
``/openai/responses``              Azure OpenAI Responses
``/codex/responses``               ChatGPT Codex Responses
``/responses``                     OpenAI Responses
``/pi/v1/messages``                pi-messages (the Radius gateway)
``/messages``                      Anthropic Messages
``/v1internal:streamGen…``         Cloud Code Assist (Gemini CLI, Antigravity)
``/publishers/google/models/…``    Vertex AI (checks credentials: ``server.google``)
``:streamGenerateContent``         Google Generative AI
``/converse-stream``               Amazon Bedrock ConverseStream
``/systemone``                     TypeSafe System One classification (one JSON answer)
``/run``                           Cloudflare Workers AI System One classification
``/decisions``                     OpenAI Decisions classification (one JSON answer)
=================================  =======================

A protocol may refuse a request before any turn is used (its ``reject``), as the real service
would: Mistral's tool-call id rules, Codex's required headers, Azure's credentials,
Bedrock's SigV4 signature; Vertex's credentials are checked against ``server.google`` (its
``check_credentials``).

``server.google`` also serves Google's OAuth token endpoint at ``server.url(TOKEN_PATH)``
(``fake_llm.google_auth``).

With ``codex_websocket`` set, the Codex path also accepts pi's WebSocket transport (a ``GET`` upgrade;
``fake_llm.websocket``): each ``response.create`` frame is recorded as a request (method
``WEBSOCKET``, the handshake's headers) and answered with the next turn. Unset, the upgrade is
refused (404), as by a backend without it, and the client falls back to HTTP/SSE.

Given a server-side TLS context (``FakeLLMServer(tls=context)``) it serves https on
``https://localhost:<port>``.

Every request is recorded (path, headers, JSON body). Faults (error statuses with ``Retry-After``,
cut connections, stalls, malformed events) come from ``Turn.fault``. Use it as a context manager::

    with FakeLLMServer() as server:
        server.add(Turn(text="hello"))
        model = Model(id="m", api="openai-completions", provider="fake", base_url=server.url("/v1"))
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from msgspec.structs import replace

from tau.testing.fake_llm.google_auth import TOKEN_PATH, FakeGoogleAuth
from tau.testing.fake_llm.script import Fault, RecordedRequest, Turn, TurnSource

if TYPE_CHECKING:
    import ssl

_ROUTES: tuple[tuple[str, str, str], ...] = (
    ("/mistral/v1/chat/completions", "mistral-conversations", "tau.testing.fake_llm.mistral"),
    ("/chat/completions", "openai-completions", "tau.testing.fake_llm.openai_completions"),
    # Cloudflare AI Gateway's OpenAI route (/v1/{account}/{gateway}/openai), not Azure's.
    ("/v1/*/*/openai/responses", "openai-responses", "tau.testing.fake_llm.openai_responses"),
    ("/openai/v1/responses", "azure-openai-responses", "tau.testing.fake_llm.azure_openai_responses"),
    ("/openai/responses", "azure-openai-responses", "tau.testing.fake_llm.azure_openai_responses"),
    ("/codex/responses", "openai-codex-responses", "tau.testing.fake_llm.openai_codex_responses"),
    ("/responses", "openai-responses", "tau.testing.fake_llm.openai_responses"),
    ("/pi/v1/messages", "pi-messages", "tau.testing.fake_llm.pi_messages"),
    ("/messages", "anthropic-messages", "tau.testing.fake_llm.anthropic"),
    ("/v1internal:streamGenerateContent", "google-gemini-cli", "tau.testing.fake_llm.google_cloud_code"),
    (
        "*/publishers/google/models/*:streamGenerateContent",
        "google-vertex",
        "tau.testing.fake_llm.google_vertex",
    ),
    (":streamGenerateContent", "google-generative-ai", "tau.testing.fake_llm.google"),
    ("/converse-stream", "bedrock-converse-stream", "tau.testing.fake_llm.bedrock"),
    ("/systemone", "typesafe-system-one", "tau.testing.fake_llm.system_one"),
    ("/run", "cloudflare-workers-ai-system-one", "tau.testing.fake_llm.system_one"),
    ("/decisions", "openai-decisions", "tau.testing.fake_llm.openai_decisions"),
)


def _route(path: str) -> tuple[str, ModuleType] | None:
    """The first route whose suffix (or ``*`` pattern) matches ``path``."""
    for suffix, api, module_path in _ROUTES:
        if fnmatch.fnmatchcase(path, suffix) if "*" in suffix else path.endswith(suffix):
            return api, importlib.import_module(module_path)
    return None


_CHUNK_BYTES = 64 * 1024


class FakeLLMServer:
    """A scripted HTTP server; start it with ``start()`` or ``with``."""

    def __init__(
        self, turns: Iterable[TurnSource] = (), *, port: int = 0, tls: ssl.SSLContext | None = None
    ) -> None:
        """``tls``, a server-side context, makes it an https server (its ``base_url`` names
        ``localhost``, which the test's certificate must be for)."""
        self._turns: deque[TurnSource] = deque(turns)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.google = FakeGoogleAuth()
        self.codex_websocket = False
        self.websocket_attempts = 0  # upgrade requests on the Codex path, accepted or not
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self
        self._tls = tls is not None
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"https://localhost:{self.port}" if self._tls else f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "") -> str:
        """``base_url`` joined with ``path`` (e.g. ``"/v1"``)."""
        return self.base_url + path

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            # A short poll interval: ``shutdown()`` waits up to one interval, once per test.
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script --------------------------------------------------------------------------------

    def add(self, *turns: TurnSource) -> None:
        """Queue turns (or callables that build a turn from the request)."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_turn(self, request: RecordedRequest) -> Turn | None:
        with self._lock:
            self.requests.append(request)
            source = self._turns.popleft() if self._turns else None
        if source is None or isinstance(source, Turn):
            return source
        return source(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 overflows when a test opens many connections at once on a
    # loaded machine (the parity test sends 16 at a time); a provider's server queues far more.
    request_queue_size = 128
    owner: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (aborts, dropped keep-alive connections) are part of the tests.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        route = _route(parts.path)
        owner = self.server.owner
        upgrade = self.headers.get("upgrade", "").lower() == "websocket"
        if upgrade and route is not None and route[0] == "openai-codex-responses":
            with owner._lock:
                owner.websocket_attempts += 1
            if owner.codex_websocket:
                self._serve_websocket(parts.path, parts.query, route[1])
                return
        self._send_json(404, {"error": {"message": f"fake server: no GET route for {self.path}"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(_decoded(raw, self.headers.get("content-encoding"))) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        parts = urlsplit(self.path)
        if parts.path == TOKEN_PATH:
            self._send_json(*owner.google.token_response(raw, owner.url(TOKEN_PATH)))
            return
        route = _route(parts.path)
        request = RecordedRequest(
            method="POST",
            path=parts.path,
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            api=route[0] if route else "",
            client_port=int(self.client_address[1]),
            raw_body=raw,
        )
        refusal = route[1].reject(request) if route is not None and hasattr(route[1], "reject") else None
        if refusal is None and route is not None and hasattr(route[1], "check_credentials"):
            refusal = route[1].check_credentials(request, owner.google)
        if refusal is not None:
            owner._record(request)
            self._send_json(*refusal)
            return
        turn = owner._next_turn(request)
        if route is None:
            self._send_json(404, {"error": {"message": f"fake server: no route for {parts.path}"}})
            return
        protocol = route[1]
        if turn is None:
            self._send_json(500, protocol.error_body(500, "fake server: no scripted turn left"))
            return
        fault = turn.fault
        if fault is not None and fault.kind == "close_before_headers":
            self._drop_connection()
            return
        if fault is not None and fault.kind == "status":
            self._send_fault_status(protocol, fault)
            return
        answer = protocol.answer(turn, request) if hasattr(protocol, "answer") else None
        if answer is not None:
            # A whole answer has no events: a stall delays it, a cut drops the connection instead.
            if fault is not None and fault.kind == "stall" and owner._stopping.wait(fault.seconds):
                return
            if fault is not None and fault.kind == "cut":
                self._drop_connection()
                return
            self._send_json(200, answer, turn.headers)
            return
        self._stream(protocol.render(turn, request), turn, protocol)

    def _serve_websocket(self, path: str, query: str, protocol: ModuleType) -> None:
        import tau.testing.fake_llm.websocket as websocket

        owner = self.server.owner
        handshake = RecordedRequest(
            method="GET",
            path=path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=None,
            api="openai-codex-responses",
            client_port=int(self.client_address[1]),
        )
        refusal = protocol.reject(replace(handshake, body={"store": False}))
        if refusal is not None:
            self._send_json(*refusal)
            return
        if not websocket.handshake_ok(self):
            return
        self.close_connection = True
        try:
            websocket.serve_codex(self, handshake, owner._next_turn, protocol.render)
        except (OSError, ValueError):
            return

    # -- responses -----------------------------------------------------------------------------

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = data.encode() if isinstance(data, str) else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_fault_status(self, protocol: ModuleType, fault: Fault) -> None:
        body = fault.body
        if body is None:
            body = protocol.error_body(fault.status, f"fake server error {fault.status}")
        if hasattr(protocol, "error_headers"):
            fault = replace(fault, headers={**protocol.error_headers(fault.status), **fault.headers})
        if body == "":
            self.send_response(fault.status)
            self.send_header("content-length", "0")
            for key, value in fault.headers.items():
                self.send_header(key, value)
            self.end_headers()
            return
        self._send_json(fault.status, body, fault.headers)

    def _stream(self, frames: Iterator[bytes], turn: Turn, protocol: ModuleType) -> None:
        fault = turn.fault
        stopping = self.server.owner._stopping
        self.send_response(200)
        self.send_header("content-type", getattr(protocol, "CONTENT_TYPE", "text/event-stream"))
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for key, value in turn.headers.items():
            self.send_header(key, value)
        self.end_headers()
        # Frames are gathered into one HTTP chunk of up to 64 KB: one write per frame would make the
        # server, not the client under test, the bottleneck. Faults flush first, so they still land
        # exactly after ``after_events`` frames.
        pending = bytearray()
        pace = 1 / turn.frames_per_second if turn.frames_per_second else 0.0
        started = time.monotonic()
        try:
            for index, frame in enumerate(frames):
                if pace and (wait := started + index * pace - time.monotonic()) > 0:
                    self._write_chunk(pending)
                    self.wfile.flush()
                    if stopping.wait(wait):
                        return
                if fault is not None and index == fault.after_events:
                    self._write_chunk(pending)
                    if fault.kind == "cut":
                        self._drop_connection()
                        return
                    if fault.kind == "truncate":
                        break
                    if fault.kind == "stall":
                        self.wfile.flush()
                        if stopping.wait(fault.seconds):
                            return
                    if fault.kind == "malformed":
                        pending += getattr(protocol, "MALFORMED_FRAME", b"data: {not json\n\n")
                pending += frame
                if len(pending) >= _CHUNK_BYTES:
                    self._write_chunk(pending)
            self._write_chunk(pending)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _write_chunk(self, pending: bytearray) -> None:
        """Send ``pending`` as one HTTP chunk and empty it."""
        if pending:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(pending), pending))
            pending.clear()

    def _drop_connection(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def sse_frame(data: Any, event: str | None = None) -> bytes:
    """One server-sent event with a JSON ``data`` line (and an ``event`` line if given)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _decoded(raw: bytes, encoding: str | None) -> bytes:
    """The body as sent before its ``content-encoding`` (pi's Codex bodies come zstd-compressed)."""
    if encoding == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    return raw
