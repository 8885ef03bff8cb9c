"""Subscription logins end to end: the real ``tau auth`` process against the fake OAuth server (the
test plays the browser), then the stored login used by a real ``tau -p`` request to the fake LLM."""

from __future__ import annotations

import json
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from oauth_login import Tau, make_tau, model_id

from tau.accounts.oauth import OAUTH_PROVIDERS
from tau.ai.catalogue import get_models
from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.testing.fake_oauth import FakeOAuthServer


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def oauth(llm: FakeLLMServer) -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(copilot_upstream=llm.base_url, device_interval_s=0.05) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_fake(oauth: FakeOAuthServer) -> None:
    oauth.deny = False
    oauth.expires_in = 3600
    oauth.google_onboarding = False
    oauth.refresh_delay_s = 0.05
    oauth.device_pending_polls = 0
    oauth.refresh_counts.clear()


@pytest.fixture
def tau(tmp_path: Path, oauth: FakeOAuthServer) -> Tau:
    return make_tau(tmp_path, oauth)


# ---- Anthropic: PKCE with a localhost callback -------------------------------------------------


def test_anthropic_login_stores_pi_credential_privately_and_requests_carry_the_token(
    tau: Tau, llm: FakeLLMServer
) -> None:
    result = tau.login("anthropic")

    assert result.returncode == 0, result.stderr
    assert "Logged in to Anthropic. Credentials saved to" in result.stdout
    credential = tau.stored()["anthropic"]
    assert set(credential) == {"type", "refresh", "access", "expires"}
    assert credential["type"] == "oauth"
    assert str(credential["access"]).startswith("sk-ant-oat01-")
    assert isinstance(credential["expires"], int) and credential["expires"] > time.time() * 1000 + 50 * 60_000
    assert stat.S_IMODE(tau.auth_file.stat().st_mode) == 0o600

    models = {"providers": {"anthropic": {"baseUrl": llm.url()}}}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    llm.add(Turn(text="hello from claude"))
    answer = tau.run(
        "-p", "hi", "--provider", "anthropic", "--model", model_id("anthropic", "anthropic-messages")
    )

    assert answer.returncode == 0, answer.stderr
    assert "hello from claude" in answer.stdout
    headers = llm.last_request.headers
    assert headers["authorization"] == f"Bearer {credential['access']}"
    assert "x-api-key" not in headers
    assert "oauth-2025-04-20" in headers["anthropic-beta"]


def test_a_login_refused_in_the_browser_is_one_line_and_writes_nothing(
    tau: Tau, oauth: FakeOAuthServer
) -> None:
    oauth.deny = True

    result = tau.login("anthropic")

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "tau: Failed to log in to Anthropic: Anthropic sign-in was not completed in the "
        "browser: The user denied access"
    ]
    assert not tau.auth_file.exists()


@pytest.mark.parametrize(
    ("provider", "device"),
    [
        ("openai-codex", False),
        ("openai-codex", True),
        ("openai", False),
        ("github-copilot", True),
        ("google-gemini-cli", False),
        ("google-antigravity", False),
        ("xai", True),
        ("kimi-coding", True),
        ("meta", True),
        ("openrouter", False),
        ("radius", False),
        ("radius", True),
    ],
)
def test_every_login_refused_by_the_user_is_one_line_and_leaves_auth_json_as_it_was(
    tau: Tau, oauth: FakeOAuthServer, provider: str, device: bool
) -> None:
    tau.auth_file.write_text('{"openai-other": {"type": "api_key", "key": "sk-kept"}}')
    tau.auth_file.chmod(0o600)
    before = tau.auth_file.read_bytes()
    oauth.deny = True

    if device:
        no_browser = () if provider in ("github-copilot", "xai", "kimi-coding", "meta") else ("--no-browser",)
        result = tau.run("auth", "login", provider, *no_browser, stdin="\n")
    else:
        result = tau.login(provider)

    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"tau: Failed to log in to {OAUTH_PROVIDERS[provider][0]}: ")
    assert "denied" in line
    assert tau.auth_file.read_bytes() == before


