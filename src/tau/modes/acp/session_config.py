"""Model and thinking level as ACP session config options (``session/set_config_option``).

The model option lists the models with credentials as ``provider/id``; the thinking option the
levels the current model supports. The thinking levels are also the session's modes
(``session/set_mode``), for clients that show modes but not config options. The sandbox
(``off``, ``read-only``, ``workspace-write``) is a config option of the ``mode`` category: how far
the agent's commands reach is a mode of working, and ACP's config options are where a client shows
more than one such choice.
"""

from __future__ import annotations

from tau.ai.types import JsonObject, Model
from tau.modes.acp.jsonrpc import JsonRpcError
from tau.runtime.runtime import AgentSessionRuntime

__all__ = ["config_options", "modes", "set_config_option", "set_thinking_level"]

MODEL_OPTION, THINKING_OPTION, SANDBOX_OPTION = "model", "thinking", "sandbox"
_SANDBOX_NAMES = {"off": "Off: full access", "read-only": "Read-only", "workspace-write": "Workspace write"}


def _key(model: Model) -> str:
    return f"{model.provider}/{model.id}"


def _select(
    option_id: str, name: str, category: str, current: str, values: list[tuple[str, str]]
) -> JsonObject:
    return {
        "type": "select",
        "id": option_id,
        "name": name,
        "category": category,
        "currentValue": current,
        "options": [{"value": value, "name": label} for value, label in values],
    }


def config_options(runtime: AgentSessionRuntime) -> list[JsonObject]:
    session = runtime.session
    options: list[JsonObject] = []
    models = runtime.services.model_registry.get_available()
    current = session.model
    if current is not None and all(_key(m) != _key(current) for m in models):
        models = [current, *models]
    if current is not None:
        choices = [(_key(m), m.name or m.id) for m in models]
        options.append(_select(MODEL_OPTION, "Model", "model", _key(current), choices))
    levels = session.get_available_thinking_levels()
    choices = [(level, level) for level in levels]
    options.append(_select(THINKING_OPTION, "Thinking", "thought_level", session.thinking_level, choices))
    sandbox = list(_SANDBOX_NAMES.items())
    options.append(_select(SANDBOX_OPTION, "Sandbox", "mode", session.sandbox.policy.mode, sandbox))
    return options


async def set_config_option(runtime: AgentSessionRuntime, config_id: str, value: object) -> None:
    session = runtime.session
    if config_id == MODEL_OPTION and isinstance(value, str):
        provider, _, model_id = value.partition("/")
        model = runtime.services.model_registry.find(provider, model_id)
        if model is None:
            raise JsonRpcError.invalid_params(f"unknown model {value}")
        await session.set_model(model, persist=True)
    elif config_id == THINKING_OPTION and isinstance(value, str):
        set_thinking_level(runtime, value)
    elif config_id == SANDBOX_OPTION and isinstance(value, str):
        from tau.config.sandbox_config import SandboxConfigError

        try:
            session.set_sandbox(value)
        except SandboxConfigError as error:
            raise JsonRpcError.invalid_params(str(error)) from None
    else:
        raise JsonRpcError.invalid_params(f"unknown config option {config_id}")


def set_thinking_level(runtime: AgentSessionRuntime, level: str) -> None:
    session = runtime.session
    for available in session.get_available_thinking_levels():
        if available == level:
            session.set_thinking_level(available, persist=True)
            return
    raise JsonRpcError.invalid_params(f"thinking level {level} is not available")


def modes(runtime: AgentSessionRuntime) -> JsonObject:
    session = runtime.session
    return {
        "currentModeId": session.thinking_level,
        "availableModes": [
            {"id": level, "name": f"Thinking: {level}"} for level in session.get_available_thinking_levels()
        ],
    }
