"""The google-gemini-cli provider (Cloud Code Assist: Gemini CLI and Antigravity) against the fake."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from msgspec.structs import replace

from tau.ai import (
    AssistantMessage,
    Context,
    Model,
    Tool,
    UserMessage,
    complete,
    complete_simple,
    get_model,
)
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn
from tau.testing.fake_llm.google_auth import service_disabled_body

CREDENTIAL = json.dumps({"token": "ya29.login-token", "projectId": "proj-77"})
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _model(
    server: FakeLLMServer, provider: str = "google-gemini-cli", model_id: str = "gemini-2.5-pro"
) -> Model:
    return replace(get_model(provider, model_id), base_url=server.url(""))


async def _ask(model: Model, api_key: str | None = CREDENTIAL, **options: Any) -> AssistantMessage:
    context = Context(messages=[UserMessage("hi")], system_prompt="Be brief.", tools=[READ])
    return await complete(model, context, api_key=api_key, **options)


def test_the_catalogue_has_both_logins_models_on_this_api() -> None:
    assert get_model("google-gemini-cli", "gemini-2.5-pro").base_url == "https://cloudcode-pa.googleapis.com"
    antigravity = get_model("google-antigravity", "claude-sonnet-4-5")
    assert (antigravity.api, antigravity.base_url) == (
        "google-gemini-cli",
        "https://daily-cloudcode-pa.sandbox.googleapis.com",
    )


async def test_the_gemini_body_travels_in_the_envelope_and_the_reply_is_unwrapped(
    server: FakeLLMServer,
) -> None:
    server.add(
        Turn(text="Hello from Code Assist.", usage=ScriptedUsage(input=10, output=5), response_id="r-1")
    )
    reply = await _ask(_model(server), session_id="sess-1")
    assert reply.text() == "Hello from Code Assist.", reply.error_message
    assert (reply.usage.input, reply.usage.output, reply.response_id) == (10, 5, "r-1")
    request = server.last_request
    assert (request.api, request.path, request.query) == (
        "google-gemini-cli",
        "/v1internal:streamGenerateContent",
        "alt=sse",
    )
    body = request.body
    assert (body["project"], body["model"], body["userAgent"]) == ("proj-77", "gemini-2.5-pro", "tau")
    assert re.fullmatch(r"tau-\d+-[0-9a-f]{10}", body["requestId"])
    assert "requestType" not in body
    inner = body["request"]
    assert inner["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert inner["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert inner["sessionId"] == "sess-1"
    assert "parametersJsonSchema" in inner["tools"][0]["functionDeclarations"][0]
    headers = request.headers
    assert headers["authorization"] == "Bearer ya29.login-token"
    assert headers["user-agent"] == "google-cloud-sdk vscode_cloudshelleditor/0.1"
    assert json.loads(headers["client-metadata"])["pluginType"] == "GEMINI"


async def test_a_tool_call_comes_back_from_the_envelope(server: FakeLLMServer) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "a.py"}, id="c1")]))
    reply = await _ask(_model(server))
    assert reply.stop_reason == "toolUse", reply.error_message
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls()] == [("c1", "read", {"path": "a.py"})]


async def test_antigravity_sends_its_identity_headers_and_claude_gets_legacy_schemas(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"))
    reply = await _ask(_model(server, "google-antigravity", "claude-sonnet-4-5-thinking"))
    assert reply.stop_reason == "stop", reply.error_message
    request = server.last_request
    body = request.body
    assert (body["requestType"], body["userAgent"]) == ("agent", "antigravity")
    assert body["requestId"].startswith("agent-")
    parts = body["request"]["systemInstruction"]["parts"]
    assert parts[0]["text"].startswith("You are Antigravity") and parts[1] == {"text": "Be brief."}
    assert "parameters" in body["request"]["tools"][0]["functionDeclarations"][0]
    assert request.headers["user-agent"] == "antigravity/1.21.9 darwin/arm64"
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_a_bare_access_token_takes_the_project_from_the_environment(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-project")
    server.add(Turn(text="ok"))
    reply = await _ask(_model(server), "ya29.by-hand")
    assert reply.stop_reason == "stop", reply.error_message
    assert server.last_request.body["project"] == "env-project"
    assert server.last_request.headers["authorization"] == "Bearer ya29.by-hand"


@pytest.mark.parametrize(
    ("api_key", "expected"),
    [
        (
            None,
            "Cloud Code Assist needs a Google login; log in again with `tau auth login google-gemini-cli`",
        ),
        ("ya29.bare", "Cloud Code Assist needs a project id: the credential is a bare access token"),
        ('{"token": "t"}', 'The Cloud Code Assist credential must be JSON with "token" and "projectId"'),
    ],
)
async def test_an_unusable_credential_is_one_line_saying_what_to_do(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, api_key: str | None, expected: str
) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    reply = await _ask(_model(server), api_key)
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(expected)
    assert server.requests == []


async def test_an_expired_login_says_to_log_in_again(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401)))
    reply = await _ask(_model(server, "google-antigravity", "gemini-3-flash"))
    assert reply.error_message == (
        "Cloud Code Assist rejected the credentials (401 fake server error 401): the token expired or was "
        "revoked; log in again with `tau auth login google-antigravity` (or /login)"
    )


async def test_a_project_without_the_api_enabled_says_how_to_enable_it(server: FakeLLMServer) -> None:
    body = service_disabled_body("proj-77", service="cloudaicompanion.googleapis.com")
    server.add(Turn(fault=Fault("status", status=403, body=body)))
    reply = await _ask(_model(server))
    assert (reply.error_message or "").startswith(
        "Cloud Code Assist: the cloudaicompanion.googleapis.com API is not enabled for project proj-77; "
        "enable it with `gcloud services enable cloudaicompanion.googleapis.com --project proj-77`"
    )


async def test_a_quota_error_keeps_googles_message(server: FakeLLMServer) -> None:
    body = {
        "error": {"code": 429, "message": "You have exhausted your capacity.", "status": "RESOURCE_EXHAUSTED"}
    }
    server.add(Turn(fault=Fault("status", status=429, body=body)))
    reply = await _ask(_model(server))
    assert reply.error_message == "429 You have exhausted your capacity."


@pytest.mark.parametrize(
    ("model_id", "reasoning", "thinking", "max_output"),
    [
        ("gemini-2.5-pro", "medium", {"includeThoughts": True, "thinkingBudget": 8192}, 9192),
        ("gemini-2.5-flash", None, {"thinkingBudget": 0}, 1000),
        ("gemini-3-pro-preview", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}, 1000),
        ("gemini-3-flash-preview", "medium", {"includeThoughts": True, "thinkingLevel": "MEDIUM"}, 1000),
    ],
)
async def test_reasoning_levels_become_budgets_added_to_the_output_limit_or_levels(
    server: FakeLLMServer, model_id: str, reasoning: str | None, thinking: dict[str, Any], max_output: int
) -> None:
    server.add(Turn(text="ok"))
    reply = await complete_simple(
        _model(server, model_id=model_id),
        Context(messages=[UserMessage("hi")]),
        api_key=CREDENTIAL,
        reasoning=reasoning,
        max_tokens=1000,
    )
    assert reply.stop_reason == "stop", reply.error_message
    config = server.last_request.body["request"]["generationConfig"]
    assert config == {"maxOutputTokens": max_output, "thinkingConfig": thinking}
