"""The openai-codex-responses provider: the ChatGPT backend's URL, headers, body and errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from codex_token import codex_access_token

from tau.ai import Context, Model, ModelCost, Tool, UserMessage, complete, stream_simple
from tau.ai.providers.openai_codex_responses import resolve_codex_url
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedUsage, Turn

READ_TOOL = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
TOKEN = codex_access_token("acct-42")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def codex_model(server: FakeLLMServer, **changes: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "gpt-5.1-codex",
        "api": "openai-codex-responses",
        "provider": "openai-codex",
        "base_url": server.url("/backend-api"),
        "reasoning": True,
    }
    fields.update(changes)
    return Model(**fields)


async def test_the_request_carries_the_account_originator_and_session_headers(server: FakeLLMServer) -> None:
    server.add(Turn(text="Hi from Codex."))
    reply = await complete(
        codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN, session_id="session-1"
    )
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "Hi from Codex."
    request = server.last_request
    assert request.path == "/backend-api/codex/responses"
    headers = request.headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["chatgpt-account-id"] == "acct-42"
    assert headers["originator"] == "pi"
    assert headers["openai-beta"] == "responses=experimental"
    assert headers["accept"] == "text/event-stream"
    assert (headers["session-id"], headers["x-client-request-id"]) == ("session-1", "session-1")


async def test_the_body_is_unstored_with_encrypted_reasoning_and_the_prompt_first(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    context = Context(system_prompt="You are terse.", messages=[UserMessage("hi")], tools=[READ_TOOL])
    await complete(codex_model(server), context, api_key=TOKEN, session_id="s" * 80, max_tokens=8)
    body = server.last_request.body
    assert body["store"] is False and body["stream"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["input"][0] == {"role": "developer", "content": "You are terse."}
    assert "instructions" not in body
    assert body["tools"][0]["strict"] is None
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("auto", True)
    assert body["text"] == {"verbosity": "low"}
    assert body["prompt_cache_key"] == "s" * 64
    assert body["max_output_tokens"] == 16
    assert body["reasoning"] == {"effort": "none"}


async def test_a_reasoning_level_asks_for_that_effort_with_a_summary(server: FakeLLMServer) -> None:
    server.add(Turn(thinking="Plan.", text="Done."))
    events = stream_simple(
        codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN, reasoning="high"
    )
    reply = await events.result()
    assert reply.stop_reason == "stop", reply.error_message
    assert server.last_request.body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert reply.content[0].type == "thinking"


async def test_without_a_session_no_cache_key_or_session_headers_are_sent(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await complete(codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN)
    assert "prompt_cache_key" not in server.last_request.body
    assert "session-id" not in server.last_request.headers


async def test_a_token_without_an_account_id_says_to_log_in_again(server: FakeLLMServer) -> None:
    pending = server.pending
    reply = await complete(codex_model(server), Context(messages=[UserMessage("hi")]), api_key="sk-not-a-jwt")
    assert reply.stop_reason == "error"
    assert "tau auth login openai-codex" in (reply.error_message or "")
    assert server.pending == pending


async def test_a_spent_quota_is_a_friendly_line_and_is_not_retried(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=429)), Turn(text="never reached"))
    before = len(server.requests)
    reply = await complete(
        codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN, max_retries=3
    )
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(
        "You have hit your ChatGPT usage limit (plus plan). Try again in ~"
    )
    assert len(server.requests) - before == 1
    assert server.pending == 1  # the second turn was never asked for
    await complete(codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN)


async def test_a_transient_429_is_retried(server: FakeLLMServer) -> None:
    busy = {"error": {"type": "rate_limit_exceeded", "message": "Slow down"}}
    server.add(
        Turn(fault=Fault("status", status=429, body=busy, headers={"retry-after": "0"})), Turn(text="ok now")
    )
    reply = await complete(
        codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN, max_retries=1
    )
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "ok now"


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("", "https://chatgpt.com/backend-api/codex/responses"),
        ("https://chatgpt.com/backend-api/", "https://chatgpt.com/backend-api/codex/responses"),
        ("https://proxy.test/codex", "https://proxy.test/codex/responses"),
        ("https://proxy.test/codex/responses", "https://proxy.test/codex/responses"),
    ],
)
def test_the_codex_url_is_found_under_any_base(base_url: str, expected: str) -> None:
    assert resolve_codex_url(base_url) == expected


async def test_a_requested_priority_tier_is_priced_though_the_backend_says_default(
    server: FakeLLMServer,
) -> None:
    model = codex_model(server, cost=ModelCost(input=1, output=10))
    costs = []
    for tier in (None, "priority"):
        server.add(Turn(text="ok", usage=ScriptedUsage(input=1000, output=100)))
        reply = await complete(model, Context(messages=[UserMessage("hi")]), api_key=TOKEN, service_tier=tier)
        assert reply.stop_reason == "stop", reply.error_message
        costs.append(reply.usage.cost.total)
    assert server.last_request.body["service_tier"] == "priority"
    assert costs[1] == pytest.approx(costs[0] * 2)


async def test_a_refused_token_says_to_log_in_again(server: FakeLLMServer) -> None:
    expired = {"detail": "Could not parse your authentication token. Please try signing in again."}
    server.add(Turn(fault=Fault("status", status=401, body=expired)))
    reply = await complete(codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN)
    assert reply.error_message == (
        "401 Could not parse your authentication token. Please try signing in again. "
        "(log in again: tau auth login openai-codex)"
    )


async def test_reasoning_the_backend_removed_is_kept_as_pi_16s_diagnostic(server: FakeLLMServer) -> None:
    removed = [{"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "prefix_mismatch"}]
    server.add(Turn(text="ok", input_transformations=removed))
    reply = await complete(codex_model(server), Context(messages=[UserMessage("hi")]), api_key=TOKEN)
    assert reply.stop_reason == "stop", reply.error_message
    assert [(d["type"], d["details"]) for d in reply.diagnostics or []] == [
        ("openai_input_transformations", {"transformations": removed})
    ]
