"""HTTP for providers: pooled clients, error statuses as readable messages, SSE with an idle timeout.

One client per (event loop, base URL), so connections are reused across calls to the same server:
``tau.ai.transport.wire`` (HTTP/1.1 on asyncio streams), or httpx where that does not reach (a proxy other than
``http://``, a redirect of an https request), imported only then. Nothing is retried unless the caller asks (``max_retries``); a ``Retry-After`` longer
than ``max_retry_delay_ms`` fails at once with the requested delay in the message. Requests that
cannot succeed when sent again (a base URL without ``http(s)://``, a header value HTTP does not
allow, such as a key ending in ``\r``) fail at once, naming the URL or the header, never its value.
The credential headers of each request are registered with ``tau.ai.redaction``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import socket
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from tau.ai.options import ResponseInfo, StreamEventHook, StreamOptions, payload_hook_wanted
from tau.ai.redaction import register_secret
from tau.ai.stream_writer import ProviderError
from tau.ai.transport import wire
from tau.ai.transport.request_cache import encode_body, expose_body
from tau.ai.transport.sse import EventStreamParser, ServerSentEvent
from tau.ai.types import JsonObject, Model

if TYPE_CHECKING:
    import httpx

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_MAX_ERROR_BODY = 4000
_CONNECT_TIMEOUT_S = 30.0
_WRITE_TIMEOUT_S = 60.0
_DRAIN_SECONDS = 0.25
_DRAIN_CHUNKS = 16
# Header names whose values are credentials (authorization, x-api-key, x-goog-api-key, ...).
_CREDENTIAL_HEADER_WORDS = ("auth", "key", "token", "secret")
# What a header value may hold: visible ASCII, spaces and tabs (what h11 accepts, less obs-text).
_NOT_HEADER_TEXT = r"[^\t\x20-\x7e]"

_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Client]] = weakref.WeakKeyDictionary()


def environment_proxy(base_url: str) -> str | None:
    """The proxy ``HTTP_PROXY`` / ``HTTPS_PROXY`` name for ``base_url``, unless ``NO_PROXY`` exempts
    its host. (An explicit transport makes httpx ignore these variables, so they are read here.)"""
    import os

    if not any(name[-6:].lower() == "_proxy" for name in os.environ):
        return None  # urllib.request costs more to import than most requests take to start
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(base_url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


class _Client:
    """The connections for one base URL: ``tau.ai.transport.wire``'s, and httpx's once a request needs it."""

    def __init__(self, base_url: str) -> None:
        self.proxy = environment_proxy(base_url)
        # Plain HTTP (local servers): no TLS, so no certificate store to build (~70 ms), and no
        # redirect followed, which could lead to an unverified https host.
        self.follow_redirects = not base_url.startswith("http://")
        self.lean = self.proxy is None or self.proxy.lower().startswith("http://")
        self.wire = wire.Client(
            proxy=self.proxy if self.lean else None,
            verify=self.follow_redirects,
            connect_timeout_s=_CONNECT_TIMEOUT_S,
            write_timeout_s=_WRITE_TIMEOUT_S,
        )
        self.httpx: httpx.AsyncClient | None = None
        self.is_closed = False

    async def post(self, url: str, headers: dict[str, str], content: bytes) -> wire.Response:
        if self.lean:
            response = await self.wire.post(url, headers, content)
            if not (self.follow_redirects and wire.is_redirect(response)):
                return response
            await response.aclose()
        return await self._post_with_httpx(url, headers, content)

    async def _post_with_httpx(self, url: str, headers: dict[str, str], content: bytes) -> wire.Response:
        from tau.ai.transport import httpx_transport

        if self.httpx is None:
            self.httpx = httpx_transport.make_client(
                self.proxy, verify=self.follow_redirects, follow_redirects=self.follow_redirects,
                connect_timeout_s=_CONNECT_TIMEOUT_S, write_timeout_s=_WRITE_TIMEOUT_S,
            )  # fmt: skip
        return await httpx_transport.post(self.httpx, url, headers, content)

    async def aclose(self) -> None:
        self.is_closed = True
        await self.wire.aclose()
        if self.httpx is not None:
            await self.httpx.aclose()


def get_client(base_url: str) -> _Client:
    """The pooled client for ``base_url`` on the running event loop."""
    loop = asyncio.get_running_loop()
    pool = _pools.setdefault(loop, {})
    client = pool.get(base_url)
    if client is None or client.is_closed:
        client = _Client(base_url)
        pool[base_url] = client
    return client


async def close_clients() -> None:
    """Close the pooled clients of the running loop (call before the loop ends)."""
    pool = _pools.pop(asyncio.get_running_loop(), {})
    for client in pool.values():
        await client.aclose()


class HttpStatusError(ProviderError):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str, retry_after_s: float | None, body: str = "") -> None:
        super().__init__(message, retryable=status in RETRYABLE_STATUSES)
        self.status = status
        self.retry_after_s = retry_after_s
        self.body = body
        """The start of the response body, for providers that read more than the message from it."""


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        import email.utils

        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def error_message_from_body(status: int, body: str) -> str:
    """``"<status> <provider's message>"``, or ``"<status> status code (no body)"``."""
    text = body.strip()
    if not text:
        return f"{status} status code (no body)"
    try:
        data = json.loads(text)
    except ValueError:
        return f"{status} {text[:_MAX_ERROR_BODY]}"
    message = _find_message(data)
    if message:
        return f"{status} {message}"
    return f"{status} {text[:_MAX_ERROR_BODY]}"


def _find_message(data: Any) -> str | None:
    if isinstance(data, list) and data:
        return _find_message(data[0])
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            metadata = error.get("metadata")
            raw = metadata.get("raw") if isinstance(metadata, dict) else None
            return f"{message}\n{raw}" if isinstance(raw, str) and raw else message
    if isinstance(error, str) and error:
        return error
    message = data.get("message") or data.get("detail")  # FastAPI-style servers (ChatGPT's) say "detail"
    return message if isinstance(message, str) and message else None


def unresolved_host(exc: BaseException) -> bool:
    """Whether the failure behind ``exc`` is a host name that did not resolve (a cloud's regional
    host exists only for its regions, so a provider can name the region that was tried)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, socket.gaierror):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def merge_headers(*layers: dict[str, str] | None) -> dict[str, str]:
    """Merge header dicts case-insensitively; later layers win."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            merged[key.lower()] = (key, value)
    return dict(merged.values())


async def apply_payload_hook(payload: JsonObject, model: Model, options: StreamOptions) -> JsonObject:
    """Let ``on_payload`` inspect or replace the request body (unless it says it has nothing to do)."""
    if options.on_payload is None or not payload_hook_wanted(options.on_payload):
        return payload
    expose_body(payload)  # the hook may edit it in place
    result = options.on_payload(payload, model)
    if inspect.isawaitable(result):
        result = await result
    return result if isinstance(result, dict) else payload


async def apply_headers_hook(headers: dict[str, str], model: Model, options: StreamOptions) -> dict[str, str]:
    """The headers after ``on_headers`` changed them in place (a ``None`` value removes one)."""
    hook = options.on_headers
    wants = getattr(hook, "wants_headers", None)
    if hook is None or (wants is not None and not wants()):
        return headers
    editable: dict[str, str | None] = dict(headers)
    result = hook(editable, model)
    if inspect.isawaitable(result):
        await result
    kept: dict[str, tuple[str, str]] = {}  # case-insensitive, in order: a later spelling wins
    for key, value in editable.items():
        if value is None:
            kept.pop(str(key).lower(), None)
        else:
            kept[str(key).lower()] = (str(key), str(value))
    return dict(kept.values())


async def notify_stream_event(hook: StreamEventHook, data: Any, model: Model) -> None:
    """Show one parsed stream event to ``hook`` (see ``stream_event_hook``)."""
    result = hook(data, model)
    if inspect.isawaitable(result):
        await result


async def _sleep_abortable(seconds: float, options: StreamOptions) -> None:
    if options.signal is None:
        await asyncio.sleep(seconds)
        return
    waiter = asyncio.ensure_future(options.signal.wait())
    try:
        await asyncio.wait_for(asyncio.shield(waiter), timeout=seconds)
    except TimeoutError:
        return
    finally:
        waiter.cancel()
    raise asyncio.CancelledError


async def open_stream(
    model: Model,
    url: str,
    *,
    headers: dict[str, str],
    body: JsonObject,
    options: StreamOptions,
    client_key: str | None = None,
    should_retry: Callable[[int, str], bool] | None = None,
    compress: Callable[[bytes], tuple[bytes, str] | None] | None = None,
) -> wire.Response:
    """POST ``body`` and return the streaming response once a success status arrived.

    ``compress`` may turn the encoded body into other bytes and the ``content-encoding`` naming them
    (``None``: the body goes as it is).

    Error statuses raise ``HttpStatusError`` with the provider's message. Retries (only when
    ``options.max_retries`` > 0) re-send the same bytes after a retryable status or a connection
    failure before any response, honouring ``Retry-After`` up to ``options.max_retry_delay_ms``.
    ``options.timeout_ms`` bounds each attempt's wait for the response headers. ``should_retry``
    (status, body) can veto retrying a retryable status, e.g. a 429 that means a spent quota.
    """
    client = get_client(client_key or model.base_url)
    cap_s = options.max_retry_delay_ms / 1000 if options.max_retry_delay_ms else None
    attempt = 0
    content = encode_body(body)
    request_headers = merge_headers({"content-type": "application/json"}, headers)
    packed = compress(content) if compress is not None else None
    if packed is not None:
        content, encoding = packed
        request_headers = merge_headers(request_headers, {"content-encoding": encoding})
    if options.on_headers is not None:
        request_headers = await apply_headers_hook(request_headers, model, options)
    _check_headers(request_headers)
    while True:
        try:
            response = await _send(client, url, request_headers, content, options.timeout_ms)
        except ProviderError:
            if attempt >= options.max_retries:
                raise
            attempt += 1
            await _sleep_abortable(_backoff_s(attempt), options)
            continue
        if options.on_response is not None:
            hook = options.on_response(ResponseInfo(response.status_code, dict(response.headers)), model)
            if inspect.isawaitable(hook):
                await hook
        if response.status_code < 400:
            return response
        raw = await _read_bounded(response, options.idle_timeout_ms or options.timeout_ms)
        await response.aclose()
        retry_after = parse_retry_after(response.headers)
        message = error_message_from_body(response.status_code, raw)
        if retry_after is not None and cap_s is not None and retry_after > cap_s:
            raise HttpStatusError(
                response.status_code,
                f"{message} (the server asked to retry after {_duration(retry_after)}, longer than the "
                f"retry delay cap of {cap_s:g} s set by max_retry_delay_ms)",
                retry_after,
                raw,
            )
        retryable = response.status_code in RETRYABLE_STATUSES and (
            should_retry is None or should_retry(response.status_code, raw)
        )
        if attempt >= options.max_retries or not retryable:
            if retry_after is not None:
                message = f"{message} (retry after {retry_after:g} s)"
            raise HttpStatusError(response.status_code, message, retry_after, raw)
        attempt += 1
        await _sleep_abortable(retry_after if retry_after is not None else _backoff_s(attempt), options)


async def _send(
    client: _Client, url: str, headers: dict[str, str], content: bytes, timeout_ms: int | None
) -> wire.Response:
    """One POST, up to the response headers; failures to get there become retryable errors, except
    those that the same request would meet again (an invalid URL, a header HTTP cannot carry)."""
    try:
        async with asyncio.timeout(timeout_ms / 1000 if timeout_ms else None):
            return await client.post(url, headers, content)
    except TimeoutError as exc:
        raise ProviderError(
            f"Request timed out after {timeout_ms} ms waiting for the first byte of a response from {url}",
            retryable=True,
        ) from exc
    except wire.ConnectTimeout as exc:
        raise ProviderError(f"Request timed out connecting to {url}: {exc}", retryable=True) from exc
    except wire.UnsupportedProtocol as exc:
        raise ProviderError(
            f"Invalid base URL in {url!r}: it must start with http:// or https://; fix the provider's baseUrl"
        ) from exc
    except wire.InvalidURL as exc:
        raise ProviderError(f"Invalid base URL in {url!r}: {exc}; fix the provider's baseUrl") from exc
    except wire.InvalidHeader as exc:
        # The offending value is usually a key: it is never quoted.
        raise ProviderError(
            "Invalid request: a header is not valid HTTP (a line break or control character in a key "
            "or a configured header?)"
        ) from exc
    except wire.TransportError as exc:
        raise ProviderError(
            f"Connection error calling {url}: {exc or type(exc).__name__}", retryable=True
        ) from exc


def _check_headers(headers: dict[str, str]) -> None:
    """Register the credential headers' values as secrets, and refuse any value HTTP cannot carry
    (control characters, non-ASCII), naming the header but not its value."""
    for name, value in headers.items():
        lowered = name.lower()
        if any(word in lowered for word in _CREDENTIAL_HEADER_WORDS):
            register_secret(value)
            register_secret(value.rpartition(" ")[2])  # the token of "Bearer <token>"
        bad = None if value.isascii() and value.isprintable() else re.search(_NOT_HEADER_TEXT, value)
        if bad is not None:
            kind = (
                "a non-ASCII character" if not bad.group().isascii() else "a line break or control character"
            )
            raise ProviderError(
                f'Invalid request header "{name}": its value contains {kind}; check the API key '
                "or the headers configured for this provider"
            )


def _backoff_s(attempt: int) -> float:
    """Wait before re-sending attempt ``attempt`` (1-based) when the server named no time: 1 s, 2 s, 4 s…"""
    return min(2.0 ** (attempt - 1), 30.0)


def _duration(seconds: float) -> str:
    """``"259200 s (3 days)"``: the exact seconds, and a readable form once that is not obvious."""
    exact = f"{seconds:g} s"
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{exact} ({seconds / size:.3g} {unit})"
    return exact


async def _read_bounded(response: wire.Response, limit_ms: int | None) -> str:
    """The start of an error response's body: what arrived within ``limit_ms`` and before the
    connection broke, so a server that sends an error status and then stalls cannot hang the call."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(limit_ms / 1000 if limit_ms else None):
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > _MAX_ERROR_BODY * 4:
                    break
    except (TimeoutError, wire.TransportError):
        pass  # the status alone still makes a useful error
    return b"".join(chunks).decode("utf-8", errors="replace")


