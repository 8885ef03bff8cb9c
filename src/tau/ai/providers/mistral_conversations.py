"""Mistral's chat API (pi's ``mistral-conversations``): ``POST {base_url}/v1/chat/completions``.

The stream looks like OpenAI's Chat Completions, with Mistral's own rules:

- tool-call ids are exactly 9 characters ``[A-Za-z0-9]``: any other id (another provider's) is
  mapped to such an id, derived from the original, so the same call keeps the same id on every
  request of a conversation (a rare clash is resolved in conversation order), and so is its result;
- an assistant turn carries text and ``thinking`` chunks as a content list, and ``prefix: false``;
- each tool result names its tool and directly follows the turn that called it (unanswered calls
  get a synthetic result, results of dropped turns are left out: ``transform_messages``);
- reasoning: models with a ``thinkingLevelMap`` take ``reasoning_effort``, other reasoning models
  ``prompt_mode: "reasoning"``; thinking streams as ``{"type": "thinking"}`` content chunks.

Per-API options (``options.extra``): ``tool_choice``, ``prompt_mode``, ``reasoning_effort``.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any, Literal

import msgspec

from tau.ai.constrained_sampling import json_schema_parameters
from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, resolve_cache_retention, stream_event_hook
from tau.ai.providers import completions_updates
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.short_hash import short_hash
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.thinking import clamp_thinking_level
from tau.ai.transform import transform_messages
from tau.ai.transport.http import (
    apply_payload_hook,
    bearer,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolResultMessage,
)

TOOL_CALL_ID_LENGTH = 9
IMAGE_ONLY_TOOL_OUTPUT = "(see attached image)"
TOOL_IMAGE_OMITTED = "[tool image omitted: model does not support images]"


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Mistral chat completion with raw per-API options."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        if not api_key:
            raise ProviderError(f"No API key for provider: {model.provider} (set MISTRAL_API_KEY)")
        body = await apply_payload_hook(build_request_body(model, context, options), model, options)
        response = await open_stream(
            model,
            f"{model.base_url.rstrip('/')}/v1/chat/completions",
            headers=build_request_headers(model, options, api_key),
            body=body,
            options=options,
        )
        writer.start()
        reader = _ChunkReader(writer)
        on_event = stream_event_hook(options)
        async with aclosing(iter_sse(response, options)) as events:
            async for sse in events:
                chunk = sse.json_object()
                if chunk is None or not isinstance(chunk.get("choices"), list):
                    data = sse.data.strip()
                    if data == "[DONE]":
                        break
                    if not data:
                        continue
                    chunk = _decode_chunk(data)
                if on_event is not None:
                    await notify_stream_event(on_event, chunk, model)
                reader.read(chunk)
        reader.finish()

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level: ``reasoning_effort`` through the model's level map, else ``prompt_mode``."""
    extra = dict(options.extra)
    extra.pop("prompt_mode", None)
    extra.pop("reasoning_effort", None)
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning and model.reasoning else "off"
    effort_map = model.thinking_level_map if model.reasoning else None
    if effort_map is not None:
        effort = (effort_map.get(level) or "high") if level != "off" else effort_map.get("off")
        if effort:
            extra["reasoning_effort"] = effort
    elif level != "off":
        extra["prompt_mode"] = "reasoning"
    return stream(model, context, msgspec.structs.replace(options, extra=extra))


# --- request ----------------------------------------------------------------------------------------


class ToolCallIds:
    """Maps tool-call ids to Mistral's 9-character alphanumeric ones, without two ids sharing one."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def __call__(
        self, tool_call_id: str, model: Model | None = None, source: AssistantMessage | None = None
    ) -> str:
        known = self._ids.get(tool_call_id)
        if known is not None:
            return known
        attempt = 0
        while True:
            candidate = derive_tool_call_id(tool_call_id, attempt)
            owner = self._owners.get(candidate)
            if owner is None or owner == tool_call_id:
                self._ids[tool_call_id] = candidate
                self._owners[candidate] = tool_call_id
                return candidate
            attempt += 1


def derive_tool_call_id(tool_call_id: str, attempt: int = 0) -> str:
    """An id that is already 9 alphanumerics is kept; any other is hashed into 9 base-36 characters."""
    alphanumeric = "".join(c for c in tool_call_id if c.isascii() and c.isalnum())
    if attempt == 0 and len(alphanumeric) == TOOL_CALL_ID_LENGTH:
        return alphanumeric
    seed = alphanumeric or tool_call_id
    digest = short_hash(seed if attempt == 0 else f"{seed}:{attempt}")
    # short_hash gives 10 to 14 base-36 characters: always enough for nine.
    return digest[:TOOL_CALL_ID_LENGTH]


def build_request_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The JSON body of a Mistral request (before the ``on_payload`` hook).

    With ``supportsMidConvoSystemMessages`` the first prompt stays the leading system message and
    each later change of prompt is a system message where it happened, as pi 1.6 sends it
    (``completions_updates``); the tools are the current ones."""
    # Strict tools are opt-in: some Mistral models stall for minutes before a strict call.
    strict = (model.compat or {}).get("supportsStrictMode") is True

    def convert_tools(tools: list[Tool]) -> list[JsonObject]:
        return [_function_tool(tool, strict) for tool in tools]

    slots = None
    if completions_updates.native(model, context):
        context, slots = completions_updates.with_slots(
            model, context, "system", convert_tools, tool_messages=False
        )
    messages = convert_messages(
        context.system_prompt,
        transform_messages(context.messages, model),
        ToolCallIds(),
        vision="image" in model.input,
    )
    body: JsonObject = {
        "model": model.id,
        "stream": True,
        "messages": messages if slots is None else list(completions_updates.fill_slots(messages, slots)),
    }
    if context.tools:
        body["tools"] = convert_tools(context.tools)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    extra = options.extra
    if extra.get("tool_choice"):
        body["tool_choice"] = _tool_choice(extra["tool_choice"])
    if extra.get("prompt_mode"):
        body["prompt_mode"] = extra["prompt_mode"]
    if extra.get("reasoning_effort"):
        body["reasoning_effort"] = extra["reasoning_effort"]
    if _caching(options):
        body["prompt_cache_key"] = options.session_id
    return body


