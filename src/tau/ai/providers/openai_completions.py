"""OpenAI Chat Completions (``openai-completions``), the protocol of most OpenAI-compatible servers.

One module for the whole round trip: ``build_body`` / ``build_headers`` turn a ``Context`` into the
request (tuned per server by ``openai_compat``), and ``ChunkReader`` turns the streamed
``chat.completion.chunk`` objects into writer calls. Tool calls are tracked by their stream
``index``, so parallel calls whose argument fragments interleave land in the right blocks.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any, cast

from msgspec.structs import replace

from tau.ai.constrained_sampling import (
    GrammarInput,
    declared_tools,
    grammar_input_properties,
    json_schema_parameters,
    resolve_grammar,
)
from tau.ai.cost import apply_reported_cost
from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, resolve_cache_retention, stream_event_hook
from tau.ai.providers import completions_updates
from tau.ai.providers.openai_compat import OpenAICompletionsCompat, resolve_compat, thinking_budget_field
from tau.ai.providers.openai_completions_convert import convert_messages
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.thinking import (
    DEFAULT_THINKING_BUDGETS,
    clamp_reasoning,
    clamp_thinking_level,
    map_thinking_level,
    resolve_sampling_params,
    supports_xhigh,
)
from tau.ai.transport.http import (
    HttpStatusError,
    apply_payload_hook,
    bearer,
    gateway_auth,
    iter_sse,
    merge_headers,
    notify_stream_event,
    open_stream,
)
from tau.ai.types import (
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    JsonObject,
    Message,
    Model,
    StopReason,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

# Delta fields that carry reasoning text, by preference; servers such as chutes.ai send two at once.
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning", "reasoning_text")


# --- entry points ---------------------------------------------------------------------------------


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one response. Per-API options in ``options.extra``: ``tool_choice``, ``reasoning_effort``."""

    async def produce(writer: StreamWriter) -> None:
        compat = resolve_compat(model)
        retention = resolve_cache_retention(options.cache_retention)
        api_key = options.api_key or get_env_api_key(model.provider)
        # pi's Azure chat models share the Responses models' endpoint and deployment names.
        azure = _azure_target(model, options) if model.provider == "azure" else None
        base_url = azure[0] if azure is not None else model.base_url.rstrip("/")
        url = f"{base_url}/chat/completions"
        headers = build_headers(model, context, options, api_key, compat=compat, retention=retention)
        grammar_inputs = grammar_input_properties(
            declared_tools(context), compat.supports_openai_grammar_tools
        )
        body = build_body(
            model, context, options, compat=compat, retention=retention, grammar_inputs=grammar_inputs
        )
        if azure is not None:
            body["model"] = azure[1]
        body = await apply_payload_hook(body, model, options)
        try:
            response = await open_stream(
                model,
                url,
                headers=headers,
                body=body,
                options=options,
                client_key=azure[0] if azure else None,
            )
        except HttpStatusError as exc:
            explained = _azure_explained(exc, model, azure) if azure is not None else None
            if explained is None:
                raise
            raise explained from exc
        writer.start()
        reader = ChunkReader(
            writer, supports_finish_reason=compat.supports_finish_reason, grammar_inputs=grammar_inputs
        )
        on_event = stream_event_hook(options)
        async with aclosing(iter_sse(response, options)) as events:
            async for event in events:
                chunk = event.json_object()
                if chunk is None:
                    data = event.data.strip()
                    if not data:
                        continue
                    if data == "[DONE]":
                        break
                    chunk = decode_chunk(data)
                if on_event is not None:
                    await notify_stream_event(on_event, chunk, model)
                reader.feed(chunk)
        reader.finish()

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level, mapped to the server's thinking parameters by ``build_body``."""
    effort = simple_reasoning_effort(model, options.reasoning)
    return stream(model, context, replace(options, extra={**options.extra, "reasoning_effort": effort}))


