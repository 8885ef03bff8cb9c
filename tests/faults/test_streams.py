"""A server that fails: error statuses, cut, truncated, stalled and malformed streams, odd replies,
in each wire protocol with a reader of its own. tau reports one line and exits 1 (or finishes), the session
file stays whole."""

from __future__ import annotations

import json

import pytest
from fault_campaign import Campaign, session_lines

from tau.testing.fake_llm import Fault, Turn

BASE_PATHS = {
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "anthropic-messages": "",
    "google-generative-ai": "/v1beta",
    # Azure and Codex read their streams with openai-responses' reader: covered by it.
    "mistral-conversations": "/mistral",
}

FAULTS: dict[str, Turn] = {
    **{
        f"status-{code}": Turn(fault=Fault("status", status=code))
        for code in (400, 401, 403, 404, 408, 413, 422)
    },
    **{f"status-{code}": Turn(fault=Fault("status", status=code)) for code in (429, 500, 502, 503, 504, 529)},
    "status-500-empty-body": Turn(fault=Fault("status", status=500, body="")),
    "status-500-html-body": Turn(fault=Fault("status", status=500, body="<html><h1>Bad Gateway</h1></html>")),
    "status-200-json-error-body": Turn(fault=Fault("status", status=200, body={"error": "not a stream"})),
    "status-400-huge-body": Turn(fault=Fault("status", status=400, body="x" * 2_000_000)),
    "status-400-body-with-newlines": Turn(
        fault=Fault("status", status=400, body="line one\nline two\r\n\x1b[31m")
    ),
    "status-429-retry-after-garbage": Turn(
        fault=Fault("status", status=429, headers={"Retry-After": "soon"})
    ),
    "status-429-retry-after-huge": Turn(
        fault=Fault("status", status=429, headers={"Retry-After": "999999999"})
    ),
    "status-429-retry-after-negative": Turn(fault=Fault("status", status=429, headers={"Retry-After": "-5"})),
    "close-before-headers": Turn(fault=Fault("close_before_headers")),
    "cut-at-once": Turn(text="never seen", fault=Fault("cut", after_events=0)),
    "cut-mid-text": Turn(text="partial reply " * 20, chunk_size=5, fault=Fault("cut", after_events=4)),
    "truncate-at-once": Turn(text="never seen", fault=Fault("truncate", after_events=0)),
    "truncate-mid-text": Turn(
        text="partial reply " * 20, chunk_size=5, fault=Fault("truncate", after_events=4)
    ),
    "malformed-at-once": Turn(text="reply", fault=Fault("malformed", after_events=0)),
    "malformed-mid-text": Turn(
        text="partial reply " * 20, chunk_size=5, fault=Fault("malformed", after_events=3)
    ),
    "stall-mid-text": Turn(
        text="partial reply " * 20, chunk_size=5, fault=Fault("stall", after_events=3, seconds=5)
    ),
    "stop-reason-unknown": Turn(text="odd end", stop_reason="bogus_reason"),
    "stop-reason-length": Turn(text="cut by the limit", stop_reason="length"),
    "empty-reply": Turn(),
    "thinking-only": Turn(thinking="just thinking"),
    "huge-text-in-one-delta": Turn(text="y" * 3_000_000, chunk_size=3_000_000),
    "control-characters-in-text": Turn(text="\x00\x1b[2J\x07\x08 text \ud7ff"),
}


def point_at(campaign: Campaign, api: str) -> list[str]:
    """models.json with one provider speaking ``api``; no retries, a short idle timeout."""
    provider = {
        "baseUrl": campaign.server.url(BASE_PATHS[api]),
        "api": api,
        "apiKey": "key",
        "models": [{"id": "m", "contextWindow": 100000, "maxTokens": 4096}],
    }
    (campaign.agent_dir / "models.json").write_text(json.dumps({"providers": {"p": provider}}))
    settings = {"retry": {"enabled": False, "provider": {"maxRetries": 0, "idleTimeoutMs": 400}}}
    (campaign.agent_dir / "settings.json").write_text(json.dumps(settings))
    return ["--provider", "p", "--model", "m"]


def assert_sessions_whole(campaign: Campaign) -> None:
    for path in campaign.session_files():
        session_lines(path)


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("api", sorted(BASE_PATHS))
def test_a_failing_server(campaign: Campaign, api: str, fault: str) -> None:
    model = point_at(campaign, api)
    campaign.server.add(FAULTS[fault])
    campaign.run_check(*model, "-p", "hi")
    assert_sessions_whole(campaign)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failing_server_in_json_mode(campaign: Campaign, fault: str) -> None:
    model = point_at(campaign, "openai-completions")
    campaign.server.add(FAULTS[fault])
    outcome = campaign.run_check(*model, "--mode", "json", "-p", "hi")
    for line in outcome.stdout.splitlines():
        assert isinstance(json.loads(line), dict)
    assert_sessions_whole(campaign)


@pytest.mark.parametrize(
    "fault", ["status-429", "status-503", "cut-mid-text", "malformed-mid-text", "stall-mid-text"]
)
def test_a_failing_server_in_a_real_process(campaign: Campaign, fault: str) -> None:
    model = point_at(campaign, "anthropic-messages")
    campaign.server.add(FAULTS[fault])
    outcome = campaign.process_check(*model, "-p", "hi", timeout=15)
    assert outcome.code == 1 and outcome.stderr.strip()
    assert_sessions_whole(campaign)


def test_a_retried_failure_that_keeps_failing_ends(campaign: Campaign) -> None:
    """With retries on (fast), a server that always fails ends the run with one message."""
    model = point_at(campaign, "openai-completions")
    settings = {
        "retry": {"baseDelayMs": 1, "maxRetries": 2, "provider": {"maxRetries": 1, "maxRetryDelayMs": 5}}
    }
    (campaign.agent_dir / "settings.json").write_text(json.dumps(settings))
    campaign.server.add(*[Turn(fault=Fault("status", status=503, headers={"Retry-After": "0"}))] * 10)
    outcome = campaign.run_check(*model, "-p", "hi")
    assert outcome.code == 1
    assert_sessions_whole(campaign)
