"""The OpenAI Chat Completions protocol for the fake server: a turn rendered as the API streams it.

Every frame is ``data: {"object": "chat.completion.chunk", ...}``; the stream opens with a role
delta, then reasoning (in ``reasoning_content``, as llama.cpp, vLLM and DeepSeek send it), text,
and tool calls (a header delta with ``index``/``id``/``type``/``name``, then argument fragments),
then a chunk carrying ``finish_reason`` (``null`` when the turn's ``stop_reason`` is ``""``, as
servers that never send one do), a usage chunk with empty ``choices`` when the request
asked for ``stream_options.include_usage``, and ``data: [DONE]``.

A request with ``"stream": false`` gets one ``chat.completion`` JSON object instead (``answer``);
when its ``modalities`` include ``"image"`` (OpenRouter's image generation) the message carries
the turn's images (or one small PNG) in ``images`` as ``data:`` URLs, as OpenRouter answers.

Usage: ``prompt_tokens`` = input + cache_read + cache_write, ``cached_tokens`` = cache_read (plus
cache_write, reported OpenRouter-style with ``cache_write_tokens``), ``completion_tokens`` = output
(reasoning tokens are part of it, repeated in the details).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from tau.testing.fake_llm.script import (
    PIXEL_PNG,
    RecordedRequest,
    ScriptedImage,
    ScriptedToolCall,
    Turn,
    split_chunks,
)
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME = b'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":\n\n'
DONE_FRAME = b"data: [DONE]\n\n"

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error response body in OpenAI's shape."""
    kind, code = _ERROR_TYPES.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def answer(turn: Turn, request: RecordedRequest) -> dict[str, Any] | None:
    """The whole ``chat.completion`` for a request that does not stream, else ``None``."""
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    if body.get("stream") is not False:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None}
    modalities = body.get("modalities")
    if isinstance(modalities, list) and "image" in modalities:
        images = turn.images or [ScriptedImage(PIXEL_PNG)]
        message["images"] = [
            {
                "type": "image_url",
                "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
                "index": index,
            }
            for index, image in enumerate(images)
        ]
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{request.seed()[:22]}{number}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.raw_arguments or json.dumps(call.arguments),
                },
            }
            for number, call in enumerate(turn.tool_calls)
        ]
    finish_reason = turn.stop_reason or ("tool_calls" if turn.tool_calls else "stop")
    return {
        "id": turn.response_id or f"gen-{request.seed()[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": turn.response_model or str(body.get("model") or "fake-model"),
        "provider": "Fake",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": _usage(turn),
    }


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The SSE frames of ``turn`` answering ``request``."""
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    seed = request.seed()
    stream_options = body.get("stream_options")
    include_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
    envelope: dict[str, Any] = {
        "id": turn.response_id or f"chatcmpl-{seed[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": turn.response_model or str(body.get("model") or "fake-model"),
        "system_fingerprint": "fp_fake",
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        frame: dict[str, Any] = {
            **envelope,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if include_usage:
            frame["usage"] = None
        return sse_frame(frame)

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in turn.thinking_chunks():
        yield chunk({"reasoning_content": piece})
    for piece in turn.text_chunks():
        yield chunk({"content": piece})
    for number, call in enumerate(turn.tool_calls):
        if call.custom_input is not None:
            yield from _custom_call(
                chunk, call, number, call.id or f"call_{seed[:22]}{number}", turn.chunk_size
            )
            continue
        arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        header = {
            "index": number,
            "id": call.id or f"call_{seed[:22]}{number}",
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [header]})
        for fragment in split_chunks(arguments, turn.chunk_size):
            yield chunk({"tool_calls": [{"index": number, "function": {"arguments": fragment}}]})
    finish_reason = turn.stop_reason
    if finish_reason is None:
        finish_reason = "tool_calls" if turn.tool_calls else "stop"
    yield chunk({}, finish_reason or None)
    if include_usage:
        yield sse_frame({**envelope, "choices": [], "usage": _usage(turn)})
    yield DONE_FRAME


def _custom_call(
    chunk: Callable[[dict[str, Any]], bytes], call: ScriptedToolCall, number: int, call_id: str, size: int
) -> Iterator[bytes]:
    """A custom tool call: a header naming it, then its raw input in pieces."""
    header = {"index": number, "id": call_id, "type": "custom", "custom": {"name": call.name, "input": ""}}
    yield chunk({"tool_calls": [header]})
    for fragment in split_chunks(call.custom_input or "", size):
        yield chunk({"tool_calls": [{"index": number, "custom": {"input": fragment}}]})


def _usage(turn: Turn) -> dict[str, Any]:
    usage = turn.usage
    prompt = usage.input + usage.cache_read + usage.cache_write
    prompt_details: dict[str, Any] = {
        "cached_tokens": usage.cache_read + usage.cache_write,
        "audio_tokens": 0,
    }
    if usage.cache_write:
        prompt_details["cache_write_tokens"] = usage.cache_write
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
