"""The bedrock-converse-stream provider against the fake server: request shape, auth, stream, errors."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from tau.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete,
    complete_simple,
)
from tau.ai.env_keys import AUTHENTICATED
from tau.ai.options import StreamOptions
from tau.ai.providers import bedrock
from tau.ai.stream_writer import ProviderError
from tau.ai.types import JsonSchemaSampling
from tau.runtime.retry import is_retryable_error
from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, ScriptedUsage, Turn
from tau.testing.fake_llm.bedrock import EXPIRED_SESSION_TOKEN, FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY

CLAUDE_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
PNG = "iVBORw0KGgo="


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS setting of the machine leaks in; keys for the fake are set, files point nowhere."""
    for name in list(os.environ):
        if name.startswith("AWS_") or name in ("PI_CACHE_RETENTION", "TAU_CACHE_RETENTION"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_ACCESS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_SECRET_ACCESS_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("HOME", str(tmp_path))


def _model(server: FakeLLMServer, model_id: str = CLAUDE_ID, **fields: Any) -> Model:
    return Model(
        id=model_id,
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        base_url=server.url(),
        reasoning=True,
        input=["text", "image"],
        max_tokens=8000,
        **fields,
    )


async def _ask(
    server: FakeLLMServer, model: Model, context: Context | None = None, **options: Any
) -> AssistantMessage:
    options.setdefault("api_key", AUTHENTICATED)
    return await complete(model, context or Context(messages=[UserMessage("hi")]), **options)


# --- request shape --------------------------------------------------------------------------------


async def test_a_claude_request_carries_system_tools_and_cache_points(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    context = Context(messages=[UserMessage("hi")], system_prompt="Be brief.", tools=[READ])
    reply = await _ask(server, _model(server), context, max_tokens=500, temperature=0.2)
    assert reply.stop_reason == "stop", reply.error_message
    body = server.last_request.body
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}
    ]
    assert body["inferenceConfig"] == {"maxTokens": 500, "temperature": 0.2}
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "read",
                    "description": "Read a file",
                    "inputSchema": {"json": READ.parameters},
                }
            }
        ]
    }
    assert server.last_request.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"


async def test_long_cache_retention_asks_for_an_hour_and_other_models_get_no_cache_points(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="ok"), Turn(text="ok"))
    await _ask(
        server,
        _model(server),
        Context(messages=[UserMessage("hi")], system_prompt="s"),
        cache_retention="long",
    )
    assert server.last_request.body["system"][1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    await _ask(
        server,
        _model(server, "amazon.nova-pro-v1:0"),
        Context(messages=[UserMessage("hi")], system_prompt="s"),
    )
    body = server.last_request.body
    assert body["system"] == [{"text": "s"}]
    assert "inferenceConfig" in body and "maxTokens" not in body["inferenceConfig"]


async def test_history_becomes_bedrock_turns_with_grouped_tool_results_and_images(
    server: FakeLLMServer,
) -> None:
    server.add(Turn(text="done"))
    assistant = AssistantMessage(
        content=[
            ThinkingContent("checking", thinking_signature="sig-9"),
            TextContent("Reading both."),
            ToolCall("toolu_01", "read", {"path": "a"}),
            ToolCall("toolu_02", "read", {"path": "b"}),
        ],
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        model=CLAUDE_ID,
        stop_reason="toolUse",
    )
    context = Context(
        messages=[
            UserMessage([TextContent("look"), ImageContent(PNG, "image/png")]),
            assistant,
            ToolResultMessage("toolu_01", "read", [TextContent("A")]),
            ToolResultMessage("toolu_02", "read", [TextContent("no such file")], is_error=True),
        ],
        tools=[READ],
    )
    await _ask(server, _model(server), context, cache_retention="none")
    messages = server.last_request.body["messages"]
    assert messages[0] == {
        "role": "user",
        "content": [{"text": "look"}, {"image": {"format": "png", "source": {"bytes": PNG}}}],
    }
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "checking", "signature": "sig-9"}}},
            {"text": "Reading both."},
            {"toolUse": {"toolUseId": "toolu_01", "name": "read", "input": {"path": "a"}}},
            {"toolUse": {"toolUseId": "toolu_02", "name": "read", "input": {"path": "b"}}},
        ],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "toolu_01", "content": [{"text": "A"}], "status": "success"}},
            {
                "toolResult": {
                    "toolUseId": "toolu_02",
                    "content": [{"text": "no such file"}],
                    "status": "error",
                }
            },
        ],
    }


