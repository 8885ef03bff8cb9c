"""The fake server's Amazon Bedrock ConverseStream dialect: binary event-stream frames, SigV4 checked.

A request to ``/model/{modelId}/converse-stream`` must carry either a bearer token (any non-empty
one) or a SigV4 signature for the service ``bedrock`` made with ``FAKE_ACCESS_KEY_ID`` /
``FAKE_SECRET_ACCESS_KEY``; a session token equal to ``EXPIRED_SESSION_TOKEN`` is refused as
expired. A refused request is answered in Bedrock's error shape (``x-amzn-ErrorType`` and a
``{"message"}`` body), is recorded, and does not use up a scripted turn.

Frames follow the service: ``messageStart``, per block (thinking, text, tool calls) its deltas
with ``contentBlockIndex`` (text and reasoning blocks have no start event, tool calls do), then
``messageStop`` and ``metadata`` with the usage. Each payload carries the ``p`` padding field the
service adds. A ``Turn.stop_reason`` ending in ``Exception`` (``"throttlingException"``) ends the
stream with that exception event instead of ``messageStop``. A ``Turn.thinking_signature`` of
``"redacted:<base64>"`` streams those bytes as encrypted reasoning (``redactedContent``), in two
pieces, instead of reasoning text.
"""

from __future__ import annotations

import base64
import json
import struct
import time
import zlib
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, ScriptedToolCall, Turn, split_chunks
from tau.testing.fake_llm.sigv4 import expected_signature, parse_authorization

CONTENT_TYPE = "application/vnd.amazon.eventstream"
FAKE_ACCESS_KEY_ID = "AKIAFAKEBEDROCK00001"
FAKE_SECRET_ACCESS_KEY = "fake/Bedrock/Secret+Access+Key/00000000"
EXPIRED_SESSION_TOKEN = "fake-expired-session-token"
DEFAULT_SIGNATURE = "ZmFrZS1iZWRyb2NrLXNpZ25hdHVyZQ=="
_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"
_ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.coral.service/"

_ERROR_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error response body in Bedrock's shape (the error's name travels in a header)."""
    return {"message": message}


def error_headers(status: int, error_type: str | None = None) -> dict[str, str]:
    name = error_type or _ERROR_TYPES.get(status, "InternalServerException")
    return {"x-amzn-ErrorType": name + _ERROR_TYPE_SUFFIX, "x-amzn-RequestId": "fake-request-0001"}


def reject(request: RecordedRequest) -> tuple[int, dict[str, Any], dict[str, str]] | None:
    """Bedrock's answer to a request it would refuse before running the model, or ``None``."""
    authorization = request.headers.get("authorization", "")
    if authorization.startswith("Bearer "):
        return (
            None
            if authorization[7:].strip()
            else _refusal(403, "UnrecognizedClientException", "Invalid API key")
        )
    if not authorization:
        return _refusal(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
    claim = parse_authorization(authorization)
    if claim is None:
        return _refusal(
            403,
            "IncompleteSignatureException",
            f"Authorization header requires a valid SigV4 form: {authorization[:60]}",
        )
    if claim.access_key != FAKE_ACCESS_KEY_ID:
        return _refusal(
            403, "UnrecognizedClientException", "The security token included in the request is invalid."
        )
    if claim.service != "bedrock":
        return _refusal(
            403, "InvalidSignatureException", "Credential should be scoped to correct service: 'bedrock'."
        )
    if request.headers.get("x-amz-security-token") == EXPIRED_SESSION_TOKEN:
        return _refusal(403, "ExpiredTokenException", "The security token included in the request is expired")
    date = request.headers.get("x-amz-date", "")
    if (
        not date.startswith(claim.date)
        or "x-amz-date" not in claim.signed_headers
        or "host" not in claim.signed_headers
    ):
        return _refusal(
            403, "InvalidSignatureException", "The request must sign host and x-amz-date, dated as its scope."
        )
    expected = expected_signature(
        claim,
        FAKE_SECRET_ACCESS_KEY,
        method=request.method,
        path=request.path,
        query=request.query,
        headers=request.headers,
        body=request.raw_body,
    )
    if expected != claim.signature:
        return _refusal(
            403,
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
        )
    return None


def _refusal(status: int, error_type: str, message: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    return status, error_body(status, message), error_headers(status, error_type)


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The event-stream frames of ``turn``."""
    started = time.monotonic()
    yield _event("messageStart", {"role": "assistant"})
    index = 0
    signature = turn.thinking_signature or ""
    if signature.startswith("redacted:"):
        secret = base64.b64decode(signature.removeprefix("redacted:"))
        half = len(secret) // 2
        for piece in (secret[:half], secret[half:]):
            yield _delta(index, {"reasoningContent": {"redactedContent": base64.b64encode(piece).decode()}})
        yield _event("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    elif turn.thinking is not None:
        for chunk in turn.thinking_chunks():
            yield _delta(index, {"reasoningContent": {"text": chunk}})
        yield _delta(index, {"reasoningContent": {"signature": turn.thinking_signature or DEFAULT_SIGNATURE}})
        yield _event("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    if turn.text is not None:
        for chunk in turn.text_chunks():
            yield _delta(index, {"text": chunk})
        yield _event("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    for number, call in enumerate(turn.tool_calls):
        yield from _tool_use(index, call, number, turn.chunk_size)
        index += 1
    stop_reason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
    if stop_reason.endswith("Exception"):
        yield _exception(
            stop_reason, f"fake {stop_reason}: Too many tokens, please wait before trying again."
        )
        return
    yield _event("messageStop", {"stopReason": stop_reason})
    usage = turn.usage
    yield _event(
        "metadata",
        {
            "usage": {
                "inputTokens": usage.input,
                "outputTokens": usage.output,
                "totalTokens": usage.input + usage.output + usage.cache_read + usage.cache_write,
                "cacheReadInputTokens": usage.cache_read,
                "cacheWriteInputTokens": usage.cache_write,
            },
            "metrics": {"latencyMs": int((time.monotonic() - started) * 1000)},
        },
    )


def _tool_use(index: int, call: ScriptedToolCall, number: int, chunk_size: int) -> Iterator[bytes]:
    call_id = call.id or f"tooluse_fake_{number:04d}"
    yield _event(
        "contentBlockStart",
        {"start": {"toolUse": {"toolUseId": call_id, "name": call.name}}, "contentBlockIndex": index},
    )
    arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    for chunk in split_chunks(arguments, chunk_size):
        yield _delta(index, {"toolUse": {"input": chunk}})
    yield _event("contentBlockStop", {"contentBlockIndex": index})


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return _event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})


def _event(event_type: str, payload: dict[str, Any]) -> bytes:
    body = {**payload, "p": _PADDING[: 1 + len(event_type) % len(_PADDING)]}
    return frame(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(body, separators=(",", ":")).encode(),
    )


def _exception(name: str, message: str) -> bytes:
    return frame(
        {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One ``application/vnd.amazon.eventstream`` message: prelude, its CRC, string headers, payload, CRC."""
    encoded = b"".join(
        struct.pack("!B", len(name))
        + name.encode()
        + struct.pack("!BH", 7, len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


# A frame whose message checksum is wrong.
MALFORMED_FRAME = (
    frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b"{}")[:-4] + b"\0\0\0\0"
)
