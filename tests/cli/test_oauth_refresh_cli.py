"""Every subscription login's life after sign-in, through real ``tau`` processes against the fake
OAuth server: a stale token refreshed once though two processes want it at once (auth.json kept
private, the other entries kept), a request carrying the fresh token, then a revoked login that says
to log in again and loses nothing. (Anthropic's own tests are in test_oauth_cli.py.)"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from oauth_login import Tau, make_tau, model_id

from tau.ai.catalogue import get_models
from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.testing.fake_oauth import FakeOAuthServer


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def oauth(llm: FakeLLMServer) -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(
        copilot_upstream=llm.base_url, device_interval_s=0.05, radius_base_url=llm.url("/pi/v1")
    ) as server:
        yield server


@pytest.fixture
def tau(tmp_path: Path, oauth: FakeOAuthServer) -> Tau:
    oauth.refresh_delay_s = 0.3  # widens the window in which the second process finds the token stale
    return make_tau(tmp_path, oauth)


@dataclass(frozen=True)
class Login:
    provider: str
    device: bool  # a device-code login (the user enters a code) rather than a browser redirect
    base_path: (
        str | None
    )  # where models.json points the provider at the fake LLM (None: the login's own host)
    model: str

    def __str__(self) -> str:
        return self.provider


LOGINS = [
    Login("openai-codex", False, "", model_id("openai-codex", "openai-codex-responses")),
    Login("openai", False, "/v1", model_id("openai", "openai-responses")),
    Login("github-copilot", True, None, model_id("github-copilot", "openai-completions")),
    Login("google-gemini-cli", False, "", model_id("google-gemini-cli", "google-gemini-cli")),
    Login("google-antigravity", False, "", model_id("google-antigravity", "google-gemini-cli")),
    Login("xai", True, "/v1", get_models("xai")[0].id),
    Login("kimi-coding", True, "/v1", get_models("kimi-coding")[0].id),
    Login("meta", True, "/v1", get_models("meta")[0].id),
    Login("radius", False, None, "balanced"),
]


@pytest.mark.parametrize("login", LOGINS, ids=str)
def test_a_stale_login_is_refreshed_once_for_two_processes_then_a_revoked_one_says_to_log_in_again(
    tau: Tau, oauth: FakeOAuthServer, llm: FakeLLMServer, login: Login
) -> None:
    provider = login.provider
    signed_in = tau.run("auth", "login", provider, stdin="\n") if login.device else tau.login(provider)
    assert signed_in.returncode == 0, signed_in.stderr
    data = tau.stored()
    data["other"] = {"type": "api_key", "key": "sk-other-entry"}
    tau.auth_file.write_text(json.dumps(data))
    tau.expire(provider)
    stale = tau.stored()[provider]
    refreshes = sum(oauth.refresh_counts.values())

    both = [tau.popen("auth", "print-bearer-token", provider) for _ in range(2)]
    printed = [p.communicate(timeout=60) for p in both]

    assert [p.returncode for p in both] == [0, 0], printed
    fresh = tau.stored()
    assert {out.strip() for out, _ in printed} == {fresh[provider]["access"]} != {stale["access"]}
    assert sum(oauth.refresh_counts.values()) - refreshes == 1, oauth.refresh_counts
    assert fresh["other"] == {"type": "api_key", "key": "sk-other-entry"}
    assert {k for k in stale if k != "access" and fresh[provider].get(k) is None} == set()  # nothing dropped
    assert stat.S_IMODE(tau.auth_file.stat().st_mode) == 0o600

    if login.base_path is not None:
        models = {"providers": {provider: {"baseUrl": llm.url(login.base_path)}}}
        (tau.agent_dir / "models.json").write_text(json.dumps(models))
    llm.add(Turn(text="fresh answer"))
    answer = tau.run("-p", "hi", "--provider", provider, "--model", login.model)
    assert (answer.returncode, answer.stdout) == (0, "fresh answer\n"), answer.stderr
    assert llm.last_request.headers["authorization"] == f"Bearer {fresh[provider]['access']}"

    oauth.revoke_all()
    tau.expire(provider)
    before = tau.auth_file.read_bytes()
    refused = tau.run("auth", "print-bearer-token", provider)

    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f'tau: The login for "{provider}" was refused when refreshing it')
    assert line.endswith(f'log in again with "tau auth login {provider}"')
    assert tau.auth_file.read_bytes() == before


def test_a_process_killed_while_refreshing_leaves_auth_json_whole_and_the_next_one_refreshes(
    tau: Tau, oauth: FakeOAuthServer
) -> None:
    tau.auth_file.write_text(
        json.dumps({"anthropic": oauth.issue_login("anthropic"), "other": {"type": "api_key", "key": "k"}})
    )
    tau.auth_file.chmod(0o600)
    tau.expire("anthropic")
    before = tau.auth_file.read_bytes()
    oauth.refresh_delay_s = 10  # the refresh request hangs until the process is gone
    refreshes = oauth.refresh_counts["anthropic"]

    doomed = tau.popen("auth", "print-bearer-token", "anthropic")
    deadline = time.monotonic() + 30
    while oauth.refresh_counts["anthropic"] == refreshes and time.monotonic() < deadline:
        time.sleep(0.02)
    doomed.kill()  # SIGKILL: no clean-up of any kind, with auth.json's lock held
    doomed.communicate(timeout=30)
    oauth.refresh_delay_s = 0
    after_kill = tau.auth_file.read_bytes()
    next_run = tau.run("auth", "print-bearer-token", "anthropic")

    assert after_kill == before
    assert next_run.returncode == 0, next_run.stderr
    assert next_run.stdout.strip() == tau.stored()["anthropic"]["access"]
    assert tau.stored()["other"] == {"type": "api_key", "key": "k"}
