"""Changes of prompt and tools sent as appended messages, so a cached prefix is never rewritten (issue #31).

A ``Context`` may say how its prompt and tools came about: ``anchor`` (what the conversation's
first request declared) and ``updates`` (each change, at the place in the conversation where it
happened). How that reaches the model depends on the API and the model:

- **native** (Anthropic Messages with ``supportsMidConvoSystemMessages``): the anchored prompt and
  tools stay at the head and each change is a ``role: "system"`` message in place; with
  ``supportsMidConvoToolChanges`` too, tools are added and removed there (``tool_addition`` /
  ``tool_removal``), as pi 1.6 sends them (``tau.ai.providers.anthropic_updates``). Likewise OpenAI
  Responses, Azure and Codex with ``supportsMidConvoSystemMessages``: developer messages, with
  ``supportsAdditionalTools`` ``additional_tools`` items, with ``supportsToolSearch`` a client tool
  search for additions (``tau.ai.providers.responses_updates``).
  Chat Completions with ``supportsMidConvoSystemMessages``: system messages in place, and with
  ``supportsMidConvoToolAdditions`` tool messages for additions (``tau.ai.providers.completions_updates``);
  Mistral with ``supportsMidConvoSystemMessages``: system messages in place, the current tools.
  pi-messages (the Radius gateway), whatever the model: the transcript as recorded, each change a
  ``role: "system"`` message in place, as pi 1.6 sends it (``tau.ai.providers.pi_messages``).
- **notice** (every other model, by default): the anchored prompt stays; each change is a short
  user-role notice where it happened; the tool list only grows (a removed tool stays declared, and
  the agent refuses a call to it as it refuses any tool it does not have). A tool redefined under
  its name (bash's ``escalate`` comes and goes with the sandbox) keeps its first declaration in
  the list, and the notice gives its definition now (``redefinition_text``); the agent checks a
  call against that one.
- **rewrite**: the current prompt and tools are sent whole, as before. A model whose compat sets
  ``promptChangeNotices: false`` gets this, and so does a change the notice cannot say (a tool
  whose arguments are sampled against its schema, redefined under the same name).

``stream`` and ``stream_simple`` resolve the context with ``for_model`` before a provider sees it,
so a provider only meets ``anchor`` when it renders the native form itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal, NamedTuple, TypeAlias

import msgspec

from tau.ai.strict_tools import takes_strict_tools
from tau.ai.types import (
    AssistantMessage,
    Context,
    JsonSchemaSampling,
    Message,
    Model,
    PromptUpdate,
    TextContent,
    Tool,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

Delivery: TypeAlias = Literal["native", "notice", "rewrite"]

NOTICES_COMPAT_KEY = "promptChangeNotices"
NOTICE_OPEN = "<system_prompt_update>"
NOTICE_CLOSE = "</system_prompt_update>"
_NATIVE_APIS = frozenset(
    {
        "anthropic-messages",
        "openai-completions",
        "mistral-conversations",
        "openai-responses",
        "openai-codex-responses",
        "azure-openai-responses",
    }
)
# APIs that take pi's transcript itself, system messages included, for every model.
_TRANSCRIPT_APIS = frozenset({"pi-messages"})
# APIs that refuse two user turns in a row: a notice after tool results joins the last result.
_STRICT_TURNS = frozenset({"bedrock-converse-stream"})


class MidConversationFlags(NamedTuple):
    system_messages: bool
    tool_changes: bool
    effort: bool


def mid_conversation_flags(model: Model) -> MidConversationFlags:
    """The model's ``supportsMidConvo*`` compat flags (absent: false). The one place they are read
    for prompt updates, so that typed compat parsing can take it over."""
    compat = model.compat or {}
    system = compat.get("supportsMidConvoSystemMessages") is True
    return MidConversationFlags(
        system_messages=system,
        tool_changes=system and compat.get("supportsMidConvoToolChanges") is True,
        effort=compat.get("supportsMidConvoEffort") is True,
    )


def delivery(model: Model) -> Delivery:
    """How ``model`` is told of prompt and tool changes (module docstring)."""
    if model.api in _TRANSCRIPT_APIS:
        return "native"
    if mid_conversation_flags(model).system_messages and model.api in _NATIVE_APIS:
        return "native"
    if (model.compat or {}).get(NOTICES_COMPAT_KEY) is False:
        return "rewrite"
    return "notice"


def render_update_text(update: PromptUpdate) -> str:
    """An update's prompt text as a mid-conversation system message states it: free text, then
    each changed section named (the same framing pi 1.6 sends, so either tool continuing the other's
    session sends the same bytes)."""
    parts = [update.content] if update.content else []
    for name, value in update.sections.items():
        parts.append(
            f'Removed system prompt section "{name}".'
            if value is None
            else f'Updated system prompt section "{name}":\n\n{value}'
        )
    return "\n\n".join(parts)


def for_model(model: Model, context: Context) -> Context:
    """``context`` as ``model`` is to be sent it: unchanged for the native form (the provider
    renders it), with notices for the notice form, the current prompt and tools otherwise."""
    if context.anchor is None:
        return context
    how = delivery(model)
    if how == "native":
        return context
    if how == "notice":
        noticed = with_notices(model, context)
        if noticed is not None:
            return noticed
    return msgspec.structs.replace(context, anchor=None, updates=None)


def with_notices(model: Model, context: Context) -> Context | None:
    """The anchored prompt, a tool list that only grows, and one user-role notice per change where
    it happened; ``None`` when a change cannot be said that way (a tool with constrained sampling
    redefined under its name: the model is held to the declaration it was sent, see ``_holds``)."""
    anchor = context.anchor
    assert anchor is not None
    declared: dict[str, Tool] = {tool.name: tool for tool in anchor.tools}
    told = dict(declared)  # each tool as the model was last told it: declared, or by a notice
    tools = list(anchor.tools)
    notices: list[tuple[int, str]] = []
    for update in context.updates or ():
        redefined: list[Tool] = []
        for tool in update.tools_added:
            known = declared.get(tool.name)
            if known is None:
                declared[tool.name] = tool
                tools.append(tool)
            elif _must_redeclare(model, known, tool):
                return None
            elif not same_declaration(told[tool.name], tool):
                redefined.append(tool)
            told[tool.name] = tool
        notices.append((update.at, notice_text(update, redefined)))
    messages = _insert_notices(context.messages, notices, into_tool_results=model.api in _STRICT_TURNS)
    return Context(messages=messages, system_prompt=anchor.system_prompt, tools=tools or None)


def _must_redeclare(model: Model, known: Tool, tool: Tool) -> bool:
    """Whether ``known``, redefined as ``tool``, can only be told by sending the tools again: one of
    them asks for constrained sampling, and either it binds this model or the tool's description
    changes (another program's tool of that name, as when tau continues a pi session); a tool that
    only gains or loses parameters where nothing binds the model (the sandbox's ``escalate``) can
    be told by a notice."""
    if not (known.constrained_sampling or tool.constrained_sampling) or same_declaration(known, tool):
        return False
    return _holds(model, known) or _holds(model, tool) or known.description != tool.description


def _holds(model: Model, tool: Tool) -> bool:
    """Whether ``model`` is held to ``tool``'s declared schema: it asks for constrained sampling, and
    a ``prefer`` JSON-schema tool only on a model that takes strict tools (elsewhere it goes plain)."""
    config = tool.constrained_sampling
    if isinstance(config, JsonSchemaSampling) and config.strict == "prefer":
        return takes_strict_tools(model)
    return config is not None


def redefinition_text(tools: Sequence[Tool]) -> str:
    """What a change says of tools redefined under their names, whose declaration earlier in the
    request no longer holds: each one's description and parameters now, as JSON."""
    return "\n\n".join(
        f'Tool "{tool.name}" is redefined; use it as defined here, not as first declared:\n'
        + json.dumps({"description": tool.description, "parameters": tool.parameters}, ensure_ascii=False)
        for tool in tools
    )


def redefined_in(update: PromptUpdate) -> list[Tool]:
    """The tools ``update`` redefines under their names (withdrawn and declared again in it)."""
    removed = set(update.tools_removed)
    return [tool for tool in update.tools_added if tool.name in removed]


def notice_text(update: PromptUpdate, redefined: Sequence[Tool] | None = None) -> str:
    """One change as the user-role notice states it. ``redefined``: the tools it declares anew
    whose earlier declaration the model still has (default: those it withdraws and declares again)."""
    again = {tool.name for tool in redefined_in(update)}  # still available, not newly
    if redefined is None:
        redefined = redefined_in(update)
    lines = [render_update_text(update)] if update.content or update.sections else []
    added = [tool.name for tool in update.tools_added if tool.name not in again]
    if added:
        lines.append("Tools now available: " + ", ".join(added))
    removed = [name for name in update.tools_removed if name not in again]
    if removed:
        lines.append("Tools no longer available (a call to one of them is refused): " + ", ".join(removed))
    if redefined:
        lines.append(redefinition_text(redefined))
    return "\n\n".join(lines)


def _insert_notices(
    messages: Sequence[Message], notices: Sequence[tuple[int, str]], *, into_tool_results: bool = False
) -> list[Message]:
    """Each notice (where its change happened, its text) goes there, held back past tool results to
    just before the next assistant reply (never between a call and its result); a notice right
    after a user message joins that message, so user and assistant turns still alternate (with
    ``into_tool_results``, one right after tool results joins the last of them)."""
    places: dict[int, list[str]] = {}
    for at, text in notices:
        if text:
            places.setdefault(_before_next_reply(messages, at), []).append(text)
    if not places:
        return list(messages)
    out: list[Message] = []
    for index in range(len(messages) + 1):
        texts = places.get(index)
        if texts:
            block = TextContent(f"{NOTICE_OPEN}\n" + "\n\n".join(texts) + f"\n{NOTICE_CLOSE}")
            previous = out[-1] if out else None
            if isinstance(previous, UserMessage):
                content: list[UserContent] = (
                    [TextContent(previous.content)]
                    if isinstance(previous.content, str)
                    else list(previous.content)
                )
                out[-1] = msgspec.structs.replace(previous, content=[*content, block])
            elif into_tool_results and isinstance(previous, ToolResultMessage):
                out[-1] = msgspec.structs.replace(previous, content=[*previous.content, block])
            else:
                out.append(UserMessage([block], timestamp=previous.timestamp if previous is not None else 0))
        if index < len(messages):
            out.append(messages[index])
    return out


def current_tools(initial: Sequence[Tool], updates: Sequence[PromptUpdate]) -> list[Tool]:
    """The tools after ``updates`` (a redefined tool keeps its place, a re-added one goes last)."""
    tools = {tool.name: tool for tool in initial}
    for update in updates:
        for name in update.tools_removed:
            tools.pop(name, None)
        for tool in update.tools_added:
            tools[tool.name] = tool
    return list(tools.values())


def folded_changes(initial: Sequence[Tool], updates: Sequence[PromptUpdate]) -> int:
    """How many of the system messages (the first prompt, then each update) the top-level tools
    hold where only additions can travel in place (pi 1.6's ``resolveTranscriptTools``): all up to
    the last removal or redeclaration (a name declared before, even if removed since), at least
    the first."""
    declared = {tool.name for tool in initial}
    last = 0
    for index, update in enumerate(updates, start=1):
        if update.tools_removed:
            last = index
        for tool in update.tools_added:
            if tool.name in declared:
                last = index
            declared.add(tool.name)
    return last + 1


def _before_next_reply(messages: Sequence[Message], at: int) -> int:
    for index in range(max(0, at), len(messages)):
        if isinstance(messages[index], AssistantMessage):
            return index
    return len(messages)


def same_declaration(a: Tool, b: Tool) -> bool:
    """Whether two tools tell the model the same thing (name, description, parameters, and
    whether their arguments are sampled against the schema)."""
    return (
        a.name == b.name
        and a.description == b.description
        and a.constrained_sampling == b.constrained_sampling
        and _canonical(a.parameters) == _canonical(b.parameters)
    )


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
