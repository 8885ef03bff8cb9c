"""Gemini's ``streamGenerateContent?alt=sse`` protocol for the fake LLM server.

Every frame is a whole ``GenerateContentResponse``, as Gemini sends it: thought parts
(``thought: true``) first, then text in ``turn.chunk_size`` pieces, then one ``functionCall`` part
per tool call with complete ``args``. Each frame carries ``modelVersion`` and ``responseId``;
intermediate frames report only the prompt tokens, the last frame carries the ``finishReason`` and
the full ``usageMetadata``. ``turn.thinking_signature`` rides on the last thought part.

Scripted usage maps onto Gemini's counters: ``promptTokenCount`` = input + cache_read + cache_write
(Gemini cannot report cache writes, so they count as plain prompt tokens), ``cachedContentTokenCount``
= cache_read, ``thoughtsTokenCount`` = reasoning, ``candidatesTokenCount`` = output − reasoning.

Gemini delivers arguments as objects, so ``raw_arguments`` that parse to an object are sent as that
object. Raw arguments that do not parse are sent as a *string* in ``args`` (what some proxies do),
so clients can be tested on repairing them; real Gemini would instead end the turn with
``MALFORMED_FUNCTION_CALL`` (script that with ``stop_reason="MALFORMED_FUNCTION_CALL"``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any, Final

from tau.testing.fake_llm.script import RecordedRequest, ScriptedToolCall, Turn
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME: Final = b'data: {"candidates": [{"content": {"parts": [{"text": "cut\n\n'

# Canonical gRPC status names Google puts in error bodies.
_STATUS_NAMES: Final = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """Google's error shape: ``{"error": {"code", "message", "status"}}``."""
    return {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}}


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The SSE frames answering ``request`` with ``turn``."""
    for response in responses(turn, _model_from_path(request.path)):
        yield sse_frame(response)


def responses(turn: Turn, model: str) -> Iterator[dict[str, Any]]:
    """The ``GenerateContentResponse`` objects of ``turn``, one per frame, from model ``model``."""
    model_version = turn.response_model or model
    response_id = turn.response_id or uuid.uuid4().hex[:22]
    parts = _parts(turn)
    usage = _usage(turn)
    prompt_only = {
        "promptTokenCount": usage["promptTokenCount"],
        "totalTokenCount": usage["promptTokenCount"],
    }
    if usage.get("cachedContentTokenCount"):
        prompt_only["cachedContentTokenCount"] = usage["cachedContentTokenCount"]
    finish_reason = turn.stop_reason or "STOP"
    if not parts:
        # An empty answer still ends with a (text-less) model turn.
        parts = [[{"text": ""}]]
    for number, frame_parts in enumerate(parts, start=1):
        candidate: dict[str, Any] = {"content": {"parts": frame_parts, "role": "model"}, "index": 0}
        last = number == len(parts)
        if last:
            candidate["finishReason"] = finish_reason
        yield {
            "candidates": [candidate],
            "usageMetadata": usage if last else prompt_only,
            "modelVersion": model_version,
            "responseId": response_id,
        }


def _parts(turn: Turn) -> list[list[dict[str, Any]]]:
    """The parts of each frame, in order."""
    frames: list[list[dict[str, Any]]] = []
    thoughts = turn.thinking_chunks()
    for number, chunk in enumerate(thoughts, start=1):
        part: dict[str, Any] = {"text": chunk, "thought": True}
        if number == len(thoughts) and turn.thinking_signature:
            part["thoughtSignature"] = turn.thinking_signature
        frames.append([part])
    frames.extend([{"text": chunk}] for chunk in turn.text_chunks())
    frames.extend([_function_call_part(call)] for call in turn.tool_calls)
    return frames


def _function_call_part(call: ScriptedToolCall) -> dict[str, Any]:
    args: Any = call.arguments
    if call.raw_arguments is not None:
        try:
            parsed = json.loads(call.raw_arguments)
        except ValueError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else call.raw_arguments
    function_call: dict[str, Any] = {"name": call.name, "args": args}
    if call.id is not None:
        function_call["id"] = call.id
    return {"functionCall": function_call}


def _usage(turn: Turn) -> dict[str, int]:
    scripted = turn.usage
    prompt = scripted.input + scripted.cache_read + scripted.cache_write
    thoughts = scripted.reasoning
    candidates = max(0, scripted.output - thoughts)
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
    }
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if scripted.cache_read:
        usage["cachedContentTokenCount"] = scripted.cache_read
    return usage


def _model_from_path(path: str) -> str:
    """``/v1beta/models/gemini-2.5-flash:streamGenerateContent`` → ``gemini-2.5-flash``."""
    name = path.rsplit("/models/", 1)[-1]
    return name.split(":", 1)[0] or "gemini"
