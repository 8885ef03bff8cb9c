"""OpenAI's Responses API: ``POST {base_url}/responses`` streamed as server-sent events.

The request is built from the shared converter in ``responses_convert``; the reply is read by
``ResponsesEventReader``, which Azure and Codex can reuse since they stream the same events.
Per-API options (``options.extra``): ``reasoning_effort``, ``reasoning_summary``, ``service_tier``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import msgspec

from tau.ai.constrained_sampling import GrammarInput, declared_tools, grammar_input_properties
from tau.ai.cost import apply_service_tier
from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, resolve_cache_retention, stream_event_hook
from tau.ai.partial_json import parse_streaming_json
from tau.ai.providers import input_transformations, responses_updates
from tau.ai.providers.responses_convert import (
    convert_responses_messages,
    convert_responses_tools,
    encode_text_signature,
)
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.strict_tools import takes_strict_tools
from tau.ai.thinking import (
    clamp_reasoning,
    map_thinking_level,
    resolve_sampling_params,
    supports_max,
    supports_xhigh,
)
from tau.ai.transform import RESPONSES_TOOL_CALL_PROVIDERS
from tau.ai.transport.http import (
    apply_payload_hook,
    bearer,
    gateway_auth,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.transport.sse import ServerSentEvent
from tau.ai.types import (
    Context,
    ImageContent,
    JsonObject,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from tau.ai.transport import wire

ENCRYPTED_REASONING = "reasoning.encrypted_content"
SUMMARY_SEPARATOR = "\n\n"

# Response status → stop reason. ``in_progress``/``queued`` are odd final states but not failures.
_STOP_REASONS: dict[str, StopReason] = {
    "completed": "stop",
    "in_progress": "stop",
    "queued": "stop",
    "incomplete": "length",
    "failed": "error",
    "cancelled": "error",
}

# Events that end a response with its usage. Codex says ``response.done``; the public API sends
# ``response.incomplete`` when it stops at the output limit.
# Events that repeat, whole, text the deltas already delivered: not worth parsing (on a long reply
# each carries the full text again). Recognised by the SSE event name when the server sends one.
_REPEAT_EVENTS = frozenset(
    {
        "response.output_text.done",
        "response.refusal.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
    }
)
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.done"})


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Responses call with raw per-API options."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        if not api_key:
            raise ProviderError(f"No API key for provider: {model.provider}")
        grammar_inputs = responses_grammar_inputs(model, context)
        body = await apply_payload_hook(
            build_request_body(model, context, options, grammar_inputs=grammar_inputs), model, options
        )
        writer.output.provider_thinking_level = configuration_effort(model, options.extra)
        response = await open_stream(
            model,
            f"{model.base_url.rstrip('/')}/responses",
            headers=build_request_headers(model, context, options, api_key),
            body=body,
            options=options,
        )
        writer.start()
        await read_responses_stream(
            ResponsesEventReader(
                writer,
                requested_service_tier=options.extra.get("service_tier"),
                grammar_inputs=grammar_inputs,
            ),
            response,
            options,
        )

    return run_stream(model, options, produce)


async def read_responses_stream(
    reader: ResponsesEventReader, response: wire.Response, options: StreamOptions, model: Model | None = None
) -> None:
    """Feed every event of a streamed Responses reply to ``reader``, then check that it completed
    (each shown to ``options.on_stream_event`` first, when ``model`` is given)."""
    on_event = stream_event_hook(options) if model is not None else None
    async with aclosing(iter_sse(response, options)) as events:
        async for sse in events:
            if sse.event in _REPEAT_EVENTS:
                continue
            event = _decode_event(sse)
            if event is not None:
                if on_event is not None and model is not None:
                    await notify_stream_event(on_event, event, model)
                reader.handle(event)
    reader.finish()


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level: it becomes ``reasoning_effort`` (absent = reasoning off)."""
    return stream(
        model, context, msgspec.structs.replace(options, extra=simple_reasoning_extra(model, options))
    )


