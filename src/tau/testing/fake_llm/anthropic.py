"""The fake server's Anthropic Messages dialect: a ``Turn`` as the SSE stream ``/v1/messages`` sends.

Frame order follows the real API: ``message_start`` (with input and cache usage), ``ping``, one
``content_block_start``/``…_delta``/``content_block_stop`` group per block (thinking, text, then
tool calls), ``message_delta`` (stop reason and output usage) and ``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, ScriptedToolCall, Turn, split_chunks
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME = b"event: content_block_delta\ndata: {not json\n\n"
DEFAULT_SIGNATURE = "ZmFrZS1zaWduYXR1cmU="

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error response body in Anthropic's shape."""
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The SSE frames of ``turn``, one ``bytes`` per event."""
    body = request.body if isinstance(request.body, dict) else {}
    usage = turn.usage
    transformations = (
        {} if turn.input_transformations is None else {"input_transformations": turn.input_transformations}
    )
    yield _event(
        "message_start",
        message={
            **transformations,
            "id": turn.response_id or "msg_fake_0001",
            "type": "message",
            "role": "assistant",
            "model": turn.response_model or body.get("model") or "claude-fake",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "output_tokens": 1,
            },
        },
    )
    yield _event("ping")
    index = 0
    if turn.thinking is not None:
        yield from _thinking_block(index, turn)
        index += 1
    if turn.text is not None:
        yield from _text_block(index, turn)
        index += 1
    for number, call in enumerate(turn.tool_calls):
        yield from _tool_use_block(index, call, number, turn.chunk_size)
        index += 1
    stop_reason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
    yield _event(
        "message_delta",
        delta={"stop_reason": stop_reason, "stop_sequence": None},
        usage={"output_tokens": usage.output},
    )
    yield _event("message_stop")


def _event(kind: str, **fields: Any) -> bytes:
    return sse_frame({"type": kind, **fields}, event=kind)


def _thinking_block(index: int, turn: Turn) -> Iterator[bytes]:
    yield _event(
        "content_block_start",
        index=index,
        content_block={"type": "thinking", "thinking": "", "signature": ""},
    )
    for chunk in turn.thinking_chunks():
        yield _event("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": chunk})
    signature = turn.thinking_signature or DEFAULT_SIGNATURE
    yield _event(
        "content_block_delta", index=index, delta={"type": "signature_delta", "signature": signature}
    )
    yield _event("content_block_stop", index=index)


def _text_block(index: int, turn: Turn) -> Iterator[bytes]:
    yield _event("content_block_start", index=index, content_block={"type": "text", "text": ""})
    for chunk in turn.text_chunks():
        yield _event("content_block_delta", index=index, delta={"type": "text_delta", "text": chunk})
    yield _event("content_block_stop", index=index)


def _tool_use_block(index: int, call: ScriptedToolCall, number: int, chunk_size: int) -> Iterator[bytes]:
    call_id = call.id or f"toolu_fake_{number:04d}"
    yield _event(
        "content_block_start",
        index=index,
        content_block={"type": "tool_use", "id": call_id, "name": call.name, "input": {}},
    )
    arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    for chunk in split_chunks(arguments, chunk_size):
        yield _event(
            "content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": chunk}
        )
    yield _event("content_block_stop", index=index)
