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

from tau.ai.constrained_sampling import (
    custom_tools_key,
    grammar_tool_input,
    json_schema_parameters,
    resolve_grammar,
)
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.short_hash import short_hash
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
        self,
        model: Model,
        allowed_tool_call_providers: Collection[str],
        system: JsonObject | None,
        grammar_inputs: dict[str, str],
    ) -> None:
        def normalize(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
            return normalize_id_responses(tool_call_id, target, source, allowed_tool_call_providers)

        replay = ReplayHistory(model, normalize, ("openai-responses", frozenset(allowed_tool_call_providers)))
        super().__init__(replay, FragmentList([system] if system is not None else []))
        self.grammar_inputs = grammar_inputs

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        vision = "image" in self.model.input
        make = partial(
            _cached_items,
            position=position,
            model=self.model,
            vision=vision,
            grammar_inputs=self.grammar_inputs,
        )
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
    grammar_inputs: dict[str, str] | None = None,
) -> FragmentList:
    """The ``input`` list for a Responses request (Codex passes the system prompt separately).

    ``grammar_inputs``: the input property of each tool that goes as a custom grammar tool; its
    calls and results are replayed as ``custom_tool_call`` / ``custom_tool_call_output`` items.
    Each message's items are made once and reused by later requests (``tau.ai.transport.request_cache``).
    """
    grammar_inputs = grammar_inputs or {}
    system: JsonObject | None = None
    if include_system_prompt and context.system_prompt:
        role = instruction_role(model)
        system = {"role": role, "content": sanitize_surrogates(context.system_prompt)}
    key = (model.api, model.provider, model.id, "image" in model.input, custom_tools_key(grammar_inputs))
    prompt = context.system_prompt if system is not None else None
    kept_as = (key, model.reasoning, frozenset(allowed_tool_call_providers), prompt)
    history = continue_history(
        _histories,
        _fragments,
        kept_as,
        key,
        model,
        context.messages,
        lambda: _ResponsesHistory(model, allowed_tool_call_providers, system, grammar_inputs),
    )
    items = history.request_items()
    _histories.keep(kept_as, history)
    return items


def convert_responses_tools(
    tools: list[Tool],
    *,
    strict: bool | None = False,
    supports_strict: bool = True,
    supports_grammar_tools: bool = False,
) -> list[JsonObject]:
    """Function tool definitions; ``strict`` is ``False`` for OpenAI and ``None`` (null) for Codex,
    and absent where the model's compat does not have ``supportsStrictMode`` (``supports_strict``);
    where it has, a tool that asks for JSON-schema sampling goes ``strict: true``, schema made strict.
    A grammar tool is a custom tool where the compat has ``supportsOpenAIGrammarTools``
    (``supports_grammar_tools``), as pi 1.6."""
    out: list[JsonObject] = []
    for tool in tools:
        grammar = resolve_grammar(tool, supports_grammar_tools)
        if grammar is not None:
            out.append(
                {
                    "type": "custom",
                    "name": tool.name,
                    "description": tool.description,
                    "format": {"type": "grammar", "syntax": grammar.syntax, "definition": grammar.definition},
                }
            )
            continue
        # A tool that asks for JSON-schema sampling goes strict where the compat allows (pi 1.6).
        strict_parameters = json_schema_parameters(tool, supports_strict)
        definition: JsonObject = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if strict_parameters is None else strict_parameters,
        }
        if supports_strict:
            definition["strict"] = strict if strict_parameters is None else True
        out.append(definition)
    return out


def _cached_items(
    message: Message, *, position: int, model: Model, vision: bool, grammar_inputs: dict[str, str]
) -> list[CachedFragment]:
    return [
        CachedFragment(item) for item in _convert_message(message, position, model, vision, grammar_inputs)
    ]


