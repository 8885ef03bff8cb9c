"""The ``anthropic-messages`` API: ``POST {base_url}/v1/messages`` streamed as server-sent events.

Also used by Anthropic-compatible hosts (Copilot Claude, Vercel gateway, MiniMax, Kimi, …). The
request is built in ``anthropic_request``; this module reads the event stream into a message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any

from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, stream_event_hook
from tau.ai.partial_json import repair_json
from tau.ai.providers import anthropic_threads as threads
from tau.ai.providers import input_transformations, strict_limits
from tau.ai.providers.anthropic_compat import anthropic_compat
from tau.ai.providers.anthropic_request import (
    build_body,
    build_headers,
    effort_sent,
    from_claude_code_name,
    has_strict_tools,
    sent_reply,
    uses_oauth,
)
from tau.ai.providers.anthropic_thinking import apply_simple_reasoning
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transport import wire
from tau.ai.transport.http import (
    HttpStatusError,
    apply_payload_hook,
    iter_sse,
    notify_stream_event,
    open_stream,
)
from tau.ai.types import AssistantMessage, Context, JsonObject, Model, ModelCost, StopReason, ThinkingContent

REDACTED_THINKING_TEXT = "[Reasoning redacted]"
_ENDED_EARLY = "Anthropic stream ended before message_stop"

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "pause_turn": "stop",  # a long server-side turn paused; resubmitting continues it
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "sensitive": "error",
}
_ERROR_STOP_MESSAGES = {
    "refusal": "The model refused to answer (stop_reason: refusal)",
    "sensitive": "The response was blocked by a safety filter (stop_reason: sensitive)",
}


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one response with raw Anthropic options (see ``anthropic_request`` for the extras)."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        oauth = uses_oauth(model, api_key)
        url = f"{model.base_url.rstrip('/')}/v1/messages"
        threaded = threads.thread_session(model, options)
        headers = build_headers(model, context, api_key, options, message_threads=threaded is not None)
        betas = next((v for k, v in headers.items() if k.lower() == "anthropic-beta"), "")
        continuation = options.extra.get("disable_continuation") is not True
        non_strict = strict_limits.exceeded(options.session_id)
        output = writer.output

        async def send(payload: JsonObject) -> wire.Response:
            return await open_stream(model, url, headers=headers, body=payload, options=options)

        while True:
            body = await apply_payload_hook(
                build_body(model, context, options, oauth=oauth, non_strict=non_strict), model, options
            )
            output.provider_thinking_level = effort_sent(model, body)
            thread = threads.prepare(model, threaded, body, betas) if threaded and continuation else None
            try:
                if thread is None:
                    response = await send(body)
                else:
                    response, thread = await _send_thread(send, thread, body, output)
                break
            except HttpStatusError as exc:
                # Strict tools over Anthropic's limits: sent again once without ``strict``, and the
                # session's later requests too (as pi 1.6 does).
                if non_strict or not strict_limits.refused(exc) or not has_strict_tools(context.tools, model):
                    raise
                non_strict = True
                strict_limits.mark(options.session_id)
                output.diagnostics = [*(output.diagnostics or []), strict_limits.diagnostic(exc)]
        writer.start()
        reader = _AnthropicEventReader(writer, context, oauth=oauth)
        on_event = stream_event_hook(options)
        try:
            # aclosing: leaving early (message_stop, a bad event) releases the connection at once.
            async with aclosing(iter_sse(response, options)) as events:
                async for sse in events:
                    parsed = sse.json_object()
                    if parsed is None:
                        if not sse.data:
                            continue
                        parsed = _parse_event_data(sse.data)
                    if on_event is not None:
                        await notify_stream_event(on_event, parsed, model)
                    if reader.handle(parsed, sse.event):
                        break
        except ProviderError as exc:
            if isinstance(exc.__cause__, wire.TransportError):
                raise ProviderError(f"{_ENDED_EARLY}: {exc}", retryable=True) from exc
            raise
        if not reader.saw_message_stop:
            raise ProviderError(_ENDED_EARLY, retryable=True)
        if output.stop_reason in ("error", "aborted"):
            return
        if thread is not None:
            threads.record_reply(
                model, thread, body, betas, output, lambda reply: sent_reply(reply, model, oauth=oauth)
            )
        input_transformations.record_anthropic(output, reader.input_transformations)

    return run_stream(model, options, produce)


async def _send_thread(
    send: Callable[[JsonObject], Awaitable[wire.Response]],
    thread: threads.ThreadRequest,
    body: JsonObject,
    output: AssistantMessage,
) -> tuple[wire.Response, threads.ThreadRequest | None]:
    """Send a thread request; a refusal about the thread is sent again in full, once (as a new
    thread, or without ``thread``, which turns threads off for the session). Returns the response
    and the thread request it answers, if any."""
    try:
        return await send(thread.body), thread
    except HttpStatusError as exc:
        how = threads.fallback(exc)
        if how is None:
            raise
        # Recorded before the second try, so a failed one keeps it.
        output.diagnostics = [*(output.diagnostics or []), threads.diagnostic(exc)]
        if how == "new_thread":
            created = threads.created(thread.session_id, body)
            return await send(created.body), created
        response = await send(body)
        threads.turn_off(thread.session_id)
        return response, None


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Map ``options.reasoning`` to adaptive effort or a thinking budget (``anthropic_thinking``), then ``stream``."""
    extra: JsonObject = dict(options.extra)
    resolved = _copy_options(options, extra)
    resolved.max_tokens = apply_simple_reasoning(model, context, options, extra)
    return stream(model, context, resolved)


