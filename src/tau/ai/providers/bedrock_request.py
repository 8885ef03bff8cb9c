"""Building a Bedrock ConverseStream request body from a ``Context`` (pure: no I/O, no botocore).

The body is the JSON the service takes at ``POST /model/{modelId}/converse-stream``: blobs (image
bytes, encrypted reasoning) travel as base64 strings, which is how tau already stores them.
Options specific to this API ride in ``options.extra``: ``reasoning`` (a thinking level),
``thinking_budgets``, ``thinking_display`` (default ``"summarized"``), ``interleaved_thinking``
(default true), ``tool_choice`` (``"auto"``, ``"any"``, ``"none"`` or ``{"type": "tool", "name": …}``)
and ``request_metadata``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from tau.ai.constrained_sampling import json_schema_parameters
from tau.ai.options import StreamOptions, resolve_cache_retention
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.thinking import DEFAULT_THINKING_BUDGETS
from tau.ai.transform import normalize_id_anthropic, transform_messages
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    JsonSchemaSampling,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

EMPTY_TEXT = "<empty>"
BETA_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
BETA_THINKING_BINDING = "thinking-binding-controls-2026-08-01"
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}

# Claude generations on Bedrock, matched against the id and the name (an application inference
# profile's ARN names no model, so a models.json name is the only clue).
_ADAPTIVE = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "haiku-5", "fable-5")
_NATIVE_XHIGH = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "haiku-5", "fable-5")
_CLAUDE_5 = ("fable-5", "opus-5", "sonnet-5", "haiku-5")
_GPT_EFFORTS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_GPT_OSS_EFFORTS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


def _candidates(model: Model) -> list[str]:
    values = [model.id, model.name] if model.name else [model.id]
    out: list[str] = []
    for value in values:
        lower = value.lower()
        out += [lower, re.sub(r"[\s_.:]+", "-", lower)]
    return out


def _mentions(model: Model, markers: tuple[str, ...]) -> bool:
    return any(marker in candidate for candidate in _candidates(model) for marker in markers)


def is_claude(model: Model) -> bool:
    lowered_id = model.id.lower()
    return (
        "anthropic.claude" in lowered_id or "anthropic/claude" in lowered_id or "claude" in model.name.lower()
    )


def supports_adaptive_thinking(model: Model) -> bool:
    """An explicit ``compat.forceAdaptiveThinking`` (true or false) decides; else, as pi 1.6 does for
    Bedrock (whose catalogue carries no such flag), the Claude generation named by the id or name."""
    forced = (model.compat or {}).get("forceAdaptiveThinking")
    if isinstance(forced, bool):
        return forced
    return _mentions(model, _ADAPTIVE)


def supports_prompt_caching(model: Model, env: Mapping[str, str]) -> bool:
    """Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5; any model when ``AWS_BEDROCK_FORCE_CACHE=1`` (Nova caches itself)."""
    if not _mentions(model, ("claude",)):
        return env.get("AWS_BEDROCK_FORCE_CACHE") == "1"
    return _mentions(model, (*_CLAUDE_5, "-4-", "claude-3-7-sonnet", "claude-3-5-haiku"))


def is_gov_cloud(model: Model, region: str | None) -> bool:
    lowered = model.id.lower()
    return bool(region and region.lower().startswith("us-gov-")) or lowered.startswith(
        ("us-gov.", "arn:aws-us-gov:")
    )


def build_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    *,
    region: str | None = None,
    env: Mapping[str, str] | None = None,
    non_strict: bool = False,
) -> JsonObject:
    """The JSON body of a ConverseStream request (the model id goes in the URL, not here);
    ``non_strict`` sends every tool without ``strict`` (``convert_tool_config``)."""
    env = os.environ if env is None else env
    retention = resolve_cache_retention(options.cache_retention)
    cache_point = (
        _cache_point(retention) if retention != "none" and supports_prompt_caching(model, env) else None
    )
    body: JsonObject = {"messages": convert_messages(context, model, cache_point)}
    if context.system_prompt:
        system: list[JsonObject] = [{"text": sanitize_surrogates(context.system_prompt)}]
        if cache_point is not None:
            system.append({"cachePoint": dict(cache_point)})
        body["system"] = system
    inference: JsonObject = {}
    max_tokens = options.max_tokens or (model.max_tokens if is_claude(model) else None)
    if max_tokens:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    tool_config = convert_tool_config(
        context.tools,
        options.extra.get("tool_choice"),
        strict=supports_strict_mode(model),
        non_strict=non_strict,
    )
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fields = additional_model_request_fields(model, options, region)
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    metadata = options.extra.get("request_metadata")
    if isinstance(metadata, dict):
        body["requestMetadata"] = metadata
    return body


def _cache_point(retention: str) -> JsonObject:
    point: JsonObject = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return point


# --- messages -------------------------------------------------------------------------------------


def convert_messages(context: Context, model: Model, cache_point: JsonObject | None) -> list[JsonObject]:
    """Bedrock's turns: consecutive tool results share one user turn; blank text never goes out."""
    transformed = transform_messages(
        context.messages, model, lambda call_id, _m, _s: normalize_id_anthropic(call_id)
    )
    out: list[JsonObject] = []
    pending: list[ToolResultMessage] = []
    for message in transformed:
        if isinstance(message, ToolResultMessage):
            pending.append(message)
            continue
        if pending:
            out.append(_tool_results_turn(pending, model))
            pending = []
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            content = _assistant_content(message, model)
            if content:
                out.append({"role": "assistant", "content": content})
    if pending:
        out.append(_tool_results_turn(pending, model))
    if cache_point is not None and out and out[-1]["role"] == "user":
        out[-1]["content"].append({"cachePoint": dict(cache_point)})
    return out


