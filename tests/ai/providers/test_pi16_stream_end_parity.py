"""How a Chat Completions stream that ends without ``finish_reason`` is read, as pi 1.6 reads it
(issue #32): an error unless the model's compat says ``supportsFinishReason: false``, and then a
normal stop (tool use when the answer holds tool calls).

The same scripted answers go to tau (``tau.ai.stream_simple``) and to pi 1.6's own pi-ai
(``tests/helpers/pi16_requests.mjs``) from the fake server; the messages both make of them must
agree on stop reason, error message and content.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_model
from tau.ai.types import Context, Model, UserMessage
from tau.testing.fake_llm import FakeLLMServer, Fault, RecordedRequest, ScriptedToolCall, Turn

API_KEY = "sk-parity-test"
PROVIDER, MODEL_ID = "groq", "openai/gpt-oss-120b"


class Case(NamedTuple):
    name: str
    turn: Turn
    supports_finish_reason: bool | None  # None: the catalogue's (detected) setting


READ = ScriptedToolCall("read", {"path": "a"}, id="call_1")
NO_FINISH = Turn(text="no finish reason", stop_reason="")
NO_FINISH_TOOL = Turn(tool_calls=[READ], stop_reason="")
# The body ends cleanly before the finish chunk and [DONE]: a role delta and two text deltas.
TRUNCATED = Turn(text="cut off here", chunk_size=6, fault=Fault("truncate", after_events=3))
LENGTH = Turn(text="too long", stop_reason="length")

CASES = [
    Case(f"{name} / {flag}", turn, flag)
    for name, turn in (
        ("no finish_reason, [DONE]", NO_FINISH),
        ("no finish_reason, tool call", NO_FINISH_TOOL),
        ("truncated body", TRUNCATED),
        ("length", LENGTH),
    )
    for flag in (None, True, False)
]


def routed_model(server: FakeLLMServer, case: Case) -> Model:
    model = get_model(PROVIDER, MODEL_ID)
    assert model is not None
    flag = case.supports_finish_reason
    return routed(model, server.url(), None if flag is None else {"supportsFinishReason": flag})


def turn_for(request: RecordedRequest) -> Turn:
    return next(case.turn for case in CASES if case.name == request.headers["x-parity-case"])


def read_back(stop_reason: str, error_message: str | None, content: list[dict[str, Any]]) -> dict[str, Any]:
    """What both sides must agree on: the stop, the error and each block's kind and text."""
    blocks = [
        (block["type"], block.get("text") or block.get("name") or block.get("thinking") or "")
        for block in content
    ]
    return {"stopReason": stop_reason, "errorMessage": error_message, "content": blocks}


async def answers_read_by_tau(server: FakeLLMServer) -> dict[str, dict[str, Any]]:
    async def one(case: Case) -> tuple[str, dict[str, Any]]:
        message = await stream_simple(
            routed_model(server, case),
            Context(messages=[UserMessage("go", timestamp=1)]),
            api_key=API_KEY,
            headers={"x-parity-case": case.name},
        ).result()
        content = [block.to_json() for block in message.content]
        return case.name, read_back(message.stop_reason, message.error_message, content)

    return dict(await asyncio.gather(*(one(case) for case in CASES)))


class Read(NamedTuple):
    tau: dict[str, dict[str, Any]]
    pi: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def read() -> Iterator[Read]:
    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": case.name,
                "provider": PROVIDER,
                "id": MODEL_ID,
                "reasoning": None,
                "baseUrl": server.url(),
                "compat": {}
                if case.supports_finish_reason is None
                else {"supportsFinishReason": case.supports_finish_reason},
            }
            for case in CASES
        ]

    with side_by_side(
        [turn_for for _ in CASES],
        pi_cases,
        answers_read_by_tau,
        api_key=API_KEY,
        context={"messages": [{"role": "user", "content": "go", "timestamp": 1}]},
        with_results=True,
    ) as run:
        pi = {
            name: read_back(answer["stopReason"], answer["errorMessage"], answer["content"])
            for name, answer in run.pi_result["results"].items()
        }
        yield Read(run.tau_result, pi)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_stream_end_is_read_as_pi_reads_it(case: Case, read: Read) -> None:
    assert read.tau[case.name] == read.pi[case.name]


def test_the_cases_show_each_outcome(read: Read) -> None:
    """The flag decides: the same answers are errors with it and normal stops without it."""
    outcomes = {(name, answer["stopReason"]) for name, answer in read.tau.items()}
    assert ("no finish_reason, [DONE] / True", "error") in outcomes
    assert ("no finish_reason, [DONE] / None", "error") in outcomes
    assert ("no finish_reason, [DONE] / False", "stop") in outcomes
    assert ("no finish_reason, tool call / False", "toolUse") in outcomes
    assert ("truncated body / False", "stop") in outcomes
    assert ("length / False", "length") in outcomes
