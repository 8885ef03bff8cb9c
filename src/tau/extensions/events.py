"""The events an extension can handle (pi 1.6), one dataclass each, with pi's field names.

Attributes are pi's names in snake_case (``tool_call_id`` for ``toolCallId``); ``type`` is the
event name that ``tau.on(...)`` takes. What a handler may return for each event, and how the
results of several handlers combine, is in ``results`` and ``runner``.

Lifecycle: ``session_start`` → ``resources_discover`` at startup; ``session_before_switch`` /
``session_before_fork`` → ``session_shutdown`` → (new runner) ``session_start`` on replacement;
``session_before_compact`` → ``session_compact`` (or ``session_compact_failed``); ``session_before_tree`` → ``session_tree``.
Per prompt: ``input`` → ``before_agent_start`` → ``agent_start`` → per turn ``turn_start`` →
``context`` → ``context_with_system`` → ``before_provider_request`` → ``before_provider_headers``
→ ``after_provider_response`` → ``provider_stream_event`` / ``message_*`` → per tool
``tool_execution_start`` → ``tool_call`` → ``tool_execution_update`` → ``tool_result`` →
``tool_execution_end`` → ``turn_end`` … → ``agent_end`` → ``agent_before_settle``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias

from msgspec import Struct

from tau.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortSignal
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    JsonObject,
    Model,
    TextContent,
    ToolResultMessage,
    now_ms,
)
from tau.compaction import CompactionPreparation
from tau.context.system_prompt import SystemPromptOptions
from tau.extensions.types import RegisteredMcpServer
from tau.session.entries import BranchSummaryEntry, CompactionEntry, SessionEntry

__all__ = [
    "CANCELLABLE_EVENTS",
    "COMBINED_EVENTS",
    "EVENT_TYPES",
    "AfterProviderResponseEvent",
    "AgentBeforeSettleEvent",
    "AgentEndEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "CacheWarmingDecisionEvent",
    "ContextEvent",
    "ContextWithSystemEvent",
    "ExtensionEvent",
    "InputEvent",
    "InputSource",
    "McpServersChangeEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "ProjectTrustEvent",
    "ProviderStreamEvent",
    "ResourcesDiscoverEvent",
    "SessionBeforeCompactEvent",
    "SessionBeforeForkEvent",
    "SessionBeforeSwitchEvent",
    "SessionBeforeTreeEvent",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "ThinkingLevelSelectEvent",
    "ToolCallEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolResultEvent",
    "TreePreparation",
    "TurnEndEvent",
    "TurnStartEvent",
    "UiPromptEndEvent",
    "UiPromptStartEvent",
    "UserBashEvent",
    "from_agent_event",
]

InputSource: TypeAlias = Literal["interactive", "rpc", "extension"]
StartReason: TypeAlias = Literal["startup", "reload", "new", "resume", "fork"]
ShutdownReason: TypeAlias = Literal["quit", "reload", "new", "resume", "fork"]


# -- session lifecycle -------------------------------------------------------------------------


class ProjectTrustEvent(Struct):
    """Before tau decides whether ``cwd`` (a folder with project files to protect) is trusted; only
    the user's and ``-e`` extensions hear it. A handler returns ``{"trusted": "yes" | "no" |
    "undecided", "remember": bool}``: the first yes or no decides (``remember`` saves it)."""

    cwd: str
    type: ClassVar[Literal["project_trust"]] = "project_trust"


class ResourcesDiscoverEvent(Struct):
    """Handlers may return extra skill, prompt-template and theme paths."""

    cwd: str
    reason: Literal["startup", "reload"]
    type: ClassVar[Literal["resources_discover"]] = "resources_discover"


class SessionStartEvent(Struct):
    reason: StartReason
    previous_session_file: str | None = None
    type: ClassVar[Literal["session_start"]] = "session_start"


class SessionBeforeSwitchEvent(Struct):
    """A new or resumed session is about to replace this one; ``{cancel: True}`` prevents it."""

    reason: Literal["new", "resume"]
    target_session_file: str | None = None
    type: ClassVar[Literal["session_before_switch"]] = "session_before_switch"


class SessionBeforeForkEvent(Struct):
    entry_id: str
    position: Literal["before", "at"]
    type: ClassVar[Literal["session_before_fork"]] = "session_before_fork"


class SessionBeforeCompactEvent(Struct):
    """A compaction is about to summarise ``preparation``; handlers may cancel it or supply their
    own summary (``{compaction: {summary, firstKeptEntryId, tokensBefore, details?}}``)."""

    preparation: CompactionPreparation
    branch_entries: list[SessionEntry]
    custom_instructions: str | None
    signal: AbortSignal | None
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    """``manual`` (/compact), ``threshold`` (the context passed the window minus the reserve,
    after a run or between two of its turns) or ``overflow`` (the provider refused the prompt)."""
    will_retry: bool = False
    """Whether the run is continued after the compaction (an ``overflow`` recovery)."""
    type: ClassVar[Literal["session_before_compact"]] = "session_before_compact"


class SessionCompactEvent(Struct):
    compaction_entry: CompactionEntry
    from_extension: bool
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    will_retry: bool = False
    type: ClassVar[Literal["session_compact"]] = "session_compact"


class SessionCompactFailedEvent(Struct):
    """A compaction failed (``error_message``) or was stopped (``aborted``: by the user or a
    ``session_before_compact`` cancel). ``reason``: ``manual`` (/compact), ``threshold`` or
    ``overflow``; ``from_extension``: the summary being stored came from a handler."""

    reason: Literal["manual", "threshold", "overflow"]
    error_message: str | None
    aborted: bool
    will_retry: bool
    from_extension: bool
    type: ClassVar[Literal["session_compact_failed"]] = "session_compact_failed"


class TreePreparation(Struct):
    """A move in the session tree, before any branch summary is written."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None


