"""pi-messages (the Radius gateway) as pi 1.6 speaks it (issue #32), beyond the first request that
``test_pi16_request_parity`` compares for every model and level:

- a session's later requests, after prompt and tool changes: pi's transcript goes as it is, the
  leading system message with the prompt's named sections and the tools as recorded, and each change
  (sections replaced or removed, free text, tools added and removed) a system message where it was
  recorded, with its timestamp, for every model of the gateway;
- the options a caller gives (``maxTokens``, ``cacheRetention``, ``toolChoice``, ``temperature``,
  ``debug`` as ``?debug=1``) and ``PI_CACHE_RETENTION=long``;
- the answer read back: blocks, usage, response id and model, the level used, the gateway's
  ``error`` event (failed or aborted upstream), a refused request and a stream cut short.

tau sends through ``tau.ai.stream_simple`` and pi through its own pi-ai ``streamSimple``
(``tests/helpers/pi16_requests.mjs``), each to a fake server of its own; the requests (path, query,
body and authorization) and the answers read must be the same. No difference is intended. Not
compared: an event that is not JSON (pi ends with JSON.parse's own message, tau with "Invalid JSON
in pi-messages stream event: <the event>") and the user agent (each client's own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from pi16 import pi16_requests, routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_models
from tau.ai.thinking import get_supported_thinking_levels
from tau.ai.types import (
    AssistantMessage,
    Context,
    Message,
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
from tau.testing.fake_llm import FakeLLMServer, Fault, RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn

pytestmark = pytest.mark.timeout(300)

API_KEY = "radius-parity-token"
SESSION_ID = "parity-session"


def tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }


READ, WRITE, LS = tool("read"), tool("write"), tool("ls")
SECTIONS = {"preamble": "You are a careful assistant.", "skills": "<skills>\nreview\n</skills>"}
CHANGED_SECTIONS = {"skills": "<skills>\nreview\nrelease\n</skills>", "extra": "<extra>\nnotes\n</extra>"}
LATER_TEXT = "Answer briefly from now on."

# The session as pi records it: (position among the model messages, pi's system message).
HEAD = {"role": "system", "content": "", "sections": SECTIONS, "timestamp": 100, "toolsAdded": [READ, WRITE]}
CHANGES: list[tuple[int, dict[str, Any]]] = [
    (
        3,  # after the tool result: skills replaced, a section added, ls in and write out
        {
            "role": "system",
            "content": "",
            "sections": CHANGED_SECTIONS,
            "timestamp": 104,
            "toolsAdded": [LS],
            "toolsRemoved": [{"name": "write"}],
        },
    ),
    (4, {"role": "system", "content": LATER_TEXT, "sections": {"extra": None}, "timestamp": 106}),
]


def conversation(model: Model) -> list[Message]:
    call = ToolCall("call_1", "read", {"path": "a.py"})
    return [
        UserMessage("What is in a.py?", timestamp=101),
        AssistantMessage(
            [TextContent("Reading it."), call],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(input=10, output=5, total_tokens=15),
            stop_reason="toolUse",
            timestamp=102,
        ),
        ToolResultMessage("call_1", "read", [TextContent("x = 1")], timestamp=103),
        AssistantMessage(
            [TextContent("It sets x.")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="stop",
            timestamp=105,
        ),
        UserMessage("Thanks.", timestamp=107),
    ]


# Each request of the session: how many of the conversation's messages it holds.
STEPS = (1, 3, 5)


def pi_transcript(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [HEAD]
    for index, message in enumerate(messages):
        out.extend(change for at, change in CHANGES if at == index)
        out.append(message.to_json())
    out.extend(change for at, change in CHANGES if at == len(messages))
    return out


def tau_context(messages: list[Message]) -> Context:
    """As tau's agent builds it from the same records (``tau.runtime.prompt_ledger``)."""
    updates = [
        PromptUpdate(
            at=at,
            content=change["content"],
            sections=dict(change.get("sections") or {}),
            tools_added=[Tool.from_json(t) for t in change.get("toolsAdded") or []],
            tools_removed=[t["name"] for t in change.get("toolsRemoved") or []],
            timestamp=change["timestamp"],
        )
        for at, change in CHANGES
        if at <= len(messages)
    ]
    return Context(
        messages=messages,
        system_prompt="\n\n".join(SECTIONS.values()),
        tools=[Tool.from_json(READ), Tool.from_json(WRITE)],
        anchor=PromptAnchor(
            "\n\n".join(SECTIONS.values()),
            [Tool.from_json(READ), Tool.from_json(WRITE)],
            sections=dict(SECTIONS),
            timestamp=HEAD["timestamp"],
        ),
        updates=updates,
    )


RADIUS = [model for model in get_models("radius") if model.api == "pi-messages"]