def _text_block(text: str) -> JsonObject | None:
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _image_block(image: ImageContent) -> JsonObject:
    image_format = _IMAGE_FORMATS.get(image.mime_type)
    if image_format is None:
        raise ValueError(f"Bedrock cannot take an image of type {image.mime_type!r} (jpeg, png, gif or webp)")
    return {"image": {"format": image_format, "source": {"bytes": image.data}}}


def _user_content(content: str | list[UserContent]) -> list[JsonObject]:
    if isinstance(content, str):
        return [_text_block(content) or {"text": EMPTY_TEXT}]
    blocks: list[JsonObject] = []
    for block in content:
        converted = _text_block(block.text) if isinstance(block, TextContent) else _image_block(block)
        if converted is not None:
            blocks.append(converted)
    return blocks or [{"text": EMPTY_TEXT}]


def _assistant_content(message: AssistantMessage, model: Model) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for block in message.content:
        converted: JsonObject | None
        if isinstance(block, TextContent):
            converted = _text_block(block.text)
        elif isinstance(block, ToolCall):
            converted = {
                "toolUse": {"toolUseId": block.id, "name": block.name, "input": _document(block.arguments)}
            }
        else:
            converted = _reasoning_block(block, model)
        if converted is not None:
            blocks.append(converted)
    return blocks


def _reasoning_block(block: ThinkingContent, model: Model) -> JsonObject | None:
    signature = block.thinking_signature or ""
    if block.redacted:
        # Encrypted reasoning (stored as base64, Bedrock's JSON form of a blob) goes back verbatim.
        return {"reasoningContent": {"redactedContent": signature}} if signature else None
    thinking = sanitize_surrogates(block.thinking)
    if not thinking.strip():
        return None
    if not is_claude(model):
        # Only Claude takes a signature; other models refuse the field.
        return {"reasoningContent": {"reasoningText": {"text": thinking}}}
    if not signature.strip():
        # Unsigned thinking (an aborted stream, another model) cannot be replayed as reasoning.
        return {"text": thinking}
    return {"reasoningContent": {"reasoningText": {"text": block.thinking, "signature": signature}}}


def _document(value: object) -> object:
    """A JSON document Bedrock accepts: objects lose empty keys, which it refuses."""
    if isinstance(value, list):
        return [_document(item) for item in value]
    if isinstance(value, dict):
        return {key: _document(item) for key, item in value.items() if key}
    return value


def _tool_results_turn(results: list[ToolResultMessage], model: Model) -> JsonObject:
    content: list[JsonObject] = []
    trailing: list[JsonObject] = []
    # Claude refuses images inside an error result: they follow the turn's results, captioned.
    split_images = is_claude(model)
    for result in results:
        blocks = result.content
        if split_images and result.is_error and any(isinstance(b, ImageContent) for b in blocks):
            images = [b for b in blocks if isinstance(b, ImageContent)]
            blocks = [b for b in blocks if not isinstance(b, ImageContent)]
            trailing.append(
                {"text": f"Images from the failed {result.tool_name} call ({result.tool_call_id}):"}
            )
            trailing += [_image_block(image) for image in images]
        content.append(
            {
                "toolResult": {
                    "toolUseId": result.tool_call_id,
                    "content": _tool_result_content(blocks),
                    "status": "error" if result.is_error else "success",
                }
            }
        )
    return {"role": "user", "content": content + trailing}


