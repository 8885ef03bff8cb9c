"""The prompt and tools of a session as a transcript: recorded changes, sent in place (issue #31).

The branch's system messages (pi 1.x's record, ``tau.session.system_record``) sit in the agent's
messages where they were recorded: the first holds every prompt section and tool, later ones the
sections and tools that changed. Before each model call the ledger records what changed since
(an extension's ``set_active_tools`` at ``turn_end`` included: the events queued so far are
handled first), and each request says how its prompt came about (``Context.anchor`` and
``Context.updates``), so the provider can keep the cached prefix (``tau.ai.prompt_updates``).

When the messages' system records do not replay to the prompt and tools the request carries (an
extension forced a prompt for the run, or a ``context`` handler dropped the records), the request
goes out as before: the current prompt and tools, whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from tau.agent.context import AgentContext
from tau.agent.messages import LLM_MESSAGE_TYPES, AgentMessage
from tau.agent.tool import AgentTool
from tau.ai.prompt_updates import same_declaration
from tau.ai.types import Context, JsonObject, PromptAnchor, PromptUpdate, Tool
from tau.context.convert import becomes_llm_message
from tau.context.system_prompt import render_sections
from tau.session.messages import SystemMessage, replay_system_messages
from tau.session.system_record import declared_sampling, tool_declaration


class OwnedTranscript(list[AgentMessage]):
    """Messages whose system records decide the request's prompt and tools (a ``context_with_system``
    handler returned them): the request is projected from them, whatever the session's prompt is."""


CurrentPrompt = Callable[[], "tuple[Mapping[str, str], str, Sequence[AgentTool]]"]
"""The sections of the next request's prompt, its text (an extension may force one), and the tools."""
Record = Callable[[Mapping[str, str], Sequence[JsonObject]], "SystemMessage | None"]


class PromptLedger:
    """What the agent loop asks before and while building each request (``AgentLoopConfig.prompt_ledger``)."""

    def __init__(self, current: CurrentPrompt, record: Record, settle: Callable[[], Awaitable[None]]) -> None:
        self._current = current
        self._record = record
        self._settle = settle

    async def before_request(self, context: AgentContext) -> list[AgentMessage]:
        """Bring ``context`` to the prompt and tools of now, and record what changed: the new
        system message (to append to the conversation), if any."""
        await self._settle()  # handlers of the events so far (turn_end's set_active_tools) have run
        sections, text, tools = self._current()
        context.system_prompt = text
        context.tools = list(tools)
        try:
            recorded = self._record(sections, [declaration(t) for t in tools])
        except Exception:  # a record that cannot be written: this request goes out whole instead
            return []
        return [recorded] if recorded is not None else []

    def project(self, messages: Sequence[AgentMessage], request: Context) -> Context:
        if isinstance(messages, OwnedTranscript):
            return owned_request(messages, request)
        sections, text, _ = self._current()
        if text != render_sections(sections):
            return request  # a prompt an extension forced for this run goes out whole, as in pi
        return with_prompt_history(messages, request, sections)


def declaration(tool: AgentTool) -> JsonObject:
    return tool_declaration(
        tool.name, tool.description, tool.parameters, constrained_sampling=tool.constrained_sampling
    )


def with_prompt_history(
    messages: Sequence[AgentMessage], request: Context, sections: Mapping[str, str]
) -> Context:
    """``request`` with ``anchor`` and ``updates`` from the system records among ``messages``
    (the first, before any message the model sees, is the anchor), when they replay to
    ``sections`` (in any order) and the request's tools; else ``request`` as it is. The prompt
    is then the replayed one (a section added later comes last), as pi 1.6 sends it whole."""
    records = _records(messages)
    if not records or records[0][0] != 0:
        return request
    replayed = replay_system_messages([m for _, m in records])
    if replayed is None or replayed.content or (replayed.sections or {}) != dict(sections):
        return request
    if not _same_tools(replayed.tools_added or [], request.tools or []):
        return request
    return _with_history(records, replayed, request, request.tools)


def _records(messages: Sequence[AgentMessage]) -> list[tuple[int, SystemMessage]]:
    """The system records among ``messages``, each with the number of model messages before it."""
    records: list[tuple[int, SystemMessage]] = []
    position = 0
    for message in messages:
        if isinstance(message, LLM_MESSAGE_TYPES):  # the common case first: no conversion needed
            position += 1
        elif isinstance(message, SystemMessage):
            records.append((position, message))
        elif becomes_llm_message(message):
            position += 1
    return records


def _with_history(
    records: list[tuple[int, SystemMessage]],
    replayed: SystemMessage,
    request: Context,
    tools: list[Tool] | None,
) -> Context:
    first = records[0][1]
    sections = {name: text for name, text in (first.sections or {}).items() if text is not None}
    anchor = PromptAnchor(
        first.text(),
        [_tool(t) for t in first.tools_added or []],
        sections=sections if first.sections is not None else None,
        content=first.content,
        timestamp=first.timestamp,
    )
    updates = [
        PromptUpdate(
            at=at,
            content=record.content,
            sections=dict(record.sections or {}),
            tools_added=[_tool(t) for t in record.tools_added or []],
            tools_removed=[str(t["name"]) for t in record.tools_removed or []],
            timestamp=record.timestamp,
        )
        for at, record in records[1:]
    ]
    return Context(
        messages=request.messages,
        system_prompt=replayed.text(),
        tools=tools,
        anchor=anchor,
        updates=updates,
    )


def owned_request(messages: Sequence[AgentMessage], request: Context) -> Context:
    """``request`` with the prompt and tools the system records among ``messages`` replay to (none:
    no prompt and no tools), and their history as ``anchor`` and ``updates``."""
    records = _records(messages)
    replayed = replay_system_messages([m for _, m in records])
    if replayed is None:
        return Context(messages=request.messages, system_prompt="", tools=[])
    tools = [_tool(t) for t in replayed.tools_added or []]
    if records[0][0] != 0:
        return Context(messages=request.messages, system_prompt=replayed.text(), tools=tools)
    return _with_history(records, replayed, request, tools)


def _tool(data: JsonObject) -> Tool:
    return Tool(
        str(data["name"]),
        str(data.get("description") or ""),
        data.get("parameters") or {},
        constrained_sampling=declared_sampling(data),
    )


def _same_tools(recorded: Sequence[JsonObject], tools: Sequence[Tool]) -> bool:
    by_name = {str(t["name"]): _tool(t) for t in recorded}
    if set(by_name) != {t.name for t in tools}:
        return False
    return all(same_declaration(by_name[t.name], t) for t in tools)
