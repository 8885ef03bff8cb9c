"""The azure-openai-responses provider: endpoint, deployment and credential resolution, Azure's errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tau.ai import Context, Model, UserMessage, complete
from tau.ai.providers.azure_config import parse_deployment_map, resolve_base_url
from tau.ai.stream_writer import ProviderError
from tau.testing.fake_llm import FakeLLMServer, Fault, Turn

_AZURE_VARIABLES = (
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
)


@pytest.fixture(autouse=True)
def clean_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AZURE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def azure_model(base_url: str = "", **changes: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "gpt-5.2",
        "api": "azure-openai-responses",
        "provider": "azure",
        "base_url": base_url,
        "reasoning": True,
    }
    fields.update(changes)
    return Model(**fields)


def ask() -> Context:
    return Context(messages=[UserMessage("hi")])


async def test_the_env_endpoint_version_and_deployment_map_shape_the_request(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", server.url("/openai/v1"))
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "preview")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4.1=chat, gpt-5.2=prod-gpt52")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "resource-key")
    server.add(Turn(text="Hello from Azure."))
    reply = await complete(azure_model(), ask(), max_tokens=4)
    assert reply.stop_reason == "stop", reply.error_message
    assert (reply.text(), reply.model) == ("Hello from Azure.", "gpt-5.2")
    request = server.last_request
    assert (request.path, request.query) == ("/openai/v1/responses", "api-version=preview")
    assert request.headers["api-key"] == "resource-key"
    assert "authorization" not in request.headers
    assert request.body["model"] == "prod-gpt52"
    assert request.body["max_output_tokens"] == 16  # Azure rejects fewer


async def test_an_entra_id_token_is_sent_as_a_bearer_token(server: FakeLLMServer) -> None:
    token = "eyJ0eXAiOiJKV1QifQ.eyJhdWQiOiJjb2duaXRpdmVzZXJ2aWNlcyJ9.c2lnbmF0dXJl"
    server.add(Turn(text="ok"))
    reply = await complete(azure_model(server.url("/openai/v1")), ask(), api_key=token)
    assert reply.stop_reason == "stop", reply.error_message
    assert server.last_request.headers["authorization"] == f"Bearer {token}"
    assert "api-key" not in server.last_request.headers
    assert server.last_request.body["model"] == "gpt-5.2"  # no mapping: the model id is the deployment


async def test_an_explicit_deployment_option_wins_over_the_map(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-5.2=from-map")
    server.add(Turn(text="ok"))
    await complete(
        azure_model(server.url("/openai/v1")), ask(), api_key="k", azure_deployment_name="explicit"
    )
    assert server.last_request.body["model"] == "explicit"


async def test_a_missing_deployment_is_one_line_naming_it_and_the_map_variable(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=404)))
    reply = await complete(azure_model(server.url("/openai/v1"), id="gpt-4.1"), ask(), api_key="k")
    assert reply.stop_reason == "error"
    message = reply.error_message or ""
    assert "\n" not in message
    assert message.startswith(
        f"Azure OpenAI deployment 'gpt-4.1' does not exist at {server.url('/openai/v1')}"
    )
    assert "AZURE_OPENAI_DEPLOYMENT_NAME_MAP=gpt-4.1=<deployment>" in message


async def test_a_bad_key_is_azures_access_denied_message(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401)))
    reply = await complete(azure_model(server.url("/openai/v1")), ask(), api_key="wrong")
    assert reply.stop_reason == "error"
    assert (reply.error_message or "").startswith("401 Access denied due to invalid subscription key")


async def test_a_429_is_retried_after_its_retry_after(server: FakeLLMServer) -> None:
    server.add(
        Turn(fault=Fault("status", status=429, headers={"retry-after": "0"})), Turn(text="second time lucky")
    )
    before = len(server.requests)
    reply = await complete(azure_model(server.url("/openai/v1")), ask(), api_key="k", max_retries=2)
    assert reply.stop_reason == "stop", reply.error_message
    assert reply.text() == "second time lucky"
    assert len(server.requests) - before == 2


async def test_no_endpoint_anywhere_is_an_error_naming_the_variables() -> None:
    reply = await complete(azure_model(), ask(), api_key="k")
    assert reply.stop_reason == "error"
    assert "AZURE_OPENAI_RESOURCE_NAME" in (reply.error_message or "")
    assert "AZURE_OPENAI_BASE_URL" in (reply.error_message or "")


async def test_no_key_is_an_error_naming_the_key_variable() -> None:
    reply = await complete(azure_model("https://r.openai.azure.com"), ask())
    assert reply.stop_reason == "error"
    assert "AZURE_OPENAI_API_KEY" in (reply.error_message or "")


def test_the_resource_name_builds_the_v1_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "contoso")
    assert resolve_base_url(azure_model(), {}) == "https://contoso.openai.azure.com/openai/v1"
    assert (
        resolve_base_url(azure_model(), {"azure_resource_name": "other"})
        == "https://other.openai.azure.com/openai/v1"
    )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://contoso.openai.azure.com/", "https://contoso.openai.azure.com/openai/v1"),
        (
            "https://contoso.cognitiveservices.azure.com/openai",
            "https://contoso.cognitiveservices.azure.com/openai/v1",
        ),
        (
            "https://contoso.openai.azure.com/openai/v1/responses",
            "https://contoso.openai.azure.com/openai/v1",
        ),
        ("https://proxy.example.com/azure/", "https://proxy.example.com/azure"),
    ],
)
def test_an_azure_host_without_a_path_gets_openai_v1(given: str, expected: str) -> None:
    assert resolve_base_url(azure_model(given), {}) == expected


def test_an_unparsable_base_url_is_refused_by_name() -> None:
    with pytest.raises(ProviderError, match="Invalid Azure OpenAI base URL"):
        resolve_base_url(azure_model("contoso"), {})


def test_the_deployment_map_skips_malformed_entries() -> None:
    assert parse_deployment_map(" a = x ,b=,=c, d=y=z,,") == {"a": "x", "d": "y=z"}


async def test_an_azure_chat_model_goes_to_the_same_endpoint_and_deployment(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", server.url("/openai/v1"))
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "deepseek-v4-pro=team-deepseek")
    server.add(Turn(text="chat ok"))
    model = azure_model(id="deepseek-v4-pro", api="openai-completions", reasoning=False)
    reply = await complete(model, ask(), api_key="resource-key")
    assert reply.text() == "chat ok", reply.error_message
    request = server.last_request
    assert (request.path, request.api) == ("/openai/v1/chat/completions", "openai-completions")
    assert request.body["model"] == "team-deepseek"
    assert request.headers["authorization"] == "Bearer resource-key"


async def test_long_cache_retention_keeps_the_cache_key_but_sends_no_retention(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    await complete(
        azure_model(server.url("/openai/v1")), ask(), api_key="k", session_id="sess", cache_retention="long"
    )
    body = server.last_request.body
    assert body["prompt_cache_key"] == "sess"
    assert "prompt_cache_retention" not in body


async def test_reasoning_azure_removed_is_kept_as_pi_16s_diagnostic(server: FakeLLMServer) -> None:
    removed = [{"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "model_mismatch"}]
    server.add(Turn(text="ok", input_transformations=removed))
    reply = await complete(azure_model(server.url("/openai/v1")), ask(), api_key="resource-key")
    assert reply.stop_reason == "stop", reply.error_message
    assert [(d["type"], d["details"]) for d in reply.diagnostics or []] == [
        ("openai_input_transformations", {"transformations": removed})
    ]
