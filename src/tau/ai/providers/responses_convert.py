"""Conversation → OpenAI Responses ``input`` items, shared by OpenAI, Azure and Codex.

Replay rules: our own reasoning goes back verbatim (the whole reasoning item, encrypted content
included, is stored as JSON in ``thinkingSignature``); text goes back as an assistant ``message``
item under the id the server gave it (kept in ``textSignature``); tool calls go back as
``function_call`` items whose id ``"<call_id>|<item_id>"`` is split again.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from functools import partial

from tau.ai.sanitize import sanitize_surrogates
from tau.ai.short_hash import short_hash
from tau.ai.strict_schema import constrained_parameters
from tau.ai.transform import RESPONSES_TOOL_CALL_PROVIDERS, ReplayHistory, normalize_id_responses
from tau.ai.transport.gc_pause import collector_paused
from tau.ai.transport.request_cache import (
    CachedFragment,
    Continuation,
    FragmentList,
    MessageMemo,
    compact_json,
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
    Tool,
    ToolCall,
    ToolResultMessage,
    UserContent,
)
from tau.ai.wire_history import WireHistory, continue_history

_MAX_ITEM_ID = 64
_TEXT_SIGNATURE_PHASES = frozenset({"commentary", "final_answer"})
IMAGE_ONLY_TOOL_OUTPUT = "(see attached image)"


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    """The ``textSignature`` of a message item: ``{"v":1,"id":…,"phase"?:…}`` as compact JSON."""
    payload: JsonObject = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return compact_json(payload)


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(item id, phase)`` from a ``textSignature``: the versioned JSON form or a legacy bare id."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("v") == 1 and isinstance(data.get("id"), str):
            phase = data.get("phase")
            return data["id"], phase if phase in _TEXT_SIGNATURE_PHASES else None
    return signature, None


def instruction_role(model: Model) -> str:
    """The role of the prompt's items: ``developer`` for a reasoning model unless its compat says
    ``supportsDeveloperRole: false`` (pi 1.6), else ``system``."""
    developer = model.reasoning and (model.compat or {}).get("supportsDeveloperRole") is not False
    return "developer" if developer else "system"


_fragments = MessageMemo()


class _ResponsesHistory(WireHistory):
    """A history's Responses input items so far, extended request by request (``Continuation``).
    Each tool result is its own item, made where it comes (no run is held back)."""

    group_tool_results = False

    def __init__(
        self, model: Model, allowed_tool_call_providers: Collection[str], system: JsonObject | None
    ) -> None:
        def normalize(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
            return normalize_id_responses(tool_call_id, target, source, allowed_tool_call_providers)

        replay = ReplayHistory(model, normalize, ("openai-responses", frozenset(allowed_tool_call_providers)))
        super().__init__(replay, FragmentList([system] if system is not None else []))

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        vision = "image" in self.model.input
        make = partial(_cached_items, position=position, model=self.model, vision=vision)
        for item in _fragments.recall(message, make, position):
            out.add(item)


_histories: Continuation[_ResponsesHistory] = Continuation()


@collector_paused()  # a first request after a resume converts a whole history
def convert_responses_messages(
    model: Model,
    context: Context,
    allowed_tool_call_providers: Collection[str] = RESPONSES_TOOL_CALL_PROVIDERS,
    *,
    include_system_prompt: bool = True,
) -> FragmentList:
    """The ``input`` list for a Responses request (Codex passes the system prompt separately).

    Each message's items are made once and reused by later requests (``tau.ai.transport.request_cache``).
    """
    system: JsonObject | None = None
    if include_system_prompt and context.system_prompt:
        role = instruction_role(model)
        system = {"role": role, "content": sanitize_surrogates(context.system_prompt)}
    key = (model.api, model.provider, model.id, "image" in model.input)
    prompt = context.system_prompt if system is not None else None
    kept_as = (key, model.reasoning, frozenset(allowed_tool_call_providers), prompt)
    history = continue_history(
        _histories,
        _fragments,
        kept_as,
        key,
        model,
        context.messages,
        lambda: _ResponsesHistory(model, allowed_tool_call_providers, system),
    )
    items = history.request_items()
    _histories.keep(kept_as, history)
    return items


def convert_responses_tools(
    tools: list[Tool], *, strict: bool | None = False, supports_strict: bool = True
) -> list[JsonObject]:
    """Function tool definitions; ``strict`` is ``False`` for OpenAI and ``None`` (null) for Codex,
    and absent where the model's compat does not have ``supportsStrictMode`` (``supports_strict``).
    A tool that asks for constrained sampling goes ``strict: true`` with its schema made strict
    where the model supports it and the schema allows (pi 1.6's ``convertResponsesTools``)."""
    out: list[JsonObject] = []
    for tool in tools:
        constrained = constrained_parameters(tool, supports_strict)
        definition: JsonObject = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if constrained is None else constrained,
        }
        if supports_strict:
            definition["strict"] = strict if constrained is None else True
        out.append(definition)
    return out


