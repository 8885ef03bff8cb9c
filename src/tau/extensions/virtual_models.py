"""Virtual models extensions register (pi 1.6's ``registerVirtualModel``): a selectable model that
picks a physical model for each request.

``tau.register_virtual_model(VirtualModelDefinition(...))`` queues a definition; the runtime
installs it in the model registry (a ``VirtualModelSink``) when it takes the extensions in, and
later registrations at once, with the runner's ``route_virtual_model`` as its router (it calls
the definition's ``route`` with the extension's context). The registry asks it for each request
made with the virtual model (``tau.accounts.virtual_routes``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, TypeAlias

from msgspec import Struct

from tau.ai.abort import AbortSignal
from tau.ai.types import AssistantMessage, Message, Model

__all__ = [
    "FailedRoute",
    "ModelRoute",
    "ModelRouteReason",
    "ModelRouteRequest",
    "PreviousRoute",
    "RouteContext",
    "VirtualModelDefinition",
    "VirtualModelInstaller",
    "VirtualModelRegistration",
    "VirtualModelSink",
]

ModelRouteReason: TypeAlias = Literal["user", "continuation", "retry", "direct"]
"""Why a request is routed: ``user`` (first request after a message the user wrote),
``continuation`` (any other request of the agent loop), ``retry`` (an automatic retry),
``direct`` (a request outside the agent loop, such as a compaction summary)."""


class PreviousRoute(Struct, frozen=True):
    """Physical model and thinking level of the latest successful response in the conversation."""

    model: Model
    thinking_level: str | None = None


class FailedRoute(Struct, frozen=True):
    """For a retry: the failed request's physical model, level and reply (``stop_reason``,
    ``error_message``), which the conversation no longer holds."""

    model: Model
    thinking_level: str | None
    message: AssistantMessage


class ModelRouteRequest(Struct):
    """What a router is asked for one request."""

    model: Model
    """The selected virtual model."""
    thinking_level: str
    """The selected thinking level: its meaning is up to the router."""
    reason: ModelRouteReason
    messages: Sequence[Message]
    """The conversation of this request, system messages included."""
    previous: PreviousRoute | None = None
    failed: FailedRoute | None = None
    state: Any = None
    """Router state last returned on this session branch (``None`` before any, and for ``direct``)."""
    signal: AbortSignal | None = None


class ModelRoute(Struct):
    """The physical model and thinking level for one request, and maybe new router state
    (JSON-serializable; ``None`` or ``request.state`` itself keeps the current state)."""

    model: Model
    thinking_level: str = "off"
    state: Any = None


RouteFunction: TypeAlias = Callable[[ModelRouteRequest, Any], "ModelRoute | Awaitable[ModelRoute]"]
"""``route(request, ctx)``: a plain function or a coroutine function. ``ctx`` is the extension's
``ExtensionContext``, or a ``RouteContext`` for a virtual model registered through the SDK
(``ModelRegistry.register_virtual_model``); both have ``model_registry`` and ``signal``."""


class RouteContext(Struct, frozen=True):
    """The ``ctx`` of a router registered without an extension: the model registry it was
    registered in (``find``, ``classify``, ``stream_simple``...) and the request's abort signal."""

    model_registry: Any
    signal: AbortSignal | None = None


class VirtualModelDefinition(Struct):
    """A virtual model: listed under ``provider`` (any id, one with physical models too) as ``id``,
    which must not be a physical model's id of that provider."""

    provider: str
    id: str
    name: str
    route: RouteFunction
    thinking_levels: Sequence[str] = ("off",)
    """The levels offered for selection."""
    context_window: int | None = None
    """Shown before the first response (afterwards the answering model's limits apply)."""
    max_tokens: int | None = None
    input: Sequence[str] = ("text", "image")


class VirtualModelRegistration(Struct):
    definition: VirtualModelDefinition
    extension: str
    path: str


class VirtualModelSink(Protocol):
    """The model registry's side: catalog entries for virtual models."""

    def add_virtual_model(
        self,
        provider: str,
        model_id: str,
        name: str,
        *,
        route: Callable[[ModelRouteRequest], Awaitable[ModelRoute]],
        thinking_levels: Sequence[str],
        context_window: int | None,
        max_tokens: int | None,
        input: Sequence[str],
    ) -> None: ...

    def unregister_virtual_model(self, provider: str, model_id: str) -> None: ...


_Key: TypeAlias = tuple[str, str]


class VirtualModelInstaller:
    """The virtual models of one runner, by (provider, id). Registrations made while extensions
    load wait in their extension (one whose ``setup`` fails registers nothing) until
    ``install_all``; later ones are installed at once."""

    def __init__(self, route: Callable[[ModelRouteRequest], Awaitable[ModelRoute]]) -> None:
        self.registrations: dict[_Key, VirtualModelRegistration] = {}
        self._route = route
        """The runner's router: it looks the registration up by ``request.model``."""
        self._sink: VirtualModelSink | None = None
        self.open = False

    def install_all(
        self, sink: VirtualModelSink | None, registrations: Sequence[VirtualModelRegistration]
    ) -> list[tuple[VirtualModelRegistration, str]]:
        """Install ``registrations`` in order (a later one of the same provider and id replaces an
        earlier one); the refused ones, with why."""
        self._sink = sink
        self.open = True
        problems = [(r, problem) for r in registrations if (problem := self.add(r)) is not None]
        return problems

    def add(self, registration: VirtualModelRegistration) -> str | None:
        """Install (or replace) one registration; why it was refused, or ``None``."""
        definition = registration.definition
        if not definition.provider.strip() or not definition.id.strip():
            return "Virtual model provider and id must not be empty."
        if self._sink is not None:
            try:
                self._sink.add_virtual_model(
                    definition.provider,
                    definition.id,
                    definition.name,
                    route=self._route,
                    thinking_levels=list(definition.thinking_levels),
                    context_window=definition.context_window,
                    max_tokens=definition.max_tokens,
                    input=list(definition.input),
                )
            except Exception as error:
                return str(error) or type(error).__name__
        self.registrations[(definition.provider, definition.id)] = registration
        return None

    def remove(self, provider: str, model_id: str) -> None:
        if self.registrations.pop((provider, model_id), None) is not None and self._sink is not None:
            self._sink.unregister_virtual_model(provider, model_id)

    def close(self) -> None:
        if self._sink is not None:
            for provider, model_id in self.registrations:
                self._sink.unregister_virtual_model(provider, model_id)
        self.registrations.clear()
        self.open = False

    def get(self, provider: str, model_id: str) -> VirtualModelRegistration | None:
        return self.registrations.get((provider, model_id))