async def test_reasoning_goes_to_non_claude_models_without_a_signature(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    model = _model(server, "openai.gpt-oss-120b-1:0")
    earlier = AssistantMessage(
        content=[ThinkingContent("plan", thinking_signature="sig"), TextContent("x")],
        api=model.api,
        provider=model.provider,
        model=model.id,
    )
    context = Context(messages=[UserMessage("a"), earlier, UserMessage("b")])
    await complete_simple(model, context, api_key=AUTHENTICATED, reasoning="xhigh")
    body = server.last_request.body
    assert body["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {"text": "plan"}}}
    assert body["additionalModelRequestFields"] == {"reasoning_effort": "high"}


async def test_adaptive_claude_thinking_sends_an_effort(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await complete_simple(
        _model(server, "us.anthropic.claude-opus-4-6-v1"),
        Context(messages=[UserMessage("hi")]),
        reasoning="medium",
    )
    assert server.last_request.body["additionalModelRequestFields"] == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "medium"},
    }


async def test_an_application_inference_profile_gets_adaptive_thinking_from_its_compat_flag(
    server: FakeLLMServer,
) -> None:
    # An ARN names no model: a models.json compat flag says what it is.
    server.add(Turn(text="ok"))
    profile = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"
    model = _model(server, profile, name="Claude team profile", compat={"forceAdaptiveThinking": True})
    await complete_simple(model, Context(messages=[UserMessage("hi")]), reasoning="high")
    fields = server.last_request.body["additionalModelRequestFields"]
    assert fields["thinking"]["type"] == "adaptive"
    assert fields["output_config"] == {"effort": "high"}


async def test_budget_claude_thinking_keeps_room_for_the_answer(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await complete_simple(
        _model(server), Context(messages=[UserMessage("hi")]), reasoning="low", max_tokens=1000
    )
    body = server.last_request.body
    assert body["inferenceConfig"]["maxTokens"] == 3048
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 2024, "display": "summarized"},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }


async def test_reasoning_off_sends_no_thinking_fields(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await complete_simple(_model(server), Context(messages=[UserMessage("hi")]))
    assert "additionalModelRequestFields" not in server.last_request.body


# --- the stream -----------------------------------------------------------------------------------


async def test_thinking_text_tool_calls_and_usage_come_back(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            thinking="Look first.",
            thinking_signature="sig-xyz",
            text="Reading.",
            tool_calls=[ScriptedToolCall("read", {"path": "a.py"}, id="tooluse_7")],
            usage=ScriptedUsage(input=20, output=9, cache_read=5, cache_write=3),
        )
    )
    reply = await _ask(
        server, _model(server, cost=replace(Model("m", "x", "x", "").cost, input=3)), tools=None
    )
    thinking, text, call = reply.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Look first."
    assert thinking.thinking_signature == "sig-xyz"
    assert isinstance(text, TextContent) and text.text == "Reading."
    assert isinstance(call, ToolCall) and (call.id, call.name, call.arguments) == (
        "tooluse_7",
        "read",
        {"path": "a.py"},
    )
    assert reply.stop_reason == "toolUse"
    usage = reply.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens) == (
        20,
        9,
        5,
        3,
        37,
    )
    assert usage.cost.input == pytest.approx(20 * 3 / 1_000_000)


async def test_encrypted_reasoning_is_kept_whole_and_replayed_verbatim(server: FakeLLMServer) -> None:
    secret = base64.b64encode(bytes(range(7, 40))).decode()
    server.add(Turn(thinking_signature=f"redacted:{secret}", text="answer"), Turn(text="next"))
    model = _model(server, "openai.gpt-5-1")
    reply = await _ask(server, model)
    thinking = reply.content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.redacted
    assert (thinking.thinking, thinking.thinking_signature) == ("[Reasoning redacted]", secret)
    await _ask(server, model, Context(messages=[UserMessage("hi"), reply, UserMessage("more")]))
    replayed = server.last_request.body["messages"][1]["content"]
    assert replayed == [{"reasoningContent": {"redactedContent": secret}}, {"text": "answer"}]


