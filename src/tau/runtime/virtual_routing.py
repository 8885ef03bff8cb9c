"""Routing requests made with a virtual model (pi 1.6's virtual models, issue #32).

The selection (``model_change`` entries, the agent's model, ``ctx.model``) may name a virtual
model; everything below this step sees physical models only. ``VirtualRouting.prepare`` is the
agent loop's ``RequestPreparer``: for a virtual model it asks the router (the model registry's
``resolve_virtual_model``) for this request's physical model and thinking level, stores new router
state on the session branch (a ``custom`` entry of type ``pi.virtual-model-state``, as pi writes
it), compacts first when the routed model's context window calls for it (``fit_context``, the
session's compaction; the route stands) and sends the request to the routed model, so the
assistant message records the physical ``provider``/``api``/``model`` and ``thinkingLevel``. A
router that fails, or routes to a virtual model or one without credentials, ends the request with
an error response naming the virtual model. ``wrap`` does the same for a virtual model that
reaches the stream function itself.

The branch helpers here say what a session branch records: the selection to restore on resume
(``branch_selection``) and the router state (``virtual_model_state``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from tau.accounts.model_registry import VIRTUAL_MODEL_API, ModelRegistry, is_virtual_model
from tau.accounts.virtual_routes import VirtualRoutingError, find_latest_response
from tau.agent._awaitable import resolve
from tau.agent.config import PreparedRequest, StreamFn
from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortSignal
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions
from tau.ai.stream_writer import StreamWriter, run_stream
from tau.ai.types import AssistantMessage, Context, Message, Model, ThinkingLevelOrOff, UserMessage
from tau.context.convert import convert_to_llm
from tau.runtime.event_pipeline import EventPipeline
from tau.runtime.events import EntryAppended
from tau.session.context import ModelRef
from tau.session.entries import CustomEntry, MessageEntry, ModelChangeEntry, SessionEntry
from tau.session.manager import SessionManager

if TYPE_CHECKING:
    from tau.extensions.virtual_models import ModelRouteReason

__all__ = [
    "VIRTUAL_MODEL_STATE_ENTRY",
    "RoutingError",
    "VirtualRouting",
    "branch_selection",
    "find_latest_response",
    "limits_model",
    "selection_needs_recording",
    "virtual_model_state",
]

VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state"
"""The ``customType`` of the entry storing router state: ``{provider, modelId, state}``."""


RoutingError = VirtualRoutingError
"""Routing a virtual model's request failed (``tau.accounts.virtual_routes``)."""


def limits_model(registry: ModelRegistry, model: Model | None, messages: Sequence[Any]) -> Model | None:
    """The model whose limits (context window, output) apply now: under a virtual selection the
    physical model of the latest successful response, else the virtual model's declared limits."""
    if model is None or not is_virtual_model(model):
        return model
    latest = find_latest_response(messages)
    physical = registry.get_physical(latest.provider, latest.model) if latest is not None else None
    return physical or model


def virtual_model_state(branch: Sequence[SessionEntry], provider: str, model_id: str) -> Any:
    """The router state a branch last stored for this virtual model (``None`` before any)."""
    for entry in reversed(branch):
        if isinstance(entry, CustomEntry) and entry.custom_type == VIRTUAL_MODEL_STATE_ENTRY:
            data = entry.data
            if (
                isinstance(data, dict)
                and data.get("provider") == provider
                and data.get("modelId") == model_id
            ):
                return data.get("state")
    return None


def branch_selection(
    branch: Sequence[SessionEntry], find: Callable[[str, str], Model | None]
) -> ModelRef | None:
    """The model selection a branch records. A virtual ``model_change`` holds until the next
    ``model_change`` (responses name the physical models it routed to) while its virtual model is
    registered; otherwise the latest physical response wins, as without virtual models."""
    for index in range(len(branch) - 1, -1, -1):
        entry = branch[index]
        if isinstance(entry, ModelChangeEntry):
            return ModelRef(entry.provider, entry.model_id)
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            message = entry.message
            if message.api == VIRTUAL_MODEL_API:
                continue  # a failed routing attempt names the virtual model
            response = ModelRef(message.provider, message.model)
            change = next(
                (e for e in reversed(branch[:index]) if isinstance(e, ModelChangeEntry)),
                None,
            )
            if change is None:
                return response
            model = find(change.provider, change.model_id)
            return (
                ModelRef(change.provider, change.model_id) if model and is_virtual_model(model) else response
            )
    return None


def selection_needs_recording(branch: Sequence[SessionEntry], registry: ModelRegistry, model: Model) -> bool:
    """Whether ``model``, the live selection, must be recorded (a ``model_change``) on ``branch``
    before a prompt: the branch implies another model (``/tree`` can leave the latest
    ``model_change`` on another branch) and either side is virtual. Responses cannot record a
    virtual selection, and do not override a virtual ``model_change``."""
    recorded = branch_selection(branch, registry.find)
    if recorded is None or (recorded.provider, recorded.model_id) == (model.provider, model.id):
        return False
    if is_virtual_model(model):
        return True
    recorded_model = registry.find(recorded.provider, recorded.model_id)
    return recorded_model is not None and is_virtual_model(recorded_model)


