"""The SDK entry: ``create_agent_session`` builds a ready ``AgentSession`` (spec 70 §7).

    from tau import create_agent_session

    result = create_agent_session(cwd="/path/to/project", tools=["read", "grep"])
    await result.session.prompt("Where is the config parsed?")

Everything has a default: the services of the cwd, a new session file, the model from settings
or the first provider with credentials. Resuming a session (a session manager holding messages)
restores its conversation, model and thinking level.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from msgspec import Struct

from tau.accounts.model_resolver import (
    DEFAULT_THINKING_LEVEL,
    ScopedModel,
    find_initial_model,
    is_valid_thinking_level,
    restore_model,
)
from tau.agent.agent import Agent
from tau.agent.tool import AgentTool
from tau.ai.thinking import clamp_thinking_level
from tau.ai.types import Model, ThinkingLevelOrOff
from tau.config.settings import SettingsManager
from tau.config.tool_selection import apply_tool_modifiers, is_tool_modifier, tool_list_error
from tau.context.agent_definitions import AgentDefinition, agent_definition_dirs, load_agent_definitions
from tau.context.convert import convert_to_llm
from tau.runtime.agent_session import AgentSession
from tau.runtime.model_control import create_stream_fn
from tau.runtime.services import AgentSessionServices, create_agent_session_services
from tau.runtime.shell_environment import SessionShellEnvironment
from tau.runtime.subagents import TASK_TOOL_NAME, create_task_tool
from tau.runtime.tool_registry import NoTools, ToolRegistry, create_builtin_tools
from tau.runtime.virtual_routing import branch_selection
from tau.session.context import SessionContext
from tau.session.entries import ThinkingLevelChangeEntry
from tau.session.manager import SessionManager
from tau.tools import CODING_TOOL_NAMES, SpillDirectory
from tau.tools.images import ImageLimits
from tau.tools.sandbox import fenced_replacement

__all__ = ["NO_MODELS_MESSAGE", "CreateAgentSessionResult", "create_agent_session"]

NO_MODELS_MESSAGE = (
    "No models available: set a provider's API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) or "
    "store one in auth.json in the agent dir, then pick a model with --model"
)


class CreateAgentSessionResult(Struct, frozen=True):
    """The session, and why its model is not the one asked for or stored (``None`` when it is)."""

    session: AgentSession
    model_fallback_message: str | None = None


def create_agent_session(
    *,
    cwd: str | None = None,
    agent_dir: str | os.PathLike[str] | None = None,
    services: AgentSessionServices | None = None,
    session_manager: SessionManager | None = None,
    model: Model | None = None,
    thinking_level: ThinkingLevelOrOff | None = None,
    scoped_models: Sequence[ScopedModel] | None = None,
    tools: list[str] | None = None,
    no_tools: NoTools | None = None,
    custom_tools: Sequence[AgentTool] | None = None,
    exclude_tools: Sequence[str] = (),
    builtin_replacements: Sequence[AgentTool] = (),
) -> CreateAgentSessionResult:
    """A new ``AgentSession`` (see the module docstring); never prints.

    ``tools`` is an allowlist of names and ``*`` patterns: exactly the matching tools are active and
    only they can be activated later; a list of only ``+name`` / ``-name`` entries edits the default
    selection instead. ``no_tools="all"`` activates nothing; ``"builtin"`` leaves built-ins inactive
    but custom tools active. Without either: the ``defaultTools`` setting (read, bash, edit, write)
    plus every custom tool. ``exclude_tools`` (names, patterns) removes its matches from all of that.
    ``builtin_replacements``: built-in tools made another way (same name, other operations, such as
    an editor's file system); each stands where its built-in stands, so the options above select it
    as they would the built-in (a custom tool of that name would be active even under ``"builtin"``).
    They stay inside the session's sandbox: a ``bash`` replacement gives way to the fenced built-in
    while the sandbox fences, ``write`` and ``edit`` ones refuse what the fence keeps. A malformed ``tools`` list raises ``ValueError``.
    """
    if tools is not None and (problem := tool_list_error(tools)) is not None:
        raise ValueError(f"Invalid tools option: {problem}")
    if services is None:
        base_cwd = cwd or (session_manager.get_cwd() if session_manager is not None else None) or os.getcwd()
        services = create_agent_session_services(cwd=base_cwd, agent_dir=agent_dir)
    settings = services.settings_manager
    registry = services.model_registry
    if session_manager is None:
        session_manager = SessionManager.create(
            services.cwd, settings.session_dir, agent_dir=services.agent_dir
        )
    existing = session_manager.build_session_context(system_messages=True)
    resuming = bool(existing.messages)
    scoped = list(scoped_models or ())

    fallback_message: str | None = None
    if model is None:
        model, fallback_message = _initial_model(
            services, existing if resuming else None, scoped, session_manager
        )
        if thinking_level is None and not resuming and scoped and model is scoped[0].model:
            thinking_level = scoped[0].thinking_level  # `--models name:level` starts at that level (pi)
    level = _initial_thinking_level(thinking_level, settings, session_manager if resuming else None, model)
    level = clamp_thinking_level(model, level) if model is not None else "off"

    spill = SpillDirectory()
    shell_environment = SessionShellEnvironment()
    session_holder: list[AgentSession] = []
    builtin = create_builtin_tools(
        services.cwd,
        spill=spill,
        shell_path=settings.shell_path,
        shell_command_prefix=settings.shell_command_prefix,
        session_env=shell_environment,
        sandbox=services.sandbox,
        auto_resize_images=lambda: settings.auto_resize_images,
        image_limits=lambda: (
            session_holder[0].image_limits() if session_holder else ImageLimits.of_model(model)
        ),
    )
    builtin.append(
        create_task_tool(lambda: session_holder[0], create_agent_session, agents=_agent_definitions(services))
    )
    replaced = {tool.name: tool for tool in builtin_replacements}
    # A replacement stays inside the session's fence (bash runs fenced while the sandbox is on).
    builtin = [
        fenced_replacement(replaced[tool.name], tool, services.sandbox, services.cwd)
        if tool.name in replaced
        else tool
        for tool in builtin
    ]
    runner = services.extension_runner
    setting = settings.default_tools
    defaults = [] if no_tools else (list(CODING_TOOL_NAMES) if setting is None else setting)
    allowlist = tools
    if tools and all(is_tool_modifier(entry) for entry in tools):
        defaults = apply_tool_modifiers(defaults, tools)
        # Under --no-tools the edited selection is all there is; otherwise it only says what starts active.
        allowlist = defaults if no_tools == "all" else None
        no_tools = None
    elif tools is not None:
        no_tools = None  # an allowlist says exactly what is active, --no-tools or not
    registry_of_tools = ToolRegistry(
        builtin,
        custom_tools or (),
        extension=runner.tools if runner is not None else (),
        allowlist=allowlist,
        no_tools=no_tools,
        # An opt-in tool comes only by its name: a pattern such as ``*`` means pi's tools, as in pi.
        exclude=[*exclude_tools, TASK_TOOL_NAME]
        if allowlist is not None and TASK_TOOL_NAME not in allowlist
        else exclude_tools,
        defaults=defaults,
        inactive=[
            t.definition.name for t in runner.tool_definitions if not t.definition.activates_on_registration
        ]
        if runner is not None
        else (),
    )

    agent = Agent(
        model=model,
        thinking_level=level,
        messages=existing.messages if resuming else (),
        convert_to_llm=lambda messages: convert_to_llm(messages, block_images=settings.block_images),
        stream_fn=create_stream_fn(registry),
        steering_mode=settings.steering_mode,
        follow_up_mode=settings.follow_up_mode,
        session_id=session_manager.get_session_id(),
        thinking_budgets=settings.thinking_budgets,
        transport=settings.transport,
        websocket_connect_timeout_ms=settings.websocket_connect_timeout_ms,
        max_retry_delay_ms=settings.retry.provider_max_retry_delay_ms,
        tool_execution=settings.tool_execution,
        live_tools=True,  # tools activated during a run (tool_search, set_active_tools) reach its next call
    )
    if not resuming:
        if model is not None:
            session_manager.append_model_change(model.provider, model.id)
        session_manager.append_thinking_level_change(level)
    elif _recorded_thinking_level(session_manager) is None:
        session_manager.append_thinking_level_change(level)

    session = AgentSession(
        agent=agent,
        session_manager=session_manager,
        services=services,
        tools=registry_of_tools,
        spill=spill,
        scoped_models=scoped,
    )
    shell_environment.attach(lambda: session)
    session_holder.append(session)
    return CreateAgentSessionResult(session, fallback_message)


def _agent_definitions(services: AgentSessionServices) -> list[AgentDefinition]:
    """The agent definitions the ``task`` tool offers (``tau.context.agent_definitions``)."""
    folders = agent_definition_dirs(
        services.cwd, services.agent_dir, project_trusted=services.project_trusted
    )
    return load_agent_definitions(folders).agents


def _initial_model(
    services: AgentSessionServices,
    existing: SessionContext | None,
    scoped: Sequence[ScopedModel],
    session_manager: SessionManager | None = None,
) -> tuple[Model | None, str | None]:
    """The session's stored model if it still exists with credentials, else the default one; and
    a message when the stored model could not be restored or there is no model at all."""
    settings = services.settings_manager
    registry = services.model_registry
    initial = find_initial_model(
        registry,
        scoped_models=scoped,
        is_continuing=existing is not None,
        default_provider=settings.default_provider,
        default_model_id=settings.default_model,
    )
    stored = existing.model if existing is not None else None
    if existing is not None and session_manager is not None:
        # A virtual model's selection holds over the physical models its responses name.
        stored = branch_selection(session_manager.get_branch(), registry.find) or stored
    if stored is not None:
        restored = restore_model(registry, stored.provider, stored.model_id, current=initial.model)
        if restored.model is not None:
            return restored.model, restored.message
        return None, restored.message
    if initial.model is None:
        return None, NO_MODELS_MESSAGE
    return initial.model, None


def _initial_thinking_level(
    explicit: ThinkingLevelOrOff | None,
    settings: SettingsManager,
    resumed: SessionManager | None,
    model: Model | None,
) -> ThinkingLevelOrOff:
    """Explicit, else the resumed session's last recorded level, else the model's entry of
    ``modelThinkingLevels``, else the settings default, else medium."""
    if explicit is not None:
        return explicit
    recorded = _recorded_thinking_level(resumed) if resumed is not None else None
    if recorded is not None and is_valid_thinking_level(recorded):
        return recorded
    per_model = settings.model_thinking_level(model.provider, model.id) if model is not None else None
    return per_model or settings.default_thinking_level or DEFAULT_THINKING_LEVEL


def _recorded_thinking_level(session_manager: SessionManager) -> str | None:
    """The level of the last ``thinking_level_change`` entry on the current branch, if any."""
    for entry in reversed(session_manager.get_branch()):
        if isinstance(entry, ThinkingLevelChangeEntry):
            return entry.thinking_level
    return None