class SessionBeforeTreeEvent(Struct):
    preparation: TreePreparation
    signal: AbortSignal | None
    type: ClassVar[Literal["session_before_tree"]] = "session_before_tree"


class SessionTreeEvent(Struct):
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: BranchSummaryEntry | None = None
    from_extension: bool | None = None
    type: ClassVar[Literal["session_tree"]] = "session_tree"


class SessionShutdownEvent(Struct):
    """Emitted before the session is torn down; the last chance to use ``ctx``."""

    reason: ShutdownReason
    target_session_file: str | None = None
    type: ClassVar[Literal["session_shutdown"]] = "session_shutdown"


# -- prompt flow -------------------------------------------------------------------------------


class InputEvent(Struct):
    """What the user (or an extension) typed, before skill and template expansion."""

    text: str
    images: list[ImageContent] | None
    source: InputSource
    type: ClassVar[Literal["input"]] = "input"


class BeforeAgentStartEvent(Struct):
    """``system_prompt`` is the prompt so far in the chain (a previous handler may have changed it)."""

    prompt: str
    images: list[ImageContent] | None
    system_prompt: str
    system_prompt_options: SystemPromptOptions | None
    type: ClassVar[Literal["before_agent_start"]] = "before_agent_start"


class ContextEvent(Struct):
    """The messages of the next model call: a deep copy, safe to change; return ``{messages}`` to
    replace them for this call only."""

    messages: list[AgentMessage]
    type: ClassVar[Literal["context"]] = "context"


class BeforeProviderRequestEvent(Struct):
    """The request body the provider is about to send; return a new dict to replace it."""

    payload: JsonObject
    model: Model | None = None
    type: ClassVar[Literal["before_provider_request"]] = "before_provider_request"


class ContextWithSystemEvent(Struct):
    """The whole transcript of the next model call, after every ``context`` handler: system
    messages included (the first holds the prompt and tools, later ones their changes). Return
    ``{messages}`` to send those instead: the request then takes its prompt and tools from their
    system messages, so the first message must stay a system message."""

    messages: list[AgentMessage]
    type: ClassVar[Literal["context_with_system"]] = "context_with_system"


class BeforeProviderHeadersEvent(Struct):
    """The assembled HTTP headers of the next provider request; change ``headers`` in place (a
    ``None`` value removes that header). Once per request: retries send the same headers."""

    headers: dict[str, str | None]
    type: ClassVar[Literal["before_provider_headers"]] = "before_provider_headers"


