"""Virtual models and model calls from the SDK, without an extension (issue #32): pi 1.6's
``modelRuntime.registerVirtualModel(definition)`` is ``ModelRegistry.register_virtual_model``;
a session selecting the model is routed by it, and ``stream_simple`` / ``complete`` reach the
fake server with the registry's credentials, a virtual model routed with reason ``direct``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.ai.abort import AbortController
from tau.ai.events import DoneEvent, StartEvent, TextDeltaEvent
from tau.ai.types import Context, Model, UserMessage
from tau.extensions.virtual_models import ModelRoute, ModelRouteRequest, RouteContext, VirtualModelDefinition
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import AgentSessionServices, create_agent_session_services
from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.tools.images import ImageLimits


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def services(tmp_path: Path, server: FakeLLMServer) -> AgentSessionServices:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (tmp_path / "work").mkdir()
    models = {
        "providers": {
            "local": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "local-key",
                "models": [
                    {"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096},
                    {"id": "fake-small", "contextWindow": 100000, "maxTokens": 512},
                ],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    return create_agent_session_services(cwd=str(tmp_path / "work"), agent_dir=agent_dir)


async def test_a_virtual_model_registered_through_the_sdk_routes_a_session(
    services: AgentSessionServices, server: FakeLLMServer
) -> None:
    registry = services.model_registry
    seen: list[tuple[str, Any, bool]] = []

    async def route(request: ModelRouteRequest, ctx: RouteContext) -> ModelRoute:
        seen.append((request.reason, request.state, ctx.model_registry is registry))
        small = request.reason == "direct"
        target: Model | None = ctx.model_registry.find("local", "fake-small" if small else "fake-model")
        assert target is not None
        return ModelRoute(target, "off", state={"count": len(seen)})

    registry.register_virtual_model(VirtualModelDefinition("sdk", "auto", "Auto", route=route))
    virtual = registry.find("sdk", "auto")
    assert virtual is not None and registry.has_configured_auth("sdk")
    with pytest.raises(ValueError, match="conflicts with a physical model"):
        registry.register_virtual_model(VirtualModelDefinition("local", "fake-model", "Clash", route=route))

    session = create_agent_session(services=services, model=virtual).session
    server.add(Turn(text="routed answer"), Turn(text="direct answer"))

    await session.prompt("hello")
    reply = await registry.complete_simple(virtual, Context(messages=[UserMessage("one line")]))
    await session.dispose()
    assert (reply.model, reply.content[0].text) == ("fake-small", "direct answer")  # type: ignore[union-attr]
    assert [r.body["model"] for r in server.requests] == ["fake-model", "fake-small"]
    assert server.requests[1].body["max_completion_tokens"] == 512  # the routed model's budget
    assert seen == [("user", None, True), ("direct", None, True)]
    assert session.messages[-1].model == "fake-model"  # type: ignore[union-attr]
    states = [e.data for e in session.session_manager.get_entries() if e.type == "custom"]  # type: ignore[union-attr]
    assert states == [{"provider": "sdk", "modelId": "auto", "state": {"count": 1}}]

    registry.unregister_virtual_model("sdk", "auto")
    assert registry.find("sdk", "auto") is None


async def test_stream_simple_streams_events_and_setup_failures_are_error_results(
    services: AgentSessionServices, server: FakeLLMServer
) -> None:
    registry = services.model_registry
    model = registry.find("local", "fake-model")
    assert model is not None
    server.add(Turn(text="streamed text", chunk_size=4))
    stream = registry.stream_simple(model, Context(messages=[UserMessage("hi")]), max_tokens=100)
    kinds = [type(event) async for event in stream]
    final = await stream.result()
    assert kinds[0] is StartEvent and kinds[-1] is DoneEvent and TextDeltaEvent in kinds
    assert final.stop_reason == "stop" and final.content[0].text == "streamed text"  # type: ignore[union-attr]
    assert server.requests[0].headers["authorization"] == "Bearer local-key"
    assert server.requests[0].body["max_completion_tokens"] == 100

    # Not registered (any more): the route fails, nothing is sent, no exception.
    async def route(request: ModelRouteRequest, ctx: RouteContext) -> ModelRoute:
        raise RuntimeError("router down")

    registry.register_virtual_model(VirtualModelDefinition("sdk", "broken", "Broken", route=route))
    broken = registry.find("sdk", "broken")
    assert broken is not None
    failed = await registry.complete(broken, Context(messages=[UserMessage("hi")]))
    assert (failed.stop_reason, failed.error_message) == ("error", "router down")
    assert (failed.provider, failed.model) == ("sdk", "broken")
    registry.unregister_virtual_model("sdk", "broken")
    gone = await registry.complete_simple(broken, Context(messages=[UserMessage("hi")]))
    assert gone.error_message == "Virtual model sdk/broken is not registered."
    assert len(server.requests) == 1


async def test_an_abort_while_routing_ends_the_stream_as_aborted(
    services: AgentSessionServices, server: FakeLLMServer
) -> None:
    registry = services.model_registry
    entered = asyncio.Event()

    async def route(request: ModelRouteRequest, ctx: RouteContext) -> ModelRoute:
        entered.set()
        await asyncio.Event().wait()  # a router that never answers
        raise AssertionError("unreachable")

    registry.register_virtual_model(VirtualModelDefinition("sdk", "slow", "Slow", route=route))
    slow = registry.find("sdk", "slow")
    assert slow is not None
    controller = AbortController()
    stream = registry.stream_simple(slow, Context(messages=[UserMessage("hi")]), signal=controller.signal)
    await entered.wait()
    controller.abort()
    reply = await asyncio.wait_for(stream.result(), 5)
    assert (reply.stop_reason, reply.error_message) == ("aborted", "Request was aborted")
    assert server.requests == []


async def test_images_are_fitted_to_the_routed_models_input_limits_as_pi(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (tmp_path / "work").mkdir()
    limits = {"images": {"resize": {"maxWidth": 320, "maxHeight": 240}}}
    models = {
        "providers": {
            "local": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "local-key",
                "models": [{"id": "fake-model", "input": ["text", "image"], "inputLimits": limits}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    services = create_agent_session_services(cwd=str(tmp_path / "work"), agent_dir=agent_dir)
    registry = services.model_registry

    async def route(request: ModelRouteRequest, ctx: RouteContext) -> ModelRoute:
        target = ctx.model_registry.find("local", "fake-model")
        assert target is not None
        return ModelRoute(target, "off")

    registry.register_virtual_model(VirtualModelDefinition("sdk", "auto", "Auto", route=route))
    virtual = registry.find("sdk", "auto")
    assert virtual is not None
    session = create_agent_session(services=services, model=virtual).session
    assert session.image_limits() == ImageLimits()  # nothing routed yet: pi's defaults
    server.add(Turn(text="first"))
    await session.prompt("hello")
    assert session.image_limits() == ImageLimits(max_width=320, max_height=240)  # the routed model's
    await session.dispose()
