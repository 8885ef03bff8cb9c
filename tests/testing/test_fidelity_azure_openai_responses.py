"""The official ``openai.AzureOpenAI`` client must accept the fake server's Azure Responses streams."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, Turn


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_the_v1_endpoint_streams_a_turn_to_the_azure_client(server: FakeLLMServer) -> None:
    server.add(
        Turn(text="Hello from Azure", tool_calls=[ScriptedToolCall("read", {"path": "a"}, id="call_1")])
    )
    client = openai.AzureOpenAI(
        api_key="azure-key", api_version="v1", base_url=server.url("/openai/v1"), max_retries=0
    )
    with client.responses.stream(model="my-deployment", input="hi") as events:
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        final = events.get_final_response()
    assert "".join(deltas) == final.output_text == "Hello from Azure"
    assert [item.type for item in final.output] == ["message", "function_call"]
    request = server.last_request
    assert (request.path, request.query, request.api) == (
        "/openai/v1/responses",
        "api-version=v1",
        "azure-openai-responses",
    )
    assert request.headers["api-key"] == "azure-key"
    assert request.body["model"] == "my-deployment"


def test_the_resource_endpoint_form_takes_an_entra_id_token(server: FakeLLMServer) -> None:
    server.add(Turn(text="ok"))
    client = openai.AzureOpenAI(
        azure_endpoint=server.url(), azure_ad_token="eyJ0eXAi.eyJhdWQi.c2ln", api_version="2025-04-01-preview"
    )
    events = list(client.responses.create(model="dep", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    request = server.last_request
    assert request.path == "/openai/responses"
    assert request.headers["authorization"] == "Bearer eyJ0eXAi.eyJhdWQi.c2ln"


def test_a_missing_deployment_raises_not_found_with_azures_code(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=404)))
    client = openai.AzureOpenAI(
        api_key="k", api_version="v1", base_url=server.url("/openai/v1"), max_retries=0
    )
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.create(model="nope", input="hi", stream=True)
    assert caught.value.code == "DeploymentNotFound"


def test_a_request_without_credentials_is_refused_before_a_turn_is_used(server: FakeLLMServer) -> None:
    server.add(Turn(text="kept for the next request"))
    response = httpx.post(
        server.url("/openai/v1/responses?api-version=v1"), json={"model": "d", "input": "hi"}
    )
    assert response.status_code == 401
    assert "invalid subscription key" in response.json()["error"]["message"]
    assert server.pending == 1
    client = openai.AzureOpenAI(
        api_key="k", api_version="v1", base_url=server.url("/openai/v1"), max_retries=0
    )
    assert list(client.responses.create(model="d", input="hi", stream=True))[-1].type == "response.completed"
