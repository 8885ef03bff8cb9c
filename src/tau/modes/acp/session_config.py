"""Model and thinking level as ACP session config options (``session/set_config_option``).

The model option lists the models with credentials as ``provider/id``; the thinking option the
levels the current model supports. The thinking levels are also the session's modes
(``session/set_mode``), for clients that show modes but not config options.
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from tau.ai.types import Model
from tau.runtime.runtime import AgentSessionRuntime

__all__ = ["config_options", "modes", "set_config_option", "set_thinking_level"]

MODEL_OPTION, THINKING_OPTION = "model", "thinking"


def _key(model: Model) -> str:
    return f"{model.provider}/{model.id}"


def config_options(
    runtime: AgentSessionRuntime,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    session = runtime.session
    options: list[SessionConfigOptionSelect | SessionConfigOptionBoolean] = []
    models = runtime.services.model_registry.get_available()
    current = session.model
    if current is not None and all(_key(m) != _key(current) for m in models):
        models = [current, *models]
    if current is not None:
        options.append(
            SessionConfigOptionSelect(
                type="select",
                id=MODEL_OPTION,
                name="Model",
                category="model",
                current_value=_key(current),
                options=[SessionConfigSelectOption(value=_key(m), name=m.name or m.id) for m in models],
            )
        )
    levels = session.get_available_thinking_levels()
    options.append(
        SessionConfigOptionSelect(
            type="select",
            id=THINKING_OPTION,
            name="Thinking",
            category="thought_level",
            current_value=session.thinking_level,
            options=[SessionConfigSelectOption(value=level, name=level) for level in levels],
        )
    )
    return options


async def set_config_option(runtime: AgentSessionRuntime, config_id: str, value: str | bool) -> None:
    session = runtime.session
    if config_id == MODEL_OPTION and isinstance(value, str):
        provider, _, model_id = value.partition("/")
        model = runtime.services.model_registry.find(provider, model_id)
        if model is None:
            raise RequestError.invalid_params({"message": f"unknown model {value}"})
        await session.set_model(model)
    elif config_id == THINKING_OPTION and isinstance(value, str):
        set_thinking_level(runtime, value)
    else:
        raise RequestError.invalid_params({"message": f"unknown config option {config_id}"})


def set_thinking_level(runtime: AgentSessionRuntime, level: str) -> None:
    session = runtime.session
    for available in session.get_available_thinking_levels():
        if available == level:
            session.set_thinking_level(available)
            return
    raise RequestError.invalid_params({"message": f"thinking level {level} is not available"})


def modes(runtime: AgentSessionRuntime) -> SessionModeState:
    session = runtime.session
    return SessionModeState(
        current_mode_id=session.thinking_level,
        available_modes=[
            SessionMode(id=level, name=f"Thinking: {level}")
            for level in session.get_available_thinking_levels()
        ],
    )