async def iter_sse(response: wire.Response, options: StreamOptions) -> AsyncGenerator[ServerSentEvent, None]:
    """Server-sent events of ``response``; a gap longer than the idle timeout raises a retryable error.

    The timer counts events, not bytes: keep-alive comments do not keep a dead stream alive.
    """
    async with aclosing(iter_sse_batches(response, options)) as batches:
        async for events in batches:
            for event in events:
                yield event


async def iter_sse_batches(
    response: wire.Response, options: StreamOptions
) -> AsyncGenerator[list[ServerSentEvent], None]:
    """``iter_sse``'s events, a list at a time: those each piece of the body completes. A caller
    that handles a list in a plain loop spends no generator step per event (a piece of a stream
    of small deltas holds hundreds of them)."""
    content_type = response.headers.get("content-type", "").partition(";")[0]
    if "text/event-stream" not in content_type:
        await response.aclose()
        raise ProviderError(
            "Unexpected response: Expected response header Content-Type to contain 'text/event-stream', "
            f"got {content_type!r}"
        )
    idle_s = (options.idle_timeout_ms or 0) / 1000 or None
    chunks = cast(AsyncGenerator[bytes, None], response.aiter_bytes())  # an async generator, as typed here
    parser = EventStreamParser()
    watchdog = _IdleWatchdog(idle_s) if idle_s else None
    stopped_early = False
    try:
        ended = False
        while not ended:
            try:
                events = parser.feed(await anext(chunks))
            except StopAsyncIteration:
                events = parser.close()
                ended = True
            except asyncio.CancelledError as exc:
                if watchdog is not None and watchdog.consume_timeout():
                    raise ProviderError(
                        f"Stream idle timeout: no data from the provider for {idle_s:g} s (timed out)",
                        retryable=True,
                    ) from exc
                raise
            except wire.TransportError as exc:
                raise ProviderError(
                    f"Connection lost while streaming: {exc or type(exc).__name__}", retryable=True
                ) from exc
            if not events:
                continue
            if watchdog is not None:
                watchdog.last_event = watchdog.loop.time()
            try:
                yield events
            except GeneratorExit:
                stopped_early = True
                raise
    finally:
        if watchdog is not None:
            watchdog.stop()
        if stopped_early:
            await _drain(chunks)
        await chunks.aclose()
        await response.aclose()


