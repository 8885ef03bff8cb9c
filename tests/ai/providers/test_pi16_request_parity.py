"""For every model of the catalogue whose API pi 1.6 and tau both speak (Anthropic Messages, OpenAI
Chat Completions and Responses, Azure OpenAI Responses, ChatGPT Codex, Google Generative AI,
Google Vertex, Mistral, Amazon Bedrock ConverseStream), and every thinking level it offers, the request tau builds
equals the one pi 1.6 builds (path, body and the headers that change what is asked, routed or billed). The request offers two
tools, one of them asking for constrained sampling, so each model's strict handling is compared too.

Both sides send to a fake server of their own: pi through its own pi-ai ``streamSimple``, all cases
in one node process (``tests/helpers/pi16_requests.mjs``); tau through ``tau.ai.stream_simple``, in
this process. Differences that are intended are listed below, each with its reason.

pi-messages (the Radius gateway's models) is compared too, with no difference; its prompt and tool
changes in ``test_pi16_pi_messages_parity``. Not compared: ``google-gemini-cli`` (tau's catalogue
only; pi 1.6 has no such API).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from codex_token import codex_access_token
from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_models, get_providers
from tau.ai.providers.google_convert import maps_thinking_levels
from tau.ai.thinking import get_supported_thinking_levels
from tau.ai.types import Context, Model, PromptAnchor, Tool, UserMessage
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, Turn

# About 8,000 requests from each side: some 30 s of CPU in all, more wall time on a shared machine.
pytestmark = pytest.mark.timeout(300)

API_KEY = "sk-ant-parity-test"
SESSION_ID = "parity-session"
SYSTEM_PROMPT = "You are a careful assistant."
PROMPT = "What is in README.md?"
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
# A tool that asks for constrained sampling (pi's ``constrainedSampling``, strict where the model
# can): each API's strict handling (the schema made strict, ``strict`` flags) is compared too. Its
# optional property shows the strict form (required, nullable).
EDIT_TOOL = {
    "name": "edit",
    "description": "Edit a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "line": {"type": "integer"}},
        "required": ["path"],
    },
    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
}
TOOLS = [READ_TOOL, EDIT_TOOL]
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
    "cf-aig-authorization",
    "api-key",
    "chatgpt-account-id",
    "x-goog-api-key",
)


class ApiSetup:
    """How both clients reach the fake server for one API: the path under its base URL, the key
    (or token) and the options this API needs on both sides."""

    def __init__(
        self,
        prefix: str = "",
        api_key: str = API_KEY,
        options: dict[str, Any] | None = None,
        pi_options: dict[str, Any] | None = None,
    ):
        self.prefix = prefix
        self.api_key = api_key
        self.options = options or {}
        self.pi_options = {**self.options, **(pi_options or {})}


APIS: dict[str, ApiSetup] = {
    "anthropic-messages": ApiSetup(),
    "openai-completions": ApiSetup(),
    "openai-responses": ApiSetup("/v1"),
    "azure-openai-responses": ApiSetup("/openai/v1"),
    # SSE on both sides: the WebSocket transport's frames are compared in test_codex_websocket.
    "openai-codex-responses": ApiSetup(
        "/backend-api", codex_access_token("acct-parity"), {"transport": "sse"}
    ),
    "google-generative-ai": ApiSetup("/v1beta"),
    # A Vertex API key (x-goog-api-key, no project or location) instead of ADC, on both sides.
    "google-vertex": ApiSetup(),
    "mistral-conversations": ApiSetup("/mistral"),
    # A Bedrock API key (bearer) instead of SigV4, whose signature holds the time of sending.
    # pi's AWS SDK speaks HTTP/2 unless told otherwise; the fake server speaks HTTP/1.1.
    "bedrock-converse-stream": ApiSetup(
        "", options={"region": "us-east-1"}, pi_options={"env": {"AWS_BEDROCK_FORCE_HTTP1": "1"}}
    ),
    # The Radius gateway's models: pi's transcript and the caller's options, at every level.
    "pi-messages": ApiSetup("/pi/v1"),
}

# openai-completions: each key is a (provider, header or body field) that differs, with the reason.
CLOUDFLARE_AUTH = (
    "cloudflare-ai-gateway takes the key in cf-aig-authorization: pi's coding agent resolves it so "
    "(with Authorization removed, whatever the API), as tau sends it; only a bare pi-ai call given "
    "apiKey sends Authorization instead, which this test makes"
)
ANTHROPIC_BETA_QUERY = (
    "pi's Anthropic SDK posts its beta messages to /v1/messages?beta=true, a marker of the SDK's "
    "beta client that the API ignores; tau posts to /v1/messages with the same anthropic-beta header"
)


GOOGLE_LEVEL_NAMES = (
    "a Gemini model whose thinkingLevelMap names Gemini levels takes thinkingLevel: tau decides so "
    "from the catalogue's map; pi 1.6 decides by model id and sends a model its pattern misses "
    "(gemini-pro-latest, gemini-robotics-er-2-preview) thinkingBudget -1 instead"
)
GOOGLE_XHIGH = (
    "where the catalogue maps xhigh to an xhigh Gemini level, pi 1.6 fails the request before "
    "sending it (Gemini's thinkingLevel stops at HIGH); tau sends HIGH, the highest there is"
)


GOOGLE_APIS = ("google-generative-ai", "google-vertex")


def catalogue_models() -> list[Model]:
    return [m for provider in get_providers() for m in get_models(provider) if m.api in APIS]


MODELS = catalogue_models()


def case_name(model: Model, level: str) -> str:
    return f"{model.provider}/{model.id}:{level}"


def tau_context() -> Context:
    """As tau's agent sends a conversation's first request: the prompt and tools are also its anchor
    (``tau.runtime.prompt_ledger``), as pi's agent makes them the transcript's leading system message."""
    tools = [Tool.from_json(tool) for tool in TOOLS]
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
        "tools": TOOLS,
    }


async def send_with_tau(server: FakeLLMServer, cases: list[tuple[Model, str]]) -> dict[str, str]:
    limit = asyncio.Semaphore(16)
    errors: dict[str, str] = {}

    async def one(model: Model, level: str) -> None:
        setup = APIS[model.api]
        async with limit:
            result = await stream_simple(
                routed(model, server.url(setup.prefix)),
                tau_context(),
                api_key=setup.api_key,
                **setup.options,
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
        self,
        tau: dict[str, RecordedRequest],
        pi: dict[str, RecordedRequest],
        pi_levels: dict[str, Any],
        errors: dict[str, dict[str, str]],
    ):
        self.errors = errors
        self.tau = tau
        self.pi = pi
        self.pi_levels = pi_levels


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    cases = [(model, level) for model in MODELS for level in get_supported_thinking_levels(model)]

    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": case_name(model, level),
                "provider": model.provider,
                "id": model.id,
                "reasoning": None if level == "off" else level,
                "baseUrl": server.url(APIS[model.api].prefix),
                "apiKey": APIS[model.api].api_key,
                "options": APIS[model.api].pi_options,
            }
            for model, level in cases
        ]

    with side_by_side(
        [Turn(text="ok") for _ in cases],
        pi_cases,
        lambda server: send_with_tau(server, cases),
        api_key=API_KEY,
        context=pi_context(),
        options={"sessionId": SESSION_ID, "temperature": TEMPERATURE},
        models=[{"provider": m.provider, "id": m.id} for m in MODELS],
        allow_api_key=API_KEY,
    ) as run:
        yield Recorded(
            run.tau, run.pi, run.pi_result["levels"], {"tau": run.tau_result, "pi": run.pi_result["errors"]}
        )


def compared(request: RecordedRequest) -> dict[str, Any]:
    headers = {name: request.headers[name] for name in COMPARED_HEADERS if name in request.headers}
    return {"path": request.path, "query": request.query, "body": request.body, "headers": headers}


def intended(model: Model, level: str, pi: dict[str, Any]) -> dict[str, Any]:
    """pi's request with the intended differences undone (see the reasons above)."""
    expected: dict[str, Any] = json.loads(json.dumps(pi))
    thinking = expected["body"].get("generationConfig", {}).get("thinkingConfig", {})
    if model.api in GOOGLE_APIS and maps_thinking_levels(model) and "thinkingBudget" in thinking:
        del thinking["thinkingBudget"]  # GOOGLE_LEVEL_NAMES
        thinking["thinkingLevel"] = str((model.thinking_level_map or {})[level]).upper()
    headers = expected["headers"]
    if model.provider == "cloudflare-ai-gateway":  # CLOUDFLARE_AUTH
        headers.pop("authorization", None)
        headers.pop("x-api-key", None)
        headers["cf-aig-authorization"] = f"Bearer {API_KEY}"
    if model.api == "anthropic-messages" and expected["query"] == "beta=true":  # ANTHROPIC_BETA_QUERY
        expected["query"] = ""
    return expected


