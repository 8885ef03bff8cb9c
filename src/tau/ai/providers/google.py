"""The ``google-generative-ai`` API: Gemini's ``streamGenerateContent`` over server-sent events.

Requests go to ``{base_url}/models/{id}:streamGenerateContent?alt=sse`` (the base URL already
holds the version path, e.g. ``…/v1beta``) with the key in ``x-goog-api-key``. Each event is a
whole ``GenerateContentResponse``; its parts become text, thinking and tool-call blocks. Gemini
delivers function-call arguments complete, so each call is one start, one delta and one end.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any, Final, Literal

from msgspec.structs import replace

from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamEventHook, StreamOptions, stream_event_hook
from tau.ai.providers.google_convert import build_request_body, thinking_option_for_level
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.thinking import clamp_reasoning, clamp_thinking_level
from tau.ai.transport.http import (
    apply_payload_hook,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.transport.sse import ServerSentEvent
from tau.ai.types import (
    Context,
    JsonObject,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    now_ms,
)

API: Final = "google-generative-ai"

# Why Gemini stopped, for the finish reasons that mean the answer is unusable.
_FINISH_REASON_DESCRIPTIONS: Final[Mapping[str, str]] = {
    "SAFETY": "the response was blocked by the safety filters",
    "RECITATION": "the response was blocked because it recited protected material",
    "BLOCKLIST": "the response contained terms from a blocklist",
    "PROHIBITED_CONTENT": "the response contained prohibited content",
    "SPII": "the response contained sensitive personal information",
    "LANGUAGE": "the response was in an unsupported language",
    "MALFORMED_FUNCTION_CALL": "the model produced a function call that could not be parsed",
    "UNEXPECTED_TOOL_CALL": "the model called a tool that was not offered",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
    "IMAGE_SAFETY": "the generated image was blocked by the safety filters",
    "IMAGE_PROHIBITED_CONTENT": "the generated image contained prohibited content",
    "IMAGE_RECITATION": "the generated image was blocked because it recited protected material",
    "IMAGE_OTHER": "image generation stopped for an unspecified reason",
    "NO_IMAGE": "the model produced no image",
    "OTHER": "generation stopped for an unspecified reason",
    "FINISH_REASON_UNSPECIFIED": "generation stopped for an unspecified reason",
}

# Server ids may be missing or repeated; generated ones must be unique within the process.
_tool_call_counter = itertools.count(1)


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Gemini response with raw options (``extra``: ``tool_choice``, ``thinking``)."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        if not api_key:
            raise ProviderError(f"No API key for provider: {model.provider}")
        body = build_request_body(
            model, context, options.extra, temperature=options.temperature, max_tokens=options.max_tokens
        )
        body = await apply_payload_hook(body, model, options)
        headers = merge_headers({"x-goog-api-key": api_key}, model.headers, options.headers)
        response = await open_stream(model, stream_url(model), headers=headers, body=body, options=options)
        writer.start()
        async with aclosing(iter_sse(response, options)) as events:
            await read_gemini_stream(writer, events, on_event=stream_event_hook(options), model=model)

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level: Gemini 3 / Gemma 4 get a thinking level, others a budget."""
    return stream(model, context, simple_stream_options(model, options))


def simple_stream_options(model: Model, options: SimpleStreamOptions) -> SimpleStreamOptions:
    """``options`` with the raw ``thinking`` option for its reasoning level."""
    thinking = simple_thinking_option(model, options)
    return replace(options, extra={**options.extra, "thinking": thinking})


def simple_thinking_option(model: Model, options: SimpleStreamOptions) -> JsonObject:
    """The raw ``thinking`` option for ``options.reasoning`` (absent = off), clamped to the model."""
    level: str | None = None
    if options.reasoning is not None and model.reasoning:
        clamped = clamp_thinking_level(model, options.reasoning)
        level = None if clamped == "off" else clamp_reasoning(clamped)
    return thinking_option_for_level(model, level, options.thinking_budgets)


def stream_url(model: Model) -> str:
    return f"{model.base_url.rstrip('/')}/models/{model.id}:streamGenerateContent?alt=sse"


async def read_gemini_stream(
    writer: StreamWriter,
    events: AsyncIterator[ServerSentEvent],
    *,
    envelope: str | None = None,
    on_event: StreamEventHook | None = None,
    model: Model | None = None,
) -> None:
    """Turn a stream of ``GenerateContentResponse`` events into blocks, usage and a stop reason.

    ``envelope`` names the field that wraps each response (Cloud Code Assist's ``response``);
    events without it carry no content and are skipped.
    """
    reader = _ResponseReader(writer)
    async for event in events:
        chunk = event.json_object()
        if chunk is None:
            data = event.data.strip()
            if not data:
                continue
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise ProviderError(f"Could not parse a Gemini stream event: {data[:200]}") from exc
            if not isinstance(chunk, dict):
                raise ProviderError(f"Unexpected Gemini stream event: {data[:200]}")
        if on_event is not None and model is not None:
            await notify_stream_event(on_event, chunk, model)
        if envelope is not None and "error" not in chunk:
            chunk = chunk.get(envelope)
            if not isinstance(chunk, dict):
                continue
        reader.read(chunk)
    reader.finish()


