"""The ChatGPT-backed Responses endpoint of a Codex (ChatGPT Plus/Pro) login.

``POST {base_url}/codex/responses`` (base ``https://chatgpt.com/backend-api``) streamed as OpenAI
Responses events, read by ``openai_responses.ResponsesEventReader``. The api key is the login's
OAuth access token, a JWT: the ChatGPT account id travels in ``chatgpt-account-id``, taken from the
token's ``https://api.openai.com/auth`` claim, so a token put in ``auth.json`` by hand works too.

What differs from the public API: the conversation is never stored (``store: false``), reasoning
comes back encrypted (``include``) so the next request can replay it, tool definitions carry
``strict: null``, the text verbosity defaults to ``low``, and the session id keys the prompt cache
(``prompt_cache_key``, ``session-id``). As in pi, the call goes over a WebSocket first
(``codex_websocket``; ``transport`` ``sse`` skips it) and over HTTP/SSE when the socket fails.
Over HTTP the body goes zstd-compressed (level 3, ``content-encoding: zstd``) as pi sends it, when
the optional ``zstandard`` package (the ``zstd`` extra) is installed; without it, as plain JSON.
Per-API options (``options.extra``): ``reasoning_effort``, ``reasoning_summary``, ``service_tier``,
``text_verbosity``, ``tool_choice``, ``transport`` (``auto``, ``websocket``, ``websocket-cached``,
``sse``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
import time
import uuid
from typing import Any

import msgspec

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, resolve_cache_retention
from tau.ai.providers import codex_websocket, responses_updates
from tau.ai.providers.openai_responses import (
    ENCRYPTED_REASONING,
    ResponsesEventReader,
    grammar_tools,
    read_responses_stream,
    responses_grammar_inputs,
    simple_reasoning_extra,
)
from tau.ai.providers.responses_convert import convert_responses_messages, convert_responses_tools
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transform import RESPONSES_TOOL_CALL_PROVIDERS
from tau.ai.transport.http import HttpStatusError, apply_payload_hook, bearer, merge_headers, open_stream
from tau.ai.types import AssistantMessage, Context, JsonObject, Model, Tool

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
JWT_CLAIM = "https://api.openai.com/auth"
# The backend wants an originator on every request (it names the client family, not a user).
ORIGINATOR = "pi"
MIN_OUTPUT_TOKENS = 16
ZSTD_LEVEL = 3  # pi's request-body compression level
PROMPT_CACHE_KEY_MAX = 64
# A 429 that waiting will not fix: the plan's quota is spent.
_TERMINAL_LIMIT = re.compile(
    r"usage_limit_reached|usage_not_included|GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached"
    r"|available balance|insufficient_quota|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Codex call with raw per-API options."""

    async def produce(writer: StreamWriter) -> None:
        token = options.api_key
        if not token:
            raise ProviderError(
                f"No API key for provider: {model.provider} (log in with ChatGPT Plus/Pro: tau auth login {model.provider})"
            )
        account_id = extract_account_id(token)
        session_id = _cache_session_id(options)
        grammar_inputs = responses_grammar_inputs(model, context)
        body = await apply_payload_hook(
            build_request_body(model, context, options, session_id, grammar_inputs=grammar_inputs),
            model,
            options,
        )
        writer.output.provider_thinking_level = configuration_effort(model, options.extra)

        def reader() -> ResponsesEventReader:
            return ResponsesEventReader(
                writer,
                requested_service_tier=options.extra.get("service_tier"),
                requested_tier_wins_over_default=True,
                grammar_inputs=grammar_inputs,
            )

        transport = options.extra.get("transport") or "auto"
        if codex_websocket.wants_websocket(transport, session_id):
            try:
                await codex_websocket.stream_over_websocket(
                    codex_websocket.websocket_url(resolve_codex_url(model.base_url)),
                    build_websocket_headers(model, options, token, account_id, session_id),
                    body,
                    writer,
                    reader,
                    options,
                    session_id=session_id,
                    account_id=account_id,
                    cached_context=transport in ("auto", "websocket-cached"),
                    response_items=lambda: _response_items(model, writer.output, grammar_inputs),
                )
                return
            except codex_websocket.FallBackToSse:
                pass  # as pi: the same request over HTTP/SSE
        try:
            response = await open_stream(
                model,
                resolve_codex_url(model.base_url),
                headers=build_request_headers(model, options, token, account_id, session_id),
                body=body,
                options=options,
                should_retry=lambda status, text: not _TERMINAL_LIMIT.search(text),
                compress=_zstd,
            )
        except HttpStatusError as exc:
            if exc.status == 401:
                raise ProviderError(f"{exc} (log in again: tau auth login {model.provider})") from exc
            friendly = usage_limit_message(exc)
            if friendly is None:
                raise
            raise ProviderError(friendly) from exc
        writer.start()
        await read_responses_stream(reader(), response, options, model)

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level; without one a reasoning model is asked for effort ``none``
    (as an effort like any other, so that with ``configuration_update`` items turning reasoning
    off keeps the cached prefix, as pi 1.6)."""
    extra = simple_reasoning_extra(model, options)
    if model.reasoning and "reasoning_effort" not in extra:
        extra["reasoning_effort"] = "none"
    return stream(model, context, msgspec.structs.replace(options, extra=extra))


# --- request ----------------------------------------------------------------------------------------


def _zstd(content: bytes) -> tuple[bytes, str] | None:
    """The body zstd-compressed at pi's level 3, or ``None`` when zstandard is not installed."""
    compressor = _zstd_compressor()
    return (compressor.compress(content), "zstd") if compressor is not None else None