class ProviderStreamEvent(Struct):
    """One parsed event of the provider's stream (``data``, as the provider sent it: read only),
    before tau turns it into message updates. Handlers are awaited in stream order."""

    data: Any
    provider: str
    api: str
    model: str
    type: ClassVar[Literal["provider_stream_event"]] = "provider_stream_event"


class AfterProviderResponseEvent(Struct):
    status: int
    headers: dict[str, str]
    type: ClassVar[Literal["after_provider_response"]] = "after_provider_response"


# -- the agent loop ----------------------------------------------------------------------------


# The agent's own events reach extensions as they are; only the turn events gain a turn index.
AgentStartEvent = AgentStart
AgentEndEvent = AgentEnd


class AgentBeforeSettleEvent(Struct):
    """The run is about to settle (no retry, compaction or queued message follows); not after an
    abort. ``entries`` (pi's drafts, dicts: ``custom``, ``custom_message``, ``context_edit``
    ``{targetId, replacement}`` or ``compaction`` ``{summary, firstKeptEntryId}``) and ``continue_``
    are what earlier handlers proposed; return ``{"entries": [...], "continue": True}`` to append
    entries (a ``custom_message`` joins the context, a ``context_edit`` replaces or removes an
    entry's message in it, a ``compaction`` summarises what comes before ``firstKeptEntryId``, or
    everything with ``None``) and ask for one more model request. Entry ids are those of
    ``ctx.session_manager.get_branch()``.
    ``outcome``: ``"completed"`` or ``"error"``; ``messages``: the context as it stands."""

    entries: list[JsonObject]
    continue_: bool
    outcome: Literal["completed", "aborted", "error"]
    messages: list[AgentMessage]
    type: ClassVar[Literal["agent_before_settle"]] = "agent_before_settle"


class TurnStartEvent(Struct):
    turn_index: int
    timestamp: int
    type: ClassVar[Literal["turn_start"]] = "turn_start"


class TurnEndEvent(Struct):
    turn_index: int
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: ClassVar[Literal["turn_end"]] = "turn_end"


MessageStartEvent = MessageStart
MessageUpdateEvent = MessageUpdate
MessageEndEvent = MessageEnd
ToolExecutionStartEvent = ToolExecutionStart
ToolExecutionUpdateEvent = ToolExecutionUpdate
ToolExecutionEndEvent = ToolExecutionEnd


class ToolCallEvent(Struct):
    """A validated tool call about to run. Changing ``input`` in place changes the call; return
    ``{block: True, reason}`` to stop it. A handler that raises blocks the call too."""

    tool_name: str
    tool_call_id: str
    input: JsonObject
    parent_tool_call_id: str | None = None
    """The calling tool's id when another tool (a codemode script) made the call."""
    type: ClassVar[Literal["tool_call"]] = "tool_call"


class ToolResultEvent(Struct):
    """A finished call; return any of ``{content, details, isError}`` to rewrite the result. The
    next handler sees the rewritten values."""

    tool_name: str
    tool_call_id: str
    input: JsonObject
    content: list[TextContent | ImageContent]
    details: Any
    is_error: bool
    parent_tool_call_id: str | None = None
    type: ClassVar[Literal["tool_result"]] = "tool_result"


# -- model and shell ---------------------------------------------------------------------------


class ModelSelectEvent(Struct):
    model: Model
    previous_model: Model | None
    source: Literal["set", "cycle", "restore"]
    type: ClassVar[Literal["model_select"]] = "model_select"


class ThinkingLevelSelectEvent(Struct):
    level: str
    previous_level: str
    type: ClassVar[Literal["thinking_level_select"]] = "thinking_level_select"


class CacheWarmingDecisionEvent(Struct):
    """Before each prompt-cache refresh, with tau's decision in ``action`` (``"warm"`` or ``"stop"``)
    and the estimates it came from (dollars); return ``{"action": ...}`` to decide otherwise (the
    last handler that returns one wins)."""

    warm_cost: float
    miss_cost: float
    continuation_probability: float
    action: Literal["warm", "stop"]
    type: ClassVar[Literal["cache_warming_decision"]] = "cache_warming_decision"