class VirtualRouting:
    """The routing step of one session."""

    def __init__(
        self,
        registry: ModelRegistry,
        session_manager: SessionManager,
        pipeline: EventPipeline,
        conversation: Callable[[], Sequence[AgentMessage]],
        take_failed: Callable[[], AssistantMessage | None],
    ) -> None:
        self._registry = registry
        self._session = session_manager
        self._pipeline = pipeline
        self._conversation = conversation
        self._take_failed = take_failed
        self.fit_context: Callable[[Model], Awaitable[list[AgentMessage] | None]] | None = None
        """The session's compaction for a routed model whose context window the conversation
        exceeds: the run's conversation after it, or ``None`` when nothing was compacted."""

    async def prepare(self, model: Model, request: Context, options: SimpleStreamOptions) -> PreparedRequest:
        """The agent loop's ``RequestPreparer``: route a virtual model's request (physical models
        pass untouched), then compact first if the routed model's window calls for it (as pi 1.6;
        the route stands, the router is not asked again)."""
        if not is_virtual_model(model):
            return PreparedRequest(model)
        failed = self._take_failed()
        try:
            target, level = await self._route(
                model, request.messages, options.reasoning or "off", options.signal, failed
            )
        except Exception as error:
            return PreparedRequest(model, error=str(error) or type(error).__name__)
        options.reasoning = None if level == "off" else level
        if target.provider != model.provider:
            options.api_key = None  # resolved for the virtual model's provider, not this one
        messages = await self.fit_context(target) if self.fit_context is not None else None
        return PreparedRequest(target, messages)

    def wrap(self, inner: StreamFn) -> StreamFn:
        """``inner`` behind the routing step, for a virtual model that reaches the stream function
        itself (the agent loop routes through ``prepare``): physical models pass through untouched."""

        def stream(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]:
            if not is_virtual_model(model):
                return inner(model, context, options)
            return self._routed(inner, model, context, options)

        return stream

    async def route_direct(
        self, model: Model, thinking_level: ThinkingLevelOrOff, signal: AbortSignal | None
    ) -> tuple[Model, ThinkingLevelOrOff]:
        """Route a request outside the agent loop (a compaction or branch summary): reason
        ``direct``, no router state given, none stored. Raises ``RoutingError`` when it fails."""
        messages = convert_to_llm(self._conversation())
        route = await self._registry.resolve_virtual_model(
            model, messages, reason="direct", thinking_level=thinking_level, signal=signal
        )
        return route.model, route.thinking_level

    async def _routed(
        self, inner: StreamFn, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        failed = self._take_failed()
        try:
            target, level = await self._route(
                model, context.messages, options.reasoning or "off", options.signal, failed
            )
        except Exception as error:
            problem = str(error) or type(error).__name__
            return _failed_stream(model, options, problem)
        options.reasoning = None if level == "off" else level
        if target.provider != model.provider:
            options.api_key = None  # resolved for the virtual model's provider, not this one
        return await resolve(inner(target, context, options))

    async def _route(
        self,
        model: Model,
        messages: Sequence[Message],
        thinking_level: str,
        signal: AbortSignal | None,
        failed: AssistantMessage | None,
    ) -> tuple[Model, ThinkingLevelOrOff]:
        """Route one request of the agent loop, storing the state the router returns."""
        state = virtual_model_state(self._session.get_branch(), model.provider, model.id)
        route = await self._registry.resolve_virtual_model(
            model,
            messages,
            reason=_reason(self._conversation(), failed),
            thinking_level=thinking_level,
            signal=signal,
            state=state,
            failed=failed,
        )
        if route.state is not None and route.state is not state:
            data = {"provider": model.provider, "modelId": model.id, "state": route.state}
            await self._pipeline.catch_up(lambda: self._store_state(data))
        return route.model, route.thinking_level

    def _store_state(self, data: dict[str, Any]) -> None:
        entry = self._session.get_entry(self._session.append_custom_entry(VIRTUAL_MODEL_STATE_ENTRY, data))
        if entry is not None:
            self._pipeline.enqueue_for_listeners(EntryAppended(entry))


def _reason(conversation: Sequence[AgentMessage], failed: AssistantMessage | None) -> ModelRouteReason:
    """``retry`` after a failed request, ``user`` when a message the user wrote follows the latest
    response (extension messages do not start a turn), else ``continuation``."""
    if failed is not None:
        return "retry"
    for message in reversed(conversation):
        if isinstance(message, AssistantMessage):
            return "continuation"
        if isinstance(message, UserMessage):
            return "user"
    return "continuation"


def _failed_stream(model: Model, options: SimpleStreamOptions, message: str) -> AssistantMessageEventStream:
    async def fail(writer: StreamWriter) -> None:
        raise RoutingError(message)

    return run_stream(model, options, fail)