def test_a_login_that_waits_too_long_for_the_browser_times_out_in_one_line(tau: Tau) -> None:
    tau.auth_file.write_text('{"openai": {"type": "api_key", "key": "sk-kept"}}')
    tau.auth_file.chmod(0o600)
    tau.env["TAU_OAUTH_TEST_TIMEOUT_S"] = "0.5"

    result = tau.login("anthropic", browse=False)

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "tau: Failed to log in to Anthropic: Anthropic sign-in timed out after 0.5 s"
    ]
    assert tau.stored() == {"openai": {"type": "api_key", "key": "sk-kept"}}


def test_the_copy_code_login_takes_a_pasted_code(tau: Tau, oauth: FakeOAuthServer) -> None:
    process = tau.popen("auth", "login", "anthropic", "--no-browser")
    assert process.stdin and process.stdout
    url = next(line.strip() for line in process.stdout if line.startswith("  http"))
    assert "redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth%2Fcode%2Fcallback" in url
    location = httpx.get(url).headers["location"]  # the page Anthropic shows holds code and state
    query = dict(pair.split("=", 1) for pair in location.split("?", 1)[1].split("&"))
    _, err = process.communicate(f"{query['code']}#{query['state']}\n", timeout=30)

    assert process.returncode == 0, err
    assert tau.stored()["anthropic"]["type"] == "oauth"


def test_ctrl_c_while_waiting_for_the_browser_cancels_in_one_line(tau: Tau) -> None:
    process = tau.popen("auth", "login", "anthropic")
    assert process.stdout
    next(line for line in process.stdout if line.startswith("  http"))
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)

    assert process.returncode == 1
    assert err.strip().splitlines() == ["tau: Login cancelled."]
    assert not tau.auth_file.exists()


def _imported(tau: Tau, *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", *args],
        env=tau.env,
        cwd=tau.agent_dir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}


def test_no_login_flow_is_imported_until_a_login_is_used(tau: Tau, llm: FakeLLMServer) -> None:
    local = {"baseUrl": llm.url("/v1"), "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}
    (tau.agent_dir / "models.json").write_text(json.dumps({"providers": {"local": local}}))
    llm.add(Turn(text="plain"))

    printed = _imported(tau, "-p", "hi", "--provider", "local", "--model", "m")
    status = _imported(tau, "auth", "status")

    assert not {name for name in printed if name.startswith("tau.accounts.oauth")}
    flows = {"anthropic", "openai_codex", "github_copilot", "google", "callback", "_common"}
    assert not {name.rsplit(".", 1)[-1] for name in status if name.startswith("tau.accounts.oauth.")} & flows


# ---- refresh: expiry, two processes at once, revocation ----------------------------------------


@pytest.fixture
def logged_in(tau: Tau, oauth: FakeOAuthServer) -> Tau:
    """Signed in to Anthropic (as the login test above does), plus another provider's key."""
    data = {
        "anthropic": oauth.issue_login("anthropic"),
        "openai": {"type": "api_key", "key": "sk-other-entry"},
    }
    tau.auth_file.write_text(json.dumps(data))
    tau.auth_file.chmod(0o600)
    return tau


def test_an_expired_token_is_refreshed_once_and_saved_keeping_the_other_entries(
    logged_in: Tau, oauth: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    old = logged_in.stored()["anthropic"]
    logged_in.expire("anthropic")
    (logged_in.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"anthropic": {"baseUrl": llm.url()}}})
    )
    llm.add(Turn(text="after refresh"))

    answer = logged_in.run(
        "-p", "hi", "--provider", "anthropic", "--model", model_id("anthropic", "anthropic-messages")
    )
    printed = logged_in.run("auth", "print-bearer-token", "--provider", "anthropic")

    assert answer.returncode == 0, answer.stderr
    stored = logged_in.stored()
    assert stored["anthropic"]["access"] != old["access"]
    assert llm.last_request.headers["authorization"] == f"Bearer {stored['anthropic']['access']}"
    assert printed.stdout.strip() == stored["anthropic"]["access"]
    assert stored["anthropic"]["refresh"] != old["refresh"]  # rotated
    assert stored["openai"] == {"type": "api_key", "key": "sk-other-entry"}
    assert oauth.refresh_counts["anthropic"] == 1
    assert stat.S_IMODE(logged_in.auth_file.stat().st_mode) == 0o600


