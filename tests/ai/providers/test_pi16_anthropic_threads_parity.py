"""Anthropic message threads: a session's requests as pi 1.6 sends them (issue #32).

One session of three requests, through tau and through pi 1.6's own pi-ai, each against its own fake
server: the first creates a thread, the second continues it (only the new messages, no system and
tools), the third changes the tools and so starts a new thread with the whole conversation. The
bodies and the ``anthropic-beta`` header must be equal request by request.
"""

from __future__ import annotations

from typing import Any

from pi16 import routed, side_by_side

from tau.ai import stream_simple
from tau.ai.catalogue import get_model
from tau.ai.types import AssistantMessage, Context, Model, TextContent, Tool, Usage, UserMessage
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, Turn

API_KEY = "sk-parity-threads"
SESSION_ID = "parity-threads-session"
SYSTEM_PROMPT = "You are a careful assistant."
READ = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
LS = {
    "name": "ls",
    "description": "List a folder",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": []},
}
COMPAT = {"supportsMessageThreads": True}
REPLIES = [("one", "msg_thread_1"), ("two", "msg_thread_2"), ("three", "msg_thread_3")]
# Each step: the user's messages so far and the tools of that request.
STEPS: list[tuple[list[str], list[dict[str, Any]]]] = [
    (["go"], [READ]),
    (["go", "next"], [READ]),
    (["go", "next", "and a tool more"], [READ, LS]),
]


def claude() -> Model:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert model is not None
    return model


def tau_context(step: int, model: Model) -> Context:
    users, tools = STEPS[step]
    messages: list[Any] = []
    for index, text in enumerate(users):
        messages.append(UserMessage(text, timestamp=2 * index + 1))
        if index < len(users) - 1:
            messages.append(
                AssistantMessage(
                    [TextContent(REPLIES[index][0])],
                    api=model.api,
                    provider=model.provider,
                    model=model.id,
                    stop_reason="stop",
                    timestamp=2 * index + 2,
                )
            )
    return Context(messages=messages, system_prompt=SYSTEM_PROMPT, tools=[Tool.from_json(t) for t in tools])


def pi_context(step: int, model: Model) -> dict[str, Any]:
    users, tools = STEPS[step]
    usage = Usage().to_json()
    messages: list[Any] = []
    for index, text in enumerate(users):
        messages.append({"role": "user", "content": text, "timestamp": 2 * index + 1})
        if index < len(users) - 1:
            messages.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": REPLIES[index][0]}],
                    "api": model.api,
                    "provider": model.provider,
                    "model": model.id,
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": 2 * index + 2,
                }
            )
    return {"systemPrompt": SYSTEM_PROMPT, "messages": messages, "tools": tools}


async def tau_session(server: FakeLLMServer) -> None:
    model = routed(claude(), server.base_url, COMPAT)
    for step in range(len(STEPS)):
        result = await stream_simple(
            model, tau_context(step, claude()), api_key=API_KEY, session_id=SESSION_ID
        ).result()
        assert result.stop_reason == "stop", result.error_message


def test_a_threaded_session_sends_what_pi_sends() -> None:
    model = claude()

    def pi_cases(server: FakeLLMServer) -> list[dict[str, Any]]:
        return [
            {
                "case": "threads",
                "provider": model.provider,
                "id": model.id,
                "baseUrl": server.base_url,
                "compat": COMPAT,
                "context": pi_context(0, model),
                "then": [pi_context(step, model) for step in range(1, len(STEPS))],
            }
        ]

    turns = [Turn(text=text, response_id=reply_id) for text, reply_id in REPLIES]
    with side_by_side(
        turns, pi_cases, tau_session, api_key=API_KEY, options={"sessionId": SESSION_ID}
    ) as run:
        assert not run.pi_result["errors"], run.pi_result["errors"]
        tau, pi = run.tau_requests, run.pi_requests
    assert len(tau) == len(pi) == 3
    for ours, theirs in zip(tau, pi, strict=True):
        assert ours.body == theirs.body
        assert _betas(ours) == _betas(theirs)
    # What the session shows: create, continue with the new messages only, a new thread on a change.
    assert [r.body["thread"]["type"] for r in tau] == ["create", "continue", "create"]
    assert tau[1].body["thread"]["previous_message_id"] == "msg_thread_1"
    assert "system" not in tau[1].body and "tools" not in tau[1].body


def _betas(request: RecordedRequest) -> str | None:
    return request.headers.get("anthropic-beta")
