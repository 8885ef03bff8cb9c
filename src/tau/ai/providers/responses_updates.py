"""Prompt, tool and effort changes in a Responses request, appended where they happened (issues #31, #32).

With ``supportsMidConvoSystemMessages`` alone, the first prompt stays and each change is a developer
message where it happened, with the current tools at the top level; with ``supportsToolSearch`` too,
the top-level tools are those after the last removal or tool declared again and each later addition
is a client ``tool_search_call`` with the tools as its ``tool_search_output`` (``defer_loading``).

For a model whose compat has ``supportsMidConvoSystemMessages`` and ``supportsAdditionalTools``
(OpenAI's and the Codex backend's newer models) the request declares no top-level ``tools``: the
first request's tools lead ``input`` as an ``additional_tools`` item, before the first prompt; each
later change adds an ``additional_tools`` item (after a short notice saying earlier tools remain)
and a developer message with the changed prompt sections and any tools withdrawn, placed just
before the next reply after it. With ``supportsMidConvoEffort`` the top-level effort is fixed and
the effort of each reply travels in ``configuration_update`` items: before each earlier reply of
this model the effort it was given, at the end the one for this reply. The items and texts are
those pi 1.6 sends, so pi and tau continuing each other's sessions keep the same cached prefix.

The items are placed by converting the conversation with a placeholder user message at each place
(``with_slots``) and swapping each placeholder's item for the items it stands for (``fill_slots``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from tau.ai.prompt_updates import current_tools, delivery, folded_changes, render_update_text
from tau.ai.providers.responses_convert import instruction_role
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.short_hash import short_hash
from tau.ai.transport.request_cache import CachedFragment, FragmentList
from tau.ai.types import (
    AssistantMessage,
    Context,
    JsonObject,
    Message,
    Model,
    PromptUpdate,
    Tool,
    UserMessage,
)

REQUEST_EFFORT = "medium"
"""The top-level effort of a request whose effort travels in ``configuration_update`` items: fixed,
so that a change of effort keeps the cached prefix."""

INCREMENTAL_TOOLS_NOTICE = (
    "This is an incremental tools update. Previously declared tools remain available unless "
    "explicitly marked unavailable. A tool declared again here is available again, and its latest "
    "definition replaces the earlier one."
)
_SLOT = "\ue000tau-responses-slot:"

ConvertTools = Callable[[list[Tool]], list[JsonObject]]


ToolSupport = Literal["changes", "additions", "none"]


def native(model: Model, context: Context) -> bool:
    """Whether this request carries its prompt and tool changes in place (module docstring)."""
    return context.anchor is not None and delivery(model) == "native"


def tool_support(model: Model) -> ToolSupport:
    """How tool changes travel in place (pi 1.6's ``getResponsesToolSupport``): ``changes`` (every
    tool in ``additional_tools`` items; ``supportsMidConvoSystemMessages`` and
    ``supportsAdditionalTools``), ``additions`` (added tools as a client tool search's result;
    ``supportsToolSearch``), ``none`` (the current tools at the top level)."""
    compat = model.compat or {}
    if compat.get("supportsMidConvoSystemMessages") is True and compat.get("supportsAdditionalTools") is True:
        return "changes"
    return "additions" if compat.get("supportsToolSearch") is True else "none"


def effort_in_items(model: Model) -> bool:
    """``supportsMidConvoEffort``, on the APIs that take ``configuration_update`` items (not Azure's)."""
    return (
        model.api != "azure-openai-responses" and (model.compat or {}).get("supportsMidConvoEffort") is True
    )


class Slots:
    """The items each placeholder stands for, and the ones that lead or end ``input``."""

    def __init__(self) -> None:
        self.items: dict[str, list[JsonObject]] = {}
        self.head: list[JsonObject] = []
        self.tail: list[JsonObject] = []

    def add(self, items: list[JsonObject], timestamp: int) -> UserMessage:
        key = f"{_SLOT}{len(self.items)}"
        self.items[key] = items
        return UserMessage(key, timestamp=timestamp)


def with_slots(
    model: Model, context: Context, convert_tools: ConvertTools, effort: str | None
) -> tuple[Context, Slots]:
    """``context`` with a placeholder message wherever items go (and, in the native form, the
    anchored prompt and no tools), and what the placeholders stand for."""
    slots = Slots()
    role = instruction_role(model)
    before: dict[int, list[JsonObject]] = {}
    prompt, tools = context.system_prompt, context.tools
    if native(model, context) and tool_support(model) == "changes":
        anchor = context.anchor
        assert anchor is not None
        prompt, tools = anchor.system_prompt, None
        declared = bool(anchor.tools)
        if declared:
            slots.head.append(_additional_tools(convert_tools(list(anchor.tools))))
        unavailable: list[str] = []
        for update in context.updates or ():
            items, declared = _update_items(update, role, convert_tools, declared, unavailable)
            if items:
                before.setdefault(_before_next_reply(context.messages, update.at), []).extend(items)
    elif native(model, context):
        prompt, tools = _place_without_tool_items(model, context, role, convert_tools, before)
    if effort is not None:
        for index, message in enumerate(context.messages):
            level = _reply_effort(model, message)
            if level is not None:
                before.setdefault(index, []).append(configuration_update(level))
        slots.tail.append(configuration_update(effort))
    if not before and prompt is context.system_prompt and tools is context.tools:
        return context, slots
    messages: list[Message] = []
    for index, message in enumerate(context.messages):
        items = before.pop(index, [])
        if items:
            messages.append(slots.add(items, message.timestamp))
        messages.append(message)
    for index in sorted(before):
        last = context.messages[-1].timestamp if context.messages else 0
        messages.append(slots.add(before[index], last))
    return Context(messages=messages, system_prompt=prompt, tools=tools), slots


def fill_slots(items: FragmentList, slots: Slots) -> FragmentList:
    """``items`` (the converted ``input``) with each placeholder swapped for its items, the head
    items before the first prompt and the tail items at the end; the items' cached fragments are
    kept (``tau.ai.transport.request_cache``)."""
    if not (slots.items or slots.head or slots.tail):
        return items
    entries = items.entries()
    out: list[CachedFragment | JsonObject] = []
    start = 0
    if slots.head:
        if items and items[0].get("role") in ("developer", "system"):
            out.append(entries[0])
            start = 1
        out[:0] = slots.head
    for index in range(start, len(entries)):
        key = _slot_key(items[index]) if slots.items else None
        if key is None:
            out.append(entries[index])
        else:
            out.extend(slots.items[key])
    out.extend(slots.tail)
    return FragmentList(out)


def configuration_update(effort: str) -> JsonObject:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def _slot_key(item: JsonObject) -> str | None:
    if item.get("role") != "user":
        return None
    content = item.get("content")
    if isinstance(content, list) and len(content) == 1:
        text = content[0].get("text")
        if isinstance(text, str) and text.startswith(_SLOT):
            return text
    return None


def _reply_effort(model: Model, message: Message) -> str | None:
    """The effort an earlier reply of this very model was given, if it was sent as an item."""
    if (
        isinstance(message, AssistantMessage)
        and message.api == model.api
        and message.provider == model.provider
        and message.model == model.id
        and message.content
    ):
        return message.provider_thinking_level
    return None


def _update_items(
    update: PromptUpdate, role: str, convert_tools: ConvertTools, declared: bool, unavailable: list[str]
) -> tuple[list[JsonObject], bool]:
    items: list[JsonObject] = []
    added = [tool.name for tool in update.tools_added]
    for name in added:
        if name in unavailable:
            unavailable.remove(name)
    if update.tools_added:
        if declared:
            notice = INCREMENTAL_TOOLS_NOTICE
            if unavailable:
                notice += f"\nStill unavailable: {', '.join(unavailable)}."
            items.append({"role": role, "content": notice})
        declared = True
        items.append(_additional_tools(convert_tools(list(update.tools_added))))
    parts = [render_update_text(update)]
    removed = [name for name in update.tools_removed if name not in added]
    if removed:
        listed = "\n".join(f"- {name}" for name in removed)
        parts.append(f"The following tools are no longer available. Do not call them:\n{listed}")
        unavailable.extend(name for name in removed if name not in unavailable)
    text = "\n\n".join(part for part in parts if part)
    if text:
        items.append({"role": role, "content": sanitize_surrogates(text)})
    return items, declared


def _place_without_tool_items(
    model: Model,
    context: Context,
    role: str,
    convert_tools: ConvertTools,
    before: dict[int, list[JsonObject]],
) -> tuple[str | None, list[Tool] | None]:
    """The ``additions`` and ``none`` forms: the anchored prompt, top-level tools, and each change a
    developer (or system) message where it happened. With ``additions`` the top-level tools are
    those after the last removal or tool declared again, and each later addition is a client tool
    search with the tools as its result (``defer_loading``), as pi 1.6 sends it."""
    anchor = context.anchor
    assert anchor is not None
    updates = list(context.updates or ())
    folded = folded_changes(anchor.tools, updates) if tool_support(model) == "additions" else len(updates) + 1
    for number, update in enumerate(updates, start=1):
        place = _before_next_reply(context.messages, update.at)
        items: list[JsonObject] = []
        if number >= folded and update.tools_added:
            # pi seeds the call id with the change's index among the messages after the prompt.
            items += _tool_search(list(update.tools_added), place + number - 1, convert_tools)
        text = render_update_text(update)
        if text:
            items.append({"role": role, "content": sanitize_surrogates(text)})
        if items:
            before.setdefault(place, []).extend(items)
    return anchor.system_prompt, current_tools(anchor.tools, updates[: folded - 1]) or None


def _tool_search(tools: list[Tool], index: int, convert_tools: ConvertTools) -> list[JsonObject]:
    names = [tool.name for tool in tools]
    call_id = "pi_tool_load_" + short_hash(f"system:{index}:{','.join(names)}")
    found = [{**tool, "defer_loading": True} for tool in convert_tools(tools)]
    common: JsonObject = {"call_id": call_id, "execution": "client", "status": "completed"}
    return [
        {"type": "tool_search_call", **common, "arguments": {"query": " ".join(names), "limit": len(names)}},
        {"type": "tool_search_output", **common, "tools": found},
    ]


def _additional_tools(tools: list[JsonObject]) -> JsonObject:
    return {"type": "additional_tools", "role": "developer", "tools": tools}


def _before_next_reply(messages: Sequence[Message], at: int) -> int:
    for index in range(max(0, at), len(messages)):
        if isinstance(messages[index], AssistantMessage):
            return index
    return len(messages)
