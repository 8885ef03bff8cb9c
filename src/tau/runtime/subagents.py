"""The ``task`` tool: the model hands a sub-task to a child agent with a fresh context (issue #35).

A child is an ``AgentSession`` in this process, on the parent's services without its extensions:
the same settings, credentials, sandbox and (unless the call or its agent definition says
otherwise) the same model, thinking level and tools, so its prompt and tool list are the parent's
and its first request reuses the prefix the provider has cached for the parent. Its conversation
is a session file of its own beside the parent's, whose header names the parent
(``parentSession``, as pi records a fork): ``tau --session <file>`` and pi resume it. The parent's
tool result carries the child's final answer; its ``details`` the agent, model, usage and that file.

Several ``task`` calls of one reply run at once (the tool's execution mode is parallel); a child
may delegate again down to ``MAX_TASK_DEPTH``; at most ``MAX_RUNNING_CHILDREN`` of a session run at once,
and a caller's ``child_stream_wrapper`` (``tau batch``'s provider limits) reaches every child's requests. Aborting the parent aborts its children.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import structs

from tau.agent.events import ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from tau.agent.messages import AgentMessage
from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.agent.tool_execution import NestedToolCaller, nested_tool_caller
from tau.ai.abort import AbortSignal
from tau.ai.types import AssistantMessage, JsonObject, Model, ThinkingLevelOrOff, Usage
from tau.context.agent_definitions import (
    AgentDefinition,
    agent_definition_dirs,
    load_agent_definitions,
)
from tau.session.entries import MessageEntry
from tau.session.manager import SessionManager
from tau.session.messages import SystemMessage
from tau.session.paths import resolve_session_dir
from tau.tools.errors import ToolAborted, ToolError
from tau.tools.truncate import format_size, truncate_head

if TYPE_CHECKING:
    from tau.runtime.agent_session import AgentSession
    from tau.runtime.services import AgentSessionServices

__all__ = ["MAX_TASK_DEPTH", "TASK_TOOL_NAME", "create_task_tool"]

TASK_TOOL_NAME = "task"
MAX_TASK_DEPTH = 3
"""How deep children may delegate: the parent's calls are depth 1, its children's depth 2, ..."""
MAX_RUNNING_CHILDREN = 4
"""Children of one session that run at once (as pi's sub-agent example); more calls wait their turn."""

_THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")

_DESCRIPTION = (
    "Hand a self-contained sub-task to a child agent that starts with a fresh context and returns "
    "only its final answer. Use it for exploration or work whose details the main conversation does "
    "not need. Several task calls in one reply run in parallel."
)


def _parameters(agents: Sequence[AgentDefinition]) -> JsonObject:
    agent: JsonObject = {"type": "string", "description": "The name of an agent definition to run."}
    if agents:
        agent["description"] = "An agent definition to run: " + "; ".join(
            f"{a.name}: {a.description}" for a in agents
        )
    return {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "What the child should do and report back."},
            "agent": agent,
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The tools the child may use (default: the agent's, else the caller's).",
            },
            "model": {"type": "string", "description": "A model for the child, as --model takes it."},
            "thinking": {"type": "string", "enum": list(_THINKING_LEVELS)},
            "timeout": {
                "type": "number",
                "description": "Seconds the child may run before it is stopped (default: no limit).",
            },
        },
        "required": ["prompt"],
    }


class SessionFactory(Protocol):
    """``tau.runtime.sdk.create_agent_session``, as far as a child needs it (passed in: the SDK
    module makes this tool, so this module does not import it)."""

    def __call__(
        self,
        *,
        services: AgentSessionServices,
        session_manager: SessionManager,
        model: Model | None,
        thinking_level: ThinkingLevelOrOff,
        tools: list[str],
        custom_tools: Sequence[AgentTool],
    ) -> CreatedSession: ...


class CreatedSession(Protocol):
    @property
    def session(self) -> AgentSession: ...


def create_task_tool(
    owner: Callable[[], AgentSession],
    create_session: SessionFactory,
    *,
    agents: Sequence[AgentDefinition] = (),
    depth: int = 1,
) -> AgentTool:
    """The ``task`` tool of the session ``owner()`` returns (bound late: the tool is made first);
    children are made by ``create_session``; ``agents`` are named to the model in its parameters."""

    running = asyncio.Semaphore(MAX_RUNNING_CHILDREN)

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        caller = nested_tool_caller()  # read here, on the loop: the child's calls go out under it
        async with running:
            return await _run_task(owner(), create_session, args, signal, on_update, depth, caller)

    return AgentTool(
        name=TASK_TOOL_NAME,
        label="Task",
        description=_DESCRIPTION,
        parameters=_parameters(agents),
        execute=execute,
        execution_mode="parallel",
        prompt_snippet="Delegate a self-contained sub-task to a child agent with a fresh context",
    )


