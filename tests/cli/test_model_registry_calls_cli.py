"""``ctx.model_registry.stream_simple`` / ``complete`` through the real `tau` command (issue #32):
the example ``/summarize`` (examples/extensions/summarize.py) asks a model outside the agent loop;
a virtual model is routed with reason ``direct`` (no router state, none stored), a provider an
extension registered is reached with its own key, and a setup failure is an error result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand, tau_command

from tau.testing.fake_llm import Turn

SUMMARIZE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "summarize.py"

# Requests of the agent loop go to local/fake-model; a direct one to ext/ext-model, a provider this
# extension registers with its own key. Each route is logged (reason, state) to ROUTES.
ROUTER = """
import json
import os

from tau.extensions import ModelRoute, VirtualModelDefinition


def setup(tau):
    tau.register_provider("ext", {
        "baseUrl": os.environ["EXT_BASE_URL"],
        "api": "openai-completions",
        "apiKey": "ext-key",
        "models": [{"id": "ext-model", "contextWindow": 50000, "maxTokens": 1000}],
    })

    def route(request, ctx):
        with open(os.environ["ROUTES"], "a") as log:
            log.write(json.dumps([request.reason, request.state, request.thinking_level]) + "\\n")
        if request.reason == "direct":
            return ModelRoute(ctx.model_registry.find("ext", "ext-model"), "off", state={"ignored": 1})
        return ModelRoute(ctx.model_registry.find("local", "fake-model"), "off", state={"turns": 1})

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="auto", name="Auto", route=route, thinking_levels=("off", "low"),
    ))
"""


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def entries(tau: TauCommand) -> list[dict[str, Any]]:
    [session] = tau.session_files()
    return [json.loads(line) for line in session.read_text().splitlines()]


def test_summarize_routes_a_virtual_model_direct_to_an_extension_provider(tau: TauCommand) -> None:
    router = tau.work / "router.py"
    router.write_text(ROUTER)
    routes = tau.work / "routes.jsonl"
    tau.env.update(EXT_BASE_URL=tau.server.url("/v1"), ROUTES=str(routes))
    extensions = ["-e", str(router), "-e", str(SUMMARIZE)]
    tau.server.add(Turn(text="Blue light scatters most."), Turn(text="- asked about the sky"))

    first = tau.run(*extensions, "--model", "router/auto", "-p", "Why is the sky blue?")
    assert first.returncode == 0, first.stderr
    result = tau.run(*extensions, "-c", "-p", "/summarize")
    assert result.returncode == 0, result.stderr
    assert "Summary (ext/ext-model):\n- asked about the sky" in result.stderr

    chat, summary = tau.server.requests
    assert chat.body["model"] == "fake-model" and chat.headers["authorization"] == "Bearer local-key"
    assert summary.body["model"] == "ext-model"
    assert summary.headers["authorization"] == "Bearer ext-key"  # the registered provider's own key
    assert summary.body["max_completion_tokens"] == 1000  # the routed model's own budget
    prompt = summary.body["messages"][-1]["content"]
    prompt_text = prompt if isinstance(prompt, str) else prompt[0]["text"]
    assert "user: Why is the sky blue?" in prompt_text
    assert "assistant: Blue light scatters most." in prompt_text
    # The summary asks for "low" itself; direct requests get no state.
    assert [json.loads(line) for line in routes.read_text().splitlines()] == [
        ["user", None, "low"],
        ["direct", None, "low"],
    ]
    states = [e["data"]["state"] for e in entries(tau) if e["type"] == "custom"]
    assert states == [{"turns": 1}]  # what the direct route returned was not stored


def test_a_setup_failure_is_an_error_result(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["keyless"] = {
        "baseUrl": tau.server.url("/v1"),
        "api": "openai-completions",
        "apiKey": "!true",  # a command that prints nothing: no key
        "models": [{"id": "m"}],
    }
    path.write_text(json.dumps(models))
    tau.server.add(Turn(text="hello"))
    assert tau.run("--provider", "local", "--model", "fake-model", "-p", "hi").returncode == 0
    result = tau.run("-e", str(SUMMARIZE), "--summarize-model", "keyless/m", "-c", "-p", "/summarize")
    assert result.returncode == 0, result.stderr
    assert 'Summary failed: models.json "apiKey" of provider "keyless" resolved to nothing' in result.stderr
    assert len(tau.server.requests) == 1  # nothing was sent
