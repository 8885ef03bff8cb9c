"""The google-vertex provider against the fake Vertex route: API keys, Google Cloud credentials, errors.

Service-account tests run google-auth's real JWT exchange: a key generated here signs the
assertion, and the fake's token endpoint verifies it before issuing the token the model route checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from msgspec.structs import replace

from tau.ai import AssistantMessage, Context, Model, UserMessage, complete, complete_simple, get_model
from tau.ai.env_keys import AUTHENTICATED
from tau.ai.providers import google_credentials
from tau.ai.providers.google_vertex import express_url, regional_url
from tau.testing.fake_llm import FakeLLMServer, Fault, Turn
from tau.testing.fake_llm.google_auth import TOKEN_PATH, service_disabled_body

ACCOUNT = "tau-tests@vertex-project.iam.gserviceaccount.com"
PROJECT = "vertex-project"
LOCATION = "us-central1"


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def google_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No ambient Google credentials: an empty home, no metadata-server probe, project and location set."""
    for name in (
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_API_KEY",
        "GCLOUD_PROJECT",
        "CLOUDSDK_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", PROJECT)
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", LOCATION)
    google_credentials.forget_credentials()
    yield
    google_credentials.forget_credentials()


def _service_account(
    server: FakeLLMServer, key: rsa.RSAPrivateKey, tmp_path: Path, *, register: bool = True
) -> Path:
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    if register:
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        server.google.add_service_account(ACCOUNT, public)
    path = tmp_path / "service-account.json"
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "test-key-1",
        "private_key": pem,
        "client_email": ACCOUNT,
        "client_id": "1234567890",
        "token_uri": server.url(TOKEN_PATH),
    }
    path.write_text(json.dumps(info))
    return path


def _model(server: FakeLLMServer, model_id: str = "gemini-2.5-flash") -> Model:
    return Model(
        id=model_id, api="google-vertex", provider="google-vertex", base_url=server.url(""), reasoning=True
    )


async def _ask(model: Model, api_key: str = AUTHENTICATED, **options: Any) -> AssistantMessage:
    return await complete(model, Context(messages=[UserMessage("hi")]), api_key=api_key, **options)


# --- API keys ---------------------------------------------------------------------------------------


async def test_an_api_key_is_sent_as_x_goog_api_key_without_project_or_location(
    server: FakeLLMServer,
) -> None:
    server.google.allow_api_key("vertex-key")
    server.add(Turn(text="Hello from Vertex."))
    reply = await _ask(_model(server), "vertex-key")
    assert reply.text() == "Hello from Vertex.", reply.error_message
    request = server.last_request
    assert request.api == "google-vertex"
    assert request.path == "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    assert request.query == "alt=sse"
    assert request.headers["x-goog-api-key"] == "vertex-key"
    assert "authorization" not in request.headers


async def test_a_wrong_api_key_is_an_error_with_googles_message(server: FakeLLMServer) -> None:
    reply = await _ask(_model(server), "not-a-key")
    assert reply.stop_reason == "error"
    assert reply.error_message == "400 API key not valid. Please pass a valid API key."


# --- Google Cloud credentials -----------------------------------------------------------------------


async def test_a_service_account_file_is_exchanged_for_a_bearer_token_once(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(server, signing_key, tmp_path)))
    server.add(Turn(text="one"), Turn(text="two"))
    model = _model(server)
    assert (await _ask(model)).text() == "one"
    assert (await _ask(model)).text() == "two"
    assert [grant["grant_type"] for grant in server.google.grants] == [
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    ]
    assert {r.headers["authorization"] for r in server.requests} == {"Bearer ya29.fake-1"}


async def test_a_token_the_server_stops_accepting_is_refreshed_once_and_the_request_sent_again(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(server, signing_key, tmp_path)))
    server.add(Turn(text="one"), Turn(text="two"))
    model = _model(server)
    await _ask(model)
    server.google.expire_tokens()
    reply = await _ask(model)
    assert reply.text() == "two", reply.error_message
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer ya29.fake-1",
        "Bearer ya29.fake-1",
        "Bearer ya29.fake-2",
    ]