def _copy_options(options: SimpleStreamOptions, extra: JsonObject) -> StreamOptions:
    copied = StreamOptions()
    for name in StreamOptions.__struct_fields__:
        setattr(copied, name, getattr(options, name))
    copied.extra = extra
    return copied


def map_stop_reason(reason: str) -> StopReason:
    mapped = _STOP_REASONS.get(reason)
    if mapped is None:
        raise ProviderError(f"Unhandled stop reason: {reason}")
    return mapped


def _parse_event_data(data: str) -> JsonObject:
    """One event's JSON; raw control characters or stray backslashes are repaired before giving up."""
    try:
        parsed = json.loads(data)
    except ValueError:
        try:
            parsed = json.loads(repair_json(data))
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        return parsed
    raise ProviderError(f"Malformed Anthropic stream event: {data[:200]}")


class _AnthropicEventReader:
    """Applies Anthropic stream events to the writer; ``handle`` returns True at ``message_stop``."""

    def __init__(self, writer: StreamWriter, context: Context, *, oauth: bool) -> None:
        self.writer = writer
        self.context = context
        self.oauth = oauth
        self.saw_message_stop = False
        # What the API reports it changed in the request (the last report wins).
        self.input_transformations: Any = None
        # Anthropic's block index → index in ``output.content`` (unknown block kinds are skipped).
        self.blocks: dict[int, int] = {}

    def handle(self, event: JsonObject, sse_name: str) -> bool:
        kind = event.get("type") or sse_name
        if kind == "message_start":
            self._message_start(event.get("message") or {})
        elif kind == "content_block_start":
            self._block_start(event.get("index"), event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._block_delta(event.get("index"), event.get("delta") or {})
        elif kind == "content_block_stop":
            index = self.blocks.get(_as_int(event.get("index")))
            if index is not None:
                self.writer.end_block(index)
        elif kind == "message_delta":
            if isinstance(event.get("input_transformations"), list):
                self.input_transformations = event["input_transformations"]
            self._message_delta(event.get("delta") or {}, event.get("usage") or {})
        elif kind == "message_stop":
            self.saw_message_stop = True
            return True
        elif kind == "error":
            raise ProviderError(_stream_error_message(event.get("error")))
        return False

    def _message_start(self, message: JsonObject) -> None:
        output = self.writer.output
        if isinstance(message.get("input_transformations"), list):
            self.input_transformations = message["input_transformations"]
        if isinstance(message.get("id"), str):
            output.response_id = message["id"]
        response_model = message.get("model")
        if isinstance(response_model, str) and response_model and response_model != output.model:
            output.response_model = response_model
            # compat.allowedFallbackModels: a fallback that answered is billed at its own prices.
            for fallback in anthropic_compat(self.writer.model).allowed_fallback_models:
                if (
                    fallback.provider == self.writer.model.provider
                    and fallback.model == response_model
                    and fallback.cost
                ):
                    self.writer.pricing = ModelCost.from_json(fallback.cost)
                    break
        usage = message.get("usage") or {}
        self.writer.set_usage(
            input=_as_int(usage.get("input_tokens")),
            output=_as_int(usage.get("output_tokens")),
            cache_read=_as_int(usage.get("cache_read_input_tokens")),
            cache_write=_as_int(usage.get("cache_creation_input_tokens")),
            cache_write_1h=_as_int(_long_cache_write(usage)),
        )

    def _block_start(self, stream_index: Any, block: JsonObject) -> None:
        writer = self.writer
        kind = block.get("type")
        if kind == "text":
            index = writer.text_start()
            if block.get("text"):
                writer.text_delta(index, block["text"])
        elif kind == "thinking":
            index = writer.thinking_start(signature=block.get("signature") or None)
            if block.get("thinking"):
                writer.thinking_delta(index, block["thinking"])
        elif kind == "redacted_thinking":
            index = writer.thinking_start(signature=block.get("data") or "", redacted=True)
            writer.thinking_delta(index, REDACTED_THINKING_TEXT)
        elif kind == "tool_use":
            name = str(block.get("name") or "")
            if self.oauth:
                name = from_claude_code_name(name, self.context.tools)
            index = writer.toolcall_start(str(block.get("id") or ""), name)
            initial = block.get("input")
            if isinstance(initial, dict) and initial:
                # A host that sends the whole input up front (no input_json_delta) still counts.
                writer.toolcall_delta(index, json.dumps(initial))
        else:
            return
        self.blocks[_as_int(stream_index)] = index

    def _block_delta(self, stream_index: Any, delta: JsonObject) -> None:
        index = self.blocks.get(_as_int(stream_index))
        if index is None:
            return
        writer = self.writer
        kind = delta.get("type")
        if kind == "text_delta":
            writer.text_delta(index, str(delta.get("text") or ""))
        elif kind == "thinking_delta":
            writer.thinking_delta(index, str(delta.get("thinking") or ""))
        elif kind == "signature_delta":
            block = writer.output.content[index]
            if isinstance(block, ThinkingContent):
                block.thinking_signature = (block.thinking_signature or "") + str(
                    delta.get("signature") or ""
                )
        elif kind == "input_json_delta":
            writer.toolcall_delta(index, str(delta.get("partial_json") or ""))

    def _message_delta(self, delta: JsonObject, usage: JsonObject) -> None:
        reason = delta.get("stop_reason")
        if isinstance(reason, str):
            output = self.writer.output
            output.raw_stop_reason = reason
            output.stop_reason = map_stop_reason(reason)
            if reason in _ERROR_STOP_MESSAGES:
                output.error_message = _ERROR_STOP_MESSAGES[reason]
        # Proxies send nulls for counts they do not repeat; only reported counts overwrite.
        self.writer.set_usage(
            input=_as_optional_int(usage.get("input_tokens")),
            output=_as_optional_int(usage.get("output_tokens")),
            cache_read=_as_optional_int(usage.get("cache_read_input_tokens")),
            cache_write=_as_optional_int(usage.get("cache_creation_input_tokens")),
            cache_write_1h=_as_optional_int(_long_cache_write(usage)),
        )


def _long_cache_write(usage: JsonObject) -> Any:
    """The cache writes kept for an hour: ``usage.cache_creation.ephemeral_1h_input_tokens``."""
    creation = usage.get("cache_creation")
    return creation.get("ephemeral_1h_input_tokens") if isinstance(creation, dict) else None


def _as_int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _as_optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _stream_error_message(error: Any) -> str:
    if isinstance(error, dict):
        kind = error.get("type")
        message = error.get("message")
        if message:
            return f"{kind}: {message}" if kind else str(message)
        if kind:
            return str(kind)
    return "Anthropic stream error"
