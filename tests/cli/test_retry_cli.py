"""Failover end to end: the real `tau -p` against the fake server's injected faults."""

from __future__ import annotations

import json
import time
from typing import Any

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, Turn


def fast_retries(tau: TauCommand, **retry: Any) -> None:
    """Millisecond session-level delays; ``retry`` adds or overrides keys of ``retry``."""
    settings = {"retry": {"baseDelayMs": 2, **retry}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


def status(code: int, **headers: str) -> Turn:
    return Turn(fault=Fault("status", status=code, headers=headers))


def json_events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()[1:]]


def test_a_429_with_retry_after_is_re_sent_by_the_provider_level(tau: TauCommand) -> None:
    fast_retries(tau, provider={"maxRetries": 2})
    tau.server.add(status(429, **{"Retry-After": "0"}), Turn(text="The answer is 42."))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    # Re-sent inside the one model call: no failed reply, no session-level retry.
    assert not [e for e in events if e["type"].startswith("auto_retry")]
    ends = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    assert [m["stopReason"] for m in ends] == ["stop"]
    assert len(tau.server.requests) == 2
    assert tau.server.requests[0].body == tau.server.requests[1].body


def test_print_mode_recovers_from_a_429_and_prints_the_answer(tau: TauCommand) -> None:
    fast_retries(tau)
    tau.server.add(status(429, **{"Retry-After": "0"}), Turn(text="The answer is 42."))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"


def test_529_overloaded_is_recovered(tau: TauCommand) -> None:
    fast_retries(tau)
    tau.server.add(status(529, **{"retry-after-ms": "1"}), Turn(text="Back again."))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Back again.\n"


def test_provider_level_retries_are_off_by_default_as_in_pi(tau: TauCommand) -> None:
    fast_retries(tau)
    tau.server.add(status(429, **{"Retry-After": "0"}), Turn(text="The answer is 42."))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    # Not re-sent unseen inside the model call: the session level retries it, visibly.
    assert [e["type"] for e in events if e["type"].startswith("auto_retry")] == [
        "auto_retry_start",
        "auto_retry_end",
    ]
    assert len(tau.server.requests) == 2


def test_json_mode_shows_a_session_level_retry(tau: TauCommand) -> None:
    fast_retries(tau, provider={"maxRetries": 0})
    tau.server.add(status(529), Turn(text="Back again."))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    [start] = [e for e in events if e["type"] == "auto_retry_start"]
    assert start["attempt"] == 1 and start["maxAttempts"] == 3 and start["delayMs"] == 2
    assert "529" in start["errorMessage"]
    [end] = [e for e in events if e["type"] == "auto_retry_end"]
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 1}
    assert [e["type"] for e in events].index("auto_retry_start") < [e["type"] for e in events].index(
        "auto_retry_end"
    )
    # The failed reply stays in the session file.
    [session] = tau.session_files()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    replies = [
        e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert [r["stopReason"] for r in replies] == ["error", "stop"]


def test_a_connection_cut_mid_reply_is_retried(tau: TauCommand) -> None:
    fast_retries(tau)
    tau.server.add(Turn(text="partial answer that is cut", chunk_size=4, fault=Fault("cut", after_events=3)))
    tau.server.add(Turn(text="Complete answer."))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    assert [e["type"] for e in events if e["type"].startswith("auto_retry")] == [
        "auto_retry_start",
        "auto_retry_end",
    ]
    last = [e for e in events if e["type"] == "message_end"][-1]["message"]
    assert last["content"] == [{"type": "text", "text": "Complete answer."}]
    # The retried request does not carry the broken reply.
    assert "partial" not in json.dumps(tau.server.last_request.body)


def test_a_connection_dropped_before_the_response_is_retried(tau: TauCommand) -> None:
    fast_retries(tau, provider={"maxRetries": 0})
    tau.server.add(Turn(fault=Fault("close_before_headers")), Turn(text="Reached you."))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reached you.\n"


def test_a_stalled_stream_times_out_and_is_retried(tau: TauCommand) -> None:
    fast_retries(tau, provider={"idleTimeoutMs": 300})
    tau.server.add(Turn(text="slow " * 20, chunk_size=5, fault=Fault("stall", after_events=3, seconds=30)))
    tau.server.add(Turn(text="Quick this time."))
    started = time.monotonic()
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 15
    events = json_events(result.stdout)
    [start] = [e for e in events if e["type"] == "auto_retry_start"]
    assert "idle timeout" in start["errorMessage"]
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0][
        "text"
    ] == "Quick this time."


def test_a_retry_after_of_days_is_a_clear_error_at_once(tau: TauCommand) -> None:
    fast_retries(tau)
    tau.server.add(*[status(429, **{"Retry-After": "259200"}) for _ in range(4)])
    started = time.monotonic()
    result = tau.run(*MODEL, "-p", "hi")
    assert time.monotonic() - started < 15
    assert result.returncode == 1
    assert result.stdout == ""
    assert "429" in result.stderr and "259200 s (3 days)" in result.stderr
    assert "Traceback" not in result.stderr
    # Re-sent by neither level: the session level honours the same cap as the provider level.
    assert len(tau.server.requests) == 1


def test_the_two_levels_add_up_instead_of_multiplying(tau: TauCommand) -> None:
    fast_retries(tau, maxRetries=2, provider={"maxRetries": 2})
    tau.server.add(*[status(503, **{"Retry-After": "0"}) for _ in range(10)])
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0
    # 1 request + 2 provider-level re-sends, then 2 session-level retries sent once each.
    assert len(tau.server.requests) == 5
    events = json_events(result.stdout)
    [end] = [e for e in events if e["type"] == "auto_retry_end"]
    assert end["success"] is False and end["attempt"] == 2 and "503" in end["finalError"]
