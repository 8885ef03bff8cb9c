"""The ``google-gemini-cli`` API: Google Cloud Code Assist, used by the Gemini CLI and Antigravity logins.

Requests go to ``{base_url}/v1internal:streamGenerateContent?alt=sse`` with the login's OAuth
access token as a bearer token. The Gemini ``generateContent`` body travels inside an envelope,
``{"project", "model", "request", "userAgent", "requestId"}`` (Antigravity adds ``"requestType":
"agent"``), and each server-sent event wraps one Gemini response as ``{"response": {...}}``.

The API key is what the login stores, encoded as pi encodes it: JSON ``{"token", "projectId"}``. A
bare access token works too, with the project from ``GOOGLE_CLOUD_PROJECT``, so a token placed by
hand can be used. ``google-antigravity`` models (the provider decides, not the API) get
Antigravity's client headers and its system instruction; Claude models there get the legacy
``parameters`` tool schemas that the service translates for Anthropic.
"""

from __future__ import annotations

import json
import os
import secrets
from contextlib import aclosing
from typing import Final

from msgspec.structs import replace

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, stream_event_hook
from tau.ai.providers.google import read_gemini_stream
from tau.ai.providers.google_convert import build_request_body, is_gemini_3_pro, uses_thinking_level
from tau.ai.providers.google_errors import explain_http_error
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.thinking import clamp_reasoning, clamp_thinking_level
from tau.ai.transport.http import HttpStatusError, apply_payload_hook, iter_sse, merge_headers, open_stream
from tau.ai.types import Context, JsonObject, Model, now_ms

API: Final = "google-gemini-cli"
ANTIGRAVITY_PROVIDER: Final = "google-antigravity"
GEMINI_CLI_ENDPOINT: Final = "https://cloudcode-pa.googleapis.com"
ANTIGRAVITY_ENDPOINT: Final = "https://daily-cloudcode-pa.sandbox.googleapis.com"

