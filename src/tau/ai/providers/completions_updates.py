"""Prompt and tool changes in a Chat Completions request, in place (issues #31, #32).

For a model whose compat has ``supportsMidConvoSystemMessages`` (Kimi K3 on Fireworks, in the
catalogue) the first request's prompt stays the leading system message and each later change is a
system (or developer) message where it happened, with the changed prompt sections, as pi 1.6 sends
it. The top-level ``tools`` are the current tools; with ``supportsMidConvoToolAdditions`` too, they
stay those of the conversation's start, and each later addition is a ``{"role": "system", "tools":
[...]}`` message before the change's text. A removal or a tool declared again cannot be said that
way: the top-level list then becomes the tools after the last such change, and only additions
after it travel in place (pi's ``resolveTranscriptTools``). Where tau differs from pi: a tool
redefined in one change (withdrawn and declared again, as bash is when the sandbox turns on or
off) keeps its top-level declaration and the change's text gives its definition now
(``tau.ai.prompt_updates.redefinition_text``), an appended change where pi resends the tool list.

Mistral's chat API (``mistral_conversations``), with ``supportsMidConvoSystemMessages``, takes the
changes the same way as system messages in place, with the current tools at the top level (pi 1.6
has no tool additions in place there: ``with_slots(..., tool_messages=False)``).

The messages are placed by converting the conversation with a placeholder user message at each
place and swapping each placeholder for the messages it stands for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tau.ai.prompt_updates import (
    current_tools,
    delivery,
    redefined_in,
    redefinition_text,
    render_update_text,
)
from tau.ai.sanitize import sanitize_surrogates
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

_SLOT = "\ue000tau-completions-slot:"

ConvertTools = Callable[[list[Tool]], list[JsonObject]]


def native(model: Model, context: Context) -> bool:
    """Whether this request carries its prompt and tool changes in place (module docstring)."""
    return context.anchor is not None and delivery(model) == "native"


def tool_additions(model: Model) -> bool:
    compat = model.compat or {}
    return (
        compat.get("supportsMidConvoSystemMessages") is True
        and compat.get("supportsMidConvoToolAdditions") is True
    )


class Slots:
    """The messages each placeholder stands for."""

    def __init__(self) -> None:
        self.messages: dict[str, list[JsonObject]] = {}

    def add(self, messages: list[JsonObject], timestamp: int) -> UserMessage:
        key = f"{_SLOT}{len(self.messages)}"
        self.messages[key] = messages
        return UserMessage(key, timestamp=timestamp)


def with_slots(
    model: Model, context: Context, role: str, convert_tools: ConvertTools, *, tool_messages: bool = True
) -> tuple[Context, Slots]:
    """``context`` with the anchored prompt, the top-level tools, and a placeholder message wherever
    a change goes; and what the placeholders stand for. ``role``: the instructions' role;
    ``tool_messages``: whether the API takes tool additions in place where the model's compat says so."""
    anchor = context.anchor
    assert anchor is not None
    updates = list(context.updates or ())
    redefinitions = _redefinitions(anchor.tools, updates)
    in_place = tool_messages and tool_additions(model)
    folded = _folded(anchor.tools, updates, redefinitions) if in_place else len(updates) + 1
    slots = Slots()
    before: dict[int, list[JsonObject]] = {}
    for index, update in enumerate(updates, start=1):
        messages: list[JsonObject] = []
        text = render_update_text(update)
        if index >= folded:
            redefined = redefinitions[index - 1]
            names = {tool.name for tool in redefined}
            added = [tool for tool in update.tools_added if tool.name not in names]
            if added:
                messages.append({"role": "system", "tools": convert_tools(added)})
            if redefined:
                text = "\n\n".join(part for part in (text, redefinition_text(redefined)) if part)
        if text:
            messages.append({"role": role, "content": sanitize_surrogates(text)})
        if messages:
            before.setdefault(_before_next_reply(context.messages, update.at), []).extend(messages)
    placed: list[Message] = []
    for index, message in enumerate(context.messages):
        if index in before:
            placed.append(slots.add(before.pop(index), message.timestamp))
        placed.append(message)
    last = context.messages[-1].timestamp if context.messages else 0
    for index in sorted(before):
        placed.append(slots.add(before[index], last))
    tools = current_tools(anchor.tools, updates[: folded - 1])
    return Context(messages=placed, system_prompt=anchor.system_prompt, tools=tools or None), slots


def fill_slots(messages: list[JsonObject], slots: Slots) -> list[JsonObject]:
    """``messages`` (the converted ones) with each placeholder swapped for what it stands for; the
    other messages' cached fragments are kept (``tau.ai.transport.request_cache``)."""
    if not slots.messages:
        return messages
    entries = messages.entries() if isinstance(messages, FragmentList) else list(messages)
    out: list[CachedFragment | JsonObject] = []
    for message, entry in zip(messages, entries, strict=True):
        content = message.get("content") if message.get("role") == "user" else None
        if isinstance(content, str) and content in slots.messages:
            out.extend(slots.messages[content])
        else:
            out.append(entry)
    return FragmentList(out)


def _folded(initial: Sequence[Tool], updates: Sequence[PromptUpdate], redefinitions: list[list[Tool]]) -> int:
    """How many of the system messages (the first prompt, then each update) the top-level tools
    hold: all up to the last removal or redeclaration (a name declared before, even if removed
    since; not one of ``redefinitions``, said in the change's text), at least the first."""
    declared = {tool.name for tool in initial}
    last = 0
    for index, update in enumerate(updates, start=1):
        redefined = {tool.name for tool in redefinitions[index - 1]}
        if any(name not in redefined for name in update.tools_removed):
            last = index
        for tool in update.tools_added:
            if tool.name in declared and tool.name not in redefined:
                last = index
            declared.add(tool.name)
    return last + 1


def _redefinitions(initial: Sequence[Tool], updates: Sequence[PromptUpdate]) -> list[list[Tool]]:
    """For each update, the tools it redefines under their names that its text can declare: not
    one whose arguments are sampled against its schema, before or after (the model is held to the
    top-level declaration, so that change resends the list)."""
    tools = {tool.name: tool for tool in initial}
    out: list[list[Tool]] = []
    for update in updates:
        out.append(
            [
                tool
                for tool in redefined_in(update)
                if not tool.constrained_sampling
                and not (tool.name in tools and tools[tool.name].constrained_sampling)
            ]
        )
        for name in update.tools_removed:
            tools.pop(name, None)
        tools.update((tool.name, tool) for tool in update.tools_added)
    return out


def _before_next_reply(messages: Sequence[Message], at: int) -> int:
    for index in range(max(0, at), len(messages)):
        if isinstance(messages[index], AssistantMessage):
            return index
    return len(messages)