class UiPromptStartEvent(Struct):
    """An extension dialog (``ctx.ui.select`` / ``confirm`` / ``input`` / ``editor``) now waits for
    the user; nested dialogs make one span, named after the outer one. Not awaited."""

    kind: Literal["select", "confirm", "input", "editor", "custom"]
    title: str | None = None
    reason: Literal["ui_prompt"] = "ui_prompt"
    type: ClassVar[Literal["ui_prompt_start"]] = "ui_prompt_start"


class UiPromptEndEvent(Struct):
    """The dialog span ``ui_prompt_start`` opened has closed: tau no longer waits for the user."""

    kind: Literal["select", "confirm", "input", "editor", "custom"]
    title: str | None = None
    reason: Literal["ui_prompt"] = "ui_prompt"
    type: ClassVar[Literal["ui_prompt_end"]] = "ui_prompt_end"


class McpServersChangeEvent(Struct):
    """An extension registered or removed an MCP server after the session started; ``servers`` is
    every registered server after the change. Handling it makes an extension the one that connects
    registered servers (the built-in MCP support does)."""

    servers: list[RegisteredMcpServer]
    type: ClassVar[Literal["mcp_servers_change"]] = "mcp_servers_change"


class UserBashEvent(Struct):
    """A ``!command`` from the user; return ``{result}`` (already ran) or ``{operations}`` (how to run it)."""

    command: str
    exclude_from_context: bool
    cwd: str
    type: ClassVar[Literal["user_bash"]] = "user_bash"


ExtensionEvent: TypeAlias = (
    ResourcesDiscoverEvent
    | SessionStartEvent
    | SessionBeforeSwitchEvent
    | SessionBeforeForkEvent
    | SessionBeforeCompactEvent
    | SessionCompactEvent
    | SessionCompactFailedEvent
    | SessionBeforeTreeEvent
    | SessionTreeEvent
    | SessionShutdownEvent
    | InputEvent
    | BeforeAgentStartEvent
    | AgentStartEvent
    | AgentEndEvent
    | AgentBeforeSettleEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | ContextEvent
    | BeforeProviderRequestEvent
    | AfterProviderResponseEvent
    | ContextWithSystemEvent
    | BeforeProviderHeadersEvent
    | ProviderStreamEvent
    | ModelSelectEvent
    | ThinkingLevelSelectEvent
    | ToolCallEvent
    | ToolResultEvent
    | UserBashEvent
    | CacheWarmingDecisionEvent
    | UiPromptStartEvent
    | UiPromptEndEvent
    | McpServersChangeEvent
)

EVENT_TYPES: frozenset[str] = frozenset(
    {
        "project_trust",
        "resources_discover",
        "session_start",
        "session_before_switch",
        "session_before_fork",
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_before_tree",
        "session_tree",
        "session_shutdown",
        "input",
        "before_agent_start",
        "agent_start",
        "agent_end",
        "agent_before_settle",
        "turn_start",
        "turn_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "context",
        "before_provider_request",
        "after_provider_response",
        "context_with_system",
        "before_provider_headers",
        "provider_stream_event",
        "model_select",
        "thinking_level_select",
        "tool_call",
        "tool_result",
        "user_bash",
        "cache_warming_decision",
        "ui_prompt_start",
        "ui_prompt_end",
        "mcp_servers_change",
    }
)


CANCELLABLE_EVENTS: frozenset[str] = frozenset(
    {"session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"}
)
"""Handlers may cancel: the last result is kept and ``cancel: True`` stops the others."""

COMBINED_EVENTS: frozenset[str] = frozenset(
    {
        "input",
        "before_agent_start",
        "context",
        "context_with_system",
        "before_provider_request",
        "message_end",
        "tool_call",
        "tool_result",
        "user_bash",
        "resources_discover",
        "project_trust",
        "cache_warming_decision",
        "agent_before_settle",
    }
)
"""Handler results combine by an event-specific rule (the runner's ``emit_<event>`` method)."""


def from_agent_event(event: AgentEvent, turn_index: int) -> ExtensionEvent:
    """The extension event for an agent event; turns carry ``turn_index`` (``turn_start`` also
    the current time)."""
    if isinstance(event, TurnStart):
        return TurnStartEvent(turn_index, now_ms())
    if isinstance(event, TurnEnd):
        return TurnEndEvent(turn_index, event.message, event.tool_results)
    return event
