"""Mid-conversation changes on OpenAI Responses and Codex, as pi 1.6 sends them (issue #32).

For every model of the catalogue whose prompt and tool changes travel in place (compat
``supportsMidConvoSystemMessages`` and ``supportsAdditionalTools``), a conversation in which a tool
is withdrawn and another added with a prompt section changed, then the first tool comes back, and
whose earlier replies were given other efforts: tau's request (anchor and updates) equals the one
pi 1.6 builds from the same transcript (its system messages). The tools lead ``input`` as an
``additional_tools`` item, each change is appended where it happened, and with
``supportsMidConvoEffort`` each reply's effort travels in a ``configuration_update`` item.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from codex_token import codex_access_token
from pi16 import pi16_requests

from tau.ai import stream_simple
from tau.ai.catalogue import get_models, get_providers
from tau.ai.prompt_updates import delivery
from tau.ai.types import (
    AssistantMessage,
    Context,
    Model,
    PromptAnchor,
    PromptUpdate,
    TextContent,
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
WRITE = {
    "name": "write",
    "description": "Write a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
SETUP: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai-responses": ("/v1", API_KEY, {}),
    "openai-codex-responses": ("/backend-api", codex_access_token("acct-parity"), {"transport": "sse"}),
}
CALL_ID = "call_1|fc_1"
TEXT_SIGNATURE = '{"v":1,"id":"msg_1"}'


def native_models() -> list[Model]:
    return [
        m
        for provider in get_providers()
        for m in get_models(provider)
        if m.api in SETUP and delivery(m) == "native"
    ]


MODELS = native_models()


def level_of(model: Model) -> str:
    return "medium"


def tau_context(model: Model) -> Context:
    def reply(content: list[Any], level: str, stop: str) -> AssistantMessage:
        return AssistantMessage(
            content,
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason=stop,  # type: ignore[arg-type]
            provider_thinking_level=level,
            timestamp=2,
        )

    messages = [
        UserMessage("go", timestamp=1),
        reply([ToolCall(CALL_ID, "read", {"path": "a"})], "high", "toolUse"),
        ToolResultMessage(CALL_ID, "read", [TextContent("A")], timestamp=3),
        reply([TextContent("done", text_signature=TEXT_SIGNATURE)], "low", "stop"),
        UserMessage("again", timestamp=5),
    ]
    read, write = Tool.from_json(READ), Tool.from_json(WRITE)
    return Context(
        messages=messages,
        system_prompt=SYSTEM_PROMPT,
        tools=[read, write],
        anchor=PromptAnchor(SYSTEM_PROMPT, [read]),
        updates=[
            PromptUpdate(
                at=3, sections={"skills": "new skills"}, tools_added=[write], tools_removed=["read"]
            ),
            PromptUpdate(at=5, tools_added=[read]),
        ],
    )


def pi_context(model: Model) -> dict[str, Any]:
    usage = Usage().to_json()

    def reply(content: list[Any], level: str, stop: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": usage,
            "stopReason": stop,
            "providerThinkingLevel": level,
            "timestamp": 2,
        }

    return {
        "systemPrompt": SYSTEM_PROMPT,
        "tools": [READ],
        "messages": [
            {"role": "user", "content": "go", "timestamp": 1},
            reply(
                [{"type": "toolCall", "id": CALL_ID, "name": "read", "arguments": {"path": "a"}}],
                "high",
                "toolUse",
            ),
            {
                "role": "toolResult",
                "toolCallId": CALL_ID,
                "toolName": "read",
                "content": [{"type": "text", "text": "A"}],
                "isError": False,
                "timestamp": 3,
            },
            {
                "role": "system",
                "content": "",
                "sections": {"skills": "new skills"},
                "toolsAdded": [WRITE],
                "toolsRemoved": [READ],
                "timestamp": 3,
            },
            reply([{"type": "text", "text": "done", "textSignature": TEXT_SIGNATURE}], "low", "stop"),
            {"role": "user", "content": "again", "timestamp": 5},
            {"role": "system", "content": "", "toolsAdded": [READ], "timestamp": 5},
        ],
    }


def case_name(model: Model) -> str:
    return f"{model.provider}/{model.id}"


async def send_with_tau(server: FakeLLMServer) -> dict[str, str]:
    errors: dict[str, str] = {}

    async def one(model: Model) -> None:
        prefix, key, options = SETUP[model.api]
        routed = Model.from_json({**model.to_json(), "baseUrl": server.url(prefix)})
        result = await stream_simple(
            routed,
            tau_context(model),
            api_key=key,
            reasoning=level_of(model),
            session_id=SESSION_ID,
            headers={"x-parity-case": case_name(model)},
            **options,
        ).result()
        if result.stop_reason == "error":
            errors[case_name(model)] = result.error_message or "error"

    await asyncio.gather(*(one(model) for model in MODELS))
    return errors


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[dict[str, RecordedRequest], dict[str, RecordedRequest], dict[str, Any]]]:
    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        tau_server.add(*(Turn(text="ok") for _ in MODELS))
        pi_server.add(*(Turn(text="ok") for _ in MODELS))
        cases = [
            {
                "case": case_name(model),
                "provider": model.provider,
                "id": model.id,
                "reasoning": level_of(model),
                "baseUrl": pi_server.url(SETUP[model.api][0]),
                "apiKey": SETUP[model.api][1],
                "options": SETUP[model.api][2],
                "context": pi_context(model),
            }
            for model in MODELS
        ]
        with ThreadPoolExecutor(1) as pool:
            pi_run = pool.submit(
                pi16_requests,
                pi_server.base_url,
                api_key=API_KEY,
                context={"messages": []},
                options={"sessionId": SESSION_ID},
                cases=cases,
                models=[],
            )
            tau_errors = asyncio.run(send_with_tau(tau_server))
            result = pi_run.result()
        assert not tau_errors, tau_errors
        assert not result["errors"], result["errors"]
        by_case = {r.headers["x-parity-case"]: r for r in tau_server.requests}
        pi_by_case = {r.headers["x-parity-case"]: r for r in pi_server.requests}
        yield by_case, pi_by_case, result


def test_the_catalogue_has_models_whose_changes_travel_in_place() -> None:
    assert any(m.api == "openai-responses" for m in MODELS)
    assert any(m.api == "openai-codex-responses" for m in MODELS)
    assert any((m.compat or {}).get("supportsMidConvoEffort") for m in MODELS)


@pytest.mark.parametrize("model", MODELS, ids=case_name)
def test_tau_sends_the_changes_as_pi_sends_them(model: Model, recorded: Any) -> None:
    tau, pi, _ = recorded
    name = case_name(model)
    assert tau[name].body == pi[name].body, name
    input_types = [item.get("type") or item.get("role") for item in tau[name].body["input"]]
    assert input_types[0] == "additional_tools" and "tools" not in tau[name].body
