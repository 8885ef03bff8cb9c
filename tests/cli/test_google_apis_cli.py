"""Vertex AI and Cloud Code Assist through the real `tau` process, configured as a user would.

Vertex runs on a service-account file (google-auth's JWT exchange against the fake's token
endpoint), Cloud Code Assist on a Gemini CLI login placed in ``auth.json`` by hand. Each test first
answers with the local OpenAI-compatible model (which reads a file), then continues the session with
the Google API: its first request carries the other API's tool call and result, its model calls a
tool itself and the loop ends with its answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hand_off import add_providers, hand_off
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, Turn
from tau.testing.fake_llm.google_auth import TOKEN_PATH, service_disabled_body

ACCOUNT = "tau-cli@vertex-project.iam.gserviceaccount.com"
VERTEX = ("--provider", "google-vertex", "--model", "gemini-2.5-flash")


def _vertex_env(tau: TauCommand, tmp_path: Path) -> None:
    """A service-account file trusted by the fake, with pi's project and location variables."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    tau.server.google.add_service_account(ACCOUNT, public)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    info = {
        "type": "service_account",
        "project_id": "vertex-project",
        "private_key_id": "k1",
        "private_key": private,
        "client_email": ACCOUNT,
        "client_id": "1",
        "token_uri": tau.server.url(TOKEN_PATH),
    }
    credentials = tmp_path / "service-account.json"
    credentials.write_text(json.dumps(info))
    tau.env.update(
        GOOGLE_APPLICATION_CREDENTIALS=str(credentials),
        GOOGLE_CLOUD_PROJECT="vertex-project",
        GOOGLE_CLOUD_LOCATION="us-central1",
        NO_GCE_CHECK="true",
    )
    add_providers(tau, {"google-vertex": {"baseUrl": tau.server.url("")}})