def _convert_message(
    message: Message, position: int, model: Model, vision: bool, grammar_inputs: dict[str, str]
) -> list[JsonObject]:
    if isinstance(message, AssistantMessage):
        return _convert_assistant(message, position, model, grammar_inputs)
    if isinstance(message, ToolResultMessage):
        return [_convert_tool_result(message, vision, message.tool_name in grammar_inputs)]
    if isinstance(message.content, str):
        return [{"role": "user", "content": [_input_text(message.content)]}]
    parts = _input_parts(message.content, vision)
    return [{"role": "user", "content": parts}] if parts else []


def _convert_assistant(
    message: AssistantMessage, position: int, model: Model, grammar_inputs: dict[str, str]
) -> list[JsonObject]:
    # A reasoning item pairs with the function_call items after it; replaying an fc_ item id whose
    # reasoning is missing (another model's turn, or a reasoning block we cannot replay) is rejected.
    other_model_same_api = (
        message.model != model.id and message.provider == model.provider and message.api == model.api
    )
    reasoning_missing = False
    text_blocks = 0
    items: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning_item = _reasoning_item(block)
            if reasoning_item is None:
                reasoning_missing = True
            else:
                items.append(reasoning_item)
        elif isinstance(block, TextContent):
            item = _message_item(block, position, text_blocks)
            text_blocks += 1
            if item is not None:
                items.append(item)
        else:
            drop_id = other_model_same_api or reasoning_missing
            input_property = grammar_inputs.get(block.name)
            if input_property is None:
                items.append(_function_call_item(block, drop_fc_id=drop_id))
            else:
                items.append(_custom_call_item(block, input_property, drop_id=drop_id))
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


def _message_item(block: TextContent, position: int, number: int) -> JsonObject | None:
    """A text block as a message item, under the id the server gave it, else pi 1.6's made-up one
    (``msg_pi_<message>``, ``_<block>`` from the message's second text block on)."""
    parsed = parse_text_signature(block.text_signature)
    if parsed is None and not block.text:
        return None
    made_up = f"msg_pi_{position}" if number == 0 else f"msg_pi_{position}_{number}"
    item_id, phase = parsed if parsed is not None else (made_up, None)
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
    # A custom call's ctc_ id cannot name a function_call (the model lost grammar tools since).
    if item_id and not (drop_fc_id and item_id.startswith("fc_")) and not item_id.startswith("ctc_"):
        item["id"] = item_id
    item["call_id"] = call_id
    item["name"] = call.name
    item["arguments"] = sanitize_surrogates(compact_json(call.arguments))
    return item


def _custom_call_item(call: ToolCall, input_property: str, *, drop_id: bool) -> JsonObject:
    """A grammar tool's call as a ``custom_tool_call`` (its raw input); only a ``ctc_`` item id
    names one, and only for the model that made it."""
    call_id, _, item_id = call.id.partition("|")
    item: JsonObject = {"type": "custom_tool_call"}
    if item_id.startswith("ctc_") and not drop_id:
        item["id"] = item_id
    item["call_id"] = call_id
    item["name"] = call.name
    item["input"] = sanitize_surrogates(grammar_tool_input(call.name, call.arguments, input_property))
    return item


def _convert_tool_result(message: ToolResultMessage, vision: bool, custom: bool = False) -> JsonObject:
    call_id = message.tool_call_id.partition("|")[0]
    text = "\n".join(block.text for block in message.content if isinstance(block, TextContent))
    has_images = any(isinstance(block, ImageContent) for block in message.content)
    output: str | list[JsonObject]
    has_text = bool(text.strip())  # white space alone is no output, as pi 1.6 sends it
    if has_images and vision:
        output = []
        if has_text:
            output.append(_input_text(text))
        output.extend(_input_image(b) for b in message.content if isinstance(b, ImageContent))
    else:
        output = sanitize_surrogates(
            text if has_text else IMAGE_ONLY_TOOL_OUTPUT if has_images else "(no tool output)"
        )
    kind = "custom_tool_call_output" if custom else "function_call_output"
    return {"type": kind, "call_id": call_id, "output": output}


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
