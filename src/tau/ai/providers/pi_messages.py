"""pi's own message protocol (``pi-messages``), spoken by the Radius gateway and by any backend that
implements it (a models.json provider with ``"api": "pi-messages"``).

One ``POST {base_url}/messages`` carrying ``{"model", "context", "options"}`` (the context in pi's
JSON, as sessions store it), answered with server-sent events that are pi's assistant-message events
serialised (``text_start``/``_delta``/``_end``, ``thinking_…``, ``toolcall_…``) and a final ``done``
or ``error`` that carries the stop reason, the usage and the response id. The gateway prices the
call itself, so its usage (cost included) is taken as sent.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import msgspec

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, stream_event_hook
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transport.http import (
    apply_payload_hook,
    bearer,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.types import Context, JsonObject, Model, TextContent, ThinkingContent, Usage

__all__ = ["build_request_body", "stream", "stream_simple"]

_STOP_REASONS = frozenset({"stop", "length", "toolUse"})


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one call; ``options.extra`` may hold ``reasoning`` (a thinking level) and ``tool_choice``."""

    async def produce(writer: StreamWriter) -> None:
        if not options.api_key:
            raise ProviderError(
                f'No API key provided for provider "{model.provider}" (log in: tau auth login {model.provider})'
            )
        body = await apply_payload_hook(build_request_body(model, context, options), model, options)
        response = await open_stream(
            model,
            f"{model.base_url.rstrip('/')}/messages",
            headers=merge_headers(
                model.headers, options.headers, {**bearer(options.api_key), "accept": "text/event-stream"}
            ),
            body=body,
            options=options,
        )
        reader = _PiEventReader(writer)
        on_event = stream_event_hook(options)
        async with aclosing(iter_sse(response, options)) as events:
            async for sse in events:
                data = sse.data.strip()
                if not data or data == "[DONE]":
                    continue
                event = _decode(data)
                if on_event is not None:
                    await notify_stream_event(on_event, event, model)
                if reader.handle(event):
                    return
        raise ProviderError(f"{model.provider} stream ended without a terminal event")

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """The reasoning level travels as it is: the gateway maps it for the model it routes to."""
    extra = {**options.extra, "reasoning": options.reasoning} if options.reasoning else dict(options.extra)
    return stream(model, context, msgspec.structs.replace(options, extra=extra))


def build_request_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """``{"model", "context", "options"}``; options left unset are left out, for the backend's defaults."""
    call_options = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": options.extra.get("reasoning"),
        "cacheRetention": options.cache_retention,
        "sessionId": options.session_id,
        "toolChoice": options.extra.get("tool_choice"),
    }
    return {
        "model": model.id,
        "context": context.to_json(),
        "options": {key: value for key, value in call_options.items() if value is not None},
    }


def _decode(data: str) -> JsonObject:
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise ProviderError(f"Invalid JSON in pi-messages stream event: {data[:200]}") from exc
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise ProviderError(f"Unexpected pi-messages stream event: {data[:200]}")
    return event


class _PiEventReader:
    """pi's serialised events into writer calls; the wire's content indexes map to the writer's."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self._blocks: list[int] = []

    def handle(self, event: JsonObject) -> bool:
        """Apply one event; True once the terminal event arrived."""
        kind = event["type"]
        writer = self.writer
        if kind == "done":
            self._finish(event)
            reason = event.get("reason")
            writer.output.stop_reason = reason if reason in _STOP_REASONS else "stop"
            return True
        if kind == "error":
            self._finish(event)
            raise ProviderError(str(event.get("errorMessage") or "The gateway reported an error"))
        if kind == "start":
            writer.start()
        elif kind == "text_start":
            self._start(event, writer.text_start())
        elif kind == "thinking_start":
            self._start(event, writer.thinking_start())
        elif kind == "toolcall_start":
            self._start(
                event, writer.toolcall_start(str(event.get("id") or ""), str(event.get("toolName") or ""))
            )
        elif kind == "text_delta":
            writer.text_delta(self._index(event), str(event.get("delta") or ""))
        elif kind == "thinking_delta":
            writer.thinking_delta(self._index(event), str(event.get("delta") or ""))
        elif kind == "toolcall_delta":
            writer.toolcall_delta(self._index(event), str(event.get("delta") or ""))
        elif kind in ("text_end", "thinking_end"):
            self._end_text(event, self._index(event))
        elif kind == "toolcall_end":
            index = self._index(event)
            call = event.get("toolCall")
            arguments = call.get("arguments") if isinstance(call, dict) else None
            if isinstance(arguments, dict):
                writer.toolcall_replace_json(index, json.dumps(arguments))
            writer.toolcall_end(index)
        return False

    def _start(self, event: JsonObject, index: int) -> None:
        if event.get("contentIndex") != len(self._blocks):
            raise ProviderError(
                f"Invalid contentIndex {event.get('contentIndex')!r} in pi-messages {event['type']} event"
            )
        self._blocks.append(index)

    def _index(self, event: JsonObject) -> int:
        wire = event.get("contentIndex")
        if not isinstance(wire, int) or isinstance(wire, bool) or not 0 <= wire < len(self._blocks):
            raise ProviderError(f"Invalid contentIndex {wire!r} in pi-messages {event['type']} event")
        return self._blocks[wire]

    def _end_text(self, event: JsonObject, index: int) -> None:
        """The end event carries the block's final text and signature."""
        block = self.writer.output.content[index]
        content = event.get("content")
        signature = event.get("contentSignature")
        if isinstance(block, TextContent):
            if isinstance(content, str):
                block.text = content
            if isinstance(signature, str):
                block.text_signature = signature
            self.writer.text_end(index)
        elif isinstance(block, ThinkingContent):
            if isinstance(content, str):
                block.thinking = content
            if isinstance(signature, str):
                block.thinking_signature = signature
            if event.get("redacted") is True:
                block.redacted = True
            self.writer.thinking_end(index)

    def _finish(self, event: JsonObject) -> None:
        output = self.writer.output
        usage: Any = event.get("usage")
        if isinstance(usage, dict):
            output.usage = Usage.from_json(usage)
        for key, attribute in (("responseId", "response_id"), ("responseModel", "response_model")):
            if isinstance(event.get(key), str):
                setattr(output, attribute, event[key])
