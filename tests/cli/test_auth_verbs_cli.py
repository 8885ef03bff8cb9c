"""The ``tau auth`` verbs' options beyond signing in: an API key saved by ``login --api-key``, the
provider pickers on a terminal, ``print-bearer-token --min-expiry``, ``check`` (plain, ``--json``,
``--no-refresh``) and ``--model`` naming the provider. Real processes, the fake OAuth server."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from oauth_login import Tau, make_tau

from tau.accounts.oauth import OAUTH_PROVIDERS
from tau.testing.fake_oauth import FakeOAuthServer


@pytest.fixture(scope="module")
def oauth() -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(refresh_delay_s=0) as server:
        yield server


@pytest.fixture
def tau(tmp_path: Path, oauth: FakeOAuthServer) -> Tau:
    oauth.expires_in = 3600
    oauth.refresh_counts.clear()
    return make_tau(tmp_path, oauth)


@pytest.fixture
def logged_in(tau: Tau, oauth: FakeOAuthServer) -> Tau:
    """Signed in to Anthropic for an hour, with an OpenAI key beside it."""
    data = {"anthropic": oauth.issue_login("anthropic"), "openai": {"type": "api_key", "key": "sk-openai"}}
    tau.auth_file.write_text(json.dumps(data))
    tau.auth_file.chmod(0o600)
    return tau


def _terminal(tau: Tau, *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "tau", *args],
        env=tau.env,
        cwd=str(tau.agent_dir),
        encoding="utf-8",
        timeout=30,
        use_poll=True,  # select() fails once the test process holds a descriptor above 1023
    )


def test_login_with_api_key_saves_the_piped_key_privately_and_an_empty_one_saves_nothing(tau: Tau) -> None:
    empty = tau.run("auth", "login", "openai", "--api-key", stdin="\n")
    assert (empty.returncode, empty.stderr) == (1, "tau: No API key given; nothing saved.\n")
    assert not tau.auth_file.exists()

    saved = tau.run("auth", "login", "openai", "--api-key", stdin="sk-piped\n")

    assert saved.returncode == 0, saved.stderr
    assert saved.stdout == f"Saved API key for OpenAI. Credentials saved to {tau.auth_file}\n"
    assert tau.stored() == {"openai": {"type": "api_key", "key": "sk-piped"}}
    assert stat.S_IMODE(tau.auth_file.stat().st_mode) == 0o600
    assert tau.run("auth", "print-api-key", "openai").stdout == "sk-piped\n"


def test_a_workers_ai_login_keeps_the_account_id_beside_the_key(tau: Tau) -> None:
    missing = tau.run("auth", "login", "cloudflare-workers-ai", "--api-key", stdin="cf-key\n\n")
    assert (missing.returncode, missing.stderr) == (
        1,
        "tau: No Cloudflare account ID given; nothing saved.\n",
    )

    saved = tau.run("auth", "login", "cloudflare-workers-ai", "--api-key", stdin="cf-key\nacct-7\n")

    assert saved.returncode == 0, saved.stderr
    assert tau.stored() == {
        "cloudflare-workers-ai": {
            "type": "api_key",
            "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-7"},
        }
    }


def test_login_without_a_provider_off_a_terminal_names_the_providers_with_a_login(tau: Tau) -> None:
    result = tau.run("auth", "login")
    assert result.returncode == 1
    assert result.stderr == (
        f"tau: Usage: tau auth login <provider>; providers with a login: {', '.join(OAUTH_PROVIDERS)}\n"
    )


def test_on_a_terminal_login_and_logout_let_the_user_pick_the_provider(tau: Tau) -> None:
    login = _terminal(tau, "auth", "login", "--api-key")
    login.expect("Log in to which provider?")
    login.expect(r"(\d+)\. anthropic\r\n")
    number = login.match.group(1)
    login.expect("Select 1-")
    login.sendline(number)
    login.expect("Enter Anthropic API key: ")
    login.sendline("sk-typed")
    login.expect(pexpect.EOF)
    login.close()
    assert login.exitstatus == 0
    assert "sk-typed" not in str(login.before)  # the key is not echoed
    assert tau.stored() == {"anthropic": {"type": "api_key", "key": "sk-typed"}}

    logout = _terminal(tau, "auth", "logout")
    logout.expect("Log out of which provider?")
    logout.expect("1. anthropic")
    logout.sendline("1")
    logout.expect(r"Removed stored API key for Anthropic\.")
    logout.expect(pexpect.EOF)
    logout.close()
    assert logout.exitstatus == 0
    assert tau.stored() == {}


def test_min_expiry_refreshes_a_token_that_would_expire_sooner(
    logged_in: Tau, oauth: FakeOAuthServer
) -> None:
    before = logged_in.stored()["anthropic"]["access"]
    assert logged_in.run("auth", "print-bearer-token", "anthropic").stdout.strip() == before
    assert oauth.refresh_counts["anthropic"] == 0  # an hour left is more than the default 30 minutes

    oauth.expires_in = 7200
    longer = logged_in.run("auth", "print-bearer-token", "anthropic", "--min-expiry", "90m")

    assert longer.returncode == 0, longer.stderr
    assert longer.stdout.strip() == logged_in.stored()["anthropic"]["access"] != before
    assert oauth.refresh_counts["anthropic"] == 1


def test_min_expiry_longer_than_any_token_is_one_line_and_a_bad_duration_is_named(logged_in: Tau) -> None:
    too_long = logged_in.run("auth", "print-bearer-token", "anthropic", "--min-expiry", "3h")
    bad = logged_in.run("auth", "print-bearer-token", "anthropic", "--min-expiry", "soon")

    assert (too_long.returncode, too_long.stderr) == (
        1,
        "tau: OAuth refresh returned a token that expires too soon for anthropic\n",
    )
    assert (bad.returncode, bad.stderr) == (1, "tau: --min-expiry must use a duration such as 30m or 1h\n")


def test_check_says_ready_not_ready_or_invalid_with_its_exit_code(
    logged_in: Tau, oauth: FakeOAuthServer
) -> None:
    ready = logged_in.run("auth", "check", "--provider", "anthropic", "--json")
    missing = logged_in.run("auth", "check", "--provider", "mistral")
    logged_in.expire("anthropic")
    oauth.revoke_all()
    unrefreshed = logged_in.run("auth", "check", "anthropic", "--no-refresh")
    refused = logged_in.run("auth", "check", "anthropic", "--json")

    assert (ready.returncode, json.loads(ready.stdout)) == (
        0,
        {"status": "ready", "provider": "anthropic", "authType": "oauth"},
    )
    assert (missing.returncode, missing.stdout) == (1, "not_ready\n")
    assert (unrefreshed.returncode, unrefreshed.stdout) == (0, "ready\n")
    assert (refused.returncode, json.loads(refused.stdout)) == (
        2,
        {"status": "invalid", "provider": "anthropic", "reason": "invalid_state"},
    )
    assert oauth.refresh_counts["anthropic"] == 1  # --no-refresh asked nothing


def test_check_with_credentials_prints_the_credential_as_pi16_does(
    logged_in: Tau, oauth: FakeOAuthServer
) -> None:
    key = logged_in.run("auth", "check", "--provider", "openai", "--credentials")
    key_json = logged_in.run("auth", "check", "openai", "--json", "--credentials")
    logged_in.expire("anthropic")
    token = logged_in.run("auth", "check", "anthropic", "--credentials")
    missing = logged_in.run("auth", "check", "mistral", "--credentials")

    assert (key.returncode, key.stdout) == (0, "sk-openai\n")
    assert (key_json.returncode, json.loads(key_json.stdout)) == (
        0,
        {"status": "ready", "provider": "openai", "authType": "api_key", "credentials": "sk-openai"},
    )
    refreshed = logged_in.stored()["anthropic"]["access"]
    assert (token.returncode, token.stdout) == (0, f"{refreshed}\n")  # the token after check's refresh
    assert oauth.refresh_counts["anthropic"] == 1
    assert (missing.returncode, missing.stdout) == (1, "not_ready\n")


def test_a_model_names_the_provider_whose_credential_is_printed(logged_in: Tau) -> None:
    token = logged_in.run("auth", "print-bearer-token", "--model", "claude-sonnet-4-5-20250929")
    key = logged_in.run("auth", "print-api-key", "--provider", "openai", "--model", "gpt-4o")
    unknown = logged_in.run("auth", "print-api-key", "--model", "no-such-model")
    neither = logged_in.run("auth", "print-api-key")

    assert (token.returncode, token.stdout) == (0, f"{logged_in.stored()['anthropic']['access']}\n")
    assert (key.returncode, key.stdout) == (0, "sk-openai\n")
    assert (unknown.returncode, unknown.stderr) == (1, 'tau: Unknown model "no-such-model"\n')
    assert (neither.returncode, neither.stderr) == (
        1,
        "tau: Credential printing requires --provider <provider> or --model <model>\n",
    )