@pytest.mark.parametrize(
    ("bedrock_reason", "stop_reason", "error"),
    [
        ("max_tokens", "length", None),
        ("model_context_window_exceeded", "length", None),
        ("guardrail_intervened", "error", "Provider stopped with: guardrail_intervened"),
    ],
)
async def test_stop_reasons_map_to_taus(
    server: FakeLLMServer, bedrock_reason: str, stop_reason: str, error: str | None
) -> None:
    server.add(Turn(text="partial", stop_reason=bedrock_reason))
    reply = await _ask(server, _model(server))
    assert (reply.stop_reason, reply.error_message) == (stop_reason, error)
    assert reply.raw_stop_reason == bedrock_reason


# --- authentication -------------------------------------------------------------------------------


async def test_a_request_is_sigv4_signed_with_the_environment_keys(server: FakeLLMServer) -> None:
    server.add(Turn(text="signed"))
    reply = await _ask(server, _model(server), headers={"x-team": "blue", "Authorization": "not mine"})
    assert reply.text() == "signed", reply.error_message
    headers = server.last_request.headers
    assert headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={FAKE_ACCESS_KEY_ID}/")
    assert "/us-east-1/bedrock/aws4_request" in headers["authorization"]
    assert "x-team" in headers["authorization"]  # caller headers are signed too
    assert headers["x-team"] == "blue"


