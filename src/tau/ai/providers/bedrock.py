"""The ``bedrock-converse-stream`` API: Amazon Bedrock's ConverseStream.

``POST {endpoint}/model/{modelId}/converse-stream`` answers with binary
``application/vnd.amazon.eventstream`` frames. botocore (the ``bedrock`` extra) resolves the AWS
credential chain (environment, profiles, SSO, container and instance roles), signs the request with
SigV4 and decodes the frames; ``tau.ai.transport.http`` stays the transport, so pooling, retries, timeouts and proxies
work as for every other API. A Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``, or the ``api_key``
option) is sent as a bearer token instead of a signature.

The region comes from an inference-profile ARN in the model id, else the ``region`` option,
``AWS_REGION``, ``AWS_DEFAULT_REGION``, the region of a custom endpoint, the profile's region, and
finally ``us-east-1`` when no profile is configured. A model whose base URL is a standard
``bedrock-runtime.<region>.amazonaws.com`` host follows the configured region; any other base URL
(a VPC endpoint, a proxy) is used as it is. ``AWS_BEDROCK_SKIP_AUTH=1`` signs with dummy keys for
proxies that authenticate on their own. The request body is built in ``bedrock_request``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import re
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from msgspec import Struct
from msgspec.structs import replace

from tau.ai.env_keys import AUTHENTICATED
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import ResponseInfo, SimpleStreamOptions, StreamOptions
from tau.ai.providers import strict_limits
from tau.ai.providers.bedrock_request import (
    build_body,
    has_strict_tools,
    is_claude,
    supports_adaptive_thinking,
)
from tau.ai.redaction import register_secret
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.thinking import adjust_max_tokens_for_thinking, clamp_thinking_level
from tau.ai.transport import wire
from tau.ai.transport.http import (
    HttpStatusError,
    apply_payload_hook,
    merge_headers,
    open_stream,
    unresolved_host,
)
from tau.ai.transport.request_cache import encode_body
from tau.ai.types import Context, JsonObject, Model, StopReason, ThinkingContent

if TYPE_CHECKING:
    from botocore.credentials import Credentials
    from botocore.session import Session

MISSING_EXTRA = "Amazon Bedrock needs botocore: pip install 'tau-agent[bedrock]'"
REDACTED_THINKING_TEXT = "[Reasoning redacted]"
SERVICE = "bedrock"
DEFAULT_REGION = "us-east-1"
_ENDED_EARLY = "Bedrock stream ended without a stop reason"
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_REGION_SHAPE = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d+$")

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}

# Bedrock's error names as readable prefixes (the retry rules match on words such as "throttling",
# "service unavailable", "internal server error"); the hints say what to do about credentials.
_ERROR_PREFIXES = {
    "ThrottlingException": "Throttling error",
    "ServiceQuotaExceededException": "Throttling error (service quota exceeded)",
    "InternalServerException": "Internal server error",
    "ServiceUnavailableException": "Service unavailable",
    "ModelStreamErrorException": "Model stream error",
    "ModelTimeoutException": "Model timeout",
    "ModelNotReadyException": "Model not ready",
    "ModelErrorException": "Model error",
    "ValidationException": "Validation error",
    "ResourceNotFoundException": "Not found",
    "AccessDeniedException": "Access denied",
    "ExpiredTokenException": "Expired AWS credentials",
    "UnrecognizedClientException": "Invalid AWS credentials",
    "InvalidSignatureException": "Invalid AWS signature",
}
_ERROR_HINTS = {
    "ExpiredTokenException": " Refresh them (aws sso login, or new keys) and try again.",
    "UnrecognizedClientException": " Check AWS_ACCESS_KEY_ID, AWS_SESSION_TOKEN or the profile.",
    "InvalidSignatureException": " Check AWS_SECRET_ACCESS_KEY and the region.",
    "AccessDeniedException": " Check the IAM policy, and that access to the model is enabled in this region.",
}


# --- entry points ---------------------------------------------------------------------------------


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one response; per-API options in ``options.extra`` (see ``bedrock_request``), plus
    ``region`` and ``profile``."""

    async def produce(writer: StreamWriter) -> None:
        aws = _botocore()
        env = os.environ
        target = resolve_target(model, options, env, aws)
        url = f"{target.endpoint}/model/{quote(model.id, safe='')}/converse-stream"
        non_strict = strict_limits.exceeded(options.session_id)
        while True:
            body = await apply_payload_hook(
                build_body(model, context, options, region=target.region, env=env, non_strict=non_strict),
                model,
                options,
            )
            headers = merge_headers(
                {"accept": "application/vnd.amazon.eventstream", "content-type": "application/json"},
                model.headers,
                _unreserved(options.headers),
            )
            content = encode_body(body)
            headers = await _authorize(aws, target, options, env, url, content, headers)
            error_types: list[str] = []
            try:
                response = await open_stream(
                    model,
                    url,
                    headers=headers,
                    body=body,
                    options=_capturing_error_type(options, error_types),
                    client_key=target.endpoint,
                )
                break
            except HttpStatusError as exc:
                error_type = error_types[-1] if error_types else ""
                # Strict tools over Claude's limits (Bedrock checks the schemas before it streams):
                # sent again once without ``strict``, and the session's later requests too (pi 1.6).
                if (
                    non_strict
                    or error_type != "ValidationException"
                    or not strict_limits.names_a_limit(str(exc))
                    or not has_strict_tools(model, context, options)
                ):
                    raise _status_error(exc, error_type) from exc
                non_strict = True
                strict_limits.mark(options.session_id)
                output = writer.output
                output.diagnostics = [*(output.diagnostics or []), strict_limits.diagnostic(exc, "bedrock")]
            except ProviderError as exc:
                if target.standard and unresolved_host(exc):
                    # AWS names a regional endpoint only for regions that exist: say which one was tried.
                    raise ProviderError(
                        f"{exc} (no Amazon Bedrock endpoint found for AWS region {target.region!r}: "
                        "check AWS_REGION, or the network)",
                        retryable=True,
                    ) from exc
                raise
        writer.start()
        reader = _BedrockEventReader(writer)
        # Read to the end (metadata follows messageStop), so the connection goes back to the pool.
        async with aclosing(_frames(aws, response, options)) as frames:
            async for frame_headers, payload in frames:
                reader.handle(frame_headers, payload)
        reader.finish()
        if not reader.stopped:
            raise ProviderError(_ENDED_EARLY, retryable=True)

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Map ``options.reasoning`` to the model's thinking switches, then ``stream``."""
    resolved = StreamOptions()
    for name in StreamOptions.__struct_fields__:
        setattr(resolved, name, getattr(options, name))
    extra: JsonObject = dict(options.extra)
    resolved.extra = extra
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning and model.reasoning else "off"
    if level == "off":
        return stream(model, context, resolved)
    extra["reasoning"] = level
    budgets = dict(options.thinking_budgets or {})
    if is_claude(model) and not supports_adaptive_thinking(model):
        max_tokens, budget = adjust_max_tokens_for_thinking(
            options.max_tokens or 0, model.max_tokens, level, options.thinking_budgets
        )
        resolved.max_tokens = max_tokens
        budgets["high" if level in ("xhigh", "max") else level] = min(budget, max(0, max_tokens - 1024))
    if budgets:
        extra["thinking_budgets"] = budgets
    return stream(model, context, resolved)