async def test_a_token_that_stays_rejected_is_one_line_saying_how_to_log_in_again(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(server, signing_key, tmp_path)))
    server.google.token_lifetime_s = 0  # every token it issues is already expired
    reply = await _ask(_model(server))
    assert reply.stop_reason == "error"
    message = reply.error_message or ""
    assert message.startswith("Vertex AI rejected the credentials (401 Request had invalid authentication")
    assert "gcloud auth application-default login" in message and "\n" not in message
    assert len(server.requests) == 2


async def test_a_service_account_google_refuses_is_an_error_naming_the_grant_failure(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _service_account(server, signing_key, tmp_path, register=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    reply = await _ask(_model(server))
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(
        "Google Cloud credentials could not be refreshed (invalid_grant: Invalid JWT: unknown service account"
    )
    assert server.requests == []


async def test_gcloud_user_credentials_in_the_home_folder_are_used_with_their_quota_project(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    adc = tmp_path / "home" / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "client.apps.googleusercontent.com",
                "client_secret": "secret",
                "refresh_token": "1//refresh",
                "quota_project_id": "billing-project",
                "token": "ya29.user-token",
                "expiry": "2999-01-01T00:00:00Z",
            }
        )
    )
    server.google.allow_token("ya29.user-token")
    server.add(Turn(text="hello user"))
    reply = await _ask(_model(server))
    assert reply.text() == "hello user", reply.error_message
    headers = server.last_request.headers
    assert headers["authorization"] == "Bearer ya29.user-token"
    assert headers["x-goog-user-project"] == "billing-project"


async def test_no_credentials_at_all_says_what_to_run_or_set(server: FakeLLMServer) -> None:
    reply = await _ask(_model(server))
    assert reply.stop_reason == "error"
    assert reply.error_message == (
        "No Google Cloud credentials found: run `gcloud auth application-default login`, or set "
        "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file"
    )
    assert server.requests == []


async def test_a_credentials_file_that_does_not_exist_is_named(
    server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    reply = await _ask(_model(server))
    message = reply.error_message or ""
    assert message.startswith(
        f"Cannot use the Google Cloud credentials in GOOGLE_APPLICATION_CREDENTIALS ({missing})"
    )
    assert "was not found" in message and "\n" not in message


@pytest.mark.parametrize(
    ("unset", "expected"),
    [
        ("GOOGLE_CLOUD_PROJECT", "Vertex AI needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT"),
        ("GOOGLE_CLOUD_LOCATION", "Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION"),
    ],
)
async def test_a_missing_project_or_location_names_the_variable_to_set(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, unset: str, expected: str
) -> None:
    monkeypatch.delenv(unset)
    reply = await _ask(_model(server))
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith(expected)
    assert server.requests == []


async def test_a_malformed_location_fails_before_any_request(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "Frankfurt")
    reply = await _ask(_model(server))
    assert reply.error_message == (
        "Invalid Google Cloud location 'Frankfurt' for Vertex AI: set GOOGLE_CLOUD_LOCATION to e.g. "
        "us-central1 (or global)"
    )
    assert server.requests == []


async def test_a_location_without_an_endpoint_is_named_when_its_host_does_not_resolve(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(server, signing_key, tmp_path)))
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central99")  # no such region, so no such host
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    google_hosts = get_model("google-vertex", "gemini-2.5-flash")
    reply = await _ask(google_hosts, max_retries=0)
    message = reply.error_message or ""
    assert message.startswith("Connection error calling https://us-central99-aiplatform.googleapis.com/v1/")
    assert message.endswith(
        "(no Vertex AI endpoint found for location 'us-central99': check GOOGLE_CLOUD_LOCATION, or the network)"
    )
    assert "\n" not in message