async def test_a_bearer_token_from_the_environment_replaces_the_signature(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-1")
    server.add(Turn(text="ok"))
    reply = await _ask(server, _model(server))
    assert reply.stop_reason == "stop", reply.error_message
    assert server.last_request.headers["authorization"] == "Bearer bedrock-api-key-1"


async def test_profile_credentials_from_the_shared_files_sign_the_request(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "aws-credentials").write_text(
        f"[files-profile]\naws_access_key_id = {FAKE_ACCESS_KEY_ID}\naws_secret_access_key = {FAKE_SECRET_ACCESS_KEY}\n"
    )
    (tmp_path / "aws-config").write_text("[profile files-profile]\nregion = eu-central-1\n")
    monkeypatch.setenv("AWS_PROFILE", "files-profile")
    server.add(Turn(text="from a profile"))
    reply = await _ask(server, _model(server))
    assert reply.text() == "from a profile", reply.error_message
    assert "/eu-central-1/bedrock/aws4_request" in server.last_request.headers["authorization"]


async def test_container_role_credentials_sign_the_request_with_their_session_token(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An ECS/EKS-style credentials endpoint (botocore accepts a loopback address for it).
    role = {
        "AccessKeyId": FAKE_ACCESS_KEY_ID,
        "SecretAccessKey": FAKE_SECRET_ACCESS_KEY,
        "Token": "role-session-token",
        "Expiration": "2099-01-01T00:00:00Z",
    }
    asked: list[str] = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            payload = json.dumps(role).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    try:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        monkeypatch.setenv(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://127.0.0.1:{endpoint.server_port}/creds"
        )
        server.add(Turn(text="from the role"))
        reply = await _ask(server, _model(server))
    finally:
        endpoint.shutdown()
        endpoint.server_close()
    assert reply.text() == "from the role", reply.error_message
    assert asked == ["/creds"]
    headers = server.last_request.headers
    assert headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={FAKE_ACCESS_KEY_ID}/")
    assert headers["x-amz-security-token"] == "role-session-token"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        (
            "AWS_SESSION_TOKEN",
            EXPIRED_SESSION_TOKEN,
            "403 Expired AWS credentials: The security token included in the request is expired. Refresh them",
        ),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wrong",
            "403 Invalid AWS signature: The request signature we calculated does not match",
        ),
        (
            "AWS_ACCESS_KEY_ID",
            "AKIAUNKNOWN",
            "403 Invalid AWS credentials: The security token included in the request is invalid.",
        ),
    ],
)
async def test_refused_credentials_are_one_readable_line_and_not_retried(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(variable, value)
    reply = await _ask(server, _model(server), max_retries=2)
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(expected)
    assert "\n" not in (reply.error_message or "")
    assert not is_retryable_error(reply)


async def test_an_sso_profile_without_a_login_says_to_run_aws_sso_login(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "aws-config").write_text(
        "[profile sso-dev]\nsso_start_url = https://example.awsapps.com/start\nsso_region = us-east-1\n"
        "sso_account_id = 123456789012\nsso_role_name = Dev\nregion = us-west-2\n"
    )
    monkeypatch.setenv("AWS_PROFILE", "sso-dev")
    reply = await _ask(server, _model(server))
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(
        "AWS SSO credentials for Amazon Bedrock are missing or expired: run aws sso login --profile sso-dev"
    )


async def test_no_credentials_anywhere_names_what_to_set(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "aws-config").write_text("[profile empty]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_PROFILE", "empty")
    reply = await _ask(server, _model(server))
    assert (reply.error_message or "").startswith("No AWS credentials for Amazon Bedrock: set AWS_PROFILE")


# --- region and endpoint --------------------------------------------------------------------------


def _target(model_id: str, base_url: str, **extra: Any) -> bedrock.Target:
    model = Model(id=model_id, api="bedrock-converse-stream", provider="amazon-bedrock", base_url=base_url)
    return bedrock.resolve_target(model, StreamOptions(extra=extra), os.environ, bedrock._botocore())


def test_a_standard_endpoint_follows_the_configured_region(monkeypatch: pytest.MonkeyPatch) -> None:
    standard = "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert _target("m", standard) == bedrock.Target("us-east-1", standard, None, standard=True)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    assert _target("m", standard).endpoint == "https://bedrock-runtime.eu-west-3.amazonaws.com"
    assert (
        _target("m", standard, region="cn-north-1").endpoint
        == "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    )


def test_an_inference_profile_arn_names_the_region_and_a_custom_endpoint_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    arn = "arn:aws:bedrock:ap-south-1:123456789012:application-inference-profile/abc"
    assert _target(arn, "https://bedrock-runtime.us-east-1.amazonaws.com").region == "ap-south-1"
    assert (
        _target("m", "https://vpce-1.bedrock.example.internal/").endpoint
        == "https://vpce-1.bedrock.example.internal"
    )


def test_a_profile_without_a_region_is_one_line_saying_what_to_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "aws-config").write_text("[profile no-region]\n")
    monkeypatch.setenv("AWS_PROFILE", "no-region")
    with pytest.raises(
        ProviderError,
        match=r"^No AWS region for Amazon Bedrock: set AWS_REGION, or a region for profile 'no-region'",
    ):
        _target("m", "https://bedrock-runtime.us-east-1.amazonaws.com")


async def test_a_malformed_region_fails_before_any_request(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "Frankfurt")
    count = len(server.requests)
    reply = await _ask(server, _model(server))
    assert (
        reply.error_message
        == "Invalid AWS region 'Frankfurt' for Amazon Bedrock: set AWS_REGION to e.g. us-east-1"
    )
    assert len(server.requests) == count


async def test_a_region_without_an_endpoint_is_named_when_its_host_does_not_resolve(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-99")  # no such region, so no such host
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    model = replace(_model(server), base_url="https://bedrock-runtime.us-east-1.amazonaws.com")
    reply = await _ask(server, model, max_retries=0)
    message = reply.error_message or ""
    assert message.startswith(
        "Connection error calling https://bedrock-runtime.us-east-99.amazonaws.com/model/"
    )
    assert message.endswith(
        "(no Amazon Bedrock endpoint found for AWS region 'us-east-99': check AWS_REGION, or the network)"
    )


# --- transient errors -----------------------------------------------------------------------------


async def test_http_throttling_is_retried_and_then_succeeds(server: FakeLLMServer) -> None:
    server.add(
        Turn(fault=Fault("status", status=429, headers={"retry-after": "0"})), Turn(text="after the wait")
    )
    reply = await _ask(server, _model(server), max_retries=1)
    assert reply.text() == "after the wait", reply.error_message


async def test_http_throttling_without_retries_left_is_a_transient_error(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            fault=Fault(
                "status", status=429, body={"message": "Too many requests, please wait before trying again."}
            )
        )
    )
    reply = await _ask(server, _model(server))
    assert reply.error_message == "429 Throttling error: Too many requests, please wait before trying again."
    assert is_retryable_error(reply)


async def test_a_throttling_exception_mid_stream_is_a_transient_error(server: FakeLLMServer) -> None:
    server.add(Turn(text="partial answer", stop_reason="throttlingException"))
    reply = await _ask(server, _model(server))
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(
        "Throttling error: fake throttlingException: Too many tokens"
    )
    assert is_retryable_error(reply)


async def test_a_corrupt_frame_is_an_error_naming_the_event_stream(server: FakeLLMServer) -> None:
    server.add(Turn(text="x" * 40, fault=Fault("malformed", after_events=2)))
    reply = await _ask(server, _model(server))
    assert (reply.error_message or "").startswith("Malformed Bedrock event stream:")


# --- strict tools (compat.supportsStrictMode) ---------------------------------------------------------

FIND = Tool(
    "find",
    "Find files",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["pattern"],
    },
    constrained_sampling=JsonSchemaSampling(),
)