async def _run_task(
    parent: AgentSession,
    create_session: SessionFactory,
    args: JsonObject,
    signal: AbortSignal | None,
    on_update: ToolUpdate | None,
    depth: int,
    caller: NestedToolCaller | None = None,
) -> AgentToolResult:
    if signal is not None and signal.aborted:
        raise ToolAborted()
    if depth > MAX_TASK_DEPTH:
        raise ToolError(
            f"task: sub-agents may delegate only {MAX_TASK_DEPTH} levels deep; do this task yourself"
        )
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ToolError("task: give the child a non-empty prompt")
    definition = _definition(parent, args.get("agent"))
    model = _model(parent, args.get("model") or (definition.model if definition else None))
    thinking = _thinking(args.get("thinking") or (definition.thinking if definition else None), parent)
    tools = _tools(parent, args.get("tools"), definition)
    timeout = _timeout(parent, args.get("timeout"))
    child = _create_child(parent, create_session, model, thinking, tools, depth)
    missing = [name for name in tools if name not in child.get_active_tool_names()]
    if missing:
        available = ", ".join(sorted(tool.name for tool in child.get_all_tools()))
        await child.dispose()
        raise ToolError(f"task: unknown tools {', '.join(missing)}; available: {available}")
    aborting = signal.add_listener(lambda: _abort_soon(child)) if signal is not None else None
    progress = _Progress(on_update, caller)
    unsubscribe = child.subscribe(progress.on_event)
    text = (
        prompt
        if definition is None or not definition.prompt
        else f"{definition.prompt}\n\n# Task\n\n{prompt}"
    )
    timed_out: list[bool] = []

    def time_out() -> None:
        timed_out.append(True)
        _abort_soon(child)

    timer = asyncio.get_running_loop().call_later(timeout, time_out) if timeout else None
    try:
        await child.prompt(text)
        await child.wait_for_idle()
    finally:
        if timer is not None:
            timer.cancel()
        unsubscribe()
        if aborting is not None:
            aborting()
        session_file = child.session_file
        messages = list(child.messages)
        await child.dispose()
    if signal is not None and signal.aborted:
        raise ToolAborted("Sub-agent aborted")
    if timed_out:
        raise ToolError(
            f"task: the child was stopped after {timeout:g} s (its time limit); "
            f"its work so far is in {session_file}"
        )
    last = _last_assistant(messages)
    usage = _usage_of(messages)
    details: JsonObject = {
        "agent": definition.name if definition else None,
        "model": f"{child_model.provider}/{child_model.id}"
        if (child_model := model or parent.model)
        else None,
        "sessionFile": session_file,
        "turns": sum(1 for m in messages if isinstance(m, AssistantMessage)),
        "usage": _usage_json(usage),
    }
    if last is None:
        raise ToolError(f"task: the child ended without an answer (transcript: {session_file})")
    if last.stop_reason in ("error", "aborted"):
        reason = last.error_message or last.stop_reason
        raise ToolError(f"task: the child failed: {reason} (transcript: {session_file})")
    answer = "".join(block.text for block in last.content if block.type == "text").strip()
    kept = truncate_head(answer)
    if kept.truncated:
        # As the other tools do: the model's view is bounded; the whole answer stays in the transcript.
        answer = (
            f"{kept.content}\n\n[The child's answer was cut at {format_size(kept.output_bytes)} of "
            f"{format_size(kept.total_bytes)}; the whole of it is in {session_file}]"
        )
        details["truncated"] = True
    return text_result(answer or "(the child gave no text)", details)


def _definition(parent: AgentSession, name: Any) -> AgentDefinition | None:
    if name is None or name == "":
        return None
    if not isinstance(name, str):
        raise ToolError("task: agent must be the name of an agent definition")
    agents = _agents(parent)
    for agent in agents:
        if agent.name == name:
            return agent
    known = ", ".join(a.name for a in agents) or "none (add agents/<name>.md files)"
    raise ToolError(f"task: unknown agent {name!r}; defined agents: {known}")


def _agents(parent: AgentSession) -> list[AgentDefinition]:
    services = parent.services
    folders = agent_definition_dirs(parent.cwd, services.agent_dir, project_trusted=services.project_trusted)
    return load_agent_definitions(folders).agents


def _model(parent: AgentSession, reference: Any) -> Model | None:
    if not reference:
        return None
    from tau.accounts.model_resolver import ModelResolutionError, resolve_cli_model

    if not isinstance(reference, str):
        raise ToolError("task: model must be a model name such as provider/id")
    try:
        return resolve_cli_model(parent.services.model_registry, reference, allow_custom_id=False).model
    except ModelResolutionError as exc:
        raise ToolError(f"task: {exc}") from None


def _thinking(level: Any, parent: AgentSession) -> Any:
    if level is None or level == "":
        return parent.thinking_level
    if level not in _THINKING_LEVELS:
        raise ToolError(f"task: thinking must be one of {', '.join(_THINKING_LEVELS)}")
    return level