class _ResponseReader:
    """Accumulates one response; text parts extend the open block until the part kind changes."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.open_index: int | None = None
        self.open_kind: Literal["text", "thinking"] | None = None
        self.finish_reason: str | None = None
        self.finish_message: str | None = None

    def read(self, chunk: JsonObject) -> None:
        error = chunk.get("error")
        if error is not None:
            raise ProviderError(_describe_error(error))
        output = self.writer.output
        response_id = chunk.get("responseId")
        if isinstance(response_id, str) and response_id and output.response_id is None:
            output.response_id = response_id
        model_version = chunk.get("modelVersion")
        if isinstance(model_version, str) and model_version and model_version != output.model:
            output.response_model = model_version
        self._read_prompt_feedback(chunk.get("promptFeedback"))
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict):
                    self._read_part(part)
            finish = candidate.get("finishReason")
            if isinstance(finish, str) and finish:
                self.finish_reason = finish
                self.writer.output.raw_stop_reason = finish
                message = candidate.get("finishMessage")
                self.finish_message = message if isinstance(message, str) and message else None
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self._read_usage(usage)

    def finish(self) -> None:
        self._close_open_block()
        if self.finish_reason is None:
            raise ProviderError("Google stream ended without a finish reason")
        reason = map_finish_reason(self.finish_reason)
        if reason == "error":
            raise ProviderError(describe_finish_reason(self.finish_reason, self.finish_message))
        has_tool_call = any(isinstance(block, ToolCall) for block in self.writer.output.content)
        self.writer.output.stop_reason = "toolUse" if has_tool_call else reason

    # -- parts ---------------------------------------------------------------------------------

    def _read_part(self, part: JsonObject) -> None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        text = part.get("text")
        if isinstance(text, str):
            self._write_text(text, part.get("thought") is True, signature)
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._close_open_block()
            self._write_tool_call(call, signature)

    def _write_text(self, text: str, thought: bool, signature: str | None) -> None:
        writer = self.writer
        kind: Literal["text", "thinking"] = "thinking" if thought else "text"
        if self.open_index is None or self.open_kind != kind:
            self._close_open_block()
            self.open_index = writer.thinking_start(signature) if thought else writer.text_start(signature)
            self.open_kind = kind
        elif signature is not None:
            # Some chunks repeat the block without its signature: keep the last one seen.
            block = writer.output.content[self.open_index]
            if isinstance(block, ThinkingContent):
                block.thinking_signature = signature
            elif isinstance(block, TextContent):
                block.text_signature = signature
        if text:
            if thought:
                writer.thinking_delta(self.open_index, text)
            else:
                writer.text_delta(self.open_index, text)

    def _write_tool_call(self, call: JsonObject, signature: str | None) -> None:
        writer = self.writer
        name = call.get("name") if isinstance(call.get("name"), str) else ""
        call_id = call.get("id")
        taken = {block.id for block in writer.output.content if isinstance(block, ToolCall)}
        if not isinstance(call_id, str) or not call_id or call_id in taken:
            call_id = f"{name}_{now_ms()}_{next(_tool_call_counter)}"
        args = call.get("args")
        if isinstance(args, str):
            # Not what Gemini sends, but proxies do: treat it as argument JSON and repair it.
            arguments_json = args
        else:
            arguments_json = json.dumps(
                args if isinstance(args, dict) else {}, ensure_ascii=False, separators=(",", ":")
            )
        index = writer.toolcall_start(call_id, str(name), signature)
        writer.toolcall_delta(index, arguments_json)
        writer.toolcall_end(index)

    def _close_open_block(self) -> None:
        if self.open_index is not None:
            self.writer.end_block(self.open_index)
        self.open_index = None
        self.open_kind = None

    # -- metadata ------------------------------------------------------------------------------

    def _read_usage(self, usage: JsonObject) -> None:
        prompt = _count(usage, "promptTokenCount")
        cached = _count(usage, "cachedContentTokenCount")
        generated = _count(usage, "candidatesTokenCount") + _count(usage, "thoughtsTokenCount")
        self.writer.set_usage(
            input=prompt - cached,
            output=generated,
            cache_read=cached,
            cache_write=0,
            reasoning=_count(usage, "thoughtsTokenCount"),
        )

    def _read_prompt_feedback(self, feedback: Any) -> None:
        if not isinstance(feedback, dict):
            return
        block_reason = feedback.get("blockReason")
        if isinstance(block_reason, str) and block_reason:
            message = feedback.get("blockReasonMessage")
            detail = f": {message}" if isinstance(message, str) and message else ""
            raise ProviderError(f"Provider blocked the prompt: {block_reason}{detail}")


def map_finish_reason(reason: str) -> StopReason:
    """``STOP`` → stop, ``MAX_TOKENS`` → length, every other finish reason → error."""
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "error"


def describe_finish_reason(reason: str, finish_message: str | None = None) -> str:
    """The error message for a finish reason that means failure."""
    description = _FINISH_REASON_DESCRIPTIONS.get(reason, "generation stopped for an unknown reason")
    message = f"Provider stopped with: {reason} ({description})"
    return f"{message}: {finish_message}" if finish_message else message


def _describe_error(error: Any) -> str:
    if not isinstance(error, dict):
        return f"Google API error: {error}"
    code = error.get("code")
    message = error.get("message") or error.get("status") or "unknown error"
    return f"{code} {message}" if code else str(message)


def _count(usage: JsonObject, key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0
