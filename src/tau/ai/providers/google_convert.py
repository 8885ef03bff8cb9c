"""Building Gemini ``generateContent`` request bodies from tau's data model.

Shared by every API that speaks Gemini's wire format (``google-generative-ai``, ``google-vertex``,
``google-gemini-cli``): messages become ``contents`` (roles ``user`` / ``model``), tools become
``functionDeclarations``, and the thinking, tool-choice and sampling options become
``generationConfig`` / ``toolConfig``.
Everything here is pure: no HTTP, no environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from tau.ai.constrained_sampling import json_schema_parameters
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.transform import ReplayHistory, normalize_id_google
from tau.ai.transport.gc_pause import collector_paused
from tau.ai.transport.request_cache import (
    CachedFragment,
    Continuation,
    FragmentList,
    MessageMemo,
    cached_fragment,
)
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.wire_history import WireHistory, continue_history

# Gemini 3 rejects a replayed function call without a thought signature; this documented sentinel
# tells it to skip the check (used for calls written by other models or by non-thinking turns).
SKIP_THOUGHT_SIGNATURE: Final = "skip_thought_signature_validator"
TOOL_RESULT_IMAGE_INTRO: Final = "Tool result image:"
IMAGE_ONLY_TOOL_RESULT: Final = "(see attached image)"

_TOOL_CHOICE_MODES: Final[Mapping[str, str]] = {"auto": "AUTO", "none": "NONE", "any": "ANY"}
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


# --- model families -----------------------------------------------------------------------------


def is_gemini_3(model_id: str) -> bool:
    """Gemini 3 models need signed function calls and accept images inside function responses."""
    return "gemini-3" in model_id.lower()


def requires_tool_call_id(model_id: str) -> bool:
    """Claude and gpt-oss models served through Google's API need explicit call ids."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def is_valid_thought_signature(signature: str | None) -> bool:
    """Thought signatures are bytes on the wire, so anything that is not base64 would be rejected."""
    if not signature or len(signature) % 4:
        return False
    return _BASE64.fullmatch(signature) is not None


# --- messages -----------------------------------------------------------------------------------


_fragments = MessageMemo()


class _GoogleHistory(WireHistory):
    """A history's Gemini ``contents`` so far, extended request by request (``Continuation``)."""

    def __init__(self, model: Model) -> None:
        replay = ReplayHistory(
            model,
            lambda call_id, target, _source: normalize_id_google(call_id, target.id),
            "google-generative-ai",
        )
        super().__init__(replay, FragmentList())

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        fragment = _fragments.recall(message, lambda m: cached_fragment(_message_turn(m, self.model)))
        if fragment is not None:
            out.add(fragment)

    def add_tool_results(self, out: FragmentList, results: list[ToolResultMessage]) -> None:
        _add_tool_results(out, results, self.model)


_histories: Continuation[_GoogleHistory] = Continuation()


@collector_paused()  # a first request after a resume converts a whole history
def convert_messages(model: Model, messages: list[Message]) -> list[JsonObject]:
    """The ``contents`` list for ``model``: user, model and function-response turns.

    Each message's wire form is made once and reused by later requests (``tau.ai.transport.request_cache``).
    """
    key = (model.api, model.provider, model.id, "image" in model.input)
    history = continue_history(
        _histories, _fragments, key, key, model, messages, lambda: _GoogleHistory(model)
    )
    contents = history.request_items()
    _histories.keep(key, history)
    return contents


def _message_turn(message: Message, model: Model) -> JsonObject | None:
    if isinstance(message, UserMessage):
        parts = _user_parts(message, model)
        return {"role": "user", "parts": parts} if parts else None
    assert isinstance(message, AssistantMessage)
    parts = _assistant_parts(message, model)
    return {"role": "model", "parts": parts} if parts else None


def _add_tool_results(contents: FragmentList, results: list[ToolResultMessage], model: Model) -> None:
    """A run of tool results: the user turns ``_append_tool_result`` makes of them, made once."""
    last = contents[-1] if contents else None
    if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
        # The run continues the previous one's turn (a skipped empty turn sat between them): extend
        # a copy, since the previous turn is shared with other requests.
        built = [{**last, "parts": list(last["parts"])}]
        for result in results:
            _append_tool_result(built, result, model)
        contents[-1] = built[0]
        for turn in built[1:]:
            contents.add(turn)
        return

    def turns(run: Sequence[ToolResultMessage]) -> list[CachedFragment]:
        built: list[JsonObject] = []
        for result in run:
            _append_tool_result(built, result, model)
        return [CachedFragment(turn) for turn in built]

    for cached in _fragments.recall_run(results, turns):
        contents.add(cached)