def simple_reasoning_effort(model: Model, reasoning: str | None) -> str | None:
    """The level to request: clamped to what the model supports; ``None`` means thinking off."""
    if reasoning is None or not model.reasoning:
        return None
    level = clamp_thinking_level(model, reasoning)
    if reasoning in ("xhigh", "max") and level not in ("xhigh", "max") and supports_xhigh(model):
        level = "xhigh"
    return None if level == "off" else level


def _azure_target(model: Model, options: StreamOptions) -> tuple[str, str]:
    """(endpoint, deployment) of an Azure chat model."""
    from tau.ai.providers import azure_config

    return azure_config.resolve_base_url(model, options.extra), azure_config.resolve_deployment_name(
        model, options.extra
    )


def _azure_explained(exc: HttpStatusError, model: Model, azure: tuple[str, str]) -> ProviderError | None:
    from tau.ai.providers import azure_config

    return azure_config.missing_deployment_error(exc, model, azure[1], azure[0])


# --- request --------------------------------------------------------------------------------------


def build_headers(
    model: Model,
    context: Context,
    options: StreamOptions,
    api_key: str | None,
    *,
    compat: OpenAICompletionsCompat | None = None,
    retention: CacheRetention | None = None,
) -> dict[str, str]:
    """Bearer auth, then ``model.headers``, then provider headers, then ``options.headers`` (later wins)."""
    compat = compat or resolve_compat(model)
    retention = retention or resolve_cache_retention(options.cache_retention)
    dynamic: dict[str, str] = {}
    if model.provider == "github-copilot":
        dynamic.update(copilot_headers(context.messages))
    session_id = options.session_id
    if session_id and compat.send_session_affinity_headers:
        dynamic.update(session_affinity_headers(compat, session_id))
    # Cloudflare's gateway reads the key from its own header; Authorization is left to the upstream.
    gateway = gateway_auth(model, api_key)
    headers = merge_headers(
        bearer(api_key) if gateway is None else {}, model.headers, dynamic, options.headers
    )
    return headers if not gateway else merge_headers(headers, gateway)


def copilot_headers(messages: list[Message]) -> dict[str, str]:
    """GitHub Copilot's per-request headers: who initiated the turn, and whether images are sent."""
    initiator = "agent" if messages and not isinstance(messages[-1], UserMessage) else "user"
    headers = {"X-Initiator": initiator, "Openai-Intent": "conversation-edits"}
    if any(_has_image(m) for m in messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def _has_image(message: Message) -> bool:
    if isinstance(message, (UserMessage, ToolResultMessage)) and not isinstance(message.content, str):
        return any(isinstance(block, ImageContent) for block in message.content)
    return False


def build_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    *,
    compat: OpenAICompletionsCompat | None = None,
    retention: CacheRetention | None = None,
    grammar_inputs: dict[str, str] | None = None,
) -> JsonObject:
    """The JSON request body, before ``on_payload`` sees it. ``grammar_inputs``: the input
    property of each tool that goes as a custom grammar tool (from the declared tools if not given)."""
    compat = compat or resolve_compat(model)
    retention = retention or resolve_cache_retention(options.cache_retention)
    if grammar_inputs is None:
        grammar_inputs = grammar_input_properties(
            declared_tools(context), compat.supports_openai_grammar_tools
        )
    if completions_updates.native(model, context):
        # Prompt and tool changes as system messages in place (supportsMidConvoSystemMessages).
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        context, slots = completions_updates.with_slots(
            model, context, role, lambda tools: convert_tools(tools, compat)
        )
        messages = completions_updates.fill_slots(
            convert_messages(model, context, compat, grammar_inputs), slots
        )
    else:
        messages = convert_messages(model, context, compat, grammar_inputs)
    body: JsonObject = {"model": model.id, "messages": messages, "stream": True}
    long_retention = retention == "long" and compat.supports_long_cache_retention
    match compat.prompt_cache_key_mode:
        case "enabled":
            cache_key = retention != "none"
        case "disabled":
            cache_key = False
        case _:
            cache_key = retention != "none" and ("api.openai.com" in model.base_url or long_retention)
    if options.session_id and cache_key:
        body["prompt_cache_key"] = options.session_id
    if long_retention:
        body["prompt_cache_retention"] = "24h"
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    if options.max_tokens:
        body[compat.max_tokens_field] = options.max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = convert_tools(context.tools, compat)
        if compat.zai_tool_stream:
            body["tool_stream"] = True
    elif compat.requires_tools_with_tool_history and has_tool_history(context.messages):
        # LiteLLM-style proxies to Anthropic reject tool history without a tools list.
        body["tools"] = []
    marker = _cache_marker(compat, retention)
    if marker is not None:
        _mark_cache_breakpoints(messages, body.get("tools"), marker)
    tool_choice = options.extra.get("tool_choice")
    if tool_choice:
        body["tool_choice"] = tool_choice
    if compat.vllm_priority is not None:
        body["priority"] = compat.vllm_priority
    effort = options.extra.get("reasoning_effort")
    _apply_thinking(body, model, compat, effort, options)
    budget_field = thinking_budget_field(compat)
    if budget_field is not None and model.reasoning:
        budget = _thinking_budget(body, model, effort if isinstance(effort, str) else None, options)
        if budget is not None:
            body[budget_field] = budget
    # Routing preferences as the compat gives them (pi 1.6 sends them whatever the endpoint).
    if compat.open_router_routing:
        body["provider"] = dict(compat.open_router_routing)
    if compat.vercel_gateway_routing:
        routing = compat.vercel_gateway_routing
        gateway = {key: routing[key] for key in ("only", "order") if routing.get(key)}
        if gateway:
            body["providerOptions"] = {"gateway": gateway}
    # Last, so the model's and the call's sampling parameters win over the fields named above.
    body.update(
        resolve_sampling_params(model, options.extra.get("reasoning_effort"), _request_sampling(options))
    )
    return body


