"""The real `tau` and the real pi 1.6 send Cloudflare chat requests to the same account and AI
Gateway: a models.json base URL that keeps the ``{CLOUDFLARE_ACCOUNT_ID}``/``{CLOUDFLARE_GATEWAY_ID}``
placeholders re-routes the built-in providers to the fake server, and each placeholder comes from the
stored credential's ``env`` first, then the environment. A credential missing one is no credential
(pi says there is no key; tau names what to set), and a pi auth.json works in tau and back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pi16 import pi16_command
from tau_command import TauCommand

from tau.testing.fake_llm import RecordedRequest, Turn

GATEWAY = "cloudflare-ai-gateway"
WORKERS = "cloudflare-workers-ai"
# One gateway model of each API its catalogue uses.
GATEWAY_MODELS = {
    "openai-completions": "workers-ai/@cf/moonshotai/kimi-k2.7-code",
    "openai-responses": "gpt-5",
    "anthropic-messages": "claude-sonnet-5",
}
WORKERS_MODEL = "@cf/moonshotai/kimi-k2.7-code"


@pytest.fixture
def rerouted(tau: TauCommand) -> TauCommand:
    models = {
        "providers": {
            GATEWAY: {
                "baseUrl": tau.server.url("/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat")
            },
            WORKERS: {"baseUrl": tau.server.url("/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1")},
        }
    }
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    for name in ("CLOUDFLARE_API_KEY", "CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"):
        tau.env.pop(name, None)
    return tau


def store(agent_dir: Path, credentials: dict[str, object]) -> None:
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "auth.json").write_text(json.dumps(credentials))
    (agent_dir / "auth.json").chmod(0o600)


def run_tau(tau: TauCommand, model: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    tau.server.add(Turn(text="ok"))
    return subprocess.run(
        [sys.executable, "-m", "tau", "--model", model, "--no-tools", "-p", "hi"],
        cwd=tau.work,
        env={**tau.env, **env},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def run_pi(
    tau: TauCommand, pi_dir: Path, model: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    tau.server.add(Turn(text="ok"))
    pi_env = {**tau.env, **env, "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return subprocess.run(
        [*pi16_command(), "--model", model, "--no-tools", "-p", "hi"],
        cwd=tau.work,
        env=pi_env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def sent(tau: TauCommand, ran: subprocess.CompletedProcess[str]) -> RecordedRequest:
    assert ran.returncode == 0, ran.stderr
    return tau.server.requests[-1]


def auth_headers(request: RecordedRequest) -> dict[str, str | None]:
    return {n: request.headers.get(n) for n in ("cf-aig-authorization", "authorization", "x-api-key")}


def test_every_gateway_api_goes_to_the_stored_account_and_gateway_as_pi_sends_it(
    rerouted: TauCommand, tmp_path: Path
) -> None:
    credential = {
        GATEWAY: {
            "type": "api_key",
            "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored", "CLOUDFLARE_GATEWAY_ID": "gw-stored"},
        }
    }
    store(rerouted.agent_dir, credential)
    store(tmp_path / "pi", credential)
    for api, model_id in GATEWAY_MODELS.items():
        model = f"{GATEWAY}/{model_id}"
        ours = sent(rerouted, run_tau(rerouted, model, {}))
        theirs = sent(rerouted, run_pi(rerouted, tmp_path / "pi", model, {}))
        assert ours.path.startswith("/v1/acct-stored/gw-stored/compat/"), (api, ours.path)
        assert (ours.api, ours.path, auth_headers(ours)) == (theirs.api, theirs.path, auth_headers(theirs))
        assert ours.api == api


def test_what_the_credential_lacks_comes_from_the_environment_as_in_pi(
    rerouted: TauCommand, tmp_path: Path
) -> None:
    credential = {
        GATEWAY: {"type": "api_key", "key": "cf-key", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}
    }
    store(rerouted.agent_dir, credential)
    store(tmp_path / "pi", credential)
    env = {"CLOUDFLARE_ACCOUNT_ID": "acct-env", "CLOUDFLARE_GATEWAY_ID": "gw-env"}
    model = f"{GATEWAY}/{GATEWAY_MODELS['openai-responses']}"
    ours = sent(rerouted, run_tau(rerouted, model, env))
    theirs = sent(rerouted, run_pi(rerouted, tmp_path / "pi", model, env))
    assert ours.path == theirs.path == "/v1/acct-stored/gw-env/compat/responses"

    # Workers AI with the key and the account both from the environment.
    env = {"CLOUDFLARE_API_KEY": "cf-env-key", "CLOUDFLARE_ACCOUNT_ID": "acct-env"}
    ours = sent(rerouted, run_tau(rerouted, f"{WORKERS}/{WORKERS_MODEL}", env))
    theirs = sent(rerouted, run_pi(rerouted, tmp_path / "pi", f"{WORKERS}/{WORKERS_MODEL}", env))
    assert ours.path == theirs.path == "/client/v4/accounts/acct-env/ai/v1/chat/completions"
    assert ours.headers["authorization"] == theirs.headers["authorization"] == "Bearer cf-env-key"


def test_a_key_without_its_gateway_sends_nothing_and_says_what_to_set(
    rerouted: TauCommand, tmp_path: Path
) -> None:
    env = {"CLOUDFLARE_API_KEY": "cf-key", "CLOUDFLARE_ACCOUNT_ID": "acct-env"}
    model = f"{GATEWAY}/{GATEWAY_MODELS['openai-completions']}"
    ours = run_tau(rerouted, model, env)
    theirs = run_pi(rerouted, tmp_path / "pi", model, env)
    assert rerouted.server.requests == []
    assert theirs.returncode == 1 and "No API key found for cloudflare-ai-gateway." in theirs.stderr
    assert (ours.returncode, ours.stderr) == (
        1,
        'tau: No Cloudflare AI Gateway for provider "cloudflare-ai-gateway": set CLOUDFLARE_GATEWAY_ID, '
        "or store it with the key (/login cloudflare-ai-gateway)\n",
    )
    # Nor is the provider's model list available (pi lists none either).
    listed = subprocess.run(
        [sys.executable, "-m", "tau", "--list-models", "cloudflare"],
        cwd=rerouted.work,
        env={**rerouted.env, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert GATEWAY not in listed.stdout and WORKERS in listed.stdout


def test_a_gateway_login_in_tau_is_stored_as_pi_stores_it_and_pi_sends_with_it(
    rerouted: TauCommand, tmp_path: Path
) -> None:
    missing = rerouted.run("auth", "login", GATEWAY, "--api-key", stdin="cf-key\nacct-7\n\n")
    assert (missing.returncode, missing.stderr) == (
        1,
        "tau: No Cloudflare AI Gateway ID given; nothing saved.\n",
    )

    saved = rerouted.run("auth", "login", GATEWAY, "--api-key", stdin="cf-key\nacct-7\ngw-7\n")

    assert saved.returncode == 0, saved.stderr
    stored = json.loads((rerouted.agent_dir / "auth.json").read_text())
    assert stored == {
        GATEWAY: {
            "type": "api_key",
            "key": "cf-key",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-7", "CLOUDFLARE_GATEWAY_ID": "gw-7"},
        }
    }
    store(tmp_path / "pi", stored)
    model = f"{GATEWAY}/{GATEWAY_MODELS['anthropic-messages']}"
    ours = sent(rerouted, run_tau(rerouted, model, {}))
    theirs = sent(rerouted, run_pi(rerouted, tmp_path / "pi", model, {}))
    assert ours.path == theirs.path == "/v1/acct-7/gw-7/compat/v1/messages"
    assert (
        auth_headers(ours)
        == auth_headers(theirs)
        == {
            "cf-aig-authorization": "Bearer cf-key",
            "authorization": None,
            "x-api-key": None,
        }
    )