def build_request_headers(model: Model, options: StreamOptions, api_key: str) -> dict[str, str]:
    """Auth, ``model.headers``, the caller's headers; ``x-affinity`` pins a cached session to a backend."""
    headers = merge_headers({"accept": "text/event-stream"}, bearer(api_key), model.headers, options.headers)
    if _caching(options) and options.session_id and "x-affinity" not in {k.lower() for k in headers}:
        headers["x-affinity"] = options.session_id
    return headers


def _caching(options: StreamOptions) -> bool:
    return bool(options.session_id) and resolve_cache_retention(options.cache_retention) != "none"


def convert_messages(
    system_prompt: str | None, messages: list[Message], ids: ToolCallIds, *, vision: bool
) -> list[JsonObject]:
    """Mistral's ``messages``: the system prompt first, then each message in its wire form.

    Every tool-call id, a call's and its result's alike, goes through ``ids``: Mistral's own
    pass unchanged, any other (another provider's, a scripted one) becomes a valid one.
    """
    out: list[JsonObject] = []
    if system_prompt:
        out.append({"role": "system", "content": sanitize_surrogates(system_prompt)})
    for message in messages:
        if isinstance(message, AssistantMessage):
            converted = _assistant(message, ids)
            if converted is not None:
                out.append(converted)
        elif isinstance(message, ToolResultMessage):
            out.append(_tool_result(message, ids, vision))
        elif isinstance(message.content, str):
            out.append({"role": "user", "content": sanitize_surrogates(message.content)})
        else:
            parts: list[JsonObject] = []
            for block in message.content:
                if isinstance(block, TextContent):
                    parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
                elif vision:
                    parts.append(_image_chunk(block))
            if parts:
                out.append({"role": "user", "content": parts})
    return out


def _assistant(message: AssistantMessage, ids: ToolCallIds) -> JsonObject | None:
    content: list[JsonObject] = []
    tool_calls: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                content.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                thinking = [{"type": "text", "text": sanitize_surrogates(block.thinking)}]
                content.append({"type": "thinking", "thinking": thinking})
        else:
            arguments = json.dumps(block.arguments or {}, separators=(",", ":"), ensure_ascii=False)
            tool_calls.append(
                {
                    "id": ids(block.id),
                    "type": "function",
                    "function": {"name": block.name, "arguments": arguments},
                    "index": 0,  # on every replayed call, as pi 1.6 sends them
                }
            )
    if not content and not tool_calls:
        return None
    converted: JsonObject = {"role": "assistant", "prefix": False}
    if content:
        converted["content"] = content
    if tool_calls:
        converted["tool_calls"] = tool_calls
    return converted


def _tool_result(message: ToolResultMessage, ids: ToolCallIds, vision: bool) -> JsonObject:
    text = "\n".join(
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)
    ).strip()
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if not text:
        text = IMAGE_ONLY_TOOL_OUTPUT if images else "(no tool output)"
    elif images and not vision:
        text = f"{text}\n{TOOL_IMAGE_OMITTED}"
    if message.is_error:
        text = f"[tool error] {text}"
    content: list[JsonObject] = [{"type": "text", "text": text}]
    if vision:
        content.extend(_image_chunk(image) for image in images)
    return {
        "role": "tool",
        "tool_call_id": ids(message.tool_call_id),
        "name": message.tool_name,
        "content": content,
    }


