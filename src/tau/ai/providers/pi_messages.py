"""pi's own message protocol (``pi-messages``), spoken by the Radius gateway and by any backend that
implements it (a models.json provider with ``"api": "pi-messages"``).

One ``POST {base_url}/messages`` carrying ``{"model", "context", "options"}`` (the context in pi's
JSON, as sessions store it), answered with server-sent events that are pi's assistant-message events
serialised (``text_start``/``_delta``/``_end``, ``thinking_…``, ``toolcall_…``) and a final ``done``
or ``error`` that carries the stop reason, the usage and the response id. The gateway prices the
call itself, so its usage (cost included) is taken as sent.

The request is pi 1.6's, field for field. The context is pi's transcript: a leading
``role: "system"`` message holds the prompt (its named sections when the session recorded them) and
the tools (``toolsAdded``), and each later change of prompt or tools is a system message where it
was recorded, for every model (the gateway adapts it to the model it routes to). The options are the
caller's only (no ``maxTokens`` unless asked, the reasoning level as it is, ``cacheRetention`` when
given or ``PI_CACHE_RETENTION=long``); configured headers come over the bearer token, as in pi.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from http import HTTPStatus
from typing import Any

import msgspec

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, stream_event_hook
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transport.http import (
    HttpStatusError,
    apply_payload_hook,
    bearer,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.types import (
    Context,
    JsonObject,
    Model,
    PromptAnchor,
    PromptUpdate,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    Usage,
    now_ms,
)

__all__ = ["build_request_body", "stream", "stream_simple", "transcript"]

_STOP_REASONS = frozenset({"stop", "length", "toolUse"})


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one call; ``options.extra`` may hold ``reasoning`` (a thinking level) and ``tool_choice``."""

    async def produce(writer: StreamWriter) -> None:
        if not options.api_key:
            raise ProviderError(
                f'No API key provided for provider "{model.provider}" (log in: tau auth login {model.provider})'
            )
        body = await apply_payload_hook(build_request_body(model, context, options), model, options)
        url = f"{model.base_url.rstrip('/')}/messages"
        if options.extra.get("debug"):
            url += "?debug=1"
        # pi's order: its own headers, then the configured ones (a models.json header may replace them).
        own = {**bearer(options.api_key), "accept": "text/event-stream", "content-type": "application/json"}
        try:
            response = await open_stream(
                model,
                url,
                headers=merge_headers(own, model.headers, options.headers),
                body=body,
                options=options,
            )
        except HttpStatusError as exc:
            raise _status_error(exc) from exc
        reader = _PiEventReader(writer)
        on_event = stream_event_hook(options)
        try:
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
        except BaseException:
            if not reader.ended:  # a reply that failed before the gateway ended it keeps nothing (as pi)
                writer.discard()
            raise

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """The reasoning level travels as it is: the gateway maps it for the model it routes to."""
    extra = {**options.extra, "reasoning": options.reasoning} if options.reasoning else dict(options.extra)
    return stream(model, context, msgspec.structs.replace(options, extra=extra))


def build_request_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """``{"model", "context": {"messages"}, "options"}``; options left unset are left out, for the
    backend's defaults."""
    call_options = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": options.extra.get("reasoning"),
        "cacheRetention": _cache_retention(options),
        "sessionId": options.session_id,
        "toolChoice": options.extra.get("tool_choice"),
    }
    return {
        "model": model.id,
        "context": {"messages": transcript(context)},
        "options": {key: value for key, value in call_options.items() if value is not None},
    }


def transcript(context: Context) -> list[JsonObject]:
    """The context as pi's transcript: the prompt and tools as a leading system message (the one
    the session recorded, with its sections, when there is one), then the messages with each
    recorded change of prompt or tools as a system message in its place."""
    messages = [message.to_json() for message in context.messages]
    anchor = context.anchor
    if anchor is None:
        head = _initial_system_message(context.system_prompt, context.tools)
        return [head, *messages] if head is not None else messages
    places: dict[int, list[JsonObject]] = {}
    for update in context.updates or ():
        places.setdefault(min(max(update.at, 0), len(messages)), []).append(_update_message(update))
    out = [_anchor_message(anchor)]
    for index in range(len(messages) + 1):
        out.extend(places.get(index, ()))
        if index < len(messages):
            out.append(messages[index])
    return out