async def test_project_and_location_options_win_over_the_environment(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION")
    reply = await _ask(_model(server), project="p", location="l")
    assert "No Google Cloud credentials found" in (reply.error_message or "")


async def test_a_project_without_the_api_enabled_is_one_line_saying_how_to_enable_it(
    server: FakeLLMServer,
) -> None:
    server.google.allow_api_key("k")
    server.add(Turn(fault=Fault("status", status=403, body=service_disabled_body("4242"))))
    reply = await _ask(_model(server), "k")
    assert reply.stop_reason == "error"
    assert reply.error_message == (
        "Vertex AI: the aiplatform.googleapis.com API is not enabled for project 4242; enable it with "
        "`gcloud services enable aiplatform.googleapis.com --project 4242` (or at "
        "https://console.developers.google.com/apis/api/aiplatform.googleapis.com/overview?project=4242), "
        "wait a minute, and retry"
    )


def test_without_google_auth_installed_the_error_names_the_extra(tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "sys.modules['google.auth'] = None\n"  # what a missing package looks like to an import
        "from tau.ai import Context, Model, UserMessage, complete\n"
        "model = Model(id='gemini-2.5-flash', api='google-vertex', provider='google-vertex', base_url='')\n"
        "reply = asyncio.run(complete(model, Context(messages=[UserMessage('hi')]), api_key='<authenticated>',"
        " project='p', location='us-central1'))\n"
        "print(reply.error_message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == (
        "Google Vertex AI with Google Cloud credentials needs the google-auth package: "
        "install tau's vertex extra (pip install 'tau-agent[vertex]')"
    )


# --- requests ---------------------------------------------------------------------------------------


def test_googles_hosts_follow_the_location() -> None:
    model = get_model("google-vertex", "gemini-2.5-flash")
    path = "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert regional_url(model, "p", "us-central1") == (
        f"https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/{path}"
    )
    assert regional_url(model, "p", "global") == (
        f"https://aiplatform.googleapis.com/v1/projects/p/locations/global/{path}"
    )
    assert (
        regional_url(model, "p", "eu")
        == f"https://aiplatform.eu.rep.googleapis.com/v1/projects/p/locations/eu/{path}"
    )
    assert express_url(model) == f"https://aiplatform.googleapis.com/v1/{path}"


def test_a_custom_base_url_keeps_its_own_api_version() -> None:
    model = replace(
        get_model("google-vertex", "gemini-2.5-flash"), base_url="https://proxy.example/vertex/v1beta1/"
    )
    assert regional_url(model, "p", "us-central1") == (
        "https://proxy.example/vertex/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )


async def test_a_reasoning_level_becomes_the_thinking_config(server: FakeLLMServer) -> None:
    server.google.allow_api_key("k")
    server.add(Turn(text="ok"))
    model = replace(get_model("google-vertex", "gemini-2.5-pro"), base_url=server.url(""))
    reply = await complete_simple(model, Context(messages=[UserMessage("hi")]), api_key="k", reasoning="low")
    assert reply.stop_reason == "stop", reply.error_message
    assert server.last_request.body["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 2048,
    }


def test_the_official_client_parses_the_fake_vertex_stream(
    server: FakeLLMServer, signing_key: rsa.RSAPrivateKey, tmp_path: Path
) -> None:
    from google import genai
    from google.genai import types
    from google.oauth2 import service_account

    info = json.loads(_service_account(server, signing_key, tmp_path).read_text())
    credentials = service_account.Credentials.from_service_account_info(
        info, scopes=list(google_credentials.SCOPES)
    )
    client = genai.Client(
        vertexai=True,
        project=PROJECT,
        location=LOCATION,
        credentials=credentials,
        http_options=types.HttpOptions(base_url=server.url(""), api_version="v1"),  # pi asks for v1
    )
    server.add(Turn(text="Streamed through the SDK.", chunk_size=6))
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    assert "".join(chunk.text or "" for chunk in chunks) == "Streamed through the SDK."
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    request = server.last_request
    assert request.path == (
        f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    )
    assert request.headers["authorization"] == "Bearer ya29.fake-1"
