"""Mid-conversation changes on OpenAI Responses, Azure and Codex, as pi 1.6 sends them (issue #32).

For every model of the catalogue whose prompt changes travel in place (compat
``supportsMidConvoSystemMessages``), a conversation in which a tool is withdrawn and another added
with a prompt section changed, then the first tool comes back, and whose earlier replies were given
other efforts: tau's request (anchor and updates) equals the one pi 1.6 builds from the same
transcript (its system messages). With ``supportsAdditionalTools`` the tools lead ``input`` as an
``additional_tools`` item and each change is appended where it happened; without it the current
tools stay at the top level and each change is a developer message; with ``supportsMidConvoEffort``
each reply's effort travels in a ``configuration_update`` item. Compat overrides add what the
catalogue lacks: ``supportsToolSearch`` (tools only added: each addition a client tool search) and
Azure with the flags.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from codex_token import codex_access_token
from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_models, get_providers
from tau.ai.prompt_updates import delivery
from tau.ai.providers.responses_updates import tool_support
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
LS = {
    "name": "ls",
    "description": "List a folder",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
SETUP: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai-responses": ("/v1", API_KEY, {}),
    "azure-openai-responses": ("/openai/v1", API_KEY, {}),
    "openai-codex-responses": ("/backend-api", codex_access_token("acct-parity"), {"transport": "sse"}),
}
CALL_ID = "call_1|fc_1"
TEXT_SIGNATURE = '{"v":1,"id":"msg_1"}'


class Case(NamedTuple):
    model: Model
    compat: dict[str, Any]
    scenario: str = "changes"  # "changes": a tool withdrawn and declared again; "additions": tools only added

    @property
    def name(self) -> str:
        keys = "".join(f" +{key}" for key in self.compat)
        return f"{self.model.provider}/{self.model.id} {self.scenario}{keys}"

    def routed(self, server: FakeLLMServer | None = None) -> Model:
        """The model with the case's compat, sent to ``server``."""
        return routed(
            self.model, server.url(SETUP[self.model.api][0]) if server is not None else "", self.compat
        )


def native_models() -> list[Model]:
    return [
        m
        for provider in get_providers()
        for m in get_models(provider)
        if m.api in SETUP and delivery(m) == "native"
    ]


MODELS = native_models()
IN_PLACE_ONLY = next(m for m in MODELS if not (m.compat or {}).get("supportsAdditionalTools"))
WITH_ADDITIONAL_TOOLS = next(m for m in MODELS if (m.compat or {}).get("supportsAdditionalTools"))
AZURE = next(m for m in get_models("azure") if m.reasoning)
TOOL_SEARCH = {"supportsToolSearch": True}
AZURE_FLAGS = {"supportsMidConvoSystemMessages": True, "supportsAdditionalTools": True}
CASES = (
    [Case(m, {}) for m in MODELS]
    + [Case(IN_PLACE_ONLY, TOOL_SEARCH, s) for s in ("changes", "additions")]
    + [Case(WITH_ADDITIONAL_TOOLS, TOOL_SEARCH, "additions")]
    + [
        Case(AZURE, AZURE_FLAGS),
        Case(AZURE, {"supportsMidConvoSystemMessages": True, **TOOL_SEARCH}, "additions"),
    ]
)


def level_of(model: Model) -> str:
    return "medium"


def tau_context(case: Case) -> Context:
    model = case.model

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
    read, write, ls = Tool.from_json(READ), Tool.from_json(WRITE), Tool.from_json(LS)
    if case.scenario == "additions":
        return Context(
            messages=messages,
            system_prompt=SYSTEM_PROMPT,
            tools=[read, write, ls],
            anchor=PromptAnchor(SYSTEM_PROMPT, [read]),
            updates=[
                PromptUpdate(at=3, sections={"skills": "new skills"}, tools_added=[write]),
                PromptUpdate(at=5, tools_added=[ls]),
            ],
        )
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


def pi_context(case: Case) -> dict[str, Any]:
    model = case.model
    additions = case.scenario == "additions"
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
                **({} if additions else {"toolsRemoved": [{"name": "read"}]}),
                "timestamp": 3,
            },
            reply([{"type": "text", "text": "done", "textSignature": TEXT_SIGNATURE}], "low", "stop"),
            {"role": "user", "content": "again", "timestamp": 5},
            {"role": "system", "content": "", "toolsAdded": [LS if additions else READ], "timestamp": 5},
        ],
    }


async def send_with_tau(server: FakeLLMServer) -> dict[str, str]:
    errors: dict[str, str] = {}

    async def one(case: Case) -> None:
        _, key, options = SETUP[case.model.api]
        result = await stream_simple(
            case.routed(server),
            tau_context(case),
            api_key=key,
            reasoning=level_of(case.model),
            session_id=SESSION_ID,
            headers={"x-parity-case": case.name},
            **options,
        ).result()
        if result.stop_reason == "error":
            errors[case.name] = result.error_message or "error"

    await asyncio.gather(*(one(case) for case in CASES))
    return errors


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[dict[str, RecordedRequest], dict[str, RecordedRequest]]]:
    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": case.name,
                "provider": case.model.provider,
                "id": case.model.id,
                "reasoning": level_of(case.model),
                "baseUrl": server.url(SETUP[case.model.api][0]),
                "apiKey": SETUP[case.model.api][1],
                "options": SETUP[case.model.api][2],
                "compat": case.compat,
                "context": pi_context(case),
            }
            for case in CASES
        ]

    with side_by_side(
        [Turn(text="ok") for _ in CASES],
        pi_cases,
        send_with_tau,
        api_key=API_KEY,
        options={"sessionId": SESSION_ID},
    ) as run:
        assert not run.tau_result, run.tau_result
        assert not run.pi_result["errors"], run.pi_result["errors"]
        yield run.tau, run.pi


def test_each_in_place_form_is_compared() -> None:
    """Models of the catalogue with tool changes as ``additional_tools`` items and with the current
    tools at the top level, on both APIs; the tool search form by a compat override."""
    assert {m.api for m in MODELS} == {"openai-responses", "openai-codex-responses"}
    assert {tool_support(c.routed()) for c in CASES} == {"changes", "additions", "none"}
    assert any((m.compat or {}).get("supportsMidConvoEffort") for m in MODELS)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_tau_sends_the_changes_as_pi_sends_them(case: Case, recorded: Any) -> None:
    tau, pi = recorded
    body = tau[case.name].body
    assert body == pi[case.name].body, case.name
    input_types = [item.get("type") or item.get("role") for item in body["input"]]
    support = tool_support(case.routed())
    if support == "changes":
        assert input_types[0] == "additional_tools" and "tools" not in body
    else:
        assert "additional_tools" not in input_types and body["tools"]
        assert input_types.count("developer") >= 2  # the prompt, the first change in place
    searched = input_types.count("tool_search_call")
    assert searched == (2 if support == "additions" and case.scenario == "additions" else 0)