def test_two_processes_refreshing_at_once_make_one_refresh_request_and_both_go_on(
    logged_in: Tau, oauth: FakeOAuthServer
) -> None:
    logged_in.expire("anthropic")
    oauth.refresh_delay_s = 1.0  # the second process surely finds the token stale while the first refreshes

    processes = [logged_in.popen("auth", "print-bearer-token", "--provider", "anthropic") for _ in range(2)]
    results = [p.communicate(timeout=60) for p in processes]

    assert [p.returncode for p in processes] == [0, 0], results
    tokens = {out.strip() for out, _ in results}
    assert tokens == {logged_in.stored()["anthropic"]["access"]}
    assert oauth.refresh_counts["anthropic"] == 1


def test_a_revoked_refresh_token_says_to_log_in_again_and_loses_nothing(
    logged_in: Tau, oauth: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    logged_in.expire("anthropic")
    before = logged_in.auth_file.read_bytes()
    oauth.revoke_all()

    printed = logged_in.run("auth", "print-bearer-token", "--provider", "anthropic")
    checked = logged_in.run("auth", "check", "--provider", "anthropic")
    (logged_in.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"anthropic": {"baseUrl": llm.url()}}})
    )
    prompted = logged_in.run(
        "-p", "hi", "--provider", "anthropic", "--model", model_id("anthropic", "anthropic-messages")
    )

    expected = (
        'The login for "anthropic" was refused when refreshing it (HTTP 400: invalid_grant - Refresh token '
        'revoked): log in again with "tau auth login anthropic"'
    )
    assert printed.returncode == 1
    assert printed.stderr.strip().splitlines() == [f"tau: {expected}"]
    assert (checked.returncode, checked.stdout) == (2, "invalid\n")
    assert prompted.returncode == 1
    assert expected in prompted.stderr and "Traceback" not in prompted.stderr
    assert logged_in.auth_file.read_bytes() == before


# ---- OpenAI Codex: fixed port 1455, or a pasted redirect URL -----------------------------------


def test_codex_login_stores_the_account_and_requests_carry_the_access_token(
    tau: Tau, llm: FakeLLMServer
) -> None:
    result = tau.login("openai-codex")

    assert result.returncode == 0, result.stderr
    credential = tau.stored()["openai-codex"]
    assert credential["accountId"] == "acct-fake-123"
    printed = tau.run("auth", "print-bearer-token", "openai-codex")
    assert printed.stdout.strip() == credential["access"]

    (tau.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"openai-codex": {"baseUrl": llm.url()}}})
    )
    llm.add(Turn(text="hello from codex"))
    model = model_id("openai-codex", "openai-codex-responses")
    answer = tau.run("-p", "hi", "--provider", "openai-codex", "--model", model)

    assert answer.returncode == 0, answer.stderr
    assert "hello from codex" in answer.stdout
    assert llm.last_request.headers["authorization"] == f"Bearer {credential['access']}"
    assert llm.last_request.headers["chatgpt-account-id"] == "acct-fake-123"


def test_with_the_callback_port_in_use_the_redirect_url_can_be_pasted(tau: Tau) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        tau.env["TAU_OAUTH_TEST_CALLBACK_PORT"] = str(port)
        process = tau.popen("auth", "login", "openai-codex")
        assert process.stdin and process.stdout
        url = next(line.strip() for line in process.stdout if line.startswith("  http"))
        # The browser cannot reach tau (another machine, SSH): the user copies the address it ends on.
        location = httpx.get(url).headers["location"]
        _, err = process.communicate(location + "\n", timeout=30)

    assert process.returncode == 0, err
    assert err.strip().splitlines() == [
        f"tau: The sign-in callback cannot listen on 127.0.0.1:{port} (Address already "
        "in use); after signing in, paste the address the browser ends on"
    ]
    assert tau.stored()["openai-codex"]["accountId"] == "acct-fake-123"


def test_codex_device_code_login_without_a_browser_waits_until_the_code_is_entered(
    tau: Tau, oauth: FakeOAuthServer
) -> None:
    oauth.device_pending_polls = 1

    result = tau.run("auth", "login", "openai-codex", "--no-browser")

    assert result.returncode == 0, result.stderr
    assert "enter code: ABCD-1234" in result.stdout
    assert tau.stored()["openai-codex"]["accountId"] == "acct-fake-123"