def _user_parts(message: UserMessage, model: Model) -> list[JsonObject]:
    if isinstance(message.content, str):
        return _text_parts(message.content)
    parts: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.extend(_text_parts(block.text))
        elif "image" in model.input:
            parts.append(_inline_data(block))
    return parts


def _text_parts(text: str) -> list[JsonObject]:
    # Gemini refuses empty text parts ("empty text parameter").
    return [{"text": sanitize_surrogates(text)}] if text.strip() else []


def _inline_data(image: ImageContent) -> JsonObject:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _assistant_parts(message: AssistantMessage, model: Model) -> list[JsonObject]:
    # Signatures are only meaningful to the model that issued them.
    same_model = message.provider == model.provider and message.model == model.id

    def signature(value: str | None) -> str | None:
        return value if same_model and is_valid_thought_signature(value) else None

    parts: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part: JsonObject = {"text": sanitize_surrogates(block.text)}
            _set_signature(part, signature(block.text_signature))
            parts.append(part)
        elif isinstance(block, ThinkingContent):
            if not block.thinking.strip():
                continue
            if same_model:
                part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
                _set_signature(part, signature(block.thinking_signature))
            else:
                # Foreign reasoning is plain context here; no tags, models would imitate them.
                part = {"text": sanitize_surrogates(block.thinking)}
            parts.append(part)
        else:
            parts.append(_function_call_part(block, model, signature(block.thought_signature)))
    return parts


def _function_call_part(call: ToolCall, model: Model, signature: str | None) -> JsonObject:
    function_call: JsonObject = {"name": call.name, "args": call.arguments or {}}
    if requires_tool_call_id(model.id):
        function_call["id"] = call.id
    part: JsonObject = {"functionCall": function_call}
    if signature is None and is_gemini_3(model.id):
        signature = SKIP_THOUGHT_SIGNATURE
    _set_signature(part, signature)
    return part


def _set_signature(part: JsonObject, signature: str | None) -> None:
    if signature:
        part["thoughtSignature"] = signature


def _append_tool_result(contents: list[JsonObject], result: ToolResultMessage, model: Model) -> None:
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    images = (
        [_inline_data(b) for b in result.content if isinstance(b, ImageContent)]
        if "image" in model.input
        else []
    )
    value = (
        sanitize_surrogates(text) if text.strip() else (IMAGE_ONLY_TOOL_RESULT if images else "")
    )  # as pi 1.6
    response: JsonObject = {
        "name": result.tool_name,
        "response": {"error": value} if result.is_error else {"output": value},
    }
    nest_images = bool(images) and is_gemini_3(model.id)
    if nest_images:
        response["parts"] = images
    if requires_tool_call_id(model.id):
        response["id"] = result.tool_call_id
    part: JsonObject = {"functionResponse": response}

    # Parallel calls must be answered in one user turn.
    last = contents[-1] if contents else None
    if last is not None and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if images and not nest_images:
        # Older models take no images inside a function response: show them in a user turn.
        contents.append({"role": "user", "parts": [{"text": TOOL_RESULT_IMAGE_INTRO}, *images]})


# --- tools --------------------------------------------------------------------------------------


def convert_tools(
    context: Context, *, legacy_parameters: bool = False, strict: bool = False
) -> list[JsonObject] | None:
    """One ``functionDeclarations`` entry holding every tool, or ``None`` without tools.

    ``legacy_parameters`` sends the OpenAPI-style ``parameters`` field instead of
    ``parametersJsonSchema`` (needed by backends that translate schemas for Claude). With
    ``strict`` (``supports_strict_tools``), a tool that asks for constrained sampling has its
    schema made strict where the schema allows.
    """
    if not context.tools:
        return None
    key = "parameters" if legacy_parameters else "parametersJsonSchema"
    declarations = []
    for tool in context.tools:
        constrained = json_schema_parameters(tool, strict)
        parameters = tool.parameters if constrained is None else constrained
        declarations.append(
            {"name": tool.name, "description": tool.description, key: schema_for_google(parameters)}
        )
    return [{"functionDeclarations": declarations}]


_GEMINI_MAJOR = re.compile(r"gemini(?:-live)?-(\d+)")


def supports_strict_tools(model_id: str) -> bool:
    """Whether Gemini enforces a tool's schema (required parameters included) in its ``VALIDATED``
    function-calling mode: Gemini 3 and later, told by the model id as pi 1.6 tells it (the
    catalogue has no flag for it)."""
    match = _GEMINI_MAJOR.match(model_id.lower())
    return match is not None and int(match.group(1)) >= 3


