"""The fake server's pi-messages dialect (the Radius gateway's protocol, ``…/pi/v1/messages``).

A turn streams as pi's serialised assistant-message events: ``start``, one ``…_start``/``…_delta``/
``…_end`` group per block (thinking, text, then tool calls) and a terminal ``done`` with the stop
reason, the usage (priced by the gateway: one cent per call), the response id and, when the request
asked for a reasoning level, that level as the one used (``providerThinkingLevel``). A turn whose
``stop_reason`` is ``"error"`` or ``"aborted"`` ends with the gateway's ``error`` event instead (its
``errorMessage`` names the reason). A request must carry a bearer token and a ``context`` with
messages, as the gateway insists, else 401/400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, ScriptedToolCall, Turn, split_chunks
from tau.testing.fake_llm.server import sse_frame

__all__ = ["GATEWAY_COST", "error_body", "reject", "render"]

GATEWAY_COST = 0.01


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "code": "rate_limited" if status == 429 else "gateway_error"}}


def reject(request: RecordedRequest) -> tuple[int, dict[str, Any]] | None:
    if not request.headers.get("authorization", "").startswith("Bearer "):
        return 401, error_body(401, "Missing bearer token")
    body = request.body if isinstance(request.body, dict) else {}
    context = body.get("context")
    if not isinstance(body.get("model"), str) or not isinstance(context, dict) or not context.get("messages"):
        return 400, error_body(400, "Expected {model, context: {messages}, options}")
    return None


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    body = request.body if isinstance(request.body, dict) else {}
    yield _event("start")
    index = 0
    if turn.thinking is not None:
        yield from _block(index, "thinking", turn.thinking_chunks(), turn.thinking_signature or "sig-fake")
        index += 1
    if turn.text is not None:
        yield from _block(index, "text", turn.text_chunks(), None)
        index += 1
    for number, call in enumerate(turn.tool_calls):
        call_id = call.id or f"call_fake_{number:04d}"
        yield _event("toolcall_start", contentIndex=index, id=call_id, toolName=call.name)
        arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        for chunk in split_chunks(arguments, turn.chunk_size):
            yield _event("toolcall_delta", contentIndex=index, delta=chunk)
        tool_call = {
            "type": "toolCall",
            "id": call_id,
            "name": call.name,
            "arguments": _final_arguments(call),
        }
        yield _event("toolcall_end", contentIndex=index, toolCall=tool_call)
        index += 1
    usage = turn.usage
    total = usage.input + usage.output + usage.cache_read + usage.cache_write
    cost = {"input": GATEWAY_COST, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": GATEWAY_COST}
    end: dict[str, Any] = {
        "usage": {
            "input": usage.input,
            "output": usage.output,
            "cacheRead": usage.cache_read,
            "cacheWrite": usage.cache_write,
            "totalTokens": total,
            "cost": cost,
        },
        "responseId": turn.response_id or "resp_fake_0001",
        "responseModel": turn.response_model or body.get("model"),
    }
    options = body.get("options")
    level = options.get("reasoning") if isinstance(options, dict) else None
    if isinstance(level, str):
        end["providerThinkingLevel"] = level
    if turn.stop_reason in ("error", "aborted"):
        message = f"Upstream request {'failed' if turn.stop_reason == 'error' else 'aborted'}"
        yield _event("error", reason=turn.stop_reason, errorMessage=message, **end)
        return
    yield _event("done", reason=turn.stop_reason or ("toolUse" if turn.tool_calls else "stop"), **end)


def _block(index: int, kind: str, chunks: list[str], signature: str | None) -> Iterator[bytes]:
    yield _event(f"{kind}_start", contentIndex=index)
    for chunk in chunks:
        yield _event(f"{kind}_delta", contentIndex=index, delta=chunk)
    end: dict[str, Any] = {"contentIndex": index, "content": "".join(chunks)}
    if signature is not None:
        end["contentSignature"] = signature
    yield _event(f"{kind}_end", **end)


def _event(kind: str, **fields: Any) -> bytes:
    return sse_frame({"type": kind, **fields})


def _final_arguments(call: ScriptedToolCall) -> Any:
    """What the gateway's end event carries: the arguments parsed, as the streamed text gives them."""
    if call.raw_arguments is None:
        return call.arguments
    try:
        parsed = json.loads(call.raw_arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
