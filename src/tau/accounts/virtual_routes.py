"""Asking a virtual model's router where one request goes (pi 1.6's ``ModelRuntime.resolveModel``).

The model registry keeps each virtual model's route function beside its catalog entry (an
extension's, or one registered through the SDK). ``resolve_route`` asks it for one request and
checks the answer: a physical model of the catalogue whose provider has credentials, the thinking
level clamped to what that model supports. Storing router state is the caller's (a session).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from msgspec import Struct

from tau.ai.abort import AbortSignal
from tau.ai.thinking import clamp_thinking_level
from tau.ai.types import AssistantMessage, Message, Model, ThinkingLevelOrOff
from tau.errors import TauError

if TYPE_CHECKING:
    from tau.accounts.model_registry import ModelRegistry
    from tau.extensions.virtual_models import ModelRoute, ModelRouteReason, ModelRouteRequest

__all__ = [
    "VIRTUAL_MODEL_API",
    "ResolvedRoute",
    "VirtualRoute",
    "VirtualRoutingError",
    "find_latest_response",
    "is_virtual_model",
    "resolve_route",
]

VIRTUAL_MODEL_API = "pi-virtual"
"""The api of virtual models' catalog entries (pi 1.6's): never sent to a provider, routed first."""


def is_virtual_model(model: Model) -> bool:
    """Whether ``model`` is a virtual model's catalog entry (or a message naming one)."""
    return model.api == VIRTUAL_MODEL_API


VirtualRoute: TypeAlias = Callable[["ModelRouteRequest"], "ModelRoute | Awaitable[ModelRoute]"]
"""A virtual model's router as the registry calls it: the request only (its context is bound)."""


class VirtualRoutingError(TauError):
    """Routing a virtual model's request failed; the message names the virtual model and why."""


class ResolvedRoute(Struct, frozen=True):
    """Where one request goes: a physical model and its (clamped) thinking level, and the router
    state the router returned (``None`` to keep the current one)."""

    model: Model
    thinking_level: ThinkingLevelOrOff
    state: Any = None


def find_latest_response(messages: Sequence[Any]) -> AssistantMessage | None:
    """The latest successful response (not failed, not aborted): its model is physical."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
            return message
    return None


async def resolve_route(
    registry: ModelRegistry,
    model: Model,
    messages: Sequence[Message],
    *,
    reason: ModelRouteReason,
    thinking_level: str,
    signal: AbortSignal | None = None,
    state: Any = None,
    failed: AssistantMessage | None = None,
) -> ResolvedRoute:
    """Ask ``model``'s router for this request. Raises ``VirtualRoutingError`` when the virtual
    model is not registered, its router fails or returns something other than a ``ModelRoute``,
    or it routes to a virtual model or one without credentials."""
    from tau.extensions.virtual_models import FailedRoute, ModelRoute, ModelRouteRequest, PreviousRoute

    name = f"Virtual model {model.provider}/{model.id}"
    route_function = registry.virtual_route(model.provider, model.id)
    if route_function is None:
        raise VirtualRoutingError(f"{name} is not registered.")
    latest = find_latest_response(messages)
    previous_model = registry.get_physical(latest.provider, latest.model) if latest else None
    # A failed routing attempt names the virtual model: there is no physical request to report.
    failed_model = registry.get_physical(failed.provider, failed.model) if failed else None
    request = ModelRouteRequest(
        model=model,
        thinking_level=thinking_level,
        reason=reason,
        messages=list(messages),
        previous=PreviousRoute(previous_model, latest.thinking_level)
        if previous_model is not None and latest is not None
        else None,
        failed=FailedRoute(failed_model, failed.thinking_level, failed)
        if failed_model is not None and failed is not None
        else None,
        state=state,
        signal=signal,
    )
    try:
        route = route_function(request)
        if inspect.isawaitable(route):
            route = await route
    except VirtualRoutingError:
        raise
    except Exception as error:
        raise VirtualRoutingError(str(error) or type(error).__name__) from error
    if not isinstance(route, ModelRoute):
        raise VirtualRoutingError(f"{name}: route() returned {type(route).__name__}, not a ModelRoute")
    routed = f"{name} routed to {route.model.provider}/{route.model.id}"
    target = registry.get_physical(route.model.provider, route.model.id)
    if target is None:
        raise VirtualRoutingError(f"{routed}, which is not a physical model.")
    if not registry.has_configured_auth(target.provider):
        raise VirtualRoutingError(f"{routed}, which has no credentials.")
    return ResolvedRoute(target, clamp_thinking_level(target, route.thinking_level), route.state)