def test_sign_in_with_chatgpt_registers_a_client_and_the_openai_provider_uses_the_token(
    tau: Tau, llm: FakeLLMServer
) -> None:
    result = tau.login("openai")

    assert result.returncode == 0, result.stderr
    credential = tau.stored()["openai"]
    assert str(credential["clientId"]).startswith("app_issued_")
    assert "chatgpt.tokens.use.direct" in credential["scopes"]  # type: ignore[operator]
    settings = json.loads((tau.agent_dir / "settings.json").read_text())
    assert len(settings["deviceId"]) == 36  # the installation's id, kept for the next login
    tau.expire("openai")
    printed = tau.run("auth", "print-bearer-token", "openai")
    fresh = tau.stored()["openai"]
    assert printed.stdout.strip() == fresh["access"] != credential["access"]
    assert fresh["clientId"] == credential["clientId"]

    (tau.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"openai": {"baseUrl": llm.url("/v1")}}})
    )
    llm.add(Turn(text="hello"))
    model = model_id("openai", "openai-responses")
    answer = tau.run("-p", "hi", "--provider", "openai", "--model", model)

    assert answer.returncode == 0, answer.stderr
    assert llm.last_request.headers["authorization"] == f"Bearer {fresh['access']}"


# ---- GitHub Copilot: device code, token exchange, per-account API host --------------------------


def test_copilot_device_login_then_requests_go_to_the_token_host_and_a_stale_token_is_exchanged_again(
    tau: Tau, llm: FakeLLMServer, oauth: FakeOAuthServer
) -> None:
    result = tau.run("auth", "login", "github-copilot", stdin="\n")

    assert result.returncode == 0, result.stderr
    assert "Open https://github.com/login/device and enter code: WDJB-MJHT" in result.stdout
    credential = tau.stored()["github-copilot"]
    assert str(credential["refresh"]).startswith("gho_")
    assert "proxy-ep=proxy.individual.githubcopilot.com" in str(credential["access"])
    account_models = [m.id for m in get_models("github-copilot")[:2]]
    assert credential["availableModelIds"] == account_models  # the second enabled by the login
    listed = tau.run("--list-models", "github-copilot").stdout.splitlines()[1:]
    assert [line.split()[1] for line in listed] == account_models

    llm.add(Turn(text="hello from copilot"))
    model = model_id("github-copilot", "openai-completions")
    answer = tau.run("-p", "hi", "--provider", "github-copilot", "--model", model)

    assert answer.returncode == 0, answer.stderr
    assert "hello from copilot" in answer.stdout
    request = llm.last_request
    assert request.headers["authorization"] == f"Bearer {credential['access']}"
    assert request.headers["editor-version"].startswith("vscode/")
    assert request.headers["x-initiator"] == "user"
    method, path, _ = oauth.requests[-1]
    assert (method, path) == ("POST", "api.individual.githubcopilot.com/chat/completions")

    # A stale Copilot token is replaced by exchanging the GitHub token again.
    tau.expire("github-copilot")
    printed = tau.run("auth", "print-bearer-token", "--provider", "github-copilot")

    assert printed.returncode == 0, printed.stderr
    fresh = tau.stored()["github-copilot"]
    assert (fresh["refresh"], printed.stdout.strip()) == (credential["refresh"], fresh["access"])
    assert fresh["access"] != credential["access"]
    assert oauth.refresh_counts["github-copilot"] == 2  # the login's exchange and this one


# ---- Google: Gemini CLI and Antigravity, with project discovery ---------------------------------


