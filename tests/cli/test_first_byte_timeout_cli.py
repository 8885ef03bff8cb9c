"""A server that accepts the connection and never answers: pi's ``httpIdleTimeoutMs`` bounds the wait
for the first byte of the response, so `tau -p` ends with a clear error instead of hanging."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from tau_command import MODEL, TauCommand


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A listening socket nobody answers: the kernel accepts the connection, no response ever comes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}/v1"


def point_at(tau: TauCommand, base_url: str, settings: dict[str, Any]) -> None:
    models_path = tau.agent_dir / "models.json"
    models = json.loads(models_path.read_text())
    models["providers"]["local"]["baseUrl"] = base_url
    models_path.write_text(json.dumps(models))
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


NO_RETRIES = {"enabled": False, "provider": {"maxRetries": 0}}


def test_http_idle_timeout_ms_ends_the_wait_for_a_server_that_never_answers(
    tau: TauCommand, silent_url: str
) -> None:
    point_at(tau, silent_url, {"httpIdleTimeoutMs": 300, "retry": NO_RETRIES})
    started = time.monotonic()
    result = tau.run(*MODEL, "-p", "hi", timeout=30)
    assert result.returncode == 1
    assert "Request timed out after 300 ms waiting for the first byte of a response" in result.stderr
    assert time.monotonic() - started < 15


def test_retry_provider_timeout_ms_wins_over_http_idle_timeout_ms(tau: TauCommand, silent_url: str) -> None:
    retry = {"enabled": False, "provider": {"maxRetries": 0, "timeoutMs": 250}}
    point_at(tau, silent_url, {"httpIdleTimeoutMs": 600000, "retry": retry})
    result = tau.run(*MODEL, "-p", "hi", timeout=30)
    assert result.returncode == 1
    assert "Request timed out after 250 ms" in result.stderr


def test_a_first_byte_timeout_is_retried_by_the_session(tau: TauCommand, silent_url: str) -> None:
    point_at(
        tau,
        silent_url,
        {
            "httpIdleTimeoutMs": "200",
            "retry": {"baseDelayMs": 2, "maxRetries": 1, "provider": {"maxRetries": 0}},
        },
    )
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi", timeout=30)
    events = [json.loads(line) for line in result.stdout.splitlines()[1:]]
    assert [e["type"] for e in events].count("auto_retry_start") == 1


def test_a_http_idle_timeout_ms_tau_cannot_read_is_a_warning(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"httpIdleTimeoutMs": "soon"}))
    result = tau.run("--list-models")
    assert result.returncode == 0
    settings = tau.agent_dir / "settings.json"
    assert result.stderr == (
        f'tau: warning: {settings}: "httpIdleTimeoutMs" should be milliseconds, 0 or more, or "disabled", '
        'not "soon" (ignored)\n'
    )