@functools.cache
def _zstd_compressor() -> Any:
    try:
        import zstandard  # the optional zstd extra: a compiled package, loaded on the first Codex call
    except ImportError:
        return None
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL)


def resolve_codex_url(base_url: str) -> str:
    """``…/codex/responses`` under the base URL (which may already end in ``/codex`` or the full path)."""
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return f"{base}/responses"
    return f"{base}/codex/responses"


def build_request_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    session_id: str | None,
    *,
    grammar_inputs: dict[str, str] | None = None,
) -> JsonObject:
    """The JSON body of a Codex request (before the ``on_payload`` hook)."""
    extra = options.extra
    effort = configuration_effort(model, extra)
    # Strict schemas as the backend's default (``null``) unless the compat says the model has none.
    supports_strict = (model.compat or {}).get("supportsStrictMode") is not False
    supports_grammar = grammar_tools(model)
    if grammar_inputs is None:
        grammar_inputs = responses_grammar_inputs(model, context)

    def convert_tools(tools: list[Tool]) -> list[JsonObject]:
        return convert_responses_tools(
            tools, strict=None, supports_strict=supports_strict, supports_grammar_tools=supports_grammar
        )

    slotted, slots = responses_updates.with_slots(model, context, convert_tools, effort)
    body: JsonObject = {
        "model": model.id,
        "store": False,
        "stream": True,
        # The system prompt leads ``input`` as a developer item rather than going in ``instructions``,
        # which the backend appends after the input, so that it stays in the cached prefix.
        "input": responses_updates.fill_slots(
            convert_responses_messages(
                model, slotted, RESPONSES_TOOL_CALL_PROVIDERS, grammar_inputs=grammar_inputs
            ),
            slots,
        ),
        "text": {"verbosity": extra.get("text_verbosity") or "low"},
        "include": [ENCRYPTED_REASONING],
        "tool_choice": extra.get("tool_choice") or "auto",
        "parallel_tool_calls": True,
    }
    if session_id:
        body["prompt_cache_key"] = session_id
    if options.max_tokens and (model.compat or {}).get("supportsMaxOutputTokens") is not False:
        body["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if extra.get("service_tier") is not None:
        body["service_tier"] = extra["service_tier"]
    if slotted.tools:
        body["tools"] = convert_tools(slotted.tools)
    reasoning = _reasoning(model, extra)
    if reasoning is not None:
        if effort is not None:
            reasoning["effort"] = responses_updates.REQUEST_EFFORT
        body["reasoning"] = reasoning
    return body


def configuration_effort(model: Model, extra: JsonObject) -> str | None:
    """The effort to send in ``configuration_update`` items (``supportsMidConvoEffort``), else ``None``."""
    if not model.reasoning or not responses_updates.effort_in_items(model):
        return None
    effort = extra.get("reasoning_effort")
    return _provider_effort(model, effort) if isinstance(effort, str) and effort else None


def _provider_effort(model: Model, effort: str) -> str | None:
    """The backend's effort for a requested one through the model's level map (``none`` is the
    ``off`` entry); ``None`` when the model takes no reasoning field for it."""
    level_map = model.thinking_level_map or {}
    key = "off" if effort == "none" else effort
    return level_map.get(key, effort)


def _reasoning(model: Model, extra: JsonObject) -> JsonObject | None:
    """The requested effort (through the model's level map), else the model's "off" value."""
    if not model.reasoning:
        return None
    level_map = model.thinking_level_map or {}
    effort = extra.get("reasoning_effort")
    if isinstance(effort, str) and effort:
        mapped = _provider_effort(model, effort)
        if mapped is None:
            return None  # the model takes no reasoning field at this level
        return {"effort": mapped, "summary": extra.get("reasoning_summary") or "auto"}
    if "off" in level_map and level_map["off"] is None:
        return None  # the model cannot stop reasoning: send nothing rather than a rejected value
    return {"effort": level_map.get("off") or "none"}


def build_request_headers(
    model: Model, options: StreamOptions, token: str, account_id: str, session_id: str | None
) -> dict[str, str]:
    """The originator first (model and caller headers may override it), then what the backend requires."""
    required = {
        **bearer(token),
        "chatgpt-account-id": account_id,
        "OpenAI-Beta": "responses=experimental",
        "accept": "text/event-stream",
    }
    if session_id:
        required["session-id"] = session_id
        required["x-client-request-id"] = session_id
    return merge_headers({"originator": ORIGINATOR}, model.headers, options.headers, required)


def build_websocket_headers(
    model: Model, options: StreamOptions, token: str, account_id: str, session_id: str | None
) -> dict[str, str]:
    """The handshake's headers: the SSE request's, with the WebSocket beta and a request id always."""
    request_id = session_id or str(uuid.uuid4())
    headers = {
        key: value
        for key, value in build_request_headers(model, options, token, account_id, request_id).items()
        if key.lower() not in ("accept", "content-type", "openai-beta")
    }
    return {**headers, "OpenAI-Beta": codex_websocket.OPENAI_BETA}


def _response_items(
    model: Model, output: AssistantMessage, grammar_inputs: dict[str, str]
) -> list[JsonObject]:
    """The reply as the next request's input will hold it (for the socket's continuation)."""
    items = convert_responses_messages(
        model, Context(messages=[output]), RESPONSES_TOOL_CALL_PROVIDERS, grammar_inputs=grammar_inputs
    )
    return [
        item for item in items if item.get("type") not in ("function_call_output", "custom_tool_call_output")
    ]


def _cache_session_id(options: StreamOptions) -> str | None:
    if not options.session_id or resolve_cache_retention(options.cache_retention) == "none":
        return None
    return options.session_id[:PROMPT_CACHE_KEY_MAX]


def extract_account_id(token: str) -> str:
    """The ChatGPT account id inside a Codex access token; a token without one is refused."""
    claims = _jwt_claims(token)
    auth = claims.get(JWT_CLAIM) if claims is not None else None
    account_id = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    if not isinstance(account_id, str) or not account_id:
        raise ProviderError(
            "The OpenAI Codex credential is not a ChatGPT access token (no account id in it): "
            "log in again with tau auth login openai-codex"
        )
    return account_id


def _jwt_claims(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, binascii.Error):
        return None
    return claims if isinstance(claims, dict) else None


# --- errors -----------------------------------------------------------------------------------------


def usage_limit_message(exc: HttpStatusError) -> str | None:
    """``You have hit your ChatGPT usage limit (plus plan). Try again in ~42 min.`` for a spent quota.

    Other 429s keep their status in the message, so that a session-level retry still sees them.
    """
    if not _TERMINAL_LIMIT.search(exc.body):
        return None
    try:
        data = json.loads(exc.body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    error = error if isinstance(error, dict) else {}
    plan_type = error.get("plan_type")
    plan = f" ({plan_type.lower()} plan)" if isinstance(plan_type, str) and plan_type else ""
    resets_at = error.get("resets_at")
    when = ""
    if isinstance(resets_at, int | float) and not isinstance(resets_at, bool):
        minutes = max(0, round((resets_at - time.time()) / 60))
        when = f" Try again in ~{minutes} min."
    return f"You have hit your ChatGPT usage limit{plan}.{when}"