@pytest.mark.parametrize("provider", ["google-gemini-cli", "google-antigravity"])
def test_google_login_finds_the_project_and_requests_carry_token_and_project(
    tau: Tau, llm: FakeLLMServer, provider: str
) -> None:
    result = tau.login(provider)

    assert result.returncode == 0, result.stderr
    credential = tau.stored()[provider]
    assert credential["projectId"] == "proj-fake-42"
    assert credential["email"] == "user@example.com"
    printed = tau.run("auth", "print-bearer-token", provider)
    assert printed.stdout.strip() == credential["access"]

    (tau.agent_dir / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": llm.url()}}}))
    llm.add(Turn(text="hello from cloud code"))
    model = model_id(provider, "google-gemini-cli")
    answer = tau.run("-p", "hi", "--provider", provider, "--model", model)

    assert answer.returncode == 0, answer.stderr
    assert "hello from cloud code" in answer.stdout
    assert llm.last_request.headers["authorization"] == f"Bearer {credential['access']}"
    assert llm.last_request.body["project"] == "proj-fake-42"


def test_gemini_cli_onboards_an_account_without_a_project(tau: Tau, oauth: FakeOAuthServer) -> None:
    oauth.google_onboarding = True

    result = tau.login("google-gemini-cli")

    assert result.returncode == 0, result.stderr
    assert tau.stored()["google-gemini-cli"]["projectId"] == "proj-onboarded-7"


def test_google_refresh_keeps_the_refresh_token_and_project(tau: Tau, oauth: FakeOAuthServer) -> None:
    assert tau.login("google-gemini-cli").returncode == 0
    before = tau.stored()["google-gemini-cli"]
    tau.expire("google-gemini-cli")

    printed = tau.run("auth", "print-bearer-token", "google-gemini-cli")

    after = tau.stored()["google-gemini-cli"]
    assert printed.returncode == 0, printed.stderr
    assert (after["refresh"], after["projectId"]) == (before["refresh"], before["projectId"])
    assert after["access"] != before["access"]


# ---- xAI and Kimi Code: standard device-code logins ------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "page", "code"),
    [
        ("xai", "https://accounts.x.ai/device?code=XAI-7788", "XAI-7788"),
        ("kimi-coding", "https://www.kimi.com/device?user_code=KIMI-4455", "KIMI-4455"),
        ("meta", "https://auth.meta.com/device?user_code=META-1122", "META-1122"),
    ],
)
def test_device_login_waits_for_the_code_then_requests_carry_the_access_token(
    tau: Tau, llm: FakeLLMServer, oauth: FakeOAuthServer, provider: str, page: str, code: str
) -> None:
    oauth.device_pending_polls = 2  # the user takes a moment to enter the code

    result = tau.run("auth", "login", provider)

    assert result.returncode == 0, result.stderr
    assert f"Open {page} and enter code: {code}" in result.stdout
    credential = tau.stored()[provider]
    model = get_models(provider)[0]
    (tau.agent_dir / "models.json").write_text(
        json.dumps({"providers": {provider: {"baseUrl": llm.url("/v1")}}})
    )
    llm.add(Turn(text="hello"))
    answer = tau.run("-p", "hi", "--provider", provider, "--model", model.id)

    assert answer.returncode == 0, answer.stderr
    assert llm.last_request.headers["authorization"] == f"Bearer {credential['access']}"


# ---- OpenRouter: a sign-in that yields a permanent API key -----------------------------------------


def test_openrouter_login_stores_a_key_that_never_expires_and_requests_use_it(
    tau: Tau, llm: FakeLLMServer
) -> None:
    result = tau.login("openrouter")

    assert result.returncode == 0, result.stderr
    credential = tau.stored()["openrouter"]
    assert credential["type"] == "oauth" and credential["refresh"] == ""
    assert credential["expires"] == 2**53 - 1
    assert "openrouter  logged in (OAuth), does not expire" in tau.run("auth", "status").stdout
    model = get_models("openrouter")[0]
    (tau.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"openrouter": {"baseUrl": llm.url("/v1")}}})
    )
    llm.add(Turn(text="hello"))
    answer = tau.run("-p", "hi", "--provider", "openrouter", "--model", model.id)

    assert answer.returncode == 0, answer.stderr
    assert llm.last_request.headers["authorization"] == f"Bearer {credential['access']}"


# ---- status and logout ---------------------------------------------------------------------------


def test_status_printing_and_logout(logged_in: Tau) -> None:
    status = logged_in.run("auth", "status")
    api_key = logged_in.run("auth", "print-api-key", "--provider", "openai")
    not_a_key = logged_in.run("auth", "print-api-key", "--provider", "anthropic")
    logout = logged_in.run("auth", "logout", "anthropic")
    again = logged_in.run("auth", "logout", "anthropic")

    assert "  anthropic  logged in (OAuth), token valid for 5" in status.stdout
    assert "  openai     API key in auth.json" in status.stdout
    assert api_key.stdout == "sk-other-entry\n"
    assert not_a_key.stderr == 'tau: Provider "anthropic" is configured with OAuth, not an API key\n'
    assert logout.stdout.strip() == "Logged out of Anthropic."
    assert again.stdout.strip().startswith("No stored credentials for Anthropic.")
    assert list(logged_in.stored()) == ["openai"]
