"""Mid-conversation changes on Chat Completions (and Mistral's chat API), as pi 1.6 sends them (issue #32).

For every Chat Completions model of the catalogue whose changes travel in place (compat
``supportsMidConvoSystemMessages``, with ``supportsMidConvoToolAdditions``), and for one of them with
the additions turned off, two conversations: tools only added (each addition a ``{"role": "system",
"tools": [...]}`` message in place), and a tool withdrawn then declared again (the top-level tools
become the tools after that change). tau's request (anchor and updates) equals the one pi 1.6 builds
from the same transcript (its system messages).

Both are given ``max_tokens``: left to the context window, the budget each derives from its estimate
of the input differs by a few tokens here (tau estimates the anchored prompt and current tools, pi its
transcript with the system messages); open work, not part of what this test compares.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_model, get_models, get_providers
from tau.ai.prompt_updates import delivery
from tau.ai.providers.completions_updates import tool_additions
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


def tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }


READ, WRITE, LS = tool("read"), tool("write"), tool("ls")
CALL_ID = "aB3dE6gH9"  # a Mistral-shaped id (9 characters), which every API takes back
MAX_TOKENS = 4096


class Scenario(NamedTuple):
    anchor: list[dict[str, Any]]
    # (at, sections, added, removed) per change; at 3: after the tool result, at 5: after "again".
    changes: list[tuple[int, dict[str, str], list[dict[str, Any]], list[str]]]


SCENARIOS = {
    "additions": Scenario([READ], [(3, {"skills": "new skills"}, [WRITE], []), (5, {}, [LS], [])]),
    "changes": Scenario([READ], [(3, {"skills": "new skills"}, [WRITE], ["read"]), (5, {}, [READ], [])]),
}


class Case(NamedTuple):
    model: Model
    scenario: str
    compat: dict[str, Any]

    @property
    def name(self) -> str:
        off = " without tool additions" if self.compat.get("supportsMidConvoToolAdditions") is False else ""
        return f"{self.model.provider}/{self.model.id} {self.scenario}{off}"

    @property
    def prefix(self) -> str:
        return "/mistral" if self.model.api == "mistral-conversations" else ""

    def routed(self, server: FakeLLMServer | None = None) -> Model:
        return routed(self.model, server.url(self.prefix) if server is not None else "", self.compat)


MODELS = [
    m
    for provider in get_providers()
    for m in get_models(provider)
    if m.api == "openai-completions" and delivery(m) == "native"
]
WITH_ADDITIONS = [m for m in MODELS if tool_additions(m)]
# Mistral's chat API takes the changes as system messages too where the compat says so (no catalogue
# model does): the current tools at the top level, even with supportsMidConvoToolAdditions.
MISTRAL = get_model("mistral", "devstral-latest")
assert MISTRAL is not None
MISTRAL_IN_PLACE = {"supportsMidConvoSystemMessages": True, "supportsMidConvoToolAdditions": True}
CASES = (
    [Case(m, s, {}) for m in MODELS for s in SCENARIOS]
    + [Case(WITH_ADDITIONS[0], s, {"supportsMidConvoToolAdditions": False}) for s in SCENARIOS]
    + [Case(MISTRAL, s, MISTRAL_IN_PLACE) for s in SCENARIOS]
)


def tau_context(case: Case) -> Context:
    model = case.model
    scenario = SCENARIOS[case.scenario]

    def reply(content: list[Any], stop: str) -> AssistantMessage:
        return AssistantMessage(
            content, api=model.api, provider=model.provider, model=model.id, stop_reason=stop, timestamp=2
        )  # type: ignore[arg-type]

    messages = [
        UserMessage("go", timestamp=1),
        reply([ToolCall(CALL_ID, "read", {"path": "a"})], "toolUse"),
        ToolResultMessage(CALL_ID, "read", [TextContent("A")], timestamp=3),
        reply([TextContent("done")], "stop"),
        UserMessage("again", timestamp=5),
    ]
    current = {t["name"]: t for t in scenario.anchor}
    updates = []
    for at, sections, added, removed in scenario.changes:
        for name in removed:
            current.pop(name, None)
        for t in added:
            current[t["name"]] = t
        updates.append(
            PromptUpdate(
                at=at,
                sections=sections,
                tools_added=[Tool.from_json(t) for t in added],
                tools_removed=removed,
            )
        )
    return Context(
        messages=messages,
        system_prompt=SYSTEM_PROMPT,
        tools=[Tool.from_json(t) for t in current.values()],
        anchor=PromptAnchor(SYSTEM_PROMPT, [Tool.from_json(t) for t in scenario.anchor]),
        updates=updates,
    )


def pi_context(case: Case) -> dict[str, Any]:
    model = case.model
    scenario = SCENARIOS[case.scenario]
    usage = Usage().to_json()

    def reply(content: list[Any], stop: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": usage,
            "stopReason": stop,
            "timestamp": 2,
        }

    def system(change: tuple[int, dict[str, str], list[dict[str, Any]], list[str]]) -> dict[str, Any]:
        at, sections, added, removed = change
        message: dict[str, Any] = {"role": "system", "content": "", "timestamp": at}
        if sections:
            message["sections"] = sections
        if added:
            message["toolsAdded"] = added
        if removed:
            message["toolsRemoved"] = [{"name": name} for name in removed]
        return message

    first, second = scenario.changes
    return {
        "systemPrompt": SYSTEM_PROMPT,
        "tools": scenario.anchor,
        "messages": [
            {"role": "user", "content": "go", "timestamp": 1},
            reply(
                [{"type": "toolCall", "id": CALL_ID, "name": "read", "arguments": {"path": "a"}}], "toolUse"
            ),
            {
                "role": "toolResult",
                "toolCallId": CALL_ID,
                "toolName": "read",
                "content": [{"type": "text", "text": "A"}],
                "isError": False,
                "timestamp": 3,
            },
            system(first),
            reply([{"type": "text", "text": "done"}], "stop"),
            {"role": "user", "content": "again", "timestamp": 5},
            system(second),
        ],
    }


async def send_with_tau(server: FakeLLMServer) -> dict[str, str]:
    errors: dict[str, str] = {}

    async def one(case: Case) -> None:
        result = await stream_simple(
            case.routed(server),
            tau_context(case),
            api_key=API_KEY,
            session_id=SESSION_ID,
            max_tokens=MAX_TOKENS,
            headers={"x-parity-case": case.name},
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
                "baseUrl": server.url(case.prefix),
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
        options={"sessionId": SESSION_ID, "maxTokens": MAX_TOKENS},
    ) as run:
        assert not run.tau_result, run.tau_result
        assert not run.pi_result["errors"], run.pi_result["errors"]
        yield run.tau, run.pi


def test_the_catalogue_has_chat_completions_models_with_tool_additions() -> None:
    assert any((m.compat or {}).get("supportsMidConvoToolAdditions") for m in MODELS)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_tau_sends_the_changes_as_pi_sends_them(case: Case, recorded: Any) -> None:
    tau, pi = recorded
    assert tau[case.name].body == pi[case.name].body
    roles = [m["role"] for m in tau[case.name].body["messages"]]
    assert roles.count("system") + roles.count("developer") >= 2  # the prompt, the first change in place
    tool_messages = [m for m in tau[case.name].body["messages"] if "tools" in m]
    additions = tool_additions(case.routed()) and case.model.api == "openai-completions"
    assert bool(tool_messages) == (case.scenario == "additions" and additions)
