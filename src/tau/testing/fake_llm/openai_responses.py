"""The OpenAI Responses protocol for the fake server: a turn rendered as the API streams it.

Each event is ``event: <type>`` plus ``data: {..., "type": <type>, "sequence_number": n}``. The
order follows the real API: ``response.created``, ``response.in_progress``, then per output item
``output_item.added`` → its part/delta/done events → ``output_item.done``, and a final
``response.completed`` (``response.incomplete`` / ``response.failed`` for those statuses) whose
``response`` object holds every output item and the usage.

Thinking becomes a reasoning item whose summary parts are the ``"\\n\\n"``-separated paragraphs of
``turn.thinking``; it carries ``encrypted_content`` (``turn.thinking_signature`` or a made-up one).
Usage: ``input_tokens`` = input + cache_read (OpenAI counts the cached prefix in it),
``output_tokens`` = output (reasoning tokens are part of it, reported in the details).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, Turn, split_chunks
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME = (
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n'
)

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error response body in OpenAI's shape."""
    kind, code = _ERROR_TYPES.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """The SSE frames of ``turn`` answering ``request``."""
    return _Renderer(turn, request).frames()


class _Renderer:
    def __init__(self, turn: Turn, request: RecordedRequest) -> None:
        self.turn = turn
        self.body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
        self.seed = request.seed() * 2
        self.sequence = 0
        self.output: list[dict[str, Any]] = []

    def frames(self) -> Iterator[bytes]:
        response = self._response("in_progress")
        yield self._event("response.created", response=response)
        yield self._event("response.in_progress", response=response)
        if self.turn.thinking is not None:
            yield from self._reasoning_item()
        if self.turn.text is not None:
            yield from self._message_item()
        for number, call in enumerate(self.turn.tool_calls):
            if call.custom_input is not None:
                custom_id = call.id or f"call_{self.seed[:20]}{number}"
                yield from self._custom_call_item(call.name, call.custom_input, custom_id, number)
                continue
            arguments = call.raw_arguments
            if arguments is None:
                arguments = json.dumps(call.arguments)
            call_id = call.id or f"call_{self.seed[:20]}{number}"
            yield from self._function_call_item(call.name, arguments, call_id, number)
        yield from self._final()

    # -- items ---------------------------------------------------------------------------------

    def _reasoning_item(self) -> Iterator[bytes]:
        output_index = len(self.output)
        item_id = f"rs_{self.seed[:32]}"
        yield self._event(
            "response.output_item.added",
            output_index=output_index,
            item={"id": item_id, "type": "reasoning", "summary": []},
        )
        paragraphs = [p for p in (self.turn.thinking or "").split("\n\n") if p] or [""]
        summary: list[dict[str, Any]] = []
        for summary_index, paragraph in enumerate(paragraphs):
            where = {"item_id": item_id, "output_index": output_index, "summary_index": summary_index}
            yield self._event(
                "response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""}
            )
            for chunk in split_chunks(paragraph, self.turn.chunk_size):
                yield self._event("response.reasoning_summary_text.delta", **where, delta=chunk)
            yield self._event("response.reasoning_summary_text.done", **where, text=paragraph)
            part = {"type": "summary_text", "text": paragraph}
            yield self._event("response.reasoning_summary_part.done", **where, part=part)
            summary.append(part)
        encrypted = self.turn.thinking_signature or _fake_encrypted(self.seed)
        item = {"id": item_id, "type": "reasoning", "summary": summary, "encrypted_content": encrypted}
        yield from self._item_done(output_index, item)

    def _message_item(self) -> Iterator[bytes]:
        output_index = len(self.output)
        item_id = f"msg_{self.seed[:32]}"
        text = self.turn.text or ""
        yield self._event(
            "response.output_item.added",
            output_index=output_index,
            item={
                "id": item_id,
                "type": "message",
                "status": "in_progress",
                "content": [],
                "role": "assistant",
            },
        )
        where = {"item_id": item_id, "output_index": output_index, "content_index": 0}
        empty_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        yield self._event("response.content_part.added", **where, part=empty_part)
        for chunk in self.turn.text_chunks():
            yield self._event("response.output_text.delta", **where, delta=chunk, logprobs=[])
        yield self._event("response.output_text.done", **where, text=text, logprobs=[])
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        yield self._event("response.content_part.done", **where, part=part)
        item = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "content": [part],
            "role": "assistant",
        }
        yield from self._item_done(output_index, item)

    def _function_call_item(self, name: str, arguments: str, call_id: str, number: int) -> Iterator[bytes]:
        output_index = len(self.output)
        item_id = f"fc_{self.seed[:30]}{number:02d}"
        base = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name}
        yield self._event(
            "response.output_item.added",
            output_index=output_index,
            item={**base, "status": "in_progress", "arguments": ""},
        )
        where = {"item_id": item_id, "output_index": output_index}
        for chunk in split_chunks(arguments, self.turn.chunk_size):
            yield self._event("response.function_call_arguments.delta", **where, delta=chunk)
        yield self._event("response.function_call_arguments.done", **where, arguments=arguments)
        yield from self._item_done(output_index, {**base, "status": "completed", "arguments": arguments})

    def _custom_call_item(self, name: str, text: str, call_id: str, number: int) -> Iterator[bytes]:
        """A custom tool call (grammar tool): its raw input streams, then the whole of it."""
        output_index = len(self.output)
        item_id = f"ctc_{self.seed[:29]}{number:02d}"
        base = {"id": item_id, "type": "custom_tool_call", "call_id": call_id, "name": name}
        yield self._event(
            "response.output_item.added",
            output_index=output_index,
            item={**base, "status": "in_progress", "input": ""},
        )
        where = {"item_id": item_id, "output_index": output_index}
        for chunk in split_chunks(text, self.turn.chunk_size):
            yield self._event("response.custom_tool_call_input.delta", **where, delta=chunk)
        yield self._event("response.custom_tool_call_input.done", **where, input=text)
        yield from self._item_done(output_index, {**base, "status": "completed", "input": text})

    def _item_done(self, output_index: int, item: dict[str, Any]) -> Iterator[bytes]:
        self.output.append(item)
        yield self._event("response.output_item.done", output_index=output_index, item=item)

    # -- the end -------------------------------------------------------------------------------

    def _final(self) -> Iterator[bytes]:
        status = self.turn.stop_reason or "completed"
        response = self._response(status)
        response["usage"] = self._usage()
        if self.turn.input_transformations is not None:
            response["input_transformations"] = self.turn.input_transformations
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
            yield self._event("response.incomplete", response=response)
        elif status == "failed":
            response["error"] = {
                "code": "server_error",
                "message": "The model failed to generate a response.",
            }
            yield self._event("response.failed", response=response)
        else:
            yield self._event("response.completed", response=response)

    def _usage(self) -> dict[str, Any]:
        usage = self.turn.usage
        input_tokens = usage.input + usage.cache_read + usage.cache_write
        return {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning},
            "total_tokens": input_tokens + usage.output,
        }

    def _response(self, status: str) -> dict[str, Any]:
        body = self.body
        requested = body.get("reasoning")
        reasoning: dict[str, Any] = requested if isinstance(requested, dict) else {}
        final = status not in ("in_progress", "queued")
        return {
            "id": self.turn.response_id or f"resp_{self.seed[:48]}",
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": self.turn.response_model or body.get("model") or "fake-model",
            "output": list(self.output) if final else [],
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
            "service_tier": _served_tier(body.get("service_tier")),
            "store": bool(body.get("store", False)),
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "user": None,
            "metadata": {},
        }

    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return sse_frame(data, event=kind)


def _served_tier(requested: Any) -> str:
    """The tier the API reports: what was asked for, with ``auto`` (or nothing) served as ``default``."""
    return requested if isinstance(requested, str) and requested != "auto" else "default"


def _fake_encrypted(seed: str) -> str:
    return "gAAAAA" + base64.urlsafe_b64encode(hashlib.sha256(seed.encode()).digest() * 3).decode()