def _initial_system_message(prompt: str | None, tools: list[Tool] | None) -> JsonObject | None:
    """pi's leading system message for a bare prompt and tools (none when both are empty)."""
    if not prompt and not tools:
        return None
    head: JsonObject = {"role": "system", "content": prompt or ""}
    if tools:
        head["toolsAdded"] = [tool.to_json() for tool in tools]
    head["timestamp"] = 0
    return head


def _anchor_message(anchor: PromptAnchor) -> JsonObject:
    if anchor.sections is None:
        head: JsonObject = {"role": "system", "content": anchor.system_prompt}
        if anchor.tools:
            head["toolsAdded"] = [tool.to_json() for tool in anchor.tools]
        head["timestamp"] = anchor.timestamp
        return head
    head = {
        "role": "system",
        "content": anchor.content,
        "sections": dict(anchor.sections),
        "timestamp": anchor.timestamp,
    }
    if anchor.tools:
        head["toolsAdded"] = [tool.to_json() for tool in anchor.tools]
    return head


def _update_message(update: PromptUpdate) -> JsonObject:
    message: JsonObject = {"role": "system", "content": update.content}
    if update.sections:
        message["sections"] = dict(update.sections)
    message["timestamp"] = update.timestamp
    if update.tools_added:
        message["toolsAdded"] = [tool.to_json() for tool in update.tools_added]
    if update.tools_removed:
        message["toolsRemoved"] = [{"name": name} for name in update.tools_removed]
    return message


def _cache_retention(options: StreamOptions) -> str | None:
    """The caller's retention; unset, the backend's default, unless ``PI_CACHE_RETENTION=long``."""
    if options.cache_retention is not None:
        return options.cache_retention
    from tau._env_twins import env_twin

    return "long" if env_twin("CACHE_RETENTION") == "long" else None


def _status_error(exc: HttpStatusError) -> HttpStatusError:
    """pi's line for a refused request: ``<status> <reason>: <message> (<code>)``."""
    message = code = None
    try:
        data = json.loads(exc.body)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        message = error.get("message") if isinstance(error.get("message"), str) else None
        code = error.get("code") if isinstance(error.get("code"), str) else None
    try:
        reason = HTTPStatus(exc.status).phrase
    except ValueError:
        reason = ""
    text = f"{exc.status} {reason}: {message if message is not None else exc.body}"
    if code:
        text += f" ({code})"
    return HttpStatusError(exc.status, text, exc.retry_after_s, exc.body)


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
        self.ended = False
        """Whether the gateway's terminal event (``done`` or ``error``) arrived."""
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
            message = event.get("errorMessage")
            writer.output.error_message = message if isinstance(message, str) else None
            if event.get("reason") == "aborted":  # the gateway's upstream was aborted: pi ends so too
                raise asyncio.CancelledError
            raise ProviderError(writer.output.error_message or "The gateway reported an error")
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
            if isinstance(call, dict):
                self._take_call(index, call)
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

    def _take_call(self, index: int, call: JsonObject) -> None:
        """The end event's tool call is the final one (pi assigns it over the streamed block)."""
        block = self.writer.output.content[index]
        arguments = call.get("arguments")
        if isinstance(arguments, dict):
            self.writer.toolcall_replace_json(index, json.dumps(arguments))
        if isinstance(block, ToolCall):
            if isinstance(call.get("id"), str):
                block.id = call["id"]
            if isinstance(call.get("name"), str):
                block.name = call["name"]
            if isinstance(call.get("thoughtSignature"), str):
                block.thought_signature = call["thoughtSignature"]

    def _finish(self, event: JsonObject) -> None:
        self.ended = True
        output = self.writer.output
        usage: Any = event.get("usage")
        if isinstance(usage, dict):
            output.usage = Usage.from_json(usage)
        for key, attribute in (
            ("responseId", "response_id"),
            ("responseModel", "response_model"),
            ("providerThinkingLevel", "provider_thinking_level"),
        ):
            if isinstance(event.get(key), str):
                setattr(output, attribute, event[key])
        rewrite = event.get("rewrite")
        if isinstance(rewrite, dict):  # the gateway changed the messages (a policy): kept as pi keeps it
            diagnostic = {"type": "pi_messages_rewrite", "timestamp": now_ms(), "details": dict(rewrite)}
            output.diagnostics = [*(output.diagnostics or []), diagnostic]