def level_of(model: Model) -> str | None:
    levels = get_supported_thinking_levels(model)
    level = "high" if "high" in levels else levels[-1]
    return None if level == "off" else level


class Option(NamedTuple):
    tau: dict[str, Any]
    pi: dict[str, Any]


OPTIONS = {
    "none": Option({}, {}),
    "given": Option(
        {
            "max_tokens": 2048,
            "cache_retention": "long",
            "tool_choice": "required",
            "temperature": 0.2,
            "debug": True,
        },
        {
            "maxTokens": 2048,
            "cacheRetention": "long",
            "toolChoice": "required",
            "temperature": 0.2,
            "debug": True,
        },
    ),
}


def compared(request: RecordedRequest) -> dict[str, Any]:
    return {
        "path": request.path,
        "query": request.query,
        "body": request.body,
        "authorization": request.headers.get("authorization"),
    }


class Sent(NamedTuple):
    tau: dict[str, RecordedRequest]
    pi: dict[str, RecordedRequest]
    errors: dict[str, Any]


def step_name(case: str, step: int) -> str:
    return f"{case} step {step}"


@pytest.fixture(scope="module")
def sent() -> Iterator[Sent]:
    cases = [(model, option) for model in RADIUS for option in OPTIONS]
    names = {f"{model.id}/{option}": (model, option) for model, option in cases}

    async def by_tau(server: FakeLLMServer) -> dict[str, str]:
        errors: dict[str, str] = {}
        for name, (model, option) in names.items():
            full = conversation(model)
            for step, count in enumerate(STEPS):
                reply = await stream_simple(
                    routed(model, server.url("/pi/v1")),
                    tau_context(full[:count]),
                    api_key=API_KEY,
                    reasoning=level_of(model),
                    session_id=SESSION_ID,
                    headers={"x-parity-case": step_name(name, step)},
                    **OPTIONS[option].tau,
                ).result()
                if reply.stop_reason == "error":
                    errors[step_name(name, step)] = reply.error_message or "error"
        return errors

    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        out = []
        for name, (model, option) in names.items():
            full = conversation(model)
            contexts = [{"messages": pi_transcript(full[:count])} for count in STEPS]
            out.append(
                {
                    "case": step_name(name, 0),
                    "provider": model.provider,
                    "id": model.id,
                    "reasoning": level_of(model),
                    "baseUrl": server.url("/pi/v1"),
                    "options": OPTIONS[option].pi,
                    "context": contexts[0],
                    "then": contexts[1:],
                }
            )
        return out

    turns = [Turn(text="ok") for _ in range(len(cases) * len(STEPS))]
    with side_by_side(turns, pi_cases, by_tau, api_key=API_KEY, options={"sessionId": SESSION_ID}) as run:
        # pi's later steps carry the first step's case header and their own "x-parity-step".
        pi: dict[str, RecordedRequest] = {}
        for request in run.pi_requests:
            name = request.headers["x-parity-case"].removesuffix(" step 0")
            pi[step_name(name, int(request.headers.get("x-parity-step", "0")))] = request
        yield Sent(run.tau, pi, {"tau": run.tau_result, "pi": run.pi_result["errors"]})


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("model", RADIUS, ids=lambda m: m.id)
def test_a_sessions_requests_after_prompt_and_tool_changes_are_pis(
    model: Model, option: str, sent: Sent
) -> None:
    assert not sent.errors["tau"] and not sent.errors["pi"], sent.errors
    for step in range(len(STEPS)):
        name = step_name(f"{model.id}/{option}", step)
        assert compared(sent.tau[name]) == compared(sent.pi[name]), name


def test_the_changes_travel_in_place(sent: Sent) -> None:
    """What the comparison above covers: the last request holds the head and both changes where
    they happened, and the options as given (none: no maxTokens, no cacheRetention)."""
    model = RADIUS[0]
    body = sent.tau[step_name(f"{model.id}/none", len(STEPS) - 1)].body
    roles = [m["role"] for m in body["context"]["messages"]]
    assert roles == ["system", "user", "assistant", "toolResult", "system", "assistant", "system", "user"]
    assert body["context"]["messages"][0] == HEAD
    assert [m for m in body["context"]["messages"] if m["role"] == "system"][1:] == [c for _, c in CHANGES]
    assert set(body["options"]) <= {"reasoning", "sessionId"}
    given = sent.tau[step_name(f"{model.id}/given", 0)].body["options"]
    assert (given["maxTokens"], given["cacheRetention"], given["toolChoice"]) == (2048, "long", "required")
    assert sent.tau[step_name(f"{model.id}/given", 0)].query == "debug=1"


