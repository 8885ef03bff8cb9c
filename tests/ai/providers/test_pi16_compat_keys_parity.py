"""models.json compat keys change tau's request as they change pi 1.6's (issue #32).

Each case lays a compat key over a catalogue model, as a ``models.json`` override does, and sends
the same conversation through tau and through pi 1.6's own pi-ai (``tests/helpers/pi16_requests.mjs``,
one node process for all cases); the two bodies must be equal, and must differ from the request
without the key (so each case shows the key doing something).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from codex_token import codex_access_token
from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_model
from tau.ai.types import (
    AssistantMessage,
    Context,
    Model,
    PromptAnchor,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, Turn

API_KEY = "sk-parity-test"
SESSION_ID = "parity-session"
SYSTEM_PROMPT = "You are a careful assistant."
READ = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
# A tool that asks for its arguments to be sampled against its schema (pi's "prefer": strict where
# the model can, as any other tool elsewhere); ``limit`` is optional, so its strict form is nullable.
CONSTRAINED = {
    "name": "find",
    "description": "Find files",
    "parameters": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["pattern"],
    },
    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
}
# One whose schema Anthropic's strict tools refuse (``minimum``): it goes non-strict.
REFUSED = {
    **CONSTRAINED,
    "name": "head",
    "parameters": {
        "type": "object",
        "properties": {"lines": {"type": "integer", "minimum": 1}},
        "required": ["lines"],
    },
}
TOOLS = {"read": [READ], "constrained": [READ, CONSTRAINED], "refused": [READ, REFUSED]}
CALL_ID = "call_1"


class Case(NamedTuple):
    name: str
    provider: str
    model: str
    compat: dict[str, Any]
    level: str | None = None
    history: str = "plain"  # "plain", "tools" (a call and its result, no tools now), "thinking"
    prefix: str = ""
    max_tokens: int | None = None
    retention: str | None = None
    tools: str = "read"  # a key of TOOLS
    changes: bool = True  # the key changes this request (False: a case where it must not)


COMPLETIONS = ("groq", "openai/gpt-oss-120b")
CLAUDE = ("anthropic", "claude-sonnet-4-5")
RESPONSES = ("openai", "gpt-5")
# An Anthropic-compatible model whose catalogue compat has no supportsStrictTools.
FIREWORKS_CLAUDE_API = ("fireworks", "accounts/fireworks/models/minimax-m3")
# Bedrock models with and without supportsStrictMode in the catalogue, and a Mistral one (none has it).
BEDROCK_STRICT = ("amazon-bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0")
BEDROCK_PLAIN = ("amazon-bedrock", "amazon.nova-pro-v1:0")
MISTRAL = ("mistral", "devstral-latest")
# How each side reaches the fake server for an API that needs more than a base URL: Bedrock with a
# region and a bearer key, pi's AWS SDK told to speak HTTP/1.1 as the fake server does.
# Codex with a ChatGPT token over SSE (its WebSocket frames: test_codex_websocket).
TAU_API_OPTIONS: dict[str, dict[str, Any]] = {
    "bedrock-converse-stream": {"region": "us-east-1"},
    "openai-codex-responses": {"transport": "sse"},
}
PI_API_OPTIONS: dict[str, dict[str, Any]] = {
    "bedrock-converse-stream": {"region": "us-east-1", "env": {"AWS_BEDROCK_FORCE_HTTP1": "1"}},
    "openai-codex-responses": {"transport": "sse"},
}
API_KEYS = {"openai-codex-responses": codex_access_token("acct-parity")}
AZURE = ("azure", "gpt-5")
CODEX = ("openai-codex", "gpt-5.6-luna")

CASES = [
    Case(
        "requiresNonNullAssistantContent",
        *COMPLETIONS,
        {"requiresNonNullAssistantContent": True},
        history="tools",
    ),
    Case(
        "requiresToolsWithToolHistory", *COMPLETIONS, {"requiresToolsWithToolHistory": True}, history="tools"
    ),
    Case("vllmPriority", *COMPLETIONS, {"vllmPriority": -5}),
    Case(
        "thinkingTokenBudgetField",
        *COMPLETIONS,
        {"thinkingTokenBudgetField": "thinking_budget"},
        level="medium",
    ),
    Case("supportsThinkingTokenBudget", *COMPLETIONS, {"supportsThinkingTokenBudget": True}, level="high"),
    Case("promptCacheKeyMode enabled", *COMPLETIONS, {"promptCacheKeyMode": "enabled"}),
    Case(
        "openRouterRouting",
        *COMPLETIONS,
        {"openRouterRouting": {"zdr": True, "sort": "price", "quantizations": ["fp8"]}},
    ),
    Case(
        "vercelGatewayRouting", *COMPLETIONS, {"vercelGatewayRouting": {"only": ["groq"], "order": ["groq"]}}
    ),
    Case("allowEmptySignature", *CLAUDE, {"allowEmptySignature": True}, history="thinking"),
    Case("supportsStrictTools", *FIREWORKS_CLAUDE_API, {"supportsStrictTools": True}, tools="constrained"),
    Case(
        "supportsStrictTools, a schema strict tools refuse",
        *FIREWORKS_CLAUDE_API,
        {"supportsStrictTools": True},
        tools="refused",
        changes=False,
    ),
    Case("supportsStrictTools off (Claude)", *CLAUDE, {"supportsStrictTools": False}, tools="constrained"),
    Case(
        # On by default: the constrained tool goes strict without the key, plain with it off.
        "supportsStrictMode off, a constrained tool (Chat Completions)",
        *COMPLETIONS,
        {"supportsStrictMode": False},
        tools="constrained",
    ),
    Case("supportsStrictMode (Bedrock)", *BEDROCK_PLAIN, {"supportsStrictMode": True}, tools="constrained"),
    Case(
        "supportsStrictMode off (Bedrock)",
        *BEDROCK_STRICT,
        {"supportsStrictMode": False},
        tools="constrained",
    ),
    Case(
        "supportsStrictMode (Mistral)",
        *MISTRAL,
        {"supportsStrictMode": True},
        prefix="/mistral",
        tools="constrained",
    ),
    Case("supportsDeveloperRole off (Responses)", *RESPONSES, {"supportsDeveloperRole": False}, prefix="/v1"),
    Case(
        "supportsDeveloperRole off (Codex)", *CODEX, {"supportsDeveloperRole": False}, prefix="/backend-api"
    ),
    # Azure's request as pi's: these OpenAI keys change nothing there, and the cache key goes
    # whatever the retention.
    Case(
        "supportsMaxOutputTokens (Azure)",
        *AZURE,
        {"supportsMaxOutputTokens": False},
        prefix="/openai/v1",
        max_tokens=4096,
        changes=False,
    ),
    Case(
        "supportsExplicitPromptCacheMode (Azure)",
        *AZURE,
        {"supportsExplicitPromptCacheMode": True},
        prefix="/openai/v1",
        retention="long",
        changes=False,
    ),
    Case(
        "promptCacheKeyMode disabled without caching (Azure)",
        *AZURE,
        {"promptCacheKeyMode": "disabled"},
        prefix="/openai/v1",
        retention="none",
    ),
    # A session's first request creates a thread (the continuation: tests/ai/providers/test_anthropic.py).
    Case("supportsMessageThreads", *CLAUDE, {"supportsMessageThreads": True}),
    Case(
        "supportsMessageThreads without caching",
        *CLAUDE,
        {"supportsMessageThreads": True},
        retention="none",
        changes=False,
    ),
    Case(
        "promptCacheKeyMode disabled (Responses)",
        *RESPONSES,
        {"promptCacheKeyMode": "disabled"},
        prefix="/v1",
    ),
    Case(
        "supportsExplicitPromptCacheMode long (Responses)",
        *RESPONSES,
        {"supportsExplicitPromptCacheMode": True},
        prefix="/v1",
        retention="long",
    ),
    Case(
        "supportsExplicitPromptCacheMode none (Responses)",
        *RESPONSES,
        {"supportsExplicitPromptCacheMode": True},
        prefix="/v1",
        retention="none",
    ),
    Case(
        "supportsMaxOutputTokens (Responses)",
        *RESPONSES,
        {"supportsMaxOutputTokens": False},
        prefix="/v1",
        max_tokens=4096,
    ),
]


def model_of(case: Case) -> Model:
    model = get_model(case.provider, case.model)
    assert model is not None, case
    return model


def tau_context(case: Case, model: Model) -> Context:
    messages: list[Any] = [UserMessage("go", timestamp=1)]
    tools: list[Tool] | None = [Tool.from_json(tool) for tool in TOOLS[case.tools]]
    if case.history == "tools":
        messages += [
            AssistantMessage(
                [ToolCall(CALL_ID, "read", {"path": "a"})],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
                timestamp=2,
            ),
            ToolResultMessage(CALL_ID, "read", [TextContent("A")], timestamp=3),
            UserMessage("and now?", timestamp=4),
        ]
        tools = None
    elif case.history == "thinking":
        messages += [
            AssistantMessage(
                [ThinkingContent("Let me think.", thinking_signature=""), TextContent("Done.")],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="stop",
                timestamp=2,
            ),
            UserMessage("and now?", timestamp=4),
        ]
    # As tau's agent sends it: the prompt and tools are the conversation's anchor too.
    anchor = PromptAnchor(SYSTEM_PROMPT, list(tools or []))
    return Context(messages=messages, system_prompt=SYSTEM_PROMPT, tools=tools, anchor=anchor, updates=[])


def pi_context(case: Case, model: Model) -> dict[str, Any]:
    usage = Usage().to_json()
    reply = {"api": model.api, "provider": model.provider, "model": model.id, "usage": usage, "timestamp": 2}
    messages: list[Any] = [{"role": "user", "content": "go", "timestamp": 1}]
    tools: list[Any] | None = TOOLS[case.tools]
    if case.history == "tools":
        messages += [
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": CALL_ID, "name": "read", "arguments": {"path": "a"}}],
                "stopReason": "toolUse",
                **reply,
            },
            {
                "role": "toolResult",
                "toolCallId": CALL_ID,
                "toolName": "read",
                "content": [{"type": "text", "text": "A"}],
                "isError": False,
                "timestamp": 3,
            },
            {"role": "user", "content": "and now?", "timestamp": 4},
        ]
        tools = None
    elif case.history == "thinking":
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": ""},
                    {"type": "text", "text": "Done."},
                ],
                "stopReason": "stop",
                **reply,
            },
            {"role": "user", "content": "and now?", "timestamp": 4},
        ]
    context: dict[str, Any] = {"systemPrompt": SYSTEM_PROMPT, "messages": messages}
    if tools:
        context["tools"] = tools
    return context


def tau_options(case: Case) -> dict[str, Any]:
    options: dict[str, Any] = dict(TAU_API_OPTIONS.get(model_of(case).api, {}))
    if case.max_tokens:
        options["max_tokens"] = case.max_tokens
    if case.retention:
        options["cache_retention"] = case.retention
    return options


def pi_options(case: Case) -> dict[str, Any]:
    options: dict[str, Any] = dict(PI_API_OPTIONS.get(model_of(case).api, {}))
    if case.max_tokens:
        options["maxTokens"] = case.max_tokens
    if case.retention:
        options["cacheRetention"] = case.retention
    return options


WITHOUT = " (without the key)"


async def send_with_tau(server: FakeLLMServer) -> None:
    """Each case twice: with its compat key, and (named with ``WITHOUT``) with the catalogue's."""

    async def one(case: Case, compat_on: bool) -> None:
        model = model_of(case)
        result = await stream_simple(
            routed(model, server.url(case.prefix), case.compat if compat_on else None),
            tau_context(case, model),
            api_key=API_KEYS.get(model.api, API_KEY),
            reasoning=case.level,
            session_id=SESSION_ID,
            headers={"x-parity-case": case.name if compat_on else case.name + WITHOUT},
            **tau_options(case),
        ).result()
        assert result.stop_reason != "error", (case.name, result.error_message)

    await asyncio.gather(*(one(case, compat_on) for case in CASES for compat_on in (True, False)))