def simple_reasoning_extra(model: Model, options: SimpleStreamOptions) -> JsonObject:
    """``options.extra`` with the reasoning level as ``reasoning_effort``, clamped to what the model
    supports; without a level (or for a model that does not reason) both reasoning keys are dropped."""
    extra = dict(options.extra)
    if options.reasoning is not None and model.reasoning:
        level = options.reasoning
        if level == "max" and not supports_max(model):
            level = "xhigh"
        if level == "xhigh" and not supports_xhigh(model):
            level = clamp_reasoning(level)
        extra["reasoning_effort"] = level
    else:
        extra.pop("reasoning_effort", None)
        extra.pop("reasoning_summary", None)
    return extra


# --- request ----------------------------------------------------------------------------------------


def build_request_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    allowed_tool_call_providers: Collection[str] = RESPONSES_TOOL_CALL_PROVIDERS,
    *,
    grammar_inputs: dict[str, str] | None = None,
) -> JsonObject:
    """The JSON body of a Responses request (before the ``on_payload`` hook).

    ``allowed_tool_call_providers``: whose ``call_id|item_id`` pairs the target accepts back.
    ``grammar_inputs``: as ``responses_grammar_inputs`` gives them (worked out if not given).
    """
    retention = resolve_cache_retention(options.cache_retention)
    effort = configuration_effort(model, options.extra)
    supports_strict = takes_strict_tools(model)
    supports_grammar = grammar_tools(model)
    if grammar_inputs is None:
        grammar_inputs = responses_grammar_inputs(model, context)

    def convert_tools(tools: list[Tool]) -> list[JsonObject]:
        return convert_responses_tools(
            tools, supports_strict=supports_strict, supports_grammar_tools=supports_grammar
        )

    slotted, slots = responses_updates.with_slots(model, context, convert_tools, effort)
    body: JsonObject = {
        "model": model.id,
        "input": responses_updates.fill_slots(
            convert_responses_messages(
                model, slotted, allowed_tool_call_providers, grammar_inputs=grammar_inputs
            ),
            slots,
        ),
        "stream": True,
    }
    compat = model.compat or {}
    if retention != "none" and options.session_id and compat.get("promptCacheKeyMode") != "disabled":
        body["prompt_cache_key"] = options.session_id
    long_retention = retention == "long" and _compat_flag(model, "supportsLongCacheRetention")
    if compat.get("supportsExplicitPromptCacheMode") is True:
        # Newer OpenAI models: ``prompt_cache_options`` (explicit mode without caching, 30 minutes
        # for long retention) instead of ``prompt_cache_retention``, as pi 1.6.
        if retention == "none":
            body["prompt_cache_options"] = {"mode": "explicit"}
        elif long_retention:
            body["prompt_cache_options"] = {"ttl": "30m"}
    elif long_retention:
        body["prompt_cache_retention"] = "24h"
    body["store"] = False
    if options.max_tokens and compat.get("supportsMaxOutputTokens") is not False:
        body["max_output_tokens"] = options.max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    service_tier = options.extra.get("service_tier")
    if service_tier is not None:
        body["service_tier"] = service_tier
    if slotted.tools:
        body["tools"] = convert_tools(slotted.tools)
    reasoning = _reasoning_params(model, options.extra)
    if reasoning is not None:
        if effort is not None:
            reasoning["effort"] = responses_updates.REQUEST_EFFORT
        body["reasoning"] = reasoning
        if "summary" in reasoning:
            body["include"] = [ENCRYPTED_REASONING]
    if model.reasoning and model.provider == "xai":
        body["include"] = [ENCRYPTED_REASONING]  # as pi 1.6: xAI returns reasoning only so
    # Last, so the model's and the call's sampling parameters win (Azure's too; not Codex's).
    request_params = options.extra.get("sampling_params")
    body.update(
        resolve_sampling_params(
            model,
            options.extra.get("reasoning_effort"),
            request_params if isinstance(request_params, dict) else None,
        )
    )
    return body