# --- botocore, the optional part ------------------------------------------------------------------


class _Botocore(Struct, frozen=True):
    """The botocore pieces this module uses, imported together on the first request."""

    session_class: Any
    credentials_class: Any
    sigv4: Any
    aws_request: Any
    event_buffer: Any
    parser_error: type[Exception]
    botocore_error: type[Exception]


_loaded: list[_Botocore] = []


def _botocore() -> _Botocore:
    if not _loaded:
        try:
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            from botocore.eventstream import EventStreamBuffer, ParserError
            from botocore.exceptions import BotoCoreError
            from botocore.session import Session
        except ImportError as exc:
            raise ProviderError(MISSING_EXTRA) from exc
        _loaded.append(
            _Botocore(
                Session, Credentials, SigV4Auth, AWSRequest, EventStreamBuffer, ParserError, BotoCoreError
            )
        )
    return _loaded[0]


# --- where the request goes -----------------------------------------------------------------------


class Target(Struct, frozen=True):
    region: str
    endpoint: str
    profile: str | None
    standard: bool = False
    """The endpoint is AWS's own ``bedrock-runtime.<region>`` host, built from the region."""


def resolve_target(model: Model, options: StreamOptions, env: Mapping[str, str], aws: _Botocore) -> Target:
    """The signing region and the endpoint (see the module docstring for the order)."""
    profile = _option(options, "profile") or env.get("AWS_PROFILE") or None
    configured = _option(options, "region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
    base_url = model.base_url.rstrip("/")
    host = (urlsplit(base_url).hostname or "").lower()
    standard = _STANDARD_HOST.match(host)
    use_base_url = standard is None or (configured is None and not env.get("AWS_PROFILE"))
    arn = _ARN_REGION.match(model.id)
    region: str | None
    if arn:
        region = arn.group(1)
    elif configured:
        region = configured
    elif standard and use_base_url:
        region = standard.group(1)
    elif not env.get("AWS_PROFILE"):
        region = DEFAULT_REGION
    else:
        region = _profile_region(aws, profile)
    if not region:
        raise ProviderError(
            f"No AWS region for Amazon Bedrock: set AWS_REGION, or a region for profile {profile!r} in ~/.aws/config"
        )
    if not _REGION_SHAPE.match(region):
        raise ProviderError(
            f"Invalid AWS region {region!r} for Amazon Bedrock: set AWS_REGION to e.g. us-east-1"
        )
    if use_base_url and base_url:
        return Target(region=region, endpoint=base_url, profile=profile, standard=standard is not None)
    suffix = ".amazonaws.com.cn" if region.startswith("cn-") else ".amazonaws.com"
    return Target(
        region=region, endpoint=f"https://bedrock-runtime.{region}{suffix}", profile=profile, standard=True
    )


def _option(options: StreamOptions, name: str) -> str | None:
    value = options.extra.get(name)
    return value if isinstance(value, str) and value else None


def _profile_region(aws: _Botocore, profile: str | None) -> str | None:
    try:
        region = _session(aws, profile).get_config_variable("region")
    except aws.botocore_error as exc:
        raise ProviderError(_credential_problem(exc, profile)) from exc
    return region if isinstance(region, str) and region else None


# --- authentication -------------------------------------------------------------------------------

_sessions: dict[str | None, Session] = {}
_RESERVED_HEADERS = ("authorization", "host")


def _session(aws: _Botocore, profile: str | None) -> Session:
    # One session per profile: botocore caches and refreshes the credentials it resolved (SSO,
    # assumed roles, instance roles) inside the session.
    session = _sessions.get(profile)
    if session is None:
        session = aws.session_class(profile=profile)
        _sessions[profile] = session
    return session


def _unreserved(headers: dict[str, str] | None) -> dict[str, str] | None:
    """Caller headers, less those the signature or the bearer token own."""
    if not headers:
        return headers
    return {
        k: v
        for k, v in headers.items()
        if k.lower() not in _RESERVED_HEADERS and not k.lower().startswith("x-amz-")
    }


async def _authorize(
    aws: _Botocore,
    target: Target,
    options: StreamOptions,
    env: Mapping[str, str],
    url: str,
    content: bytes,
    headers: dict[str, str],
) -> dict[str, str]:
    skip_auth = env.get("AWS_BEDROCK_SKIP_AUTH") == "1"
    api_key = options.api_key if options.api_key and options.api_key != AUTHENTICATED else None
    bearer = api_key or env.get("AWS_BEARER_TOKEN_BEDROCK", "").strip() or None
    if bearer and not skip_auth:
        return {**headers, "authorization": f"Bearer {bearer}"}
    if skip_auth:
        credentials = aws.credentials_class("dummy-access-key", "dummy-secret-key")
    elif (
        env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY") and not _option(options, "profile")
    ):
        # Keys in the environment win over a profile there, as in the SDK's chain; read directly.
        credentials = aws.credentials_class(
            env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env.get("AWS_SESSION_TOKEN") or None
        )
    else:
        credentials = await asyncio.to_thread(_load_credentials, aws, target.profile)
    return sign(aws, credentials, target.region, url, content, headers)


def _load_credentials(aws: _Botocore, profile: str | None) -> Credentials:
    """The chain's credentials, frozen for this request (blocking: files, SSO, instance metadata)."""
    try:
        credentials = _session(aws, profile).get_credentials()
        frozen = credentials.get_frozen_credentials() if credentials is not None else None
    except aws.botocore_error as exc:
        raise ProviderError(_credential_problem(exc, profile)) from exc
    if frozen is None or not frozen.access_key:
        raise ProviderError(
            "No AWS credentials for Amazon Bedrock: set AWS_PROFILE, AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK (or run aws configure / aws sso login)"
        )
    register_secret(frozen.secret_key)
    if frozen.token:
        register_secret(frozen.token)
    result: Credentials = aws.credentials_class(frozen.access_key, frozen.secret_key, frozen.token)
    return result


def _credential_problem(exc: Exception, profile: str | None) -> str:
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    if "SSO" in name or "sso" in text.lower():
        who = f" --profile {profile}" if profile else ""
        return (
            f"AWS SSO credentials for Amazon Bedrock are missing or expired: run aws sso login{who} ({text})"
        )
    if name == "ProfileNotFound":
        return f"AWS profile {profile!r} not found: check AWS_PROFILE and ~/.aws/config"
    return f"AWS credentials for Amazon Bedrock could not be loaded: {text}"


def sign(
    aws: _Botocore, credentials: Credentials, region: str, url: str, content: bytes, headers: dict[str, str]
) -> dict[str, str]:
    """``headers`` plus SigV4's (``authorization``, ``x-amz-date``, a session token), covering all of them."""
    request = aws.aws_request(method="POST", url=url, data=content, headers=dict(headers))
    aws.sigv4(credentials, SERVICE, region).add_auth(request)
    return dict(request.headers.items())


# --- errors ---------------------------------------------------------------------------------------


def _capturing_error_type(options: StreamOptions, seen: list[str]) -> StreamOptions:
    """``options`` whose response hook also notes Bedrock's error name (``x-amzn-ErrorType``)."""
    user_hook = options.on_response

    def hook(info: ResponseInfo, model: Model) -> Any:
        if info.status >= 400:
            lowered = {k.lower(): v for k, v in info.headers.items()}
            seen.append(lowered.get("x-amzn-errortype", "").split(":", 1)[0])
        return user_hook(info, model) if user_hook is not None else None

    return replace(options, on_response=hook)


def _status_error(exc: HttpStatusError, error_type: str) -> HttpStatusError:
    """``"<status> <readable Bedrock error>: <message><hint>"``; the status stays first for the retry rules."""
    text = str(exc)
    message = text[len(str(exc.status)) :].lstrip() if text.startswith(str(exc.status)) else text
    prefix = _ERROR_PREFIXES.get(error_type, error_type)
    readable = f"{exc.status} {prefix}: {message}" if prefix else text
    hint = _ERROR_HINTS.get(error_type, "")
    if hint and not readable.endswith("."):
        readable += "."
    return HttpStatusError(exc.status, readable + hint, exc.retry_after_s)


def _exception_message(name: str, payload: JsonObject) -> str:
    """An exception event's text; its name arrives in lowerCamelCase (``throttlingException``)."""
    full = name[:1].upper() + name[1:]
    message = payload.get("message") or payload.get("Message") or ""
    prefix = _ERROR_PREFIXES.get(full, full)
    return f"{prefix}: {message}" if message else prefix


# --- the event stream -----------------------------------------------------------------------------


async def _frames(
    aws: _Botocore, response: wire.Response, options: StreamOptions
) -> AsyncGenerator[tuple[dict[str, Any], JsonObject], None]:
    """Each event-stream message's headers and JSON payload; a silent stream fails after the idle timeout."""
    idle_s = (options.idle_timeout_ms or 0) / 1000 or None
    buffer = aws.event_buffer()
    chunks = response.aiter_bytes()
    try:
        while True:
            try:
                async with asyncio.timeout(idle_s):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                raise ProviderError(
                    f"Stream idle timeout: no data from the provider for {idle_s:g} s (timed out)",
                    retryable=True,
                ) from exc
            except wire.TransportError as exc:
                raise ProviderError(
                    f"Connection lost while streaming: {exc or type(exc).__name__}", retryable=True
                ) from exc
            buffer.add_data(chunk)
            try:
                messages = list(buffer)
            except aws.parser_error as exc:
                raise ProviderError(f"Malformed Bedrock event stream: {exc}") from exc
            for message in messages:
                yield message.headers, _payload(message.payload)
    finally:
        await response.aclose()


def _payload(raw: bytes) -> JsonObject:
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        raise ProviderError(f"Malformed Bedrock stream event: {raw[:200]!r}") from exc
    return parsed if isinstance(parsed, dict) else {}


class _BedrockEventReader:
    """Applies ConverseStream events to the writer."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.stopped = False
        # Bedrock's contentBlockIndex → index in ``output.content``.
        self.blocks: dict[int, int] = {}
        # Encrypted reasoning arrives as base64 pieces; joined (as bytes) when its block ends.
        self.redacted: dict[int, list[bytes]] = {}

    def handle(self, headers: Mapping[str, Any], payload: JsonObject) -> None:
        kind = headers.get(":message-type")
        if kind == "exception":
            raise ProviderError(
                _exception_message(str(headers.get(":exception-type") or "Exception"), payload)
            )
        if kind == "error":
            code = headers.get(":error-code") or "Error"
            raise ProviderError(f"{code}: {headers.get(':error-message') or ''}".rstrip(": "))
        event = headers.get(":event-type")
        if event == "contentBlockStart":
            self._block_start(payload)
        elif event == "contentBlockDelta":
            self._block_delta(payload)
        elif event == "contentBlockStop":
            self._block_stop(_as_int(payload.get("contentBlockIndex")))
        elif event == "messageStop":
            self._message_stop(payload)
        elif event == "metadata":
            self._metadata(payload)

    def finish(self) -> None:
        for stream_index in list(self.blocks):
            self._block_stop(stream_index)

    def _block_start(self, payload: JsonObject) -> None:
        start = payload.get("start") or {}
        tool = start.get("toolUse") if isinstance(start, dict) else None
        if isinstance(tool, dict):
            index = self.writer.toolcall_start(str(tool.get("toolUseId") or ""), str(tool.get("name") or ""))
            self.blocks[_as_int(payload.get("contentBlockIndex"))] = index

    def _block_delta(self, payload: JsonObject) -> None:
        stream_index = _as_int(payload.get("contentBlockIndex"))
        delta = payload.get("delta") or {}
        writer = self.writer
        index = self.blocks.get(stream_index)
        if "text" in delta:
            if index is None:  # text blocks have no start event
                index = self.blocks[stream_index] = writer.text_start()
            writer.text_delta(index, str(delta["text"]))
        elif isinstance(delta.get("toolUse"), dict):
            if index is not None:
                writer.toolcall_delta(index, str(delta["toolUse"].get("input") or ""))
        elif isinstance(delta.get("reasoningContent"), dict):
            if index is None:
                index = self.blocks[stream_index] = writer.thinking_start(signature="")
            self._reasoning_delta(stream_index, index, delta["reasoningContent"])

    def _reasoning_delta(self, stream_index: int, index: int, reasoning: JsonObject) -> None:
        block = self.writer.output.content[index]
        assert isinstance(block, ThinkingContent)
        if reasoning.get("text"):
            self.writer.thinking_delta(index, str(reasoning["text"]))
        if reasoning.get("signature") and not block.redacted:
            block.thinking_signature = (block.thinking_signature or "") + str(reasoning["signature"])
        if reasoning.get("redactedContent"):
            if not block.redacted:
                # The signature slot holds the opaque payload instead (replayed as redactedContent).
                block.redacted = True
                block.thinking_signature = ""
                self.writer.thinking_delta(index, REDACTED_THINKING_TEXT)
            try:
                piece = base64.b64decode(str(reasoning["redactedContent"]), validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ProviderError("Malformed Bedrock stream event: redactedContent is not base64") from exc
            self.redacted.setdefault(stream_index, []).append(piece)

    def _block_stop(self, stream_index: int) -> None:
        index = self.blocks.pop(stream_index, None)
        if index is None:
            return
        pieces = self.redacted.pop(stream_index, None)
        block = self.writer.output.content[index]
        if pieces and isinstance(block, ThinkingContent):
            block.thinking_signature = base64.b64encode(b"".join(pieces)).decode()
        self.writer.end_block(index)

    def _message_stop(self, payload: JsonObject) -> None:
        self.stopped = True
        reason = str(payload.get("stopReason") or "")
        output = self.writer.output
        output.raw_stop_reason = reason or None
        mapped = _STOP_REASONS.get(reason)
        if mapped is None:
            output.stop_reason = "error"
            output.error_message = (
                f"Provider stopped with: {reason}" if reason else "Provider stopped with an error"
            )
        else:
            output.stop_reason = mapped

    def _metadata(self, payload: JsonObject) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            details = usage.get("cacheDetails")
            one_hour = (
                sum(
                    _as_int(d.get("inputTokens"))
                    for d in details
                    if isinstance(d, dict) and d.get("ttl") == "1h"
                )
                if isinstance(details, list)
                else None
            )
            self.writer.set_usage(
                input=_as_int(usage.get("inputTokens")),
                output=_as_int(usage.get("outputTokens")),
                cache_read=_as_int(usage.get("cacheReadInputTokens")),
                cache_write=_as_int(usage.get("cacheWriteInputTokens")),
                cache_write_1h=one_hour,
            )


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
