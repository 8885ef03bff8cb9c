"""Cloudflare's ``{CLOUDFLARE_ACCOUNT_ID}``/``{CLOUDFLARE_GATEWAY_ID}`` base URLs, filled for every API
the gateway's models use, from the ``env`` option first and the environment second (as pi 1.6)."""

from __future__ import annotations

import pytest

from tau.ai import Context, Model, UserMessage, complete, complete_simple
from tau.ai.base_url_env import fill_base_url
from tau.ai.classifier_models import ClassifierModel
from tau.ai.options import SimpleStreamOptions
from tau.testing.fake_llm import FakeLLMServer, Turn

GATEWAY = "/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}"
# The gateway's catalogue: its Anthropic, OpenAI (Responses) and Workers AI (Completions) routes.
ROUTES = {
    "anthropic-messages": ("/anthropic", "/v1/messages"),
    "openai-responses": ("/openai", "/responses"),
    "openai-completions": ("/compat", "/chat/completions"),
}


def _gateway_model(server: FakeLLMServer, api: str) -> Model:
    route, _ = ROUTES[api]
    return Model(
        id="m", api=api, provider="cloudflare-ai-gateway", base_url=server.url(GATEWAY + route), max_tokens=64
    )


@pytest.mark.parametrize("api", list(ROUTES))
async def test_every_gateway_api_goes_to_the_account_and_gateway_of_the_env_option(api: str) -> None:
    with FakeLLMServer([Turn(text="ok")]) as server:
        env = {"CLOUDFLARE_ACCOUNT_ID": "acct-1", "CLOUDFLARE_GATEWAY_ID": "gw-1"}
        options = SimpleStreamOptions(api_key="cf-key", extra={"env": env})
        reply = await complete_simple(_gateway_model(server, api), Context([UserMessage("hi")]), options)
        (request,) = server.requests
    assert reply.stop_reason == "stop", reply.error_message
    route, endpoint = ROUTES[api]
    assert request.path == f"/v1/acct-1/gw-1{route}{endpoint}"
    # The gateway's own header carries the key, whatever the API behind it.
    assert request.headers["cf-aig-authorization"] == "Bearer cf-key"
    assert "authorization" not in request.headers and "x-api-key" not in request.headers


async def test_the_environment_fills_what_the_env_option_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-env")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw-env")
    with FakeLLMServer([Turn(text="ok")]) as server:
        model = _gateway_model(server, "openai-responses")
        options = SimpleStreamOptions(api_key="k", extra={"env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}})
        reply = await complete(model, Context([UserMessage("hi")]), options)
        (request,) = server.requests
    assert reply.stop_reason == "stop", reply.error_message
    assert request.path == "/v1/acct-stored/gw-env/openai/responses"


async def test_a_variable_without_a_value_ends_the_request_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CLOUDFLARE_GATEWAY_ID", raising=False)
    with FakeLLMServer([Turn(text="ok")]) as server:
        model = _gateway_model(server, "anthropic-messages")
        options = SimpleStreamOptions(api_key="k", extra={"env": {"CLOUDFLARE_ACCOUNT_ID": "acct-1"}})
        reply = await complete_simple(model, Context([UserMessage("hi")]), options)
        sent = list(server.requests)
    assert reply.stop_reason == "error"
    assert reply.error_message == (
        "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set."
    )
    assert sent == []


def test_a_classifier_model_is_filled_the_same_way_and_the_original_is_left_alone() -> None:
    model = ClassifierModel(
        id="@cf/cloudflare/clef",
        api="cloudflare-workers-ai-system-one",
        provider="cloudflare-workers-ai",
        base_url="https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai",
    )
    filled = fill_base_url(model, {"CLOUDFLARE_ACCOUNT_ID": "acct-9"})
    assert filled.base_url == "https://api.cloudflare.com/client/v4/accounts/acct-9/ai"
    assert model.base_url.endswith("/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai")
    plain = Model(id="m", api="openai-completions", provider="p", base_url="https://x.example/v1")
    assert fill_base_url(plain, {"CLOUDFLARE_ACCOUNT_ID": "a"}) is plain