async def _drain(chunks: AsyncGenerator[bytes, None]) -> None:
    """Read what little follows the protocol's last event (usually just the end of the body), so the
    connection goes back to the pool instead of being closed. Bounded in time and reads."""
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            for _ in range(_DRAIN_CHUNKS):
                await anext(chunks)
    except (StopAsyncIteration, TimeoutError, wire.TransportError):
        return


class _IdleWatchdog:
    """Cancels the reading task when no event arrived for ``idle_s`` seconds.

    One timer for the whole stream, re-armed only when it fires: an event costs one clock read,
    where a timeout context per event would cost a timer each.
    """

    def __init__(self, idle_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.idle_s = idle_s
        self.last_event = self.loop.time()
        self.fired = False
        self._handle: asyncio.TimerHandle | None = self.loop.call_at(self.last_event + idle_s, self._check)

    def _check(self) -> None:
        deadline = self.last_event + self.idle_s
        if self.loop.time() < deadline:
            self._handle = self.loop.call_at(deadline, self._check)
            return
        self._handle = None
        self.fired = True
        if self.task is not None:
            self.task.cancel()

    def consume_timeout(self) -> bool:
        """True (once) if the cancellation came from this watchdog rather than from an abort."""
        if not self.fired or self.task is None:
            return False
        self.fired = False
        # An abort may have cancelled the task as well; only our own cancel is taken back.
        return self.task.uncancel() == 0

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


def bearer(api_key: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


GATEWAY_AUTH_HEADER = "cf-aig-authorization"


def gateway_auth(model: Model, api_key: str | None) -> dict[str, str] | None:
    """The key's header for a provider that is a gateway taking it in a header of its own
    (Cloudflare's AI Gateway: ``cf-aig-authorization``, and neither ``Authorization`` nor
    ``x-api-key``, whatever the API behind it, as pi 1.6 resolves it); ``None`` for the others."""
    if model.provider != "cloudflare-ai-gateway":
        return None
    return {GATEWAY_AUTH_HEADER: f"Bearer {api_key}"} if api_key else {}