def session_affinity_headers(compat: OpenAICompletionsCompat, session_id: str) -> dict[str, str]:
    """The session-affinity headers in the model's format (pi 1.6's ``sessionAffinityFormat``)."""
    if compat.session_affinity_format == "openrouter":
        return {"x-session-id": session_id}
    headers = {"session_id": session_id} if compat.session_affinity_format == "openai" else {}
    return {**headers, "x-client-request-id": session_id, "x-session-affinity": session_id}


def _request_sampling(options: StreamOptions) -> JsonObject | None:
    params = options.extra.get("sampling_params")
    return params if isinstance(params, dict) else None


def _apply_thinking(
    body: JsonObject,
    model: Model,
    compat: OpenAICompletionsCompat,
    effort: str | None,
    options: StreamOptions | None = None,
) -> None:
    """Thinking on/off and effort in the dialect the server understands (``thinkingFormat``), as
    pi 1.6 sends each; nothing for non-reasoning models."""
    if not model.reasoning:
        return
    level_map = model.thinking_level_map or {}
    off = level_map.get("off", "none") if "off" in level_map else "none"
    match compat.thinking_format:
        case "zai":
            body["thinking"] = (
                {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
            )
            if effort and compat.supports_reasoning_effort:
                mapped = level_map.get(effort, effort)
                if isinstance(mapped, str):
                    body["reasoning_effort"] = mapped
        case "qwen":
            body["enable_thinking"] = bool(effort)
            if effort and compat.supports_reasoning_effort:
                body["reasoning_effort"] = effort_value(model, compat, effort)
        case "qwen-chat-template":
            body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
        case "chat-template" | "baseten":
            budget = _thinking_budget(body, model, effort, options)
            values = (
                compat.chat_template_kwargs
                if compat.thinking_format == "chat-template"
                else compat.chat_template_args
            )
            resolved = _chat_template_values(model, effort, values, budget)
            if resolved:
                body[
                    "chat_template_kwargs"
                    if compat.thinking_format == "chat-template"
                    else "chat_template_args"
                ] = resolved
            if compat.thinking_format == "baseten" and compat.supports_reasoning_effort:
                key = effort if effort else "off"
                mapped = level_map.get(key, effort)
                if isinstance(mapped, str):
                    body["reasoning_effort"] = mapped
        case "deepseek":
            if effort:
                body["thinking"] = {"type": "enabled"}
            elif not ("off" in level_map and level_map["off"] is None):
                body["thinking"] = {"type": "disabled"}
            if effort and compat.supports_reasoning_effort:
                body["reasoning_effort"] = effort_value(model, compat, effort)
        case "openrouter":
            if effort:
                body["reasoning"] = {"effort": effort_value(model, compat, effort)}
            elif not ("off" in level_map and level_map["off"] is None):
                # A null "off" marks routes where reasoning is mandatory: say nothing.
                body["reasoning"] = {"effort": off or "none"}
        case "ant-ling":
            mapped = level_map.get(effort) if effort else None
            if isinstance(mapped, str):
                body["reasoning"] = {"effort": mapped}
        case "together":
            body["reasoning"] = {"enabled": bool(effort)}
            if effort and compat.supports_reasoning_effort:
                body["reasoning_effort"] = effort_value(model, compat, effort)
        case "string-thinking":
            if effort:
                body["thinking"] = effort_value(model, compat, effort)
            elif not ("off" in level_map and level_map["off"] is None):
                body["thinking"] = off or "none"
        case _:
            if not compat.supports_reasoning_effort:
                return
            if effort:
                body["reasoning_effort"] = effort_value(model, compat, effort)
            elif isinstance(level_map.get("off"), str):
                body["reasoning_effort"] = level_map["off"]


def _thinking_budget(
    body: JsonObject, model: Model, effort: str | None, options: StreamOptions | None
) -> int | None:
    """The thinking budget of ``effort`` within the request's output cap (``$var: thinking.budget``)."""
    if not effort:
        return None
    ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
    custom = getattr(options, "thinking_budgets", None) if options is not None else None
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom or {})}
    level = clamp_reasoning(cast(ThinkingLevel, effort))
    budget = min(budgets.get(level, budgets["high"]), max(0, int(ceiling) - 1024))
    return budget if budget > 0 else None


