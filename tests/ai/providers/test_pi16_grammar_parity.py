"""A grammar-constrained tool goes out, comes back and is replayed as in pi 1.6 (issue #32).

Each case sends the same conversation through tau and through pi 1.6's own pi-ai
(``tests/helpers/pi16_requests.mjs``) to a fake server of its own, which answers with a streamed
custom tool call. The request bodies must be equal, and so must the tool calls each side read from
the answer. Cases: a model whose compat has ``supportsOpenAIGrammarTools`` (a custom tool) and one
without (a function tool), on Chat Completions, Responses, Azure and Codex; and a history holding
an earlier grammar call and its result, which goes back as a custom call (or a function call).
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
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, ScriptedToolCall, Turn

API_KEY = "sk-parity-test"
SESSION_ID = "parity-session"
SYSTEM_PROMPT = "You are a careful assistant."
READ = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
PATCH_TOOL = {
    "name": "apply_patch",
    "description": "Apply a patch",
    "parameters": {
        "type": "object",
        "properties": {"patch": {"type": "string", "description": "The patch"}},
        "required": ["patch"],
    },
    "constrainedSampling": {
        "type": "grammar",
        "variants": {"openai_lark": 'start: "*** Begin Patch" /(.|\\n)*/', "openai_regex": ".*"},
    },
}
# Beside it, a tool that prefers strict JSON-schema sampling: strict where the compat has
# supportsStrictMode (Azure, Codex), as any other elsewhere.
FIND = {
    "name": "find",
    "description": "Find files",
    "parameters": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["pattern"],
    },
    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
}
PATCH = '*** Begin Patch\n"quoted" \\ tab\t \u00e9 \U0001f600\n*** End Patch'
EARLIER_CALL = "call_earlier"


class Api(NamedTuple):
    prefix: str
    api_key: str = API_KEY
    options: dict[str, Any] = {}  # noqa: RUF012 (never mutated)


APIS = {
    "openai-completions": Api(""),
    "openai-responses": Api("/v1"),
    "azure-openai-responses": Api("/openai/v1"),
    "openai-codex-responses": Api("/backend-api", codex_access_token("acct-parity"), {"transport": "sse"}),
}


class Case(NamedTuple):
    name: str
    provider: str
    model: str
    compat: dict[str, Any] | None = None  # laid over the catalogue's, as models.json would
    history: bool = False  # an earlier grammar call and its result


ON = {"supportsOpenAIGrammarTools": True}
OFF = {"supportsOpenAIGrammarTools": False}
MODELS = [
    # No Chat Completions model of the catalogue has the flag: a models.json override turns it on.
    ("completions", "groq", "openai/gpt-oss-120b", ON),
    ("completions without", "groq", "openai/gpt-oss-120b", None),
    ("responses", "openai", "gpt-5", None),
    ("responses without", "openai", "gpt-4.1", None),
    ("azure", "azure", "gpt-5", None),
    ("azure without", "azure", "gpt-4.1", None),
    ("codex", "openai-codex", "gpt-6-sol", None),
    ("codex without", "openai-codex", "gpt-6-sol", OFF),
]
CASES = [
    Case(f"{name}{' replay' if history else ''}", provider, model, compat, history)
    for name, provider, model, compat in MODELS
    for history in (False, True)
]


def model_of(case: Case) -> Model:
    model = get_model(case.provider, case.model)
    assert model is not None, case
    return model


def answer(_request: RecordedRequest) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("apply_patch", id="call_new", custom_input=PATCH)], chunk_size=5)


def tau_context(case: Case, model: Model) -> Context:
    tools = [Tool.from_json(READ), Tool.from_json(PATCH_TOOL), Tool.from_json(FIND)]
    messages: list[Any] = [UserMessage("fix it", timestamp=1)]
    if case.history:
        messages += [
            AssistantMessage(
                [TextContent("Patching."), ToolCall(EARLIER_CALL, "apply_patch", {"patch": PATCH})],
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="toolUse",
                timestamp=2,
            ),
            ToolResultMessage(EARLIER_CALL, "apply_patch", [TextContent("applied")], timestamp=3),
            UserMessage("again", timestamp=4),
        ]
    return Context(
        messages=messages,
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        anchor=PromptAnchor(SYSTEM_PROMPT, list(tools)),
        updates=[],
    )


def pi_context(case: Case, model: Model) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": "fix it", "timestamp": 1}]
    if case.history:
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Patching."},
                    {
                        "type": "toolCall",
                        "id": EARLIER_CALL,
                        "name": "apply_patch",
                        "arguments": {"patch": PATCH},
                    },
                ],
                "api": model.api,
                "provider": model.provider,
                "model": model.id,
                "usage": Usage().to_json(),
                "stopReason": "toolUse",
                "timestamp": 2,
            },
            {
                "role": "toolResult",
                "toolCallId": EARLIER_CALL,
                "toolName": "apply_patch",
                "content": [{"type": "text", "text": "applied"}],
                "isError": False,
                "timestamp": 3,
            },
            {"role": "user", "content": "again", "timestamp": 4},
        ]
    return {"systemPrompt": SYSTEM_PROMPT, "messages": messages, "tools": [READ, PATCH_TOOL, FIND]}


async def send_with_tau(server: FakeLLMServer) -> dict[str, Any]:
    results: dict[str, Any] = {}

    async def one(case: Case) -> None:
        model = model_of(case)
        api = APIS[model.api]
        message = await stream_simple(
            routed(model, server.url(api.prefix), case.compat),
            tau_context(case, model),
            api_key=api.api_key,
            session_id=SESSION_ID,
            headers={"x-parity-case": case.name},
            **api.options,
        ).result()
        results[case.name] = message.to_json()

    await asyncio.gather(*(one(case) for case in CASES))
    return results


class Recorded(NamedTuple):
    tau: dict[str, RecordedRequest]
    pi: dict[str, RecordedRequest]
    tau_results: dict[str, Any]
    pi_results: dict[str, Any]
    pi_errors: dict[str, str]


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": case.name,
                "provider": case.provider,
                "id": case.model,
                "reasoning": None,
                "baseUrl": server.url(APIS[model_of(case).api].prefix),
                "apiKey": APIS[model_of(case).api].api_key,
                "compat": case.compat,
                "context": pi_context(case, model_of(case)),
                "options": APIS[model_of(case).api].options,
            }
            for case in CASES
        ]

    with side_by_side(
        [answer for _ in CASES],
        pi_cases,
        send_with_tau,
        api_key=API_KEY,
        options={"sessionId": SESSION_ID},
        with_results=True,
    ) as run:
        yield Recorded(run.tau, run.pi, run.tau_result, run.pi_result["results"], run.pi_result["errors"])


def tool_calls(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls read from the answer; of a Responses id (``call_id|item_id``) the item id's kind
    only (the fake server makes the rest from the request as it came, headers included)."""
    return [
        {
            "id": call_id + (f"|{item_id[:4]}" if item_id else ""),
            "name": block.get("name"),
            "arguments": block.get("arguments"),
        }
        for block in content
        if block.get("type") == "toolCall"
        for call_id, _, item_id in [str(block.get("id")).partition("|")]
    ]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_grammar_tool_goes_and_comes_back_as_in_pi(case: Case, recorded: Recorded) -> None:
    assert case.name not in recorded.pi_errors, recorded.pi_errors[case.name]
    tau_request, pi_request = recorded.tau[case.name], recorded.pi[case.name]
    assert tau_request.path == pi_request.path
    assert tau_request.body == pi_request.body
    tau_result, pi_result = recorded.tau_results[case.name], recorded.pi_results[case.name]
    assert tau_result["stopReason"] == pi_result["stopReason"] == "toolUse", tau_result.get("errorMessage")
    calls = tool_calls(tau_result["content"])
    assert calls == tool_calls(pi_result["content"])
    # With grammar tools the raw input lands under the tool's property; without, pi keeps an
    # unexpected custom call's input under "input", and so does tau.
    grammar = "without" not in case.name
    assert calls[0]["arguments"] == ({"patch": PATCH} if grammar else {"input": PATCH})
    assert [tool.get("type") for tool in declared(tau_request.body)] == [
        "function",
        "custom" if grammar else "function",
        "function",
    ]
    if case.provider in ("azure", "openai-codex"):  # supportsStrictMode is on by default there
        find = declared(tau_request.body)[2]
        assert find["strict"] is True and find["parameters"]["additionalProperties"] is False


def declared(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a request declares: top-level, or (models with ``supportsAdditionalTools``, as
    Codex's) in an ``additional_tools`` item leading the input."""
    if "tools" in body:
        tools: list[dict[str, Any]] = body["tools"]
        return tools
    return [
        tool for item in body["input"] if item.get("type") == "additional_tools" for tool in item["tools"]
    ]
