"""Call options for ``stream`` (per-API raw options) and ``stream_simple`` (a reasoning level)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from msgspec import Struct, field

from tau.ai.abort import AbortSignal
from tau.ai.types import CacheRetention, JsonObject, Model, ThinkingLevel

PayloadHook: TypeAlias = Callable[[JsonObject, Model], "JsonObject | Awaitable[JsonObject | None] | None"]
"""Sees each request body before it is sent; may edit it in place or return a replacement.

A hook object may also have a ``wants_payload()`` method: while it returns false, bodies are sent
without being shown to the hook (and without the checks for edits that showing one costs: a tool
loop's request then encodes only its new messages)."""


def payload_hook_wanted(hook: PayloadHook) -> bool:
    """Whether ``hook`` is to see the next request body (see ``PayloadHook``)."""
    wants = getattr(hook, "wants_payload", None)
    return wants is None or bool(wants())


class ResponseInfo(Struct):
    """What ``on_response`` sees: the HTTP status and headers, before the body is read."""

    status: int
    headers: dict[str, str]


ResponseHook: TypeAlias = Callable[[ResponseInfo, Model], "Awaitable[None] | None"]

HeadersHook: TypeAlias = Callable[[dict[str, "str | None"], Model], "Awaitable[None] | None"]
"""Sees the assembled headers of each HTTP request once (retries reuse them) and may change the
dict in place: a ``None`` value removes that header."""

StreamEventHook: TypeAlias = Callable[[Any, Model], "Awaitable[None] | None"]
"""Sees each parsed provider stream event (a JSON object, as the provider sent it) before it is
normalized; read-only. A hook object may have a ``wants_events()`` method: while it returns false
(asked once per request), the provider makes no call per event."""


def stream_event_hook(options: StreamOptions) -> StreamEventHook | None:
    """The hook to call for each stream event of the next request, or ``None`` (no call at all)."""
    hook = options.on_stream_event
    if hook is None:
        return None
    wants = getattr(hook, "wants_events", None)
    return hook if wants is None or wants() else None


DEFAULT_IDLE_TIMEOUT_MS = 120_000
DEFAULT_TIMEOUT_MS = 300_000
DEFAULT_MAX_RETRY_DELAY_MS = 60_000


class StreamOptions(Struct, kw_only=True):
    """Options shared by every API. Per-API options go in ``extra`` (snake_case keys).

    ``max_retries`` is 0: nothing is retried behind the caller's back. ``max_retry_delay_ms`` caps a
    server's ``Retry-After``; a longer wait fails at once with the requested delay in the message
    (0 = no cap). ``timeout_ms`` bounds each attempt's wait for the first byte of the response (its
    status line and headers), so a server that accepts the connection and never answers cannot hang
    the call; ``idle_timeout_ms`` ends a stream that then delivers no event for that long. Both end
    the call with a retryable error (``None`` or 0 = wait forever).
    """

    temperature: float | None = None
    max_tokens: int | None = None
    signal: AbortSignal | None = None
    api_key: str | None = None
    cache_retention: CacheRetention | None = None
    session_id: str | None = None
    on_payload: PayloadHook | None = None
    on_response: ResponseHook | None = None
    on_headers: HeadersHook | None = None
    on_stream_event: StreamEventHook | None = None
    headers: dict[str, str] | None = None
    timeout_ms: int | None = DEFAULT_TIMEOUT_MS
    max_retries: int = 0
    max_retry_delay_ms: int = DEFAULT_MAX_RETRY_DELAY_MS
    idle_timeout_ms: int | None = DEFAULT_IDLE_TIMEOUT_MS
    metadata: JsonObject | None = None
    extra: JsonObject = field(default_factory=dict)


class SimpleStreamOptions(StreamOptions, kw_only=True):
    """``StreamOptions`` plus a reasoning level (absent = off) and optional budget overrides."""

    reasoning: ThinkingLevel | None = None
    thinking_budgets: dict[str, int] | None = None


def _field_names(cls: type[Struct]) -> frozenset[str]:
    return frozenset(cls.__struct_fields__)


_SIMPLE_FIELDS = _field_names(SimpleStreamOptions)


def build_options(
    options: StreamOptions | None, overrides: dict[str, Any], *, simple: bool
) -> SimpleStreamOptions:
    """Merge keyword overrides into a copy of ``options``; unknown keys go to ``extra``."""
    result = SimpleStreamOptions()
    if options is not None:
        for name in _field_names(type(options)):
            setattr(result, name, getattr(options, name))
        result.extra = dict(options.extra)
    for key, value in overrides.items():
        if key in _SIMPLE_FIELDS and key != "extra":
            if not simple and key in ("reasoning", "thinking_budgets"):
                result.extra[key] = value
            else:
                setattr(result, key, value)
        elif key == "extra":
            result.extra.update(value)
        else:
            result.extra[key] = value
    return result


def resolve_cache_retention(retention: CacheRetention | None) -> CacheRetention:
    """The option if given, else ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``."""
    if retention is not None:
        return retention
    from tau._env_twins import env_twin

    if env_twin("CACHE_RETENTION") == "long":
        return "long"
    return "short"
