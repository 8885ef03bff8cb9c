"""For every model of the catalogue whose API is Anthropic Messages or OpenAI Chat Completions, and
every thinking level it offers, the request tau builds equals the one pi 1.6 builds (body and the
headers that change what is asked, routed or billed).

Both sides send to a fake server of their own: pi through its own pi-ai ``streamSimple``, all cases
in one node process (``tests/helpers/pi16_requests.mjs``); tau through ``tau.ai.stream_simple``, in
this process. Differences that are intended are listed below, each with its reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pi16 import pi16_requests

from tau.ai import stream_simple
from tau.ai.catalogue import get_models, get_providers
from tau.ai.thinking import get_supported_thinking_levels
from tau.ai.types import Context, Model, PromptAnchor, Tool, UserMessage
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, Turn

API_KEY = "sk-ant-parity-test"
SESSION_ID = "parity-session"
SYSTEM_PROMPT = "You are a careful assistant."
PROMPT = "What is in README.md?"
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
TEMPERATURE = 0.5

# Headers that change what the provider does or bills (the rest, such as user-agent or pi's
# ``anthropic-dangerous-direct-browser-access``, are the two clients' own).
COMPARED_HEADERS = (
    "session_id",
    "session-id",
    "x-client-request-id",
    "anthropic-beta",
    "anthropic-version",
    "authorization",
    "x-api-key",
    "x-session-id",
    "x-session-affinity",
)


APIS = ("anthropic-messages", "openai-completions")

# openai-completions: each key is a (provider, header or body field) that differs, with the reason.
CLOUDFLARE_AUTH = (
    "cloudflare-ai-gateway takes the key in cf-aig-authorization: pi's coding agent resolves it so "
    "(with Authorization removed), as tau sends it; only a bare pi-ai call given apiKey adds "
    "Authorization, which this test makes"
)


def catalogue_models() -> list[Model]:
    return [m for provider in get_providers() for m in get_models(provider) if m.api in APIS]


MODELS = catalogue_models()


def case_name(model: Model, level: str) -> str:
    return f"{model.provider}/{model.id}:{level}"


def tau_context() -> Context:
    """As tau's agent sends a conversation's first request: the prompt and tools are also its anchor
    (``tau.runtime.prompt_ledger``), as pi's agent makes them the transcript's leading system message."""
    tools = [Tool.from_json(READ_TOOL)]
    return Context(
        messages=[UserMessage(PROMPT, timestamp=1)],
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        anchor=PromptAnchor(SYSTEM_PROMPT, list(tools)),
        updates=[],
    )


def pi_context() -> dict[str, Any]:
    return {
        "systemPrompt": SYSTEM_PROMPT,
        "messages": [{"role": "user", "content": PROMPT, "timestamp": 1}],
        "tools": [READ_TOOL],
    }


def recorded_by_case(server: FakeLLMServer) -> dict[str, RecordedRequest]:
    return {request.headers["x-parity-case"]: request for request in server.requests}


async def send_with_tau(server: FakeLLMServer, cases: list[tuple[Model, str]]) -> dict[str, str]:
    limit = asyncio.Semaphore(16)
    errors: dict[str, str] = {}

    async def one(model: Model, level: str) -> None:
        routed = Model.from_json({**model.to_json(), "baseUrl": server.base_url})
        async with limit:
            result = await stream_simple(
                routed,
                tau_context(),
                api_key=API_KEY,
                reasoning=None if level == "off" else level,
                session_id=SESSION_ID,
                temperature=TEMPERATURE,
                headers={"x-parity-case": case_name(model, level)},
            ).result()
        if result.stop_reason == "error":
            errors[case_name(model, level)] = result.error_message or "error"

    await asyncio.gather(*(one(model, level) for model, level in cases))
    return errors


class Recorded:
    def __init__(
        self, tau: dict[str, RecordedRequest], pi: dict[str, RecordedRequest], pi_levels: dict[str, Any]
    ):
        self.tau = tau
        self.pi = pi
        self.pi_levels = pi_levels


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    cases = [(model, level) for model in MODELS for level in get_supported_thinking_levels(model)]
    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        tau_server.add(*(Turn(text="ok") for _ in cases))
        pi_server.add(*(Turn(text="ok") for _ in cases))
        tau_errors = asyncio.run(send_with_tau(tau_server, cases))
        assert not tau_errors, tau_errors
        result = pi16_requests(
            pi_server.base_url,
            api_key=API_KEY,
            context=pi_context(),
            options={"sessionId": SESSION_ID, "temperature": TEMPERATURE},
            cases=[
                {
                    "case": case_name(model, level),
                    "provider": model.provider,
                    "id": model.id,
                    "reasoning": None if level == "off" else level,
                }
                for model, level in cases
            ],
            models=[{"provider": m.provider, "id": m.id} for m in MODELS],
        )
        assert not result["errors"], result["errors"]
        yield Recorded(recorded_by_case(tau_server), recorded_by_case(pi_server), result["levels"])


def compared(request: RecordedRequest) -> dict[str, Any]:
    headers = {name: request.headers[name] for name in COMPARED_HEADERS if name in request.headers}
    return {"body": request.body, "headers": headers}


def intended(model: Model, pi: dict[str, Any]) -> dict[str, Any]:
    """pi's request with the intended differences undone (see the reasons above)."""
    expected: dict[str, Any] = json.loads(json.dumps(pi))
    headers = expected["headers"]
    if model.provider == "cloudflare-ai-gateway":  # CLOUDFLARE_AUTH
        headers.pop("authorization", None)
    return expected


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.provider}/{m.id}")
def test_tau_sends_what_pi_sends_at_every_thinking_level(model: Model, recorded: Recorded) -> None:
    key = f"{model.provider}/{model.id}"
    levels = get_supported_thinking_levels(model)
    assert recorded.pi_levels[key] == levels
    for level in levels:
        name = case_name(model, level)
        tau, pi = compared(recorded.tau[name]), compared(recorded.pi[name])
        assert tau == intended(model, pi), name