def _tool_specs(request: Any) -> dict[str, Any]:
    return {tool["toolSpec"]["name"]: tool["toolSpec"] for tool in request.body["toolConfig"]["tools"]}


async def test_a_constrained_tool_goes_strict_only_where_the_compat_says_so() -> None:
    with FakeLLMServer() as fake:
        fake.add(Turn(text="ok"), Turn(text="ok"))
        context = Context(messages=[UserMessage("go")], tools=[READ, FIND])
        for compat in ({"supportsStrictMode": True}, None):
            reply = await _ask(fake, _model(fake, compat=compat), context)
            assert reply.stop_reason == "stop", reply.error_message
        strict, plain = (_tool_specs(request) for request in fake.requests)
    assert strict["find"]["strict"] is True
    assert strict["find"]["inputSchema"]["json"] == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["pattern", "limit"],
        "additionalProperties": False,
    }
    assert "strict" not in strict["read"] and "strict" not in plain["find"]
    assert plain["find"]["inputSchema"]["json"] == FIND.parameters


async def test_strict_tools_over_claudes_limits_go_again_non_strict_for_the_session() -> None:
    refusal = {"message": "Too many strict tools (25). The maximum number of strict tools is 20."}
    with FakeLLMServer() as fake:
        fake.add(Turn(fault=Fault("status", status=400, body=refusal)), Turn(text="ok"), Turn(text="ok"))
        model = _model(fake, compat={"supportsStrictMode": True})
        context = Context(messages=[UserMessage("go")], tools=[FIND])
        first = await _ask(fake, model, context, session_id="bedrock-strict-limits")
        assert first.stop_reason == "stop", first.error_message
        assert [d["type"] for d in first.diagnostics or []] == ["bedrock_strict_tools_fallback"]
        later = await _ask(fake, model, context, session_id="bedrock-strict-limits")
        assert later.stop_reason == "stop" and not later.diagnostics
        refused, resent, next_turn = (_tool_specs(request)["find"] for request in fake.requests)
    assert refused["strict"] is True
    assert "strict" not in resent and "strict" not in next_turn


async def test_another_validation_error_is_not_resent_without_strict() -> None:
    with FakeLLMServer() as fake:
        fake.add(Turn(fault=Fault("status", status=400, body={"message": "Malformed input request"})))
        model = _model(fake, compat={"supportsStrictMode": True})
        context = Context(messages=[UserMessage("go")], tools=[FIND])
        reply = await _ask(fake, model, context, session_id="bedrock-other-400")
        assert reply.error_message == "400 Validation error: Malformed input request"
        assert len(fake.requests) == 1
