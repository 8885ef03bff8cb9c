"""pi's WebSocket transport for the Codex Responses endpoint (``wss://…/codex/responses``).

pi 1.6 talks to the Codex backend over a WebSocket unless the ``transport`` setting is ``sse``: the
request is one text frame ``{"type": "response.create", ...the Responses body}`` and every answer
frame is one Responses event as JSON, up to ``response.completed`` (or ``.done``/``.incomplete``).
The handshake carries the SSE request's headers with ``OpenAI-Beta: responses_websockets=2026-02-06``
and the session id as ``session-id`` / ``x-client-request-id``.

A session keeps its socket open between calls (five idle minutes, 45 minutes at most: the backend
closes sockets after an hour), and with ``transport`` ``auto`` or ``websocket-cached`` the next call
on that socket sends only the new input items with ``previous_response_id``, when the rest of the
request is unchanged. ``previous_response_not_found`` makes one retry with the full input; a
``websocket_connection_limit_reached`` before any event one retry on a new socket.

When the socket itself fails (no ``websockets`` package, refused handshake, closed or silent
socket) before any event arrived, the call goes over HTTP/SSE instead and so does the rest of the
session, as pi does; after events arrived it is a retryable error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from msgspec import Struct, field

from tau.ai.options import StreamOptions
from tau.ai.providers.openai_responses import ResponsesEventReader
from tau.ai.stream_writer import ProviderError, StreamWriter
from tau.ai.types import JsonObject
from tau.errors import TauError

__all__ = ["OPENAI_BETA", "FallBackToSse", "stream_over_websocket", "wants_websocket", "websocket_url"]

OPENAI_BETA = "responses_websockets=2026-02-06"
_CONNECT_TIMEOUT_S = 15.0
_IDLE_TTL_S = 5 * 60.0
_MAX_AGE_S = 45 * 60.0
_FINAL_EVENTS = frozenset({"response.completed", "response.done", "response.incomplete"})
_PREVIOUS_RESPONSE_NOT_FOUND = "previous_response_not_found"
_CONNECTION_LIMIT = "websocket_connection_limit_reached"


class FallBackToSse(TauError):
    """The socket failed before any event: send the request over HTTP/SSE instead."""


class _SocketFailure(TauError):
    """The WebSocket itself failed (connect, close, silence), not the backend's answer."""


class _CodexEventError(ProviderError):
    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.code = code


class _Continuation(Struct, dict=True):
    body: JsonObject
    response_id: str
    response_items: list[JsonObject]


class _Socket(Struct, dict=True):
    connection: Any
    created: float = field(default_factory=time.monotonic)
    busy: bool = False
    expiry: asyncio.TimerHandle | None = None
    continuation: _Continuation | None = None


# (event loop, session id, account id) -> the session's open socket.
_sessions: dict[tuple[int, str, str], _Socket] = {}
_closing: set[asyncio.Task[None]] = set()
# Sessions whose socket failed once: they stay on HTTP/SSE, as in pi.
_sse_sessions: set[str] = set()


def websocket_url(http_url: str) -> str:
    if http_url.startswith("https://"):
        return "wss://" + http_url.removeprefix("https://")
    if http_url.startswith("http://"):
        return "ws://" + http_url.removeprefix("http://")
    return http_url


def wants_websocket(transport: object, session_id: str | None) -> bool:
    """Whether this call tries the WebSocket first (any transport but ``sse``, unless it failed before)."""
    return transport != "sse" and not (session_id and session_id in _sse_sessions)


async def stream_over_websocket(
    url: str,
    headers: dict[str, str],
    body: JsonObject,
    writer: StreamWriter,
    make_reader: Callable[[], ResponsesEventReader],
    options: StreamOptions,
    *,
    session_id: str | None,
    account_id: str,
    cached_context: bool,
    response_items: Callable[[], list[JsonObject]],
) -> None:
    """Run the call over the WebSocket. Raises ``FallBackToSse`` when the socket failed before any
    event; the backend's own errors are ``ProviderError``s."""
    retried_continuation = retried_limit = False
    while True:
        started = False

        def on_event() -> None:
            nonlocal started
            started = True
            writer.start()

        try:
            await _one_call(
                url, headers, body, make_reader(), options, session_id, account_id, cached_context, on_event,
                response_items,
            )  # fmt: skip
            return
        except _CodexEventError as error:
            if error.code == _PREVIOUS_RESPONSE_NOT_FOUND and not retried_continuation:
                retried_continuation = True
                continue
            if error.code == _CONNECTION_LIMIT and not started and not retried_limit:
                retried_limit = True
                continue
            raise
        except _SocketFailure as error:
            if session_id:
                _sse_sessions.add(session_id)
            if started:
                raise ProviderError(f"Connection lost while streaming: {error}", retryable=True) from error
            raise FallBackToSse(str(error)) from error


async def _one_call(
    url: str,
    headers: dict[str, str],
    body: JsonObject,
    reader: ResponsesEventReader,
    options: StreamOptions,
    session_id: str | None,
    account_id: str,
    cached_context: bool,
    on_event: Callable[[], None],
    response_items: Callable[[], list[JsonObject]],
) -> None:
    socket, cached = await _acquire(url, headers, session_id, account_id, connect_timeout_s(options))
    keep = False
    try:
        request = _with_continuation(body, cached) if cached_context and cached is not None else body
        try:
            await socket.send(json.dumps({"type": "response.create", **request}))
        except Exception as error:  # the library's connection errors: a socket failure
            raise _SocketFailure(_describe(error)) from error
        await _read_events(socket, reader, options, on_event)
        reader.finish()
        keep = cached is not None
        if cached is not None:
            response_id = reader.writer.output.response_id
            cached.continuation = (
                _Continuation(body, response_id, response_items()) if cached_context and response_id else None
            )
    finally:
        if cached is not None and keep:
            _release(cached, session_id or "", account_id)
        else:
            if cached is not None:
                _forget(cached, session_id or "", account_id)
            await _close(socket)