def function_calling_mode(context: Context, choice: str | None, strict: bool) -> str | None:
    """``toolConfig.functionCallingConfig.mode``: ``NONE``/``ANY`` when asked, else ``VALIDATED``
    where a tool goes strict (its constrained sampling honoured), else the mode asked, if any."""
    if choice in ("none", "any"):
        return map_tool_choice(choice)
    if any(json_schema_parameters(tool, strict) is not None for tool in context.tools or ()):
        return "VALIDATED"
    return map_tool_choice(choice)


def map_tool_choice(choice: str | None) -> str | None:
    """``auto|none|any`` → ``AUTO|NONE|ANY``; unknown values fall back to ``AUTO``; ``None`` stays unset."""
    if choice is None:
        return None
    return _TOOL_CHOICE_MODES.get(choice, "AUTO")


# Keywords whose value is one schema, a list of schemas, or a name → schema map.
_SCHEMA_KEYS: Final = frozenset(
    {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"}
)
_SCHEMA_LIST_KEYS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAP_KEYS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def schema_for_google(schema: Any) -> Any:
    """A copy of a JSON Schema without ``const``, which Google rejects.

    ``{"const": x}`` becomes ``{"enum": [x]}``, and an ``anyOf``/``oneOf`` made only of such
    single values (what pydantic emits for ``Literal``) collapses into one ``enum``.
    """
    if isinstance(schema, list):
        return [schema_for_google(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: JsonObject = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {name: schema_for_google(sub) for name, sub in value.items()}
        elif key in _SCHEMA_KEYS or key in _SCHEMA_LIST_KEYS:
            out[key] = schema_for_google(value)
        elif key != "const":
            out[key] = value
    if "const" in schema and "enum" not in schema:
        out["enum"] = [schema["const"]]
    for key in ("anyOf", "oneOf"):
        collapsed = _collapse_literal_union(out.get(key))
        if collapsed is not None:
            del out[key]
            out.update({k: v for k, v in collapsed.items() if k not in out})
    return out


def _collapse_literal_union(branches: Any) -> JsonObject | None:
    """``[{"enum": [a]}, {"enum": [b]}]`` (same or no type) → ``{"type"?, "enum": [a, b]}``."""
    if not isinstance(branches, list) or not branches:
        return None
    values: list[Any] = []
    types: set[str] = set()
    for branch in branches:
        if not isinstance(branch, dict) or "enum" not in branch or set(branch) - {"enum", "type"}:
            return None
        values.extend(branch["enum"])
        if isinstance(branch.get("type"), str):
            types.add(branch["type"])
    if len(types) > 1:
        return None
    collapsed: JsonObject = {"enum": values}
    if types:
        collapsed = {"type": types.pop(), **collapsed}
    return collapsed


# --- thinking -----------------------------------------------------------------------------------

_GEMINI_3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI_3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
_GEMMA_4 = re.compile(r"gemma-?4")
_FLASH_LATEST_ALIASES: Final = frozenset({"gemini-flash-latest", "gemini-flash-lite-latest"})


def is_gemini_3_pro(model_id: str) -> bool:
    return _GEMINI_3_PRO.search(model_id.lower()) is not None


def is_gemini_3_flash(model_id: str) -> bool:
    lowered = model_id.lower()
    return _GEMINI_3_FLASH.search(lowered) is not None or lowered in _FLASH_LATEST_ALIASES


def is_gemma_4(model_id: str) -> bool:
    return _GEMMA_4.search(model_id.lower()) is not None


def uses_thinking_level(model_id: str) -> bool:
    """Families configured by ``thinkingLevel`` rather than a token budget."""
    return is_gemini_3_pro(model_id) or is_gemini_3_flash(model_id) or is_gemma_4(model_id)


def maps_thinking_levels(model: Model) -> bool:
    """Whether the catalogue maps the model's levels to Gemini level names (its ``thinkingLevelMap``
    names one), which only the ``thinkingLevel`` control takes; models without a map are told
    apart by family (``uses_thinking_level``)."""
    return any(isinstance(value, str) for value in (model.thinking_level_map or {}).values())


def thinking_config(model: Model, thinking: Mapping[str, Any] | None) -> JsonObject | None:
    """``generationConfig.thinkingConfig`` for the ``thinking`` option, or ``None`` to send nothing.

    Enabled: ``includeThoughts`` plus a level or a budget. Disabled on a reasoning model: the
    quietest setting the family allows (Gemini 3 cannot fully switch thinking off).
    """
    if not model.reasoning or thinking is None:
        return None
    if not thinking.get("enabled"):
        return disabled_thinking_config(model.id)
    config: JsonObject = {"includeThoughts": True}
    level = thinking.get("level")
    budget = thinking.get("budget_tokens")
    if level is not None:
        config["thinkingLevel"] = level
    elif budget is not None:
        config["thinkingBudget"] = budget
    return config


def disabled_thinking_config(model_id: str) -> JsonObject:
    if is_gemini_3_pro(model_id):
        return {"thinkingLevel": "LOW"}
    if is_gemini_3_flash(model_id) or is_gemma_4(model_id):
        return {"thinkingLevel": "MINIMAL"}
    return {"thinkingBudget": 0}


_GEMINI_3_PRO_LEVELS: Final[Mapping[str, str]] = {
    "minimal": "LOW",
    "low": "LOW",
    "medium": "HIGH",
    "high": "HIGH",
}
_GEMMA_4_LEVELS: Final[Mapping[str, str]] = {
    "minimal": "MINIMAL",
    "low": "MINIMAL",
    "medium": "HIGH",
    "high": "HIGH",
}
_GEMINI_25_PRO_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 128,
    "low": 2048,
    "medium": 8192,
    "high": 32768,
}
_GEMINI_25_FLASH_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 128,
    "low": 2048,
    "medium": 8192,
    "high": 24576,
}
_GEMINI_25_FLASH_LITE_BUDGETS: Final[Mapping[str, int]] = {**_GEMINI_25_FLASH_BUDGETS, "minimal": 512}


def thinking_option_for_level(
    model: Model, level: str | None, custom_budgets: Mapping[str, int] | None = None
) -> JsonObject:
    """The ``thinking`` option for a reasoning level (``None`` = off).

    ``level`` must already be clamped to what the model supports and to at most ``high``.
    Level-based families get a ``thinkingLevel`` (a string in the model's ``thinkingLevelMap``
    wins); the rest get a token budget, where ``custom_budgets`` win and unknown models think
    dynamically (-1).
    """
    if level is None or level == "off":
        return {"enabled": False}
    if maps_thinking_levels(model) or uses_thinking_level(model.id):
        mapped = (model.thinking_level_map or {}).get(level)
        if isinstance(mapped, str):
            google_level = mapped.upper()
        elif is_gemini_3_pro(model.id):
            google_level = _GEMINI_3_PRO_LEVELS[level]
        elif is_gemma_4(model.id):
            google_level = _GEMMA_4_LEVELS[level]
        else:
            google_level = level.upper()
        return {"enabled": True, "level": google_level}
    return {"enabled": True, "budget_tokens": _thinking_budget(model, level, custom_budgets)}


def _thinking_budget(model: Model, level: str, custom_budgets: Mapping[str, int] | None) -> int:
    if custom_budgets and level in custom_budgets:
        return custom_budgets[level]
    model_id = model.id
    if "2.5-pro" in model_id:
        return _GEMINI_25_PRO_BUDGETS[level]
    # pi 1.6 raises Flash-Lite's minimal budget to 512 on Gemini's own API only; Vertex keeps 128.
    if "2.5-flash-lite" in model_id and model.api != "google-vertex":
        return _GEMINI_25_FLASH_LITE_BUDGETS[level]
    if "2.5-flash" in model_id:
        return _GEMINI_25_FLASH_BUDGETS[level]
    return -1


# --- the whole body -----------------------------------------------------------------------------


def build_request_body(
    model: Model,
    context: Context,
    options_extra: Mapping[str, Any],
    *,
    temperature: float | None,
    max_tokens: int | None,
    legacy_tool_parameters: bool = False,
) -> JsonObject:
    """The full ``generateContent`` body (REST field names); see ``convert_tools`` for the last flag."""
    body: JsonObject = {"contents": convert_messages(model, context.messages)}
    if context.system_prompt:
        body["systemInstruction"] = {
            "role": "user",
            "parts": [{"text": sanitize_surrogates(context.system_prompt)}],
        }
    # Where pi 1.6 does it: Gemini's own API and Vertex (the Cloud Code Assist backends, which pi
    # 1.6 no longer has, keep their tools as they were).
    strict = model.api in ("google-generative-ai", "google-vertex") and supports_strict_tools(model.id)
    tools = convert_tools(context, legacy_parameters=legacy_tool_parameters, strict=strict)
    if tools is not None:
        body["tools"] = tools
        mode = function_calling_mode(context, options_extra.get("tool_choice"), strict)
        if mode is not None:
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: JsonObject = {}
    if temperature is not None:
        generation["temperature"] = temperature
    if max_tokens is not None:
        generation["maxOutputTokens"] = max_tokens
    thinking = thinking_config(model, options_extra.get("thinking"))
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    if generation:
        body["generationConfig"] = generation
    return body
