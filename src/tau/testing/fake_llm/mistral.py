"""Mistral's chat protocol for the fake server (``…/mistral/v1/chat/completions``).

The real path is ``/v1/chat/completions``, as OpenAI's; the fake tells them apart by a ``/mistral``
prefix (use ``server.url("/mistral")`` as the base URL). Frames are ``data:`` chunks of
``chat.completion.chunk``: a role delta, thinking as ``{"type": "thinking"}`` content chunks, text
as string content, each tool call whole in one delta (a 9-character id, arguments as a JSON
string), then a chunk with ``finish_reason`` and the usage, and ``data: [DONE]``.

Before a turn is used the request is checked as Mistral checks it: every tool-call id must be 9
characters ``[A-Za-z0-9]``, and the tool results of a turn must follow it directly, one per call;
otherwise a 400 in Mistral's error shape.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, Turn
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME = b'data: {"id":"broken","choices":[{"delta":{"content":\n\n'
DONE_FRAME = b"data: [DONE]\n\n"
_VALID_ID = re.compile(r"[A-Za-z0-9]{9}")


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """An error response body in Mistral's shape."""
    kind = (
        "invalid_request_message_error" if status == 400 else "unauthorized" if status == 401 else "api_error"
    )
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def reject(request: RecordedRequest) -> tuple[int, dict[str, Any]] | None:
    """Mistral's 400 for a malformed tool-call id or tool results out of place."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 400, error_body(400, "Field required: messages")
    expected: list[str] = []
    previous = "system"
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if not _VALID_ID.fullmatch(call_id):
                return 400, error_body(400, _bad_id(call_id), "3280")
            if call_id not in expected:
                return 400, error_body(400, f"Unexpected tool call id {call_id} in tool results", "3230")
            expected.remove(call_id)
        elif expected:
            return 400, error_body(400, "Not the same number of function calls and responses", "3230")
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                call_id = str(call.get("id"))
                if not _VALID_ID.fullmatch(call_id):
                    return 400, error_body(400, _bad_id(call_id), "3280")
                expected.append(call_id)
        if role == "tool" and previous not in ("assistant", "tool"):
            return 400, error_body(400, f"Unexpected role 'tool' after role '{previous}'", "3230")
        previous = str(role)
    if expected:
        return 400, error_body(400, "Not the same number of function calls and responses", "3230")
    return None


def _bad_id(call_id: str) -> str:
    return f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The SSE frames of ``turn`` answering ``request``."""
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    seed = request.seed()
    envelope: dict[str, Any] = {
        "id": turn.response_id or seed[:32],
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": turn.response_model or str(body.get("model") or "fake-model"),
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **more: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return sse_frame({**envelope, "choices": [choice], **more})

    yield chunk({"role": "assistant", "content": ""})
    for piece in turn.thinking_chunks():
        yield chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]})
    for piece in turn.text_chunks():
        yield chunk({"content": piece})
    for number, call in enumerate(turn.tool_calls):
        arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        call_id = call.id or _alphanumeric(f"{seed}{number}")[:9]
        function = {"name": call.name, "arguments": arguments}
        yield chunk({"tool_calls": [{"id": call_id, "function": function, "index": number}]})
    finish_reason = turn.stop_reason or ("tool_calls" if turn.tool_calls else "stop")
    yield chunk({"content": ""}, finish_reason, usage=_usage(turn))
    yield DONE_FRAME


def _alphanumeric(text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return "".join(c.upper() if i % 3 == 0 else c for i, c in enumerate(digest))


def _usage(turn: Turn) -> dict[str, Any]:
    usage = turn.usage
    prompt = usage.input + usage.cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
    }