def test_pi_cache_retention_long_asks_the_gateway_for_long_retention(monkeypatch: pytest.MonkeyPatch) -> None:
    model = RADIUS[0]
    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        tau_server.add(Turn(text="ok"))
        pi_server.add(Turn(text="ok"))
        pi16_requests(
            pi_server.base_url,
            api_key=API_KEY,
            context={"messages": pi_transcript(conversation(model)[:1])},
            options={"env": {"PI_CACHE_RETENTION": "long"}},
            cases=[{"case": "env", "provider": "radius", "id": model.id, "reasoning": None,
                    "baseUrl": pi_server.url("/pi/v1")}],
            models=[],
        )  # fmt: skip
        monkeypatch.setenv("PI_CACHE_RETENTION", "long")

        async def send() -> None:
            await stream_simple(
                routed(model, tau_server.url("/pi/v1")),
                tau_context(conversation(model)[:1]),
                api_key=API_KEY,
                headers={"x-parity-case": "env"},
            ).result()

        asyncio.run(send())
        assert tau_server.last_request.body["options"] == {"cacheRetention": "long"}
        assert compared(tau_server.last_request) == compared(pi_server.last_request)


# -- the answer, read back -------------------------------------------------------------------------

REFUSAL = {"error": {"message": "Model disabled by your organization", "code": "model_disabled"}}
ANSWERS = {
    "thinking, text and a tool call": Turn(
        thinking="Look first.",
        thinking_signature="sig-1",
        text="Reading.",
        tool_calls=[ScriptedToolCall("read", {"path": "a.py"}, id="call_7")],
        usage=ScriptedUsage(input=120, output=30, cache_read=40),
        response_id="resp_42",
        response_model="claude-opus-5-20260101",
    ),
    "length": Turn(text="cut", stop_reason="length"),
    "upstream failed": Turn(text="partial", stop_reason="error"),
    "upstream aborted": Turn(text="partial", stop_reason="aborted"),
    "refused": Turn(fault=Fault("status", status=403, body=REFUSAL)),
    "refused, no JSON": Turn(fault=Fault("status", status=502, body="bad gateway")),
    "no terminal event": Turn(text="never ends", fault=Fault("truncate", after_events=3)),
}


def answer_for(request: RecordedRequest) -> Turn:
    return ANSWERS[request.headers["x-parity-case"]]


def read_back(answer: dict[str, Any]) -> dict[str, Any]:
    keys = ("stopReason", "errorMessage", "content", "usage", "responseId", "responseModel")
    return {key: answer.get(key) for key in (*keys, "providerThinkingLevel")}


@pytest.fixture(scope="module")
def answers() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    model = next(m for m in RADIUS if m.id == "claude-opus-5")

    async def by_tau(server: FakeLLMServer) -> dict[str, Any]:
        read: dict[str, Any] = {}
        for name in ANSWERS:
            message = await stream_simple(
                routed(model, server.url("/pi/v1")),
                tau_context(conversation(model)[:1]),
                api_key=API_KEY,
                reasoning="high",
                headers={"x-parity-case": name},
            ).result()
            data = message.to_json()
            read[name] = read_back({**data, "errorMessage": data.get("errorMessage")})
        return read

    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {"case": name, "provider": "radius", "id": model.id, "reasoning": "high",
             "baseUrl": server.url("/pi/v1")}
            for name in ANSWERS
        ]  # fmt: skip

    with side_by_side(
        [answer_for for _ in ANSWERS],
        pi_cases,
        by_tau,
        api_key=API_KEY,
        context={"messages": pi_transcript(conversation(model)[:1])},
        with_results=True,
    ) as run:
        yield run.tau_result, {name: read_back(answer) for name, answer in run.pi_result["results"].items()}


@pytest.mark.parametrize("name", ANSWERS)
def test_the_answer_is_read_as_pi_reads_it(name: str, answers: tuple[dict[str, Any], dict[str, Any]]) -> None:
    tau, pi = answers
    assert tau[name] == pi[name]


def test_the_answers_show_each_outcome(answers: tuple[dict[str, Any], dict[str, Any]]) -> None:
    tau, _ = answers
    outcomes = {name: (read["stopReason"], read["errorMessage"]) for name, read in tau.items()}
    assert outcomes == {
        "thinking, text and a tool call": ("toolUse", None),
        "length": ("length", None),
        "upstream failed": ("error", "Upstream request failed"),
        "upstream aborted": ("aborted", "Upstream request aborted"),
        "refused": ("error", "403 Forbidden: Model disabled by your organization (model_disabled)"),
        "refused, no JSON": ("error", "502 Bad Gateway: bad gateway"),
        "no terminal event": ("error", "radius stream ended without a terminal event"),
    }
    first = tau["thinking, text and a tool call"]
    assert (first["responseId"], first["providerThinkingLevel"]) == ("resp_42", "high")
    assert first["usage"]["cacheRead"] == 40