def _timeout(parent: AgentSession, asked: Any) -> float | None:
    """The call's ``timeout`` (seconds), else the ``task.timeoutSeconds`` setting; ``None``: none."""
    if asked is not None:
        if not isinstance(asked, int | float) or isinstance(asked, bool) or not 0 < asked < 1e9:
            raise ToolError("task: timeout must be a number of seconds above 0")
        return float(asked)
    section = parent.services.settings_manager.get("task")
    value = section.get("timeoutSeconds") if isinstance(section, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e9:
        return float(value)
    return None


def _tools(parent: AgentSession, asked: Any, definition: AgentDefinition | None) -> list[str]:
    if asked is not None and not (isinstance(asked, list) and all(isinstance(t, str) for t in asked)):
        raise ToolError("task: tools must be a list of tool names")
    names = asked if asked is not None else definition.tools if definition and definition.tools else None
    return parent.get_active_tool_names() if names is None else list(names)


def _create_child(
    parent: AgentSession,
    create_session: SessionFactory,
    model: Model | None,
    thinking: Any,
    tools: list[str],
    depth: int,
) -> AgentSession:
    services = structs.replace(parent.services, extension_runner=None)
    settings = services.settings_manager
    manager = SessionManager(
        parent.cwd, resolve_session_dir(parent.cwd, settings.session_dir, agent_dir=services.agent_dir)
    )
    manager.new_session(parent_session=parent.session_file)
    _start_from_parents_prompt(parent, manager, model or parent.model, thinking)
    holder: list[AgentSession] = []
    created = create_session(
        services=services,
        session_manager=manager,
        model=model or parent.model,
        thinking_level=thinking,
        tools=tools,
        custom_tools=[
            create_task_tool(lambda: holder[0], create_session, agents=_agents(parent), depth=depth + 1)
        ]
        if TASK_TOOL_NAME in tools
        else (),
    )
    child = created.session
    # A virtual model is routed by the parent's extensions: their routers are in the shared registry.
    holder.append(child)
    parent_options = parent.base_system_prompt_options
    if parent_options is not None and set(tools) <= set(parent.get_active_tool_names()):
        # Fewer tools than the parent's: the parent's prompt, the others told as removed.
        child.describe_tools_as(parent_options)
    wrapper = parent.child_stream_wrapper
    if wrapper is not None and child.agent.stream_fn is not None:
        child.agent.stream_fn = wrapper(child.agent.stream_fn)
    child.child_stream_wrapper = wrapper
    return child


def _start_from_parents_prompt(
    parent: AgentSession, manager: SessionManager, model: Model | None, thinking: Any
) -> None:
    """Open the child's transcript with the prompt and tools the parent's conversation was
    anchored on (its first system record), so the child's first request begins with the bytes the
    provider has cached for the parent; what the child has otherwise (fewer tools, another prompt)
    is recorded after it as a change, which requests append (``tau.ai.prompt_updates``)."""
    anchor = next(
        (
            entry.message
            for entry in parent.session_manager.get_branch()
            if isinstance(entry, MessageEntry) and isinstance(entry.message, SystemMessage)
        ),
        None,
    )
    if model is not None:
        manager.append_model_change(model.provider, model.id)
    manager.append_thinking_level_change(thinking)
    if anchor is not None and anchor.sections is not None:
        sections = {name: text for name, text in anchor.sections.items() if text is not None}
        manager.record_system_prompt(sections, anchor.tools_added or [])


def _abort_soon(child: AgentSession) -> None:
    asyncio.get_running_loop().create_task(child.abort())


class _Progress:
    """Streams the child's tool calls to the parent: as partial results of the ``task`` call (its
    row in the TUI), and as ``tool_execution_*`` events of their own under the ``task`` call's id
    (``parent_tool_call_id``; JSON, RPC and ACP clients show them nested)."""

    def __init__(self, on_update: ToolUpdate | None, caller: NestedToolCaller | None) -> None:
        self._on_update = on_update
        self._caller = caller
        self._lines: list[str] = []

    async def on_event(self, event: Any) -> None:
        if not isinstance(event, (ToolExecutionStart, ToolExecutionUpdate, ToolExecutionEnd)):
            return
        if self._caller is not None:
            await self._caller.relay(event)
        if self._on_update is None or not isinstance(event, ToolExecutionStart):
            return
        if event.parent_tool_call_id is not None:
            return  # a grandchild's call: its own task call's row shows it
        self._lines.append(f"{event.tool_name} {_brief(event.args)}")
        self._on_update(text_result("\n".join(self._lines[-10:]), {"childToolCalls": len(self._lines)}))


def _brief(args: JsonObject) -> str:
    for key in ("command", "path", "pattern", "prompt"):
        value = args.get(key)
        if isinstance(value, str):
            return value if len(value) <= 80 else value[:77] + "..."
    return ""


def _last_assistant(messages: Sequence[AgentMessage]) -> AssistantMessage | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None


def _usage_of(messages: Sequence[AgentMessage]) -> Usage:
    total = Usage()
    for message in messages:
        if isinstance(message, AssistantMessage):
            u = message.usage
            total.input += u.input
            total.output += u.output
            total.cache_read += u.cache_read
            total.cache_write += u.cache_write
            total.total_tokens += u.total_tokens
            total.cost.total += u.cost.total
    return total


def _usage_json(usage: Usage) -> JsonObject:
    return {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "totalTokens": usage.total_tokens,
        "cost": usage.cost.total,
    }
