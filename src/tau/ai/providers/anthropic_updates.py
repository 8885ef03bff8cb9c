"""Prompt and tool changes as Anthropic mid-conversation system messages (issue #31).

For a model with ``supportsMidConvoSystemMessages`` the request keeps the conversation's first
prompt as ``system``; each later change is a ``role: "system"`` message placed just before the
next assistant reply after it (Anthropic wants a ``tool_result`` right after its ``tool_use``),
holding the changed sections (``tau.ai.prompt_updates.render_update_text``). With
``supportsMidConvoToolChanges`` too, ``tools`` stays the first request's list plus a deferred
placeholder (declared from the start so the first change does not move the cache) and tools
come and go as ``tool_addition`` / ``tool_removal`` blocks. The bytes are pi 1.6's, so pi and tau
continuing each other's sessions send the same requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tau.ai.prompt_updates import delivery, mid_conversation_flags, render_update_text
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.types import AssistantMessage, Context, JsonObject, Message, Model, PromptUpdate, Tool

INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
FIXED_EFFORT = "low"
"""The top-level effort of a model whose effort travels in messages: fixed, as part of the cached
prefix, and low because an organisation may cap effort and refuse any request above the cap."""

# The deferred tool pi 1.6 declares whenever tools change in place: the same bytes, so a session
# either tool continues keeps the other's cached tool list.
DEFERRED_TOOL_PLACEHOLDER: JsonObject = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}

ConvertTools = Callable[[list[Tool], "JsonObject | None"], list[JsonObject]]


def native(model: Model, context: Context) -> bool:
    """Whether this request carries its prompt changes as system messages."""
    return context.anchor is not None and delivery(model) == "native"


def native_tool_changes(model: Model, context: Context) -> bool:
    """Whether tools change in place (the anchored list needs at least one tool to hold the placeholder)."""
    return (
        native(model, context)
        and mid_conversation_flags(model).tool_changes
        and bool(context.anchor and context.anchor.tools)
    )


def effort_in_messages(model: Model, thinking_disabled: bool) -> bool:
    """Whether the effort travels in ``role: "system"`` messages (``supportsMidConvoEffort``, and
    thinking not turned off), so a change of thinking level keeps the cached prefix."""
    return mid_conversation_flags(model).effort and not thinking_disabled


def betas(model: Model, context: Context) -> list[str]:
    out = (
        [MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA]
        if mid_conversation_flags(model).effort
        else []
    )
    if native_tool_changes(model, context):
        out.append(INLINE_TOOLS_BETA)
    return out


def apply_effort(
    body: JsonObject,
    model: Model,
    messages: Sequence[Message],
    *,
    effort: str,
    display: str | None,
    assistant_sent: Callable[[AssistantMessage], bool],
) -> None:
    """Fixed top-level thinking (adaptive, low effort) and the effort as messages: before each
    earlier reply of this provider the effort it was given, at the end the one for this reply."""
    body["thinking"] = {
        "type": "adaptive",
        "display": display or "summarized",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    body["output_config"] = {"effort": FIXED_EFFORT}
    body.pop("temperature", None)
    levels = [
        m.provider_thinking_level
        if m.api == "anthropic-messages"
        and m.provider == model.provider
        and m.provider_thinking_level in EFFORTS
        else None
        for m in messages
        if isinstance(m, AssistantMessage) and assistant_sent(m)
    ]
    out: list[JsonObject] = []
    replies = 0
    for message in body["messages"]:
        if message.get("role") == "assistant":
            level = levels[replies] if replies < len(levels) else None
            if level is not None:
                out.append(_effort_message(level))
            replies += 1
        out.append(message)
    out.append(_effort_message(effort))
    body["messages"] = out


def _effort_message(level: str) -> JsonObject:
    return {"role": "system", "content": [], "output_config": {"effort": level}}


def apply(
    body: JsonObject,
    model: Model,
    context: Context,
    *,
    system_blocks: Callable[[str], list[JsonObject]],
    convert_tools: ConvertTools,
    cache_control: JsonObject | None,
    assistant_sent: Callable[[AssistantMessage], bool],
) -> None:
    """Turn ``body`` (built from the current prompt and tools, messages without a cache marker)
    into the native form: anchored ``system`` and ``tools``, the changes in place, and the cache
    marker on the last message."""
    anchor = context.anchor
    if anchor is None or not native(model, context):
        if cache_control is not None:
            _mark_last(body["messages"], cache_control)
        return
    system = system_blocks(anchor.system_prompt)
    if system:
        body["system"] = system
    else:
        body.pop("system", None)
    in_place = native_tool_changes(model, context)
    if in_place:
        body["tools"] = [*convert_tools(list(anchor.tools), cache_control), dict(DEFERRED_TOOL_PLACEHOLDER)]
    wire: list[JsonObject] = body["messages"]
    inserts: dict[int, list[JsonObject]] = {}
    for update in context.updates or ():
        message = _system_message(update, convert_tools if in_place else None)
        if message is not None:
            slot = _replies_before(context.messages, update.at, assistant_sent)
            inserts.setdefault(slot, []).append(message)
    body["messages"] = _place(wire, inserts)
    if cache_control is not None:
        _mark_last(body["messages"], cache_control)


def _system_message(update: PromptUpdate, convert_tools: ConvertTools | None) -> JsonObject | None:
    blocks: list[JsonObject] = []
    text = render_update_text(update)
    if text:
        blocks.append({"type": "text", "text": sanitize_surrogates(text)})
    if convert_tools is not None:
        redefined = {tool.name for tool in update.tools_added}
        for name in update.tools_removed:
            if name not in redefined:  # a new definition replaces the old one by itself
                blocks.append({"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}})
        for definition in convert_tools(list(update.tools_added), None):
            blocks.append(
                {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
            )
    return {"role": "system", "content": blocks} if blocks else None


def _replies_before(
    messages: Sequence[Message], at: int, assistant_sent: Callable[[AssistantMessage], bool]
) -> int:
    """How many assistant replies that reach the wire come before position ``at``: the update goes
    just before the next one."""
    return sum(1 for m in messages[: max(0, at)] if isinstance(m, AssistantMessage) and assistant_sent(m))


def _place(wire: list[JsonObject], inserts: dict[int, list[JsonObject]]) -> list[JsonObject]:
    if not inserts:
        return wire
    out: list[JsonObject] = []
    replies = 0
    for message in wire:
        if message.get("role") == "assistant":
            out.extend(inserts.pop(replies, ()))
            replies += 1
        out.append(message)
    for slot in sorted(inserts):
        out.extend(inserts[slot])
    return out


_MARKABLE = ("text", "image", "tool_result", "tool_addition", "tool_removal")


def _mark_last(messages: list[JsonObject], cache_control: JsonObject) -> None:
    """The cache marker on the last block of a final user or system message (a marked copy: the
    unmarked message may be shared with later requests)."""
    if not messages or messages[-1].get("role") not in ("user", "system"):
        return
    last = messages[-1]
    content: Any = last["content"]
    if isinstance(content, str):
        messages[-1] = {
            **last,
            "content": [{"type": "text", "text": content, "cache_control": dict(cache_control)}],
        }
    elif content and content[-1].get("type") in _MARKABLE:
        messages[-1] = {
            **last,
            "content": [*content[:-1], {**content[-1], "cache_control": dict(cache_control)}],
        }