def configuration_effort(model: Model, extra: JsonObject) -> str | None:
    """The effort to send in ``configuration_update`` items (``supportsMidConvoEffort``, and an
    effort asked for), else ``None`` (it goes in ``reasoning.effort``)."""
    effort = extra.get("reasoning_effort")
    if not model.reasoning or not responses_updates.effort_in_items(model) or not effort:
        return None
    level = str(effort)
    return map_thinking_level(model, level) or level


def grammar_tools(model: Model) -> bool:
    """``compat.supportsOpenAIGrammarTools``: grammar tools as custom tools (off by default, as pi 1.6;
    the catalogue turns it on for the models that take them)."""
    return (model.compat or {}).get("supportsOpenAIGrammarTools") is True


def responses_grammar_inputs(model: Model, context: Context) -> dict[str, str]:
    """The input property of each declared tool that goes as a custom grammar tool (``ProviderError``
    for a grammar tool that cannot, where the model takes grammar tools)."""
    return grammar_input_properties(declared_tools(context), grammar_tools(model))


def _reasoning_params(model: Model, extra: JsonObject) -> JsonObject | None:
    """``reasoning`` for a reasoning model: the requested effort, else the model's "off" value."""
    if not model.reasoning:
        return None
    effort = extra.get("reasoning_effort")
    summary = extra.get("reasoning_summary")
    if effort or summary:
        level = str(effort or "medium")
        return {"effort": map_thinking_level(model, level) or level, "summary": summary or "auto"}
    if model.provider == "github-copilot":
        return None  # Copilot rejects the field.
    level_map = model.thinking_level_map or {}
    if "off" in level_map and level_map["off"] is None:
        return None  # The model cannot stop reasoning: send nothing rather than a rejected value.
    return {"effort": level_map.get("off") or "none"}


def build_request_headers(
    model: Model, context: Context, options: StreamOptions, api_key: str
) -> dict[str, str]:
    """Auth, then ``model.headers``, then per-request headers, then the caller's ``options.headers``."""
    dynamic: dict[str, str] = {}
    if model.provider == "github-copilot":
        dynamic.update(_copilot_headers(context))
    if options.session_id:
        # Cache affinity: the same conversation lands on the same backend.
        dynamic.update(session_affinity_headers(model, options.session_id))
    auth = gateway_auth(model, api_key)
    return merge_headers(bearer(api_key) if auth is None else auth, model.headers, dynamic, options.headers)


def session_affinity_headers(model: Model, session_id: str) -> dict[str, str]:
    """pi 1.6's ``compat.sessionAffinityFormat``: ``openrouter`` (the default for OpenRouter) sends
    ``x-session-id``; ``openai`` (the default elsewhere) ``session-id`` and ``x-client-request-id``;
    ``openai-nosession`` only the latter (as pi 0.x's ``sendSessionIdHeader: false`` did)."""
    compat = model.compat or {}
    chosen = compat.get("sessionAffinityFormat")
    if chosen not in ("openai", "openai-nosession", "openrouter"):
        openrouter = model.provider == "openrouter" or "openrouter.ai" in model.base_url
        chosen = "openrouter" if openrouter else "openai"
        if compat.get("sendSessionIdHeader") is False:
            chosen = "openai-nosession"
    if chosen == "openrouter":
        return {"x-session-id": session_id}
    headers = {"session-id": session_id} if chosen == "openai" else {}
    return {**headers, "x-client-request-id": session_id}


def _copilot_headers(context: Context) -> dict[str, str]:
    last = context.messages[-1] if context.messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and not isinstance(last, UserMessage) else "user",
        "Openai-Intent": "conversation-edits",
    }
    for message in context.messages:
        content = message.content if isinstance(message, (UserMessage, ToolResultMessage)) else None
        if isinstance(content, list) and any(isinstance(b, ImageContent) for b in content):
            headers["Copilot-Vision-Request"] = "true"
            break
    return headers


def _compat_flag(model: Model, name: str) -> bool:
    """An ``OpenAIResponsesCompat`` switch; every one defaults to on."""
    return (model.compat or {}).get(name) is not False