class Recorded(NamedTuple):
    tau: dict[str, RecordedRequest]
    tau_without: dict[str, RecordedRequest]
    pi: dict[str, RecordedRequest]


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": case.name,
                "provider": case.provider,
                "id": case.model,
                "reasoning": case.level,
                "baseUrl": server.url(case.prefix),
                "apiKey": API_KEYS.get(model_of(case).api, API_KEY),
                "compat": case.compat,
                "context": pi_context(case, model_of(case)),
                "options": pi_options(case),
            }
            for case in CASES
        ]

    with side_by_side(
        [Turn(text="ok") for _ in range(2 * len(CASES))],
        pi_cases,
        send_with_tau,
        api_key=API_KEY,
        options={"sessionId": SESSION_ID},
    ) as run:
        assert not run.pi_result["errors"], run.pi_result["errors"]
        without = {name.removesuffix(WITHOUT): r for name, r in run.tau.items() if name.endswith(WITHOUT)}
        yield Recorded(run.tau, without, run.pi)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_the_compat_key_changes_the_request_as_in_pi(case: Case, recorded: Recorded) -> None:
    tau, pi = recorded.tau[case.name].body, recorded.pi[case.name].body
    assert tau == pi
    assert _betas(recorded.tau[case.name]) == _betas(recorded.pi[case.name])
    assert (tau != recorded.tau_without[case.name].body) == case.changes


def _betas(request: RecordedRequest) -> str | None:
    return request.headers.get("anthropic-beta")


def test_a_threaded_request_says_so(recorded: Recorded) -> None:
    request = recorded.tau["supportsMessageThreads"]
    assert request.body["thread"] == {"type": "create"}
    assert "message-threads-2026-08-12" in (_betas(request) or "").split(",")