def test_the_constrained_tool_goes_strict_on_every_api_that_has_strict_models(recorded: Recorded) -> None:
    """The comparison covers strict tools: for each API but Mistral (whose catalogue models have no
    ``supportsStrictMode``) and pi-messages (the gateway gets the tool as declared, with its
    ``constrainedSampling``), some model gets the edit tool's strict schema (its optional ``line``
    required but nullable)."""
    strict_apis = set()
    for model in MODELS:
        for level in get_supported_thinking_levels(model):
            if '"line":{"anyOf":[{"type":"integer"},{"type":"null"}]}' in json.dumps(
                recorded.tau[case_name(model, level)].body, separators=(",", ":")
            ):
                strict_apis.add(model.api)
    assert strict_apis == set(APIS) - {"mistral-conversations", "pi-messages"}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.provider}/{m.id}")
def test_tau_sends_what_pi_sends_at_every_thinking_level(model: Model, recorded: Recorded) -> None:
    key = f"{model.provider}/{model.id}"
    levels = get_supported_thinking_levels(model)
    assert recorded.pi_levels[key] == levels
    for level in levels:
        name = case_name(model, level)
        assert name not in recorded.errors["tau"], recorded.errors["tau"][name]
        if model.api in GOOGLE_APIS and (model.thinking_level_map or {}).get(level) == "xhigh":
            assert "Unsupported Google thinking level" in recorded.errors["pi"][name]  # GOOGLE_XHIGH
            config = recorded.tau[name].body["generationConfig"]["thinkingConfig"]
            assert config == {"includeThoughts": True, "thinkingLevel": "HIGH"}, name
            continue
        assert name not in recorded.errors["pi"], recorded.errors["pi"][name]
        tau, pi = compared(recorded.tau[name]), compared(recorded.pi[name])
        assert tau == intended(model, level, pi), name