def _chat_template_values(
    model: Model, effort: str | None, values: JsonObject, budget: int | None
) -> JsonObject:
    level_map = model.thinking_level_map or {}
    resolved: JsonObject = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            resolved[key] = value
            continue
        if not effort and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            resolved[key] = bool(effort)
        elif var == "thinking.budget":
            if budget is not None:
                resolved[key] = budget
        else:
            level = effort if effort else "off"
            if level not in level_map:
                if effort:
                    resolved[key] = effort
            elif isinstance(level_map[level], str):
                resolved[key] = level_map[level]
    return resolved


def effort_value(model: Model, compat: OpenAICompletionsCompat, level: str) -> str:
    """The server's value for ``level``: ``thinkingLevelMap``, else the 0.58 ``reasoningEffortMap``, else the level."""
    if model.thinking_level_map and level in model.thinking_level_map:
        return map_thinking_level(model, level) or level
    return compat.reasoning_effort_map.get(level, level)


def has_tool_history(messages: list[Message]) -> bool:
    return any(
        isinstance(m, ToolResultMessage) or (isinstance(m, AssistantMessage) and bool(m.tool_calls()))
        for m in messages
    )


def convert_tools(tools: list[Tool], compat: OpenAICompletionsCompat) -> list[JsonObject]:
    """Function tools (strict where the tool asks and the compat allows, as pi 1.6), and custom
    tools for grammar tools where the compat has ``supportsOpenAIGrammarTools``."""
    out: list[JsonObject] = []
    for tool in tools:
        grammar = resolve_grammar(tool, compat.supports_openai_grammar_tools)
        if grammar is not None:
            out.append(
                {
                    "type": "custom",
                    "custom": {
                        "name": tool.name,
                        "description": tool.description,
                        "format": {
                            "type": "grammar",
                            "grammar": {"syntax": grammar.syntax, "definition": grammar.definition},
                        },
                    },
                }
            )
            continue
        strict = json_schema_parameters(tool, compat.supports_strict_mode)
        function: JsonObject = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if strict is None else strict,
        }
        if compat.supports_strict_mode:
            function["strict"] = strict is not None
        out.append({"type": "function", "function": function})
    return out


