"""Virtual models from extensions (issue #32 §5): queued while extensions load, installed in the
real model registry when the runtime takes them in, refused when they clash with a physical model,
removed by ``unregister_virtual_model`` and when the runner is disposed; routing goes to the
router with a fresh ``ctx``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau.accounts.auth_storage import AuthStorage
from tau.accounts.model_registry import VIRTUAL_MODEL_API, ModelRegistry, is_virtual_model
from tau.ai.thinking import get_supported_thinking_levels
from tau.extensions import (
    ExtensionRunner,
    ExtensionSource,
    ModelRoute,
    ModelRouteRequest,
    VirtualModelDefinition,
    load_extensions_sync,
)
from tau.extensions.testing import RecordingHost

ROUTER = """
from tau.extensions import ModelRoute, VirtualModelDefinition


async def route(request, ctx):
    return ModelRoute(ctx.model_registry.find("local", "real"), "high", state={"cwd": ctx.cwd})


def setup(tau):
    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="auto", name="Auto", route=route, thinking_levels=("low", "high"),
        context_window=1000,
    ))
    tau.register_virtual_model(VirtualModelDefinition(
        provider="local", id="real", name="Clash", route=route,
    ))
    tau.register_virtual_model(VirtualModelDefinition(
        provider="local", id="smart", name="Smart", route=route,
    ))
"""

FAILING = """
from tau.extensions import ModelRoute, VirtualModelDefinition


def setup(tau):
    tau.register_virtual_model(VirtualModelDefinition(
        provider="broken", id="auto", name="Never", route=lambda request, ctx: None,
    ))
    raise RuntimeError("setup failed")
"""


@pytest.fixture
def registry(tmp_path: Path) -> ModelRegistry:
    models = {
        "providers": {
            "local": {
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "apiKey": "key",
                "models": [{"id": "real", "reasoning": True}],
            },
        }
    }
    path = tmp_path / "models.json"
    path.write_text(json.dumps(models))
    registry = ModelRegistry(AuthStorage(None), path)
    assert registry.get_error() is None
    return registry


async def test_virtual_models_are_installed_with_the_providers_and_clashes_are_refused(
    write_extension, load, registry: ModelRegistry, project: Path
) -> None:
    runner: ExtensionRunner = await load(
        write_extension("router.py", ROUTER), write_extension("failing.py", FAILING)
    )
    host = RecordingHost(str(project))
    host.model_registry = registry
    runner.bind(host)
    assert registry.find("router", "auto") is None  # queued until the runtime takes them in
    problems = runner.register_providers(registry)
    assert [p.message for p in problems] == [
        "virtual model local/real was refused: Virtual model local/real conflicts with a physical model."
    ]
    auto = registry.find("router", "auto")
    assert auto is not None and is_virtual_model(auto) and auto.api == VIRTUAL_MODEL_API
    assert (auto.name, auto.context_window, auto.max_tokens, auto.input) == (
        "Auto",
        1000,
        0,
        ["text", "image"],
    )
    assert get_supported_thinking_levels(auto) == ["low", "high"]
    assert registry.find("broken", "auto") is None  # its extension failed to load
    physical = registry.find("local", "real")
    assert physical is not None and not is_virtual_model(physical)
    # A provider of only virtual models needs no key; one with physical models needs its own.
    available = {(m.provider, m.id) for m in registry.get_available()}
    assert {("router", "auto"), ("local", "smart"), ("local", "real")} <= available
    assert registry.has_configured_auth("router") and registry.get_auth_status("router").configured
    assert (
        registry.get_physical("router", "auto") is None and registry.get_physical("local", "real") is physical
    )

    route = await runner.route_virtual_model(ModelRouteRequest(auto, "low", "user", messages=[]))
    assert isinstance(route, ModelRoute)
    assert (route.model, route.thinking_level, route.state) == (physical, "high", {"cwd": str(project)})

    runner.dispose()
    assert registry.find("router", "auto") is None and registry.find("local", "smart") is None
    assert registry.find("local", "real") is physical


async def test_later_registrations_are_installed_at_once_and_unregistering_removes_them(
    project: Path, registry: ModelRegistry, runners: list[ExtensionRunner]
) -> None:
    apis: list[Any] = []
    runner = load_extensions_sync([ExtensionSource.inline("later", apis.append)], cwd=str(project))
    runners.append(runner)
    runner.bind(RecordingHost(str(project)))
    assert runner.register_providers(registry) == []
    [tau] = apis
    tau.register_virtual_model(VirtualModelDefinition("later", "v", "V", route=lambda request, ctx: None))
    assert registry.find("later", "v") is not None
    tau.register_virtual_model(VirtualModelDefinition("later", "v", "V2", route=lambda request, ctx: None))
    model = registry.find("later", "v")
    assert model is not None and model.name == "V2"  # replaced
    with pytest.raises(TypeError, match="returned NoneType, not a ModelRoute"):
        await runner.route_virtual_model(ModelRouteRequest(model, "off", "user", messages=[]))
    tau.unregister_virtual_model("later", "v")
    assert registry.find("later", "v") is None
    with pytest.raises(LookupError, match="Virtual model later/v is not registered"):
        await runner.route_virtual_model(ModelRouteRequest(model, "off", "user", messages=[]))
