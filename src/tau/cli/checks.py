"""Start-up checks of what the command line and the settings name: a name that matches nothing is a
warning, so that a typo is seen instead of silently changing what tau does."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.runtime.services import AgentSessionServices


def unknown_tools_warning(flag: str, tools: list[str], services: AgentSessionServices) -> str | None:
    """Entries of a tool list (``--tools``, ``--exclude-tools``) that name or match no tool, built-in
    or registered by an extension."""
    from tau.config.tool_selection import is_tool_modifier, tool_name_matcher
    from tau.runtime.subagents import TASK_TOOL_NAME
    from tau.tools import ALL_TOOL_NAMES

    runner = services.extension_runner
    builtin = [*ALL_TOOL_NAMES, TASK_TOOL_NAME]
    known = [*builtin, *(tool.name for tool in runner.tools)] if runner is not None else builtin
    names = [entry[1:] if is_tool_modifier(entry) else entry for entry in tools]
    # MCP tools are known only once their servers answer, after this check: their names pass.
    unknown = [
        name
        for name in names
        if not name.startswith("mcp__") and not any(map(tool_name_matcher([name]), known))
    ]
    if not unknown:
        return None
    listed = ", ".join(f'"{name}"' for name in unknown)
    return f"{flag}: no tool named {listed}; the tools are {', '.join(dict.fromkeys(known))}"


def default_model_warning(services: AgentSessionServices) -> str | None:
    """A ``defaultProvider`` / ``defaultModel`` setting that names nothing tau knows."""
    settings = services.settings_manager
    provider, model_id = settings.default_provider, settings.default_model
    registry = services.model_registry
    if provider is None:
        return None
    if provider not in registry.get_providers():
        return (
            f'the defaultProvider setting "{provider}" is not a known provider; a default model is '
            "chosen instead (tau --list-models lists the models you can use)"
        )
    if model_id is not None and registry.find(provider, model_id) is None:
        return (
            f'the defaultModel setting "{model_id}" is not a model of {provider} '
            f"(see tau --list-models {provider}); a default model is chosen instead"
        )
    return None


def bare_variable_warnings(services: AgentSessionServices) -> list[str]:
    """Provider ``apiKey`` / header values that are a bare name of a set environment variable
    (``OPENAI_API_KEY``): pi 1.6, and tau with it, send such a value as written, where older
    versions read the variable, so a configuration written for them would send the name as the
    key. One line each, saying what to write."""
    import os
    import re

    bare = re.compile(r"[A-Z_][A-Z0-9_]*")
    registry = services.model_registry
    warnings: list[str] = []
    for provider in registry.configured_providers():  # the catalogue's own have no such values
        config = registry.provider_config(provider)
        if config is None:
            continue
        values = [
            ("apiKey", config.api_key),
            *((f'header "{k}"', v) for k, v in (config.headers or {}).items()),
        ]
        for what, value in values:
            name = (value or "").strip()
            if bare.fullmatch(name) and os.environ.get(name):
                warnings.append(
                    f'provider "{provider}": {what} "{name}" is sent as written, not as the variable '
                    f'{name}; write "${name}" to use the variable'
                )
    return warnings