# The client identification the Cloud Code Assist service expects from each product.
_GEMINI_CLI_HEADERS: Final = {
    "user-agent": "google-cloud-sdk vscode_cloudshelleditor/0.1",
    "x-goog-api-client": "gl-node/22.17.0",
    "client-metadata": json.dumps(
        {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"},
        separators=(",", ":"),
    ),
}
_ANTIGRAVITY_VERSION: Final = "1.21.9"
_CLAUDE_THINKING_BETA: Final = "interleaved-thinking-2025-05-14"
# Antigravity serves only requests that present its agent's identity first.
_ANTIGRAVITY_IDENTITY: Final = (
    "You are Antigravity, a powerful agentic AI coding assistant designed by the Google Deepmind team "
    "working on Advanced Agentic Coding."
)
# Budgets for models configured by a thinking budget (Gemini 2.x, Claude), per level.
_THINKING_BUDGETS: Final = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_MIN_OUTPUT_TOKENS: Final = 1024


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one response through Cloud Code Assist (``extra``: ``tool_choice``, ``thinking``)."""

    async def produce(writer: StreamWriter) -> None:
        token, project = parse_credential(options.api_key, model.provider)
        body = await apply_payload_hook(build_envelope(model, context, options, project), model, options)
        headers = merge_headers(
            {"authorization": f"Bearer {token}", "accept": "text/event-stream"},
            client_headers(model),
            model.headers,
            options.headers,
        )
        try:
            response = await open_stream(
                model, stream_url(model), headers=headers, body=body, options=options
            )
        except HttpStatusError as exc:
            raise explain_http_error(exc, product="Cloud Code Assist", relogin=_relogin(model)) from exc
        writer.start()
        async with aclosing(iter_sse(response, options)) as events:
            await read_gemini_stream(
                writer, events, envelope="response", on_event=stream_event_hook(options), model=model
            )

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level: Gemini 3 gets a thinking level, other models a token budget
    (added to ``max_tokens``, which the budget must leave room in)."""
    level: str | None = None
    if options.reasoning is not None and model.reasoning:
        clamped = clamp_thinking_level(model, options.reasoning)
        level = None if clamped == "off" else clamp_reasoning(clamped)
    if level is None:
        thinking: JsonObject = {"enabled": False}
        return stream(model, context, replace(options, extra={**options.extra, "thinking": thinking}))
    if uses_thinking_level(model.id):
        google_level = (
            ("LOW" if level in ("minimal", "low") else "HIGH") if is_gemini_3_pro(model.id) else level.upper()
        )
        thinking = {"enabled": True, "level": google_level}
        return stream(model, context, replace(options, extra={**options.extra, "thinking": thinking}))
    budget = {**_THINKING_BUDGETS, **(options.thinking_budgets or {})}[level]
    max_tokens = (options.max_tokens or 0) + budget
    if model.max_tokens:
        max_tokens = min(max_tokens, model.max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - _MIN_OUTPUT_TOKENS)
    thinking = {"enabled": True, "budget_tokens": budget}
    return stream(
        model, context, replace(options, max_tokens=max_tokens, extra={**options.extra, "thinking": thinking})
    )


def parse_credential(api_key: str | None, provider: str) -> tuple[str, str]:
    """The access token and project id in ``api_key`` (pi's JSON, or a bare token)."""
    raw = (api_key or "").strip()
    if not raw:
        raise ProviderError(f"Cloud Code Assist needs a Google login; {_relogin_for(provider)}")
    if not raw.startswith("{"):
        project = os.environ.get("GOOGLE_CLOUD_PROJECT", "").strip()
        if not project:
            raise ProviderError(
                "Cloud Code Assist needs a project id: the credential is a bare access token, so set "
                f"GOOGLE_CLOUD_PROJECT, or {_relogin_for(provider)}"
            )
        return raw, project
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    fields = data if isinstance(data, dict) else {}
    token, project_id = fields.get("token"), fields.get("projectId")
    if not isinstance(token, str) or not token or not isinstance(project_id, str) or not project_id:
        raise ProviderError(
            'The Cloud Code Assist credential must be JSON with "token" and "projectId"; '
            f"{_relogin_for(provider)}"
        )
    return token, project_id


def build_envelope(model: Model, context: Context, options: StreamOptions, project: str) -> JsonObject:
    """The request envelope around the Gemini body."""
    antigravity = model.provider == ANTIGRAVITY_PROVIDER
    request = build_request_body(
        model,
        context,
        options.extra,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        legacy_tool_parameters=model.id.startswith("claude-"),
    )
    if options.session_id:
        request["sessionId"] = options.session_id
    if antigravity:
        own = request.get("systemInstruction", {}).get("parts", [])
        request["systemInstruction"] = {"role": "user", "parts": [{"text": _ANTIGRAVITY_IDENTITY}, *own]}
    envelope: JsonObject = {"project": project, "model": model.id, "request": request}
    if antigravity:
        envelope["requestType"] = "agent"
    client = "antigravity" if antigravity else "tau"
    envelope["userAgent"] = client
    envelope["requestId"] = f"{'agent' if antigravity else client}-{now_ms()}-{secrets.token_hex(5)}"
    return envelope


def client_headers(model: Model) -> dict[str, str]:
    if model.provider != ANTIGRAVITY_PROVIDER:
        return dict(_GEMINI_CLI_HEADERS)
    version = (
        os.environ.get("TAU_ANTIGRAVITY_VERSION")
        or os.environ.get("PI_AI_ANTIGRAVITY_VERSION")
        or _ANTIGRAVITY_VERSION
    )
    headers = {"user-agent": f"antigravity/{version} darwin/arm64"}
    if model.id.startswith("claude-") and model.reasoning:
        headers["anthropic-beta"] = _CLAUDE_THINKING_BETA
    return headers


def stream_url(model: Model) -> str:
    default = ANTIGRAVITY_ENDPOINT if model.provider == ANTIGRAVITY_PROVIDER else GEMINI_CLI_ENDPOINT
    base = model.base_url.strip().rstrip("/") or default
    return f"{base}/v1internal:streamGenerateContent?alt=sse"


def _relogin(model: Model) -> str:
    return _relogin_for(model.provider)


def _relogin_for(provider: str) -> str:
    return f"log in again with `tau auth login {provider}` (or /login)"
