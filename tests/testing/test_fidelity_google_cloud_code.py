"""Cloud Code Assist (Gemini CLI, Antigravity) has no SDK of its own, and pi 1.6 dropped its client.
What it wraps is Gemini's: each frame of the fake's stream must be an envelope whose ``response`` the
official ``google-genai`` types accept as a real ``GenerateContentResponse`` (they refuse unknown
fields), read here with ``httpx-sse`` rather than tau's own reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from google.genai import types
from httpx_sse import connect_sse

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn

PATH = "/v1internal:streamGenerateContent?alt=sse"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _frames(server: FakeLLMServer, envelope: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    headers = {"authorization": "Bearer ya29.test"}
    with (
        httpx.Client() as client,
        connect_sse(client, "POST", server.url(PATH), json=envelope, headers=headers) as events,
    ):
        if events.response.status_code != 200:
            return events.response.status_code, [json.loads(events.response.read())]
        return 200, [json.loads(event.data) for event in events.iter_sse()]


def _envelope(**extra: Any) -> dict[str, Any]:
    request = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return {"project": "proj-1", "model": "gemini-2.5-pro", "request": request, **extra}


def test_each_frame_wraps_a_response_the_gemini_sdk_accepts(server: FakeLLMServer) -> None:
    server.add(
        Turn(
            thinking="Look first.",
            text="Reading.",
            tool_calls=[ScriptedToolCall("read", {"path": "a.py"})],
            usage=ScriptedUsage(input=12, output=7),
        )
    )
    status, frames = _frames(server, _envelope())

    assert status == 200
    assert all(set(frame) == {"response", "traceId"} for frame in frames)
    responses = [types.GenerateContentResponse.model_validate(frame["response"]) for frame in frames]
    parts = [part for r in responses for part in (r.candidates[0].content.parts or [])]
    assert "".join(p.text for p in parts if p.thought and p.text) == "Look first."
    assert "".join(p.text for p in parts if not p.thought and p.text) == "Reading."
    [call] = [p.function_call for p in parts if p.function_call]
    assert (call.name, call.args) == ("read", {"path": "a.py"})
    last = responses[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP
    assert last.usage_metadata is not None and last.usage_metadata.prompt_token_count == 12
    assert server.last_request.api == "google-gemini-cli"


def test_an_envelope_without_a_project_is_refused_in_googles_error_shape(server: FakeLLMServer) -> None:
    envelope = _envelope()
    del envelope["project"]
    status, [body] = _frames(server, envelope)
    assert status == 400
    assert set(body["error"]) >= {"code", "message", "status"}
