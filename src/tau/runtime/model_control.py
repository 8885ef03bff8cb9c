"""Switching the session's model and thinking level, and the per-request stream function.

Every change is recorded in the session (``model_change`` / ``thinking_level_change`` entries),
remembered as the user's default in the global settings, and applies from the next run. Credentials
are never stored on the agent: the stream function asks the model registry for the key and
configured headers of every request, so a rotated key or a ``!command`` is picked up at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from msgspec import Struct

from tau.accounts.model_registry import ModelRegistry, RequestAuth
from tau.accounts.model_requests import send_with_auth
from tau.accounts.model_resolver import DEFAULT_THINKING_LEVEL, ScopedModel
from tau.agent.agent import Agent
from tau.agent.config import StreamFn
from tau.agent.state import PLACEHOLDER_MODEL
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions
from tau.ai.thinking import clamp_thinking_level, get_supported_thinking_levels
from tau.ai.types import Context, Model, ThinkingLevelOrOff, models_are_equal
from tau.config.settings import SettingsManager
from tau.runtime.errors import MissingAuthError, NoModelError
from tau.runtime.events import SessionEvent, ThinkingLevelChanged
from tau.session.manager import SessionManager

__all__ = ["ModelControl", "ModelCycle", "auth_error", "create_stream_fn"]


class ModelCycle(Struct, frozen=True):
    """Where ``cycle_model`` landed; ``is_scoped`` when it cycled through ``--models``."""

    model: Model
    thinking_level: ThinkingLevelOrOff
    is_scoped: bool


def auth_error(registry: ModelRegistry, model: Model | None) -> str | None:
    """Why a prompt to ``model`` cannot be sent (no model, no credentials), else ``None``."""
    if model is None:
        return (
            "No model selected: set a provider's API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) "
            "or store one in auth.json in the agent dir, then pick a model with --model"
        )
    status = registry.get_auth_status(model.provider)
    if not status.configured:
        return registry.missing_auth_message(model.provider)
    if status.source == "oauth" and status.detail == "expired":
        return f'The login for provider "{model.provider}" has expired: log in again with /login'
    return None


def create_stream_fn(registry: ModelRegistry) -> StreamFn:
    """``stream_simple`` with the key and headers resolved through ``registry`` for each request. A
    credential that resolves to nothing ends the request with an error message instead of raising.
    (The provider client's retry limits, ``retry.provider.*``, are the session's to set: see
    ``AutoRetry.wrap_stream_fn``.)"""

    def stream(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
        if registry.auth_storage.oauth_refresh_due(model.provider):
            # The refresh is an HTTP round trip (and may wait for another tau's): off the event loop.
            async def refreshed() -> AssistantMessageEventStream:
                auth = await asyncio.to_thread(registry.get_api_key_and_headers, model)
                return send(model, context, options, auth)

            return refreshed()
        return send(model, context, options, registry.get_api_key_and_headers(model))

    def send(
        model: Model, context: Context, options: SimpleStreamOptions, auth: RequestAuth
    ) -> AssistantMessageEventStream:
        return send_with_auth(model, context, options, auth)

    return stream


class ModelControl:
    """The model and thinking level of one session's agent."""

    def __init__(
        self,
        agent: Agent,
        session_manager: SessionManager,
        settings: SettingsManager,
        registry: ModelRegistry,
        emit: Callable[[SessionEvent], None],
        scoped_models: Sequence[ScopedModel] = (),
    ) -> None:
        self._agent = agent
        self._session = session_manager
        self._settings = settings
        self._registry = registry
        self._emit = emit
        self.scoped_models = list(scoped_models)

    @property
    def model(self) -> Model | None:
        model = self._agent.state.model
        return None if model is PLACEHOLDER_MODEL else model

    @property
    def thinking_level(self) -> ThinkingLevelOrOff:
        return self._agent.state.thinking_level

    def supported_thinking_levels(self) -> list[ThinkingLevelOrOff]:
        model = self.model
        return get_supported_thinking_levels(model) if model is not None else ["off"]

    def set_model(self, model: Model, *, persist: bool) -> None:
        """Switch to ``model`` (raises ``MissingAuthError`` without credentials), keeping the
        thinking preference as far as the new model allows; ``persist`` saves both as defaults."""
        problem = auth_error(self._registry, model)
        if problem is not None:
            raise MissingAuthError(problem)
        self._apply_model(model, self._preferred_thinking_level(model), persist=persist)

    def cycle_model(
        self, direction: Literal["forward", "backward"] = "forward", *, persist: bool
    ) -> ModelCycle | None:
        """The next model of the scoped list (those with credentials), else of every available
        model, wrapping around; ``None`` when there is nothing to cycle to."""
        scoped = [s for s in self.scoped_models if self._registry.has_configured_auth(s.model.provider)]
        candidates = scoped or [ScopedModel(m) for m in self._registry.get_available()]
        if len(candidates) <= 1:
            return None
        current = self.model
        index = next((i for i, c in enumerate(candidates) if models_are_equal(c.model, current)), -1)
        step = 1 if direction == "forward" else -1
        if index < 0 and step < 0:
            index = 0
        chosen = candidates[(index + step) % len(candidates)]
        level = (
            chosen.thinking_level
            if scoped and chosen.thinking_level
            else self._preferred_thinking_level(chosen.model)
        )
        self._apply_model(chosen.model, level, persist=persist)
        return ModelCycle(chosen.model, self.thinking_level, bool(scoped))

    def set_thinking_level(self, level: ThinkingLevelOrOff, *, persist: bool) -> None:
        """Set the level, clamped to what the model supports; a change is recorded, saved as the
        default (``persist``, unless the model cannot think at all) and announced."""
        model = self.model
        effective = clamp_thinking_level(model, level) if model is not None else "off"
        if effective == self._agent.state.thinking_level:
            return
        self._agent.state.thinking_level = effective
        self._session.append_thinking_level_change(effective)
        if persist and model is not None and model.reasoning:
            self._settings.set_default_thinking_level(effective)
        self._emit(ThinkingLevelChanged(effective))

    def cycle_thinking_level(self, *, persist: bool) -> ThinkingLevelOrOff | None:
        """Step to the model's next supported level (wrapping); ``None`` if the model cannot think."""
        model = self.model
        if model is None or not model.reasoning:
            return None
        levels = get_supported_thinking_levels(model)
        current = self.thinking_level
        index = levels.index(current) if current in levels else -1
        self.set_thinking_level(levels[(index + 1) % len(levels)], persist=persist)
        return self.thinking_level

    def require_usable_model(self) -> Model:
        """The current model, or ``NoModelError`` / ``MissingAuthError`` saying what to configure."""
        model = self.model
        problem = auth_error(self._registry, model)
        if problem is not None:
            raise (NoModelError if model is None else MissingAuthError)(problem)
        assert model is not None
        return model

    def _preferred_thinking_level(self, target: Model) -> ThinkingLevelOrOff:
        """The level for switching to ``target``, as pi 1.6 chooses it: its ``modelThinkingLevels``
        entry, else the saved default, else the current level (``off`` stays off when no default is
        saved); the switch then clamps it to what ``target`` supports."""
        per_model = self._settings.model_thinking_level(target.provider, target.id)
        if per_model is not None:
            return per_model
        return self._settings.default_thinking_level or self.thinking_level or DEFAULT_THINKING_LEVEL

    def _apply_model(self, model: Model, level: ThinkingLevelOrOff, *, persist: bool) -> None:
        self._agent.state.model = model
        self._session.append_model_change(model.provider, model.id)
        if persist:
            self._settings.set_default_model_and_provider(model.provider, model.id)
        self.set_thinking_level(level, persist=persist)
