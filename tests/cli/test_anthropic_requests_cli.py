"""The real `tau` and the real pi 1.6 send the same Anthropic request for a built-in Claude model
(re-routed to the fake server by a models.json base URL), and both authenticate a gateway's
``ANTHROPIC_AUTH_TOKEN`` as a bearer token."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command
from tau_command import TauCommand

from tau.testing.fake_llm import RecordedRequest, Turn

CLAUDE = ["--model", "anthropic/claude-sonnet-5:high"]
API_KEY = "sk-ant-api-key-for-tests"
AUTH_TOKEN = "gateway-bearer-token"


def reroute_anthropic(tau: TauCommand) -> None:
    models = {"providers": {"anthropic": {"baseUrl": tau.server.base_url}}}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


def run_tau(tau: TauCommand, env: dict[str, str]) -> RecordedRequest:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*CLAUDE, "--no-tools", "-p", "hi", timeout=60)
    assert result.returncode == 0, result.stderr
    return tau.server.requests[-1]


def run_pi(tau: TauCommand, pi_dir: Path, env: dict[str, str]) -> RecordedRequest:
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    tau.server.add(Turn(text="ok"))
    pi_env = {**env, "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    ran = subprocess.run(
        [*pi16_command(), *CLAUDE, "--no-tools", "-p", "hi"],
        cwd=tau.work,
        env=pi_env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return tau.server.requests[-1]


def thinking_request(request: RecordedRequest) -> dict[str, Any]:
    body = request.body
    return {
        "thinking": body.get("thinking"),
        "output_config": body.get("output_config"),
        "max_tokens": body.get("max_tokens"),
        "temperature": body.get("temperature"),
        "anthropic-beta": request.headers.get("anthropic-beta"),
    }


def auth_headers(request: RecordedRequest) -> dict[str, str | None]:
    return {name: request.headers.get(name) for name in ("authorization", "x-api-key")}


@pytest.fixture
def with_key(tau: TauCommand) -> dict[str, str]:
    reroute_anthropic(tau)
    tau.env["ANTHROPIC_API_KEY"] = API_KEY
    tau.env.pop("ANTHROPIC_AUTH_TOKEN", None)
    tau.env.pop("ANTHROPIC_OAUTH_TOKEN", None)
    return tau.env


def test_a_current_claude_model_gets_adaptive_thinking_as_pi_sends_it(
    tau: TauCommand, with_key: dict[str, str], tmp_path: Path
) -> None:
    ours = run_tau(tau, with_key)
    assert thinking_request(ours) == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "high"},
        "max_tokens": 128_000,
        "temperature": None,
        "anthropic-beta": None,
    }
    assert thinking_request(run_pi(tau, tmp_path / "pi", with_key)) == thinking_request(ours)


def test_anthropic_auth_token_is_sent_as_a_bearer_token_and_wins_over_the_api_key(
    tau: TauCommand, with_key: dict[str, str], tmp_path: Path
) -> None:
    with_key["ANTHROPIC_AUTH_TOKEN"] = AUTH_TOKEN
    ours = run_tau(tau, with_key)
    assert auth_headers(ours) == {"authorization": f"Bearer {AUTH_TOKEN}", "x-api-key": None}
    assert auth_headers(run_pi(tau, tmp_path / "pi", with_key)) == auth_headers(ours)


def test_anthropic_auth_token_alone_authenticates_the_provider(
    tau: TauCommand, with_key: dict[str, str]
) -> None:
    del with_key["ANTHROPIC_API_KEY"]
    with_key["ANTHROPIC_AUTH_TOKEN"] = AUTH_TOKEN
    assert auth_headers(run_tau(tau, with_key)) == {
        "authorization": f"Bearer {AUTH_TOKEN}",
        "x-api-key": None,
    }