# --- response ---------------------------------------------------------------------------------------


def _decode_event(sse: ServerSentEvent) -> JsonObject | None:
    sse_name = sse.event
    event = sse.json_object()
    if event is None:
        text = sse.data.strip()
        if not text or text == "[DONE]":
            return None
        try:
            event = json.loads(text)
        except ValueError as exc:
            raise ProviderError(
                f"Invalid JSON in Responses stream event {sse_name or '(unnamed)'}: {text[:200]}"
            ) from exc
        if not isinstance(event, dict):
            raise ProviderError(f"Unexpected Responses stream event: {text[:200]}")
    if not isinstance(event.get("type"), str) and sse_name:
        event["type"] = sse_name
    return event


class ResponsesEventReader:
    """Turns Responses stream events into writer calls; one reader per response.

    Blocks are tracked by the event's ``output_index`` so that an item's deltas always land in its
    own block. Raises ``ProviderError`` for ``error`` and ``response.failed`` events.
    """

    def __init__(
        self,
        writer: StreamWriter,
        *,
        requested_service_tier: str | None = None,
        requested_tier_wins_over_default: bool = False,
        grammar_inputs: dict[str, str] | None = None,
    ) -> None:
        self.writer = writer
        # The input property of each grammar tool, and the raw input of each custom tool call.
        self.grammar_inputs = grammar_inputs or {}
        self._custom_inputs: dict[int, GrammarInput] = {}
        # A custom call's opening input (in its added item), sent with its next piece.
        self._unsent: dict[int, str] = {}
        self.requested_service_tier = requested_service_tier
        # The Codex backend reports "default" even when it served the flex or priority tier asked for.
        self.requested_tier_wins_over_default = requested_tier_wins_over_default
        self.completed = False
        self._blocks: dict[int, int] = {}
        self._summary_parts: dict[int, int] = {}
        self._has_arguments: set[int] = set()
        self._last_output_index = -1

    def handle(self, event: JsonObject) -> None:
        kind = event.get("type")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._note_response(event.get("response"))
        elif kind == "response.output_item.added":
            self._item_added(event)
        elif kind == "response.reasoning_summary_part.added":
            self._summary_part_added(event)
        elif kind == "response.reasoning_summary_text.delta":
            self._thinking_delta(event)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            self._text_delta(event)
        elif kind == "response.function_call_arguments.delta":
            self._arguments_delta(event)
        elif kind == "response.function_call_arguments.done":
            self._arguments_done(event)
        elif kind == "response.custom_tool_call_input.delta":
            self._custom_input_delta(event)
        elif kind == "response.custom_tool_call_input.done":
            self._custom_input_done(event)
        elif kind == "response.output_item.done":
            self._item_done(event)
        elif kind in _FINAL_EVENTS:
            self._response_finished(event.get("response"))
        elif kind == "response.failed":
            raise ProviderError(_failure_message(event.get("response")))
        elif kind == "error":
            raise ProviderError(_error_event_message(event))

    def finish(self) -> None:
        """Call when the stream has ended: a response that never completed is an error."""
        if not self.completed:
            raise ProviderError("Stream ended before response.completed (connection closed early)")

    # -- items ---------------------------------------------------------------------------------

    def _item_added(self, event: JsonObject) -> None:
        item = _object(event.get("item"))
        output_index = self._output_index(event, new_item=True)
        kind = item.get("type")
        writer = self.writer
        if kind == "reasoning":
            self._blocks[output_index] = writer.thinking_start()
            self._summary_parts[output_index] = 0
        elif kind == "message":
            self._blocks[output_index] = writer.text_start()
        elif kind == "function_call":
            index = writer.toolcall_start(_tool_call_id(item), _string(item.get("name")))
            self._blocks[output_index] = index
            arguments = _string(item.get("arguments"))
            if arguments:
                self._set_arguments(output_index, index, arguments)
        elif kind == "custom_tool_call":
            name = _string(item.get("name"))
            index = writer.toolcall_start(_tool_call_id(item), name)
            self._blocks[output_index] = index
            # An unknown tool's input still needs a home: "input", as pi 1.6 keeps it.
            tool_input = GrammarInput(self.grammar_inputs.get(name, "input"))
            self._custom_inputs[output_index] = tool_input
            opening = tool_input.append(_string(item.get("input")))
            writer.toolcall_input(index, tool_input, None)
            if opening:
                self._unsent[output_index] = opening

    def _custom_input_delta(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        self._send_custom_input(
            output_index, lambda tool_input: tool_input.append(_string(event.get("delta")))
        )

    def _custom_input_done(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        final = event.get("input")
        self._send_custom_input(
            output_index, lambda tool_input: tool_input.close(final if isinstance(final, str) else None)
        )

    def _send_custom_input(self, output_index: int, grow: Callable[[GrammarInput], str | None]) -> None:
        index = self._block_of(output_index, ToolCall)
        tool_input = self._custom_inputs.get(output_index)
        if index is None or tool_input is None:
            return
        delta = grow(tool_input)
        unsent = self._unsent.pop(output_index, "")
        self.writer.toolcall_input(index, tool_input, unsent + (delta or "") or None)

    def _summary_part_added(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        index = self._block_of(output_index, ThinkingContent)
        if index is None:
            return
        if self._summary_parts.get(output_index, 0) > 0:
            self.writer.thinking_delta(index, SUMMARY_SEPARATOR)
        self._summary_parts[output_index] = self._summary_parts.get(output_index, 0) + 1

    def _thinking_delta(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        index = self._block_of(output_index, ThinkingContent)
        delta = _string(event.get("delta"))
        if index is not None and delta:
            self._summary_parts[output_index] = max(1, self._summary_parts.get(output_index, 0))
            self.writer.thinking_delta(index, delta)

    def _text_delta(self, event: JsonObject) -> None:
        index = self._block_of(self._output_index(event), TextContent)
        delta = _string(event.get("delta"))
        if index is not None and delta:
            self.writer.text_delta(index, delta)

    def _arguments_delta(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        index = self._block_of(output_index, ToolCall)
        delta = _string(event.get("delta"))
        if index is not None and delta:
            self._has_arguments.add(output_index)
            self.writer.toolcall_delta(index, delta)

    def _arguments_done(self, event: JsonObject) -> None:
        output_index = self._output_index(event)
        index = self._block_of(output_index, ToolCall)
        arguments = event.get("arguments")
        if index is not None and isinstance(arguments, str):
            self._set_arguments(output_index, index, arguments)

    def _set_arguments(self, output_index: int, index: int, arguments: str) -> None:
        """The server's complete argument string replaces whatever the deltas built."""
        self._has_arguments.add(output_index)
        self.writer.toolcall_replace_json(index, arguments)
        self.writer.tool_call(index).arguments = parse_streaming_json(arguments)

    def _item_done(self, event: JsonObject) -> None:
        item = _object(event.get("item"))
        output_index = self._output_index(event)
        index = self._blocks.get(output_index)
        if index is None:
            return
        block = self.writer.output.content[index]
        kind = item.get("type")
        if kind == "reasoning" and isinstance(block, ThinkingContent):
            summary = item.get("summary")
            if isinstance(summary, list) and summary:
                block.thinking = SUMMARY_SEPARATOR.join(
                    _string(_object(part).get("text")) for part in summary
                )
            # The whole item (with its encrypted content) is what a later request must replay.
            block.thinking_signature = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
            self.writer.thinking_end(index)
        elif kind == "message" and isinstance(block, TextContent):
            parts = [_object(part) for part in item.get("content") or []]
            if parts:
                block.text = "".join(
                    _string(p.get("text") if "text" in p else p.get("refusal")) for p in parts
                )
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id:
                phase = item.get("phase")
                block.text_signature = encode_text_signature(
                    item_id, phase if isinstance(phase, str) else None
                )
            self.writer.text_end(index)
        elif kind == "function_call" and isinstance(block, ToolCall):
            if item.get("call_id"):
                block.id = _tool_call_id(item)
            if item.get("name"):
                block.name = _string(item.get("name"))
            arguments = _string(item.get("arguments"))
            if output_index not in self._has_arguments and arguments:
                self._set_arguments(output_index, index, arguments)
            self.writer.toolcall_end(index)
        elif (
            kind == "custom_tool_call" and isinstance(block, ToolCall) and output_index in self._custom_inputs
        ):
            final = item.get("input")
            self._send_custom_input(
                output_index,
                lambda tool_input: tool_input.close(final if isinstance(final, str) else None),
            )
            del self._custom_inputs[output_index]
            self.writer.toolcall_end(index)

    # -- the response as a whole ---------------------------------------------------------------

    def _note_response(self, response: Any) -> None:
        data = _object(response)
        output = self.writer.output
        response_id = data.get("id")
        if isinstance(response_id, str) and response_id:
            output.response_id = response_id
        response_model = data.get("model")
        if isinstance(response_model, str) and response_model and response_model != output.model:
            output.response_model = response_model

    def _response_finished(self, response: Any) -> None:
        data = _object(response)
        self._note_response(data)
        input_transformations.record_openai(self.writer.output, data.get("input_transformations"))
        usage = data.get("usage")
        if isinstance(usage, dict):
            details = _object(usage.get("input_tokens_details"))
            cached = _int(details.get("cached_tokens"))
            # input_tokens counts the cached prefix too.
            self.writer.set_usage(
                input=_int(usage.get("input_tokens")) - cached,
                output=_int(usage.get("output_tokens")),
                cache_read=cached,
                cache_write=0,
                reasoning=_int(_object(usage.get("output_tokens_details")).get("reasoning_tokens")),
            )
        else:
            self.writer.set_usage()
        tier = data.get("service_tier") or self.requested_service_tier
        if tier == "default" and self.requested_tier_wins_over_default and self.requested_service_tier:
            tier = self.requested_service_tier
        apply_service_tier(
            self.writer.output.usage, tier if isinstance(tier, str) else None, self.writer.model.id
        )
        status = data.get("status")
        if status is None:
            reason: StopReason = "stop"
        elif status in _STOP_REASONS:
            reason = _STOP_REASONS[status]
        else:
            raise ProviderError(f"Unhandled Responses status: {status}")
        output = self.writer.output
        output.stop_reason = reason
        if isinstance(status, str):
            incomplete = _object(data.get("incomplete_details")).get("reason")
            output.raw_stop_reason = (
                f"{status}.{incomplete}" if isinstance(incomplete, str) and incomplete else status
            )
        if reason == "error":
            output.error_message = f"Response ended with status {status}"
        self.completed = True

    # -- helpers -------------------------------------------------------------------------------

    def _output_index(self, event: JsonObject, *, new_item: bool = False) -> int:
        value = event.get("output_index")
        if isinstance(value, int):
            index = value
        else:
            index = self._last_output_index + 1 if new_item else self._last_output_index
        self._last_output_index = max(self._last_output_index, index)
        return index

    def _block_of(self, output_index: int, kind: type) -> int | None:
        index = self._blocks.get(output_index)
        if index is None or not isinstance(self.writer.output.content[index], kind):
            return None
        return index


def _tool_call_id(item: JsonObject) -> str:
    return f"{_string(item.get('call_id'))}|{_string(item.get('id'))}"


def _failure_message(response: Any) -> str:
    data = _object(response)
    error = data.get("error")
    if isinstance(error, dict):
        return f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
    reason = _object(data.get("incomplete_details")).get("reason")
    if reason:
        return f"incomplete: {reason}"
    return "Unknown error (no error details in response)"


def _error_event_message(event: JsonObject) -> str:
    message = _string(event.get("message"))
    error = event.get("error")
    if not message and isinstance(error, dict):
        message = _string(error.get("message"))
    code = event.get("code") or (error.get("code") if isinstance(error, dict) else None)
    message = message or "Unknown error"
    return f"Error Code {code}: {message}" if code else message


def _object(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