def _parts(contents: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [part[kind] for turn in contents for part in turn["parts"] if kind in part]


def test_vertex_runs_a_tool_loop_after_a_hand_off_on_a_service_account(
    tau: TauCommand, tmp_path: Path
) -> None:
    _vertex_env(tau, tmp_path)
    requests = hand_off(tau, *VERTEX, api="google-vertex")
    first, second = (request.body["contents"] for request in requests)
    assert _parts(first, "functionCall") == [{"name": "read", "args": {"path": "first.txt"}}]
    assert _parts(first, "functionResponse") == [{"name": "read", "response": {"output": "alpha-content"}}]
    assert _parts(second, "functionResponse")[-1] == {"name": "read", "response": {"output": "beta-content"}}
    assert [r.headers["authorization"] for r in requests] == ["Bearer ya29.fake-1"] * 2
    assert len(tau.server.google.grants) == 1  # one JWT exchange for the whole run


def test_vertex_uses_the_settings_pis_vertex_login_stored_in_auth_json(
    tau: TauCommand, tmp_path: Path
) -> None:
    _vertex_env(tau, tmp_path)
    stored = {
        name: tau.env.pop(name)
        for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")
    }
    (tau.agent_dir / "auth.json").write_text(
        json.dumps({"google-vertex": {"type": "api_key", "env": stored}})
    )
    tau.server.add(Turn(text="From the stored settings."))
    result = tau.run(*VERTEX, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "From the stored settings.\n"
    assert tau.server.last_request.headers["authorization"] == "Bearer ya29.fake-1"


def test_vertex_with_the_api_disabled_fails_in_one_line(tau: TauCommand, tmp_path: Path) -> None:
    _vertex_env(tau, tmp_path)
    tau.server.add(Turn(fault=Fault("status", status=403, body=service_disabled_body("4242"))))
    result = tau.run(*VERTEX, "-p", "hi")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert (
        "the aiplatform.googleapis.com API is not enabled for project 4242; enable it with " in result.stderr
    )


@pytest.mark.parametrize(
    ("provider", "model"),
    [("google-gemini-cli", "gemini-2.5-pro"), ("google-antigravity", "claude-sonnet-4-5")],
)
def test_cloud_code_runs_a_tool_loop_after_a_hand_off_on_a_login_placed_by_hand(
    tau: TauCommand, provider: str, model: str
) -> None:
    login = {
        "type": "oauth",
        "access": "ya29.by-hand",
        "refresh": "1//refresh",
        "expires": int(time.time() * 1000) + 3_600_000,
        "projectId": "hand-project",
    }
    (tau.agent_dir / "auth.json").write_text(json.dumps({provider: login}))
    add_providers(tau, {provider: {"baseUrl": tau.server.url("")}})
    requests = hand_off(tau, "--provider", provider, "--model", model, api="google-gemini-cli")
    for request in requests:
        assert request.headers["authorization"] == "Bearer ya29.by-hand"
        assert (request.body["project"], request.body["model"]) == ("hand-project", model)
    # Claude behind Cloud Code needs each call's id on its result (Gemini matches them by order).
    call_id = {"id": "call_local_1"} if model.startswith("claude-") else {}
    assert _parts(requests[0].body["request"]["contents"], "functionResponse") == [
        {"name": "read", "response": {"output": "alpha-content"}, **call_id}
    ]


def test_print_mode_on_an_openai_compatible_server_imports_no_cloud_sdk_nor_other_provider(
    tau: TauCommand,
) -> None:
    tau.server.add(Turn(text="hi"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", "-p", *MODEL, "hi"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert done.stdout == "hi\n"
    assert "tau.ai.transport.http" in imported  # the listing does show what the request needed
    unused = {
        "google",
        "google.auth",
        "botocore",
        "websockets",
        "tau.ai.providers.google_vertex",
        "tau.ai.providers.google_gemini_cli",
        "tau.ai.providers.bedrock",
        "tau.ai.providers.openai_codex_responses",
        "tau.ai.providers.pi_messages",
        "tau.accounts.oauth",
        "tau.accounts.account_models",
        "zstandard",
    }
    assert not imported & unused


def test_vertex_without_google_auth_installed_is_one_line_naming_the_extra(
    tau: TauCommand, tmp_path: Path
) -> None:
    _vertex_env(tau, tmp_path)
    hook = tmp_path / "hook"
    hook.mkdir()
    # What a missing package looks like to an import, in the tau process itself.
    (hook / "sitecustomize.py").write_text("import sys\nsys.modules['google.auth'] = None\n")
    tau.env["PYTHONPATH"] = str(hook)
    result = tau.run(*VERTEX, "-p", "hi")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "Google Vertex AI with Google Cloud credentials needs the google-auth package: "
        "install tau's vertex extra (pip install 'tau-agent[vertex]')"
    ]
    assert tau.server.requests == []


def test_vertex_without_credentials_names_what_is_missing(tau: TauCommand, tmp_path: Path) -> None:
    tau.env.update(HOME=str(tmp_path), GOOGLE_CLOUD_PROJECT="vertex-project")
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_LOCATION"):
        tau.env.pop(name, None)
    result = tau.run(*VERTEX, "-p", "hi")
    assert result.returncode != 0
    assert result.stderr == (
        'tau: No credentials for provider "google-vertex": set GOOGLE_CLOUD_API_KEY, or for Google Cloud '
        "credentials: `gcloud auth application-default login` (or GOOGLE_APPLICATION_CREDENTIALS naming a "
        "service-account file), GOOGLE_CLOUD_LOCATION\n"
    )
    assert tau.server.requests == []


def test_auth_login_google_vertex_stores_pis_settings_and_a_request_uses_them(
    tau: TauCommand, tmp_path: Path
) -> None:
    _vertex_env(tau, tmp_path)
    answers = [tau.env.pop(name) for name in ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")]
    answers.append(tau.env.pop("GOOGLE_APPLICATION_CREDENTIALS"))
    login = tau.run("auth", "login", "google-vertex", stdin="3\n" + "\n".join(answers) + "\n")
    assert login.returncode == 0, login.stderr
    assert "Service account credentials file" in login.stdout
    auth_file = tau.agent_dir / "auth.json"
    assert auth_file.stat().st_mode & 0o777 == 0o600
    assert json.loads(auth_file.read_text()) == {
        "google-vertex": {
            "type": "api_key",
            "env": {
                "GOOGLE_CLOUD_PROJECT": "vertex-project",
                "GOOGLE_CLOUD_LOCATION": "us-central1",
                "GOOGLE_APPLICATION_CREDENTIALS": answers[2],
            },
        }
    }
    tau.server.add(Turn(text="Through the login."))
    result = tau.run(*VERTEX, "-p", "hi")
    assert (result.returncode, result.stdout) == (0, "Through the login.\n"), result.stderr
    assert tau.server.last_request.headers["authorization"] == "Bearer ya29.fake-1"


def test_auth_login_google_vertex_with_an_api_key_stores_the_key(tau: TauCommand) -> None:
    login = tau.run("auth", "login", "google-vertex", stdin="1\nAIza-vertex-key\n")
    assert login.returncode == 0, login.stderr
    stored = json.loads((tau.agent_dir / "auth.json").read_text())
    assert stored == {"google-vertex": {"type": "api_key", "key": "AIza-vertex-key"}}


def test_auth_login_google_vertex_cancelled_or_without_the_file_saves_nothing(
    tau: TauCommand, tmp_path: Path
) -> None:
    cancelled = tau.run("auth", "login", "google-vertex", stdin="2\nvertex-project\n")
    assert (cancelled.returncode, cancelled.stderr) == (1, "tau: Login cancelled.\n")
    missing = tau.run(
        "auth", "login", "google-vertex", stdin=f"3\np\nus-central1\n{tmp_path / 'none.json'}\n"
    )
    assert missing.returncode == 1
    assert (
        missing.stderr
        == f"tau: No service account credentials file at {tmp_path / 'none.json'}; nothing saved.\n"
    )
    assert not (tau.agent_dir / "auth.json").exists()