def _cached_items(message: Message, *, position: int, model: Model, vision: bool) -> list[CachedFragment]:
    return [CachedFragment(item) for item in _convert_message(message, position, model, vision)]


def _convert_message(message: Message, position: int, model: Model, vision: bool) -> list[JsonObject]:
    if isinstance(message, AssistantMessage):
        return _convert_assistant(message, position, model)
    if isinstance(message, ToolResultMessage):
        return [_convert_tool_result(message, vision)]
    if isinstance(message.content, str):
        return [{"role": "user", "content": [_input_text(message.content)]}]
    parts = _input_parts(message.content, vision)
    return [{"role": "user", "content": parts}] if parts else []


def _convert_assistant(message: AssistantMessage, position: int, model: Model) -> list[JsonObject]:
    # A reasoning item pairs with the function_call items after it; replaying an fc_ item id whose
    # reasoning is missing (another model's turn, or a reasoning block we cannot replay) is rejected.
    other_model_same_api = (
        message.model != model.id and message.provider == model.provider and message.api == model.api
    )
    reasoning_missing = False
    items: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning_item = _reasoning_item(block)
            if reasoning_item is None:
                reasoning_missing = True
            else:
                items.append(reasoning_item)
        elif isinstance(block, TextContent):
            item = _message_item(block, position)
            if item is not None:
                items.append(item)
        else:
            items.append(_function_call_item(block, drop_fc_id=other_model_same_api or reasoning_missing))
    return items


def _reasoning_item(block: ThinkingContent) -> JsonObject | None:
    """The stored reasoning item, replayed byte-for-byte (no sanitising: it is signed/encrypted)."""
    if not block.thinking_signature:
        return None
    try:
        item = json.loads(block.thinking_signature)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _message_item(block: TextContent, position: int) -> JsonObject | None:
    parsed = parse_text_signature(block.text_signature)
    if parsed is None and not block.text:
        return None
    item_id, phase = parsed if parsed is not None else (f"msg_{position}", None)
    if len(item_id) > _MAX_ITEM_ID:
        item_id = f"msg_{short_hash(item_id)}"
    item: JsonObject = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": sanitize_surrogates(block.text), "annotations": []}],
        "status": "completed",
        "id": item_id,
    }
    if phase is not None:
        item["phase"] = phase
    return item


def _function_call_item(call: ToolCall, *, drop_fc_id: bool) -> JsonObject:
    call_id, _, item_id = call.id.partition("|")
    item: JsonObject = {"type": "function_call"}
    if item_id and not (drop_fc_id and item_id.startswith("fc_")):
        item["id"] = item_id
    item["call_id"] = call_id
    item["name"] = call.name
    item["arguments"] = sanitize_surrogates(compact_json(call.arguments))
    return item


def _convert_tool_result(message: ToolResultMessage, vision: bool) -> JsonObject:
    call_id = message.tool_call_id.partition("|")[0]
    text = "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    has_images = any(isinstance(block, ImageContent) for block in message.content)
    output: str | list[JsonObject]
    if has_images and vision:
        output = []
        if text:
            output.append(_input_text(text))
        output.extend(_input_image(b) for b in message.content if isinstance(b, ImageContent))
    else:
        output = sanitize_surrogates(text or (IMAGE_ONLY_TOOL_OUTPUT if has_images else ""))
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _input_parts(content: list[UserContent], vision: bool) -> list[JsonObject]:
    parts: list[JsonObject] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(_input_text(block.text))
        elif vision:
            parts.append(_input_image(block))
    return parts


def _input_text(text: str) -> JsonObject:
    return {"type": "input_text", "text": sanitize_surrogates(text)}


def _input_image(block: ImageContent) -> JsonObject:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{block.mime_type};base64,{block.data}",
    }