async def _read_events(
    socket: Any, reader: ResponsesEventReader, options: StreamOptions, on_event: Callable[[], None]
) -> None:
    idle_s = (options.idle_timeout_ms or 0) / 1000 or None
    while True:
        try:
            frame = await asyncio.wait_for(socket.recv(), idle_s)
        except TimeoutError as error:
            raise _SocketFailure(f"WebSocket idle timeout after {idle_s:g} s") from error
        except asyncio.CancelledError:
            raise
        except Exception as error:
            raise _SocketFailure(_describe(error)) from error
        text = frame.decode("utf-8", errors="replace") if isinstance(frame, bytes) else frame
        try:
            event = json.loads(text)
        except ValueError as error:
            raise ProviderError(f"Invalid Codex WebSocket JSON: {text[:200]}") from error
        if not isinstance(event, dict):
            continue
        on_event()
        kind = event.get("type")
        if kind == "error":
            nested = event.get("error")
            nested = nested if isinstance(nested, dict) else {}
            code = event.get("code") or nested.get("code")
            message = event.get("message") or nested.get("message") or code or json.dumps(event)[:200]
            raise _CodexEventError(f"Codex error: {message}", code if isinstance(code, str) else None)
        reader.handle(event)
        if kind in _FINAL_EVENTS:
            return


def _with_continuation(body: JsonObject, cached: _Socket) -> JsonObject:
    """Only the new input items, after the socket's previous response, when nothing else changed."""
    previous = cached.continuation
    cached.continuation = None
    if previous is None:
        return body
    rest = {k: v for k, v in body.items() if k not in ("input", "previous_response_id")}
    before = {k: v for k, v in previous.body.items() if k not in ("input", "previous_response_id")}
    baseline = [*(previous.body.get("input") or []), *previous.response_items]
    current = body.get("input") or []
    if rest != before or len(current) < len(baseline) or current[: len(baseline)] != baseline:
        return body
    return {**body, "previous_response_id": previous.response_id, "input": current[len(baseline) :]}


# --- sockets ----------------------------------------------------------------------------------------


async def _acquire(
    url: str, headers: dict[str, str], session_id: str | None, account_id: str, timeout_s: float | None
) -> tuple[Any, _Socket | None]:
    """A socket for the call, and its cache entry when the session keeps it."""
    if not session_id:
        return await _connect(url, headers, timeout_s), None
    key = (id(asyncio.get_running_loop()), session_id, account_id)
    cached = _sessions.get(key)
    if cached is not None and not cached.busy:
        if cached.expiry is not None:
            cached.expiry.cancel()
            cached.expiry = None
        if time.monotonic() - cached.created < _MAX_AGE_S and _is_open(cached.connection):
            cached.busy = True
            return cached.connection, cached
        del _sessions[key]
        await _close(cached.connection)
    elif cached is not None:  # another call of the session is streaming: a socket of its own
        return await _connect(url, headers, timeout_s), None
    entry = _Socket(await _connect(url, headers, timeout_s), busy=True)
    _sessions[key] = entry
    return entry.connection, entry


def connect_timeout_s(options: StreamOptions) -> float | None:
    """``websocket_connect_timeout_ms`` (settings' ``websocketConnectTimeoutMs``; 0 = no limit) in
    seconds, else 15 s as in pi."""
    value = options.extra.get("websocket_connect_timeout_ms")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value / 1000 if value > 0 else None
    return _CONNECT_TIMEOUT_S


async def _connect(url: str, headers: dict[str, str], timeout_s: float | None = _CONNECT_TIMEOUT_S) -> Any:
    try:
        from websockets.asyncio.client import connect
    except ImportError as error:
        raise _SocketFailure("the websockets package is not installed") from error
    try:
        return await connect(
            url, additional_headers=headers, open_timeout=timeout_s, max_size=None, compression=None
        )
    except Exception as error:  # refused, handshake rejected, DNS, TLS: all mean "use SSE"
        raise _SocketFailure(_describe(error)) from error


def _release(entry: _Socket, session_id: str, account_id: str) -> None:
    entry.busy = False
    loop = asyncio.get_running_loop()
    key = (id(loop), session_id, account_id)

    def expire() -> None:
        if _sessions.get(key) is entry and not entry.busy:
            del _sessions[key]
            closing = loop.create_task(_close(entry.connection))
            _closing.add(closing)
            closing.add_done_callback(_closing.discard)

    entry.expiry = loop.call_later(_IDLE_TTL_S, expire)


def _forget(entry: _Socket, session_id: str, account_id: str) -> None:
    key = (id(asyncio.get_running_loop()), session_id, account_id)
    if _sessions.get(key) is entry:
        del _sessions[key]


def _is_open(connection: Any) -> bool:
    from websockets.protocol import State

    return bool(connection.state is State.OPEN)


async def _close(connection: Any) -> None:
    try:
        await asyncio.wait_for(connection.close(), 2)
    except Exception:  # closing is best effort: the socket is given up either way
        return


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return " ".join(text.split())[:300]