def _tool_result_content(blocks: list[UserContent]) -> list[JsonObject]:
    out: list[JsonObject] = []
    for block in blocks:
        converted = _text_block(block.text) if isinstance(block, TextContent) else _image_block(block)
        if converted is not None:
            out.append(converted)
    return out or [{"text": EMPTY_TEXT}]


# --- tools ----------------------------------------------------------------------------------------


def supports_strict_mode(model: Model) -> bool:
    """``compat.supportsStrictMode``: whether the model takes strict tool schemas (off by default)."""
    return (model.compat or {}).get("supportsStrictMode") is True


def convert_tool_config(
    tools: list[Tool] | None, tool_choice: object, *, strict: bool = False, non_strict: bool = False
) -> JsonObject | None:
    """``toolConfig``; with ``strict`` (the model's ``supportsStrictMode``), a tool that asks for
    JSON-schema sampling goes with ``strict: true`` and its schema made strict where the schema
    allows, as pi 1.6 sends it; ``non_strict`` (the session's strict tools went over Claude's
    limits) sends the ``prefer`` ones as any other tool."""
    if not tools or tool_choice == "none":
        return None
    specs: list[JsonObject] = []
    for tool in tools:
        constrained = None if non_strict and _prefers_strict(tool) else json_schema_parameters(tool, strict)
        spec: JsonObject = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": tool.parameters if constrained is None else constrained},
        }
        if constrained is not None:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    config: JsonObject = {"tools": specs}
    if tool_choice in ("auto", "any"):
        config["toolChoice"] = {str(tool_choice): {}}
    elif isinstance(tool_choice, dict) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice.get("name")}}
    return config


# --- reasoning ------------------------------------------------------------------------------------


def additional_model_request_fields(
    model: Model, options: StreamOptions, region: str | None
) -> JsonObject | None:
    """The model-specific thinking switches Converse passes through to the model."""
    level = options.extra.get("reasoning")
    if not isinstance(level, str) or not model.reasoning:
        return None
    if is_claude(model):
        return _claude_thinking(model, options, level, region)
    if _mentions(model, ("gpt-oss",)):
        return {"reasoning_effort": _GPT_OSS_EFFORTS.get(level, "high")}
    if _mentions(model, ("gpt-",)):
        mapped = (model.thinking_level_map or {}).get(level)
        return {
            "reasoning": {"effort": mapped if isinstance(mapped, str) else _GPT_EFFORTS.get(level, "high")}
        }
    return None


def _claude_thinking(model: Model, options: StreamOptions, level: str, region: str | None) -> JsonObject:
    extra = options.extra
    gov_cloud = is_gov_cloud(model, region)  # GovCloud's Converse schema lacks display and binding
    display = None if gov_cloud else extra.get("thinking_display", "summarized")
    thinking: JsonObject
    fields: JsonObject
    if supports_adaptive_thinking(model):
        thinking = {"type": "adaptive"}
        if display:
            thinking["display"] = display
        fields = {"thinking": thinking, "output_config": {"effort": _claude_effort(model, level)}}
        if not gov_cloud and _mentions(model, _NATIVE_XHIGH):
            # Signed thinking is bound to the prompt and tools it was made with: drop stale blocks.
            thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
            fields["anthropic_beta"] = [BETA_THINKING_BINDING]
        return fields
    budgets = extra.get("thinking_budgets") or {}
    clamped = "high" if level in ("xhigh", "max") else level
    budget = budgets.get(clamped) if isinstance(budgets, dict) else None
    thinking = {"type": "enabled", "budget_tokens": budget or DEFAULT_THINKING_BUDGETS.get(clamped, 16384)}
    if display:
        thinking["display"] = display
    fields = {"thinking": thinking}
    if extra.get("interleaved_thinking", True):
        fields["anthropic_beta"] = [BETA_INTERLEAVED_THINKING]
    return fields


def _claude_effort(model: Model, level: str) -> str:
    if level == "xhigh" and _mentions(model, _NATIVE_XHIGH):
        return "xhigh"
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def has_strict_tools(model: Model, context: Context, options: StreamOptions) -> bool:
    """Whether the request sends a ``prefer`` tool ``strict`` (the ones a fallback sends without)."""
    if not supports_strict_mode(model) or options.extra.get("tool_choice") == "none":
        return False
    return any(
        _prefers_strict(tool) and json_schema_parameters(tool, True) is not None
        for tool in context.tools or ()
    )


def _prefers_strict(tool: Tool) -> bool:
    sampling = tool.constrained_sampling
    return isinstance(sampling, JsonSchemaSampling) and sampling.strict == "prefer"