def _image_chunk(block: ImageContent) -> JsonObject:
    return {"type": "image_url", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def _function_tool(tool: Tool, supports_strict: bool) -> JsonObject:
    """A tool that asks for constrained sampling goes ``strict: true`` with its schema made strict
    where the model's compat has ``supportsStrictMode`` and the schema allows; any other goes with
    its own schema and ``strict: false`` (pi 1.6)."""
    constrained = json_schema_parameters(tool, supports_strict)
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if constrained is None else constrained,
            "strict": constrained is not None,
        },
    }


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "any", "required"):
        return choice
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        return {"type": "function", "function": {"name": name}}
    return choice


# --- response ---------------------------------------------------------------------------------------


def _decode_chunk(data: str) -> JsonObject:
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise ProviderError(f"Invalid JSON in Mistral stream event: {data[:200]}") from exc
    if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
        raise ProviderError(f"Invalid Mistral stream event: {data[:200]}")
    return chunk


_STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
}


class _ChunkReader:
    """Text and thinking extend the open block until the kind changes; tool calls stay open to the end."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.open_index: int | None = None
        self.open_kind: Literal["text", "thinking"] | None = None
        self.tool_blocks: dict[Any, int] = {}
        self.finished = False

    def read(self, chunk: JsonObject) -> None:
        output = self.writer.output
        if output.response_id is None and isinstance(chunk.get("id"), str) and chunk["id"]:
            output.response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        choices = chunk["choices"]
        if not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        finish_reason = choice.get("finish_reason")
        if isinstance(finish_reason, str) and finish_reason:
            self._finish_reason(finish_reason)
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        content = delta.get("content")
        for item in [content] if isinstance(content, str) else content if isinstance(content, list) else []:
            self._content(item)
        tool_calls = delta.get("tool_calls")
        for call in tool_calls if isinstance(tool_calls, list) else []:
            if isinstance(call, dict):
                self._tool_call(call)

    def finish(self) -> None:
        self._close_open()
        for index in self.tool_blocks.values():
            self.writer.toolcall_end(index)
        if not self.finished:
            raise ProviderError("Mistral stream ended without a finish reason (connection closed early)")

    def _content(self, item: Any) -> None:
        if isinstance(item, str):
            self._append("text", item)
        elif isinstance(item, dict) and item.get("type") == "thinking":
            parts = item.get("thinking")
            texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
            self._append("thinking", "".join(t for t in texts if isinstance(t, str)))
        elif isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            self._append("text", item["text"])

    def _append(self, kind: Literal["text", "thinking"], delta: str) -> None:
        # Not stripped of surrogates (pi strips them): the halves of an emoji split across two
        # deltas join in the block; a lone one is dropped from the request that replays it.
        if not delta:
            # Some models send empty deltas around thinking and tool calls; a block opened for one
            # would split the thinking in two, which Mistral rejects on replay.
            return
        if self.open_kind != kind or self.open_index is None:
            self._close_open()
            self.open_index = self.writer.text_start() if kind == "text" else self.writer.thinking_start()
            self.open_kind = kind
        if kind == "text":
            self.writer.text_delta(self.open_index, delta)
        else:
            self.writer.thinking_delta(self.open_index, delta)

    def _close_open(self) -> None:
        if self.open_index is not None:
            self.writer.end_block(self.open_index)
        self.open_index = None
        self.open_kind = None

    def _tool_call(self, call: JsonObject) -> None:
        self._close_open()
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        position = call.get("index")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id == "null":
            # No id from the server: derive one, unique to this response.
            call_id = derive_tool_call_id(f"{self.writer.output.response_id}:toolcall:{position or 0}")
        key = position if isinstance(position, int) else call_id
        index = self.tool_blocks.get(key)
        if index is None:
            name = function.get("name")
            index = self.writer.toolcall_start(call_id, name if isinstance(name, str) else "")
            self.tool_blocks[key] = index
        arguments = function.get("arguments")
        if arguments is None:
            return
        fragment = arguments if isinstance(arguments, str) else json.dumps(arguments)
        if fragment:
            self.writer.toolcall_delta(index, fragment)

    def _usage(self, usage: JsonObject) -> None:
        prompt = _int(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details") or usage.get("prompt_token_details")
        cached = (
            _int(details.get("cached_tokens"))
            if isinstance(details, dict)
            else _int(usage.get("num_cached_tokens"))
        )
        cached = min(prompt, cached)
        self.writer.set_usage(
            input=prompt - cached,
            output=_int(usage.get("completion_tokens")),
            cache_read=cached,
            cache_write=0,
        )

    def _finish_reason(self, reason: str) -> None:
        output = self.writer.output
        self.finished = True
        output.raw_stop_reason = reason
        stop = _STOP_REASONS.get(reason)
        if stop is not None:
            output.stop_reason = stop
            return
        output.stop_reason = "error"
        # Mistral reports transient server failures as "error"; "server error" lets a retry see that.
        output.error_message = (
            "Provider stopped with: error (server error)"
            if reason == "error"
            else f"Provider stopped with: {reason}"
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
