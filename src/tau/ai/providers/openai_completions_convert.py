"""Conversation → Chat Completions ``messages``: the system prompt, then the replay-safe history.

Each message's wire form is made once and reused by later requests, and a tool loop's next
request converts only its new messages (``tau.ai.transport.request_cache``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tau.ai.constrained_sampling import custom_tools_key, grammar_tool_input
from tau.ai.providers.openai_compat import OpenAICompletionsCompat
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.transform import ReplayHistory, normalize_id_openai_completions
from tau.ai.transport.gc_pause import collector_paused
from tau.ai.transport.request_cache import (
    CachedFragment,
    Continuation,
    FragmentList,
    MessageMemo,
    cached_fragment,
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
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.wire_history import WireHistory, continue_history

__all__ = [
    "IMAGE_ONLY_TOOL_RESULT",
    "NO_TOOL_OUTPUT",
    "TOOL_IMAGES_INTRO",
    "TOOL_RESULT_BRIDGE",
    "convert_messages",
]

TOOL_RESULT_BRIDGE = "I have processed the tool results."
TOOL_IMAGES_INTRO = "Attached image(s) from tool result:"
IMAGE_ONLY_TOOL_RESULT = "(see attached image)"
NO_TOOL_OUTPUT = "(no tool output)"

# A thinking signature names the field the reasoning came from; only plain field names are replayed.
_FIELD_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_RESERVED_FIELDS = frozenset({"role", "content", "tool_calls", "name", "reasoning_details"})

_fragments = MessageMemo()


class _CompletionsHistory(WireHistory):
    """A history's Chat Completions messages so far, extended request by request (``Continuation``)."""

    def __init__(
        self,
        model: Model,
        compat: OpenAICompletionsCompat,
        system: JsonObject | None,
        grammar_inputs: dict[str, str],
    ) -> None:
        provider = model.provider
        replay = ReplayHistory(
            model,
            lambda call_id, _model, _source: normalize_id_openai_completions(call_id, provider),
            "openai-completions",
        )
        super().__init__(replay, FragmentList([system] if system is not None else []))
        self.compat = compat
        self.grammar_inputs = grammar_inputs
        self.last_role: str | None = None

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        model, compat, grammar_inputs = self.model, self.compat, self.grammar_inputs
        if isinstance(message, UserMessage):
            if compat.requires_assistant_after_tool_result and self.last_role == "toolResult":
                out.add({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
            converted = _fragments.recall(message, lambda m: cached_fragment(_convert_user(m)))
        else:
            assert isinstance(message, AssistantMessage)  # tool results come as runs: add_tool_results
            converted = _fragments.recall(
                message, lambda m: cached_fragment(_convert_assistant(m, model, compat, grammar_inputs))
            )
        if converted is not None:
            out.add(converted)
            self.last_role = message.role

    def add_tool_results(self, out: FragmentList, results: list[ToolResultMessage]) -> None:
        """One message per result, then their images as a user message (a request's copy sets
        ``last_role`` too: the history's own run, when it ends, sets it again first)."""
        compat, vision = self.compat, "image" in self.model.input
        images: list[JsonObject] = []
        for result in results:
            fragment, result_images = _fragments.recall(
                result, lambda r: _convert_tool_result(r, compat, vision)
            )
            out.add(fragment)
            images.extend(result_images)
        self.last_role = _end_tool_results(out, images, compat)


def _end_tool_results(out: FragmentList, images: list[JsonObject], compat: OpenAICompletionsCompat) -> str:
    """After a run of tool results: their images (as a user message); the role that is last now."""
    if not images:
        return "toolResult"
    if compat.requires_assistant_after_tool_result:
        out.add({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
    out.add({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *images]})
    return "user"


_histories: Continuation[_CompletionsHistory] = Continuation()


@collector_paused()  # a first request after a resume converts a whole history
def convert_messages(
    model: Model,
    context: Context,
    compat: OpenAICompletionsCompat,
    grammar_inputs: dict[str, str] | None = None,
) -> list[JsonObject]:
    """The ``messages`` array: system prompt, then the replay-safe history in Chat Completions shape.

    ``grammar_inputs``: the input property of each tool that goes as a custom grammar tool; its
    calls are replayed as custom tool calls."""
    grammar_inputs = grammar_inputs or {}
    vision = "image" in model.input
    system: JsonObject | None = None
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        system = {"role": role, "content": sanitize_surrogates(context.system_prompt)}
    key = (
        model.api,
        model.provider,
        model.id,
        model.reasoning,
        vision,
        compat,
        custom_tools_key(grammar_inputs),
    )
    kept_as = (key, context.system_prompt)
    history = continue_history(
        _histories,
        _fragments,
        kept_as,
        key,
        model,
        context.messages,
        lambda: _CompletionsHistory(model, compat, system, grammar_inputs),
    )
    out = history.request_items()
    _histories.keep(kept_as, history)
    return out


def _image_part(image: ImageContent) -> JsonObject:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _convert_user(message: UserMessage) -> JsonObject | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts: list[JsonObject] = [
        {"type": "text", "text": sanitize_surrogates(block.text)}
        if isinstance(block, TextContent)
        else _image_part(block)
        for block in message.content
    ]
    return {"role": "user", "content": parts} if parts else None


def _convert_assistant(
    message: AssistantMessage,
    model: Model,
    compat: OpenAICompletionsCompat,
    grammar_inputs: dict[str, str],
) -> JsonObject | None:
    """One assistant turn; content is always a single string (models echo a parts array back)."""
    text = "".join(
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent) and b.text.strip()
    )
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    out: JsonObject = {
        "role": "assistant",
        "content": ""
        if compat.requires_assistant_after_tool_result or compat.requires_non_null_assistant_content
        else None,
    }
    if thinking and compat.requires_thinking_as_text:
        # Plain text, no tags: models imitate tags in their own answers.
        thinking_text = "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking)
        out["content"] = f"{thinking_text}\n\n{text}" if text else thinking_text
    else:
        if text:
            out["content"] = text
        field = thinking[0].thinking_signature if thinking else None
        if field and re.fullmatch(_FIELD_NAME, field) and field not in _RESERVED_FIELDS:
            # Servers such as llama.cpp take their reasoning back in the field it came from.
            out[field] = "\n".join(sanitize_surrogates(b.thinking) for b in thinking)
    calls = message.tool_calls()
    if calls:
        out["tool_calls"] = [_tool_call(call, grammar_inputs.get(call.name)) for call in calls]
        details = [d for d in (_decode_signature(c.thought_signature) for c in calls) if d is not None]
        if details:
            out["reasoning_details"] = details
    if (
        compat.requires_reasoning_content_on_assistant_messages
        and model.reasoning
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    if not out["content"] and not calls:
        # Servers reject an assistant turn with neither content nor tool calls (e.g. an empty aborted one).
        return None
    return out


def _tool_call(call: ToolCall, input_property: str | None) -> JsonObject:
    """A function call, or the custom call of a grammar tool (its raw input, as pi 1.6)."""
    if input_property is not None:
        text = grammar_tool_input(call.name, call.arguments, input_property)
        return {
            "id": call.id,
            "type": "custom",
            "custom": {"name": call.name, "input": sanitize_surrogates(text)},
        }
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": compact_json(call.arguments)},
    }


def _decode_signature(signature: str | None) -> Any:
    if not signature:
        return None
    try:
        return json.loads(signature)
    except ValueError:
        return None


def _convert_tool_result(
    result: ToolResultMessage, compat: OpenAICompletionsCompat, vision: bool
) -> tuple[CachedFragment, list[JsonObject]]:
    """One ``tool`` message, and the image parts to send after the run (vision models only)."""
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    result_images = [b for b in result.content if isinstance(b, ImageContent)]
    # As pi 1.6: a result with no text but white space says so (some APIs refuse empty content).
    content = text if text.strip() else IMAGE_ONLY_TOOL_RESULT if result_images else NO_TOOL_OUTPUT
    message: JsonObject = {
        "role": "tool",
        "content": sanitize_surrogates(content),
        "tool_call_id": result.tool_call_id,
    }
    if compat.requires_tool_result_name and result.tool_name:
        message["name"] = result.tool_name
    return CachedFragment(message), [_image_part(image) for image in result_images] if vision else []
