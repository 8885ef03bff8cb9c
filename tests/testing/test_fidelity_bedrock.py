"""The official ``boto3`` client must accept the fake server's ConverseStream frames and signature checks."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn
from tau.testing.fake_llm.bedrock import EXPIRED_SESSION_TOKEN, FAKE_ACCESS_KEY_ID, FAKE_SECRET_ACCESS_KEY

MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
HI = [{"role": "user", "content": [{"text": "hi"}]}]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _client(server: FakeLLMServer, secret: str = FAKE_SECRET_ACCESS_KEY, token: str | None = None) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=server.url(),
        region_name="eu-west-1",
        aws_access_key_id=FAKE_ACCESS_KEY_ID,
        aws_secret_access_key=secret,
        aws_session_token=token,
        config=Config(retries={"max_attempts": 1}),
    )


def test_boto3_parses_a_turn_with_reasoning_text_and_a_tool_call(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            thinking="Look first.",
            thinking_signature="sig-1",
            text="Reading.",
            tool_calls=[ScriptedToolCall("read", {"path": "a.py"}, id="tooluse_1")],
            usage=ScriptedUsage(input=12, output=7, cache_read=3),
        )
    )
    events = list(_client(server).converse_stream(modelId=MODEL_ID, messages=HI)["stream"])
    kinds = [next(iter(event)) for event in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    deltas = [e["contentBlockDelta"] for e in events if "contentBlockDelta" in e]
    reasoning = [d["delta"]["reasoningContent"] for d in deltas if d["contentBlockIndex"] == 0]
    assert "".join(r.get("text", "") for r in reasoning) == "Look first."
    assert reasoning[-1] == {"signature": "sig-1"}
    assert "".join(d["delta"]["text"] for d in deltas if d["contentBlockIndex"] == 1) == "Reading."
    start = next(e["contentBlockStart"] for e in events if "contentBlockStart" in e)
    assert start == {"start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}, "contentBlockIndex": 2}
    arguments = "".join(d["delta"]["toolUse"]["input"] for d in deltas if d["contentBlockIndex"] == 2)
    assert arguments == '{"path": "a.py"}'
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"
    usage = events[-1]["metadata"]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"], usage["cacheReadInputTokens"]) == (12, 7, 3)


def test_boto3_decodes_encrypted_reasoning_pieces_as_bytes(server: FakeLLMServer) -> None:
    secret = bytes(range(50))
    server.add(Turn(thinking_signature="redacted:" + base64.b64encode(secret).decode(), text="x"))
    events = list(_client(server).converse_stream(modelId=MODEL_ID, messages=HI)["stream"])
    pieces = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"]
        for e in events
        if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert len(pieces) == 2 and b"".join(pieces) == secret


def test_boto3_signature_is_accepted_and_the_request_recorded_as_sent(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    list(
        _client(server).converse_stream(modelId=MODEL_ID, messages=HI, system=[{"text": "be brief"}])[
            "stream"
        ]
    )
    request = server.last_request
    assert request.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert request.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={FAKE_ACCESS_KEY_ID}/")
    assert "/eu-west-1/bedrock/aws4_request" in request.headers["authorization"]
    assert request.body == {"messages": HI, "system": [{"text": "be brief"}]}


def test_a_wrong_secret_key_is_refused_in_bedrocks_error_shape(server: FakeLLMServer) -> None:
    pending = server.pending
    with pytest.raises(ClientError) as caught:
        _client(server, secret="not-the-secret").converse_stream(modelId=MODEL_ID, messages=HI)
    error = caught.value.response
    assert error["Error"]["Code"] == "InvalidSignatureException"
    assert "signature we calculated does not match" in error["Error"]["Message"]
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert server.pending == pending  # a refused request uses no scripted turn


def test_an_expired_session_token_is_refused_as_expired(server: FakeLLMServer) -> None:
    with pytest.raises(ClientError) as caught:
        _client(server, token=EXPIRED_SESSION_TOKEN).converse_stream(modelId=MODEL_ID, messages=HI)
    assert caught.value.response["Error"]["Code"] == "ExpiredTokenException"


def test_a_mid_stream_throttling_exception_reaches_boto3_as_that_exception(server: FakeLLMServer) -> None:
    server.add(Turn(text="partial", stop_reason="throttlingException"))
    events = _client(server).converse_stream(modelId=MODEL_ID, messages=HI)["stream"]
    with pytest.raises(EventStreamError) as caught:
        list(events)
    assert caught.value.response["Error"]["Code"] == "throttlingException"