def _cache_marker(compat: OpenAICompletionsCompat, retention: CacheRetention) -> JsonObject | None:
    if compat.cache_control_format != "anthropic" or retention == "none":
        return None
    marker: JsonObject = {"type": "ephemeral"}
    if retention == "long" and compat.supports_long_cache_retention:
        marker["ttl"] = "1h"
    return marker


def _mark_cache_breakpoints(
    messages: list[JsonObject], tools: list[JsonObject] | None, marker: JsonObject
) -> None:
    """Anthropic-style breakpoints: the system prompt, the last tool, the last user/assistant text.

    Marked messages are copies: the unmarked ones are shared with later requests.
    """
    for index, message in enumerate(messages):
        if message["role"] in ("system", "developer"):
            marked = _marked_last_text(message, marker)
            if marked is not None:
                messages[index] = marked
            break
    if tools:
        tools[-1]["cache_control"] = dict(marker)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] in ("user", "assistant"):
            marked = _marked_last_text(message, marker)
            if marked is not None:
                messages[index] = marked
                break


def _marked_last_text(message: JsonObject, marker: JsonObject) -> JsonObject | None:
    """A copy of ``message`` whose last text carries ``marker``; ``None`` if it has no text."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(marker)}]}
    if isinstance(content, list):
        for index in range(len(content) - 1, -1, -1):
            part = content[index]
            if part.get("type") == "text":
                parts = list(content)
                parts[index] = {**part, "cache_control": dict(marker)}
                return {**message, "content": parts}
    return None


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- response -------------------------------------------------------------------------------------


def decode_chunk(data: str) -> JsonObject:
    """One SSE ``data`` payload as an object; anything else is a protocol error."""
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise ProviderError(f"Malformed stream chunk from provider: {data[:200]}") from exc
    if not isinstance(chunk, dict):
        raise ProviderError(f"Unexpected stream chunk from provider: {data[:200]}")
    return chunk


def map_finish_reason(reason: str) -> tuple[StopReason, str | None]:
    """The stop reason for a ``finish_reason``, with an error message when it means failure."""
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def describe_stream_error(error: Any) -> str:
    """The message of an ``error`` object sent inside the stream (OpenRouter's ``metadata.raw`` appended)."""
    if not isinstance(error, dict):
        return str(error)
    message = error.get("message")
    text = message if isinstance(message, str) and message else _compact_json(error)
    code = error.get("code")
    if code is not None and str(code) not in text:
        text = f"{code} {text}"
    metadata = error.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    return f"{text}\n{raw}" if isinstance(raw, str) and raw else text


def usage_counts(raw: JsonObject) -> tuple[int, int, int, int]:
    """``(input, output, cache_read, cache_write)`` from a usage object, taking the first positive of equivalent fields."""
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    prompt = _first_positive(raw.get("prompt_tokens"), raw.get("promptTokenCount"))
    output = _first_positive(raw.get("completion_tokens"))
    if not output:
        output = _first_positive(raw.get("candidatesTokenCount")) + _first_positive(
            raw.get("thoughtsTokenCount")
        )
    cached = _first_positive(details.get("cached_tokens"))
    read = cached or _first_positive(
        raw.get("prompt_cache_hit_tokens"),
        raw.get("cache_read_input_tokens"),
        raw.get("cachedContentTokenCount"),
    )
    details_write = _first_positive(details.get("cache_write_tokens"))
    write = details_write or _first_positive(raw.get("cache_creation_input_tokens"))
    if cached and details_write:
        # OpenRouter counts this request's cache writes inside cached_tokens as well.
        read = max(0, cached - details_write)
    return max(0, prompt - read - write), output, read, write


def reasoning_tokens(raw: JsonObject) -> int:
    """The reasoning tokens a usage object counts among the completion tokens (0 when it names none)."""
    details = raw.get("completion_tokens_details")
    details = details if isinstance(details, dict) else {}
    return _first_positive(details.get("reasoning_tokens"), raw.get("reasoning_tokens"))


def is_openrouter(model: Model) -> bool:
    return model.provider == "openrouter" or "openrouter.ai" in model.base_url


def _first_positive(*values: Any) -> int:
    for value in values:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
    return 0


class ChunkReader:
    """Feeds decoded ``chat.completion.chunk`` objects to a ``StreamWriter``.

    One text block and one thinking block per response (deltas of a kind always extend the same
    block); tool-call blocks are keyed by stream ``index``, falling back to the call ``id``.
    """

    def __init__(
        self,
        writer: StreamWriter,
        *,
        supports_finish_reason: bool = True,
        grammar_inputs: dict[str, str] | None = None,
    ) -> None:
        self.writer = writer
        self.supports_finish_reason = supports_finish_reason
        # Custom tool calls: the input property of each grammar tool; a call's input by block.
        self.grammar_inputs = grammar_inputs or {}
        self._custom_inputs: dict[int, GrammarInput] = {}
        self.finish_reason: str | None = None
        self._text: int | None = None
        self._thinking: int | None = None
        self._tools_by_index: dict[int, int] = {}
        self._tools_by_id: dict[str, int] = {}
        self._last_tool: int | None = None
        # Encrypted reasoning (OpenRouter) may name a tool call that has not started yet.
        self._pending_signatures: dict[str, str] = {}

    def feed(self, chunk: JsonObject) -> None:
        error = chunk.get("error")
        if error:
            raise ProviderError(describe_stream_error(error))
        self._note_identity(chunk)
        choices = chunk.get("choices")
        choice = (
            choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        )
        usage = chunk.get("usage")
        if not isinstance(usage, dict) and choice is not None:
            usage = choice.get("usage")  # Moonshot reports usage on the choice
        if isinstance(usage, dict):
            read = usage_counts(usage)
            self.writer.set_usage(
                input=read[0],
                output=read[1],
                cache_read=read[2],
                cache_write=read[3],
                reasoning=reasoning_tokens(usage),
            )
            if is_openrouter(self.writer.model):
                apply_reported_cost(self.writer.output.usage, usage)
        if choice is None:
            return
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish(reason)
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._apply_delta(delta)

    def finish(self) -> None:
        """Close the blocks. A stream that ended without ``finish_reason`` (``[DONE]`` or not) is an
        error, as in pi 1.6, unless the compat says the server never sends one
        (``supportsFinishReason: false``): then it stopped, for tool use if it holds tool calls."""
        self.writer.end_open_blocks()
        if self.finish_reason is not None:
            return
        if self.supports_finish_reason:
            raise ProviderError("Stream ended without finish_reason")
        output = self.writer.output
        output.stop_reason = "toolUse" if any(isinstance(b, ToolCall) for b in output.content) else "stop"

    def _note_identity(self, chunk: JsonObject) -> None:
        output = self.writer.output
        chunk_id = chunk.get("id")
        if output.response_id is None and isinstance(chunk_id, str) and chunk_id:
            output.response_id = chunk_id
        served = chunk.get("model")
        if output.response_model is None and isinstance(served, str) and served and served != output.model:
            output.response_model = served

    def _finish(self, reason: str) -> None:
        self.finish_reason = reason
        output = self.writer.output
        output.raw_stop_reason = reason
        output.stop_reason, output.error_message = map_finish_reason(reason)

    def _apply_delta(self, delta: JsonObject) -> None:
        # Runs once per streamed delta: plain loops and lookups, no generator or list per call.
        if len(delta) == 1 and self._text is not None:  # the usual delta: more of the text
            content = delta.get("content")
            if type(content) is str:
                if content:
                    self.writer.text_delta(self._text, content)
                return
        for field in REASONING_FIELDS:
            reasoning = delta.get(field)
            if isinstance(reasoning, str) and reasoning:
                if self._thinking is None:
                    self._thinking = self.writer.thinking_start(signature=field)
                self.writer.thinking_delta(self._thinking, reasoning)
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self._text is None:
                self._text = self.writer.text_start()
            self.writer.text_delta(self._text, content)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            for part in _dicts(tool_calls):
                self._apply_tool_delta(part)
        details = delta.get("reasoning_details")
        if details:
            for detail in _dicts(details):
                self._apply_reasoning_detail(detail)

    def _apply_tool_delta(self, part: JsonObject) -> None:
        raw_index = part.get("index")
        stream_index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else None
        raw_id = part.get("id")
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        raw_function = part.get("function")
        function: JsonObject = raw_function if isinstance(raw_function, dict) else {}
        raw_custom = part.get("custom")
        # A custom tool call (grammar tool) streams raw input text, not JSON arguments.
        custom: JsonObject | None = (
            raw_custom if isinstance(raw_custom, dict) and not isinstance(raw_function, dict) else None
        )
        raw_name = function.get("name") if custom is None else custom.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        index = self._find_tool(stream_index, call_id)
        if index is None:
            index = self.writer.toolcall_start(call_id or "", name)
        else:
            block = self.writer.tool_call(index)
            if not block.id and call_id:
                block.id = call_id
            if not block.name and name:
                block.name = name
        if stream_index is not None:
            self._tools_by_index[stream_index] = index
        if call_id:
            self._tools_by_id[call_id] = index
            signature = self._pending_signatures.pop(call_id, None)
            if signature is not None:
                self.writer.tool_call(index).thought_signature = signature
        self._last_tool = index
        if custom is not None:
            self._apply_custom_input(index, custom)
            return
        if index in self._custom_inputs:
            return  # JSON arguments for a call that streams custom input: pi ignores them
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the object itself
            arguments = _compact_json(arguments)
        if isinstance(arguments, str) and arguments:
            self.writer.toolcall_delta(index, arguments)

    def _apply_custom_input(self, index: int, custom: JsonObject) -> None:
        tool_input = self._custom_inputs.get(index)
        if tool_input is None:
            # An unknown tool's input still needs a home: "input", as pi 1.6 keeps it.
            block = self.writer.tool_call(index)
            tool_input = GrammarInput(self.grammar_inputs.get(block.name, "input"))
            self._custom_inputs[index] = tool_input
            block.arguments = {tool_input.input_property: ""}
        text = custom.get("input")
        delta = tool_input.append(text) if isinstance(text, str) and text else None
        self.writer.toolcall_input(index, tool_input, delta)

    def _find_tool(self, stream_index: int | None, call_id: str | None) -> int | None:
        """The block a tool-call delta continues, or ``None`` when it starts a new call."""
        if stream_index is not None and stream_index in self._tools_by_index:
            index = self._tools_by_index[stream_index]
            known_id = self.writer.tool_call(index).id
            # Some servers number every call 0; a new id at a used index is a new call.
            if call_id is None or not known_id or known_id == call_id:
                return index
            return None
        if stream_index is not None:
            return None  # a new index is a new call, even when a server repeats an id
        if call_id is not None:
            return self._tools_by_id.get(call_id)
        return self._last_tool if stream_index is None else None

    def _apply_reasoning_detail(self, detail: JsonObject) -> None:
        call_id = detail.get("id")
        if detail.get("type") != "reasoning.encrypted" or not call_id or not detail.get("data"):
            return
        signature = _compact_json(detail)
        index = self._tools_by_id.get(call_id) if isinstance(call_id, str) else None
        if index is None:
            self._pending_signatures[str(call_id)] = signature
        else:
            self.writer.tool_call(index).thought_signature = signature


def _dicts(value: Any) -> list[JsonObject]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


__all__ = [
    "ChunkReader",
    "build_body",
    "build_headers",
    "convert_messages",
    "map_finish_reason",
    "simple_reasoning_effort",
    "stream",
    "stream_simple",
    "usage_counts",
]
