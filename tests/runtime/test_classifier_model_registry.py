"""The model registry's classifier models (issue #32): pi 1.6's catalogue, listed by type, never
among the chat models, available with the provider's credentials, moved by models.json, and run by
``classify`` with the provider's key, headers and Cloudflare account against the fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.accounts.auth_storage import AuthStorage, clear_config_value_cache
from tau.accounts.model_registry import ModelRegistry
from tau.ai.catalogue import get_providers
from tau.ai.classifier_models import ClassifierModel, find_classifier_model, get_classifier_providers
from tau.ai.env_keys import env_var_names
from tau.mcp.codemode_models import model_info
from tau.testing.fake_llm import PIXEL_PNG, FakeLLMServer, Turn


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for provider in [*get_providers(), *get_classifier_providers()]:
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    clear_config_value_cache()
    yield
    clear_config_value_cache()


def registry(tmp_path: Path, models: dict[str, object] | None = None) -> ModelRegistry:
    (tmp_path / "models.json").write_text(json.dumps({"providers": models or {}}))
    return ModelRegistry(AuthStorage(tmp_path / "auth.json"), tmp_path / "models.json")


def test_the_catalogue_is_pi_16s() -> None:
    assert get_classifier_providers() == [
        "cloudflare-workers-ai",
        "github-copilot",
        "openai",
        "opencode",
        "openrouter",
        "typesafe",
        "vercel-ai-gateway",
    ]
    jev = find_classifier_model("typesafe", "jev-latest")
    assert jev is not None
    assert jev.to_json() == {
        "type": "classifier",
        "id": "jev-latest",
        "name": "Jev",
        "api": "typesafe-system-one",
        "provider": "typesafe",
        "baseUrl": "https://api.typesafe.ai/v1/",
        "input": ["text", "image"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 64000,
        "compat": {"imageInput": "assets", "sendImageOptInHeader": True},
    }
    luna = find_classifier_model("openai", "gpt-6-luna")
    assert luna is not None and luna.api == "openai-decisions"
    assert luna.cost.to_json()["tiers"] == [
        {"inputTokensAbove": 272000, "input": 0.2, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    ]
    assert find_classifier_model("typesafe", "nope") is None
    copilot = find_classifier_model("github-copilot", "microsoft-decision-1")
    assert copilot is not None and copilot.headers is not None and "Copilot-Integration-Id" in copilot.headers


def test_classifier_models_are_a_type_of_their_own(tmp_path: Path) -> None:
    models = registry(tmp_path)
    classifiers = models.get_models_of_type("classifier")
    assert len(classifiers) == 81 and all(isinstance(m, ClassifierModel) for m in classifiers)
    assert [m.id for m in models.get_models_of_type("classifier", "typesafe")] == ["jev-latest"]
    assert models.get_models_of_type("classifier", "anthropic") == []
    assert models.get_model_of_type("chat", "typesafe", "jev-latest") is None
    assert models.get_model_of_type("image", "typesafe", "jev-latest") is None
    found = models.get_model_of_type("classifier", "openrouter", "~typesafe/jev-latest")
    assert isinstance(found, ClassifierModel) and found.context_window == 262144
    assert all(m.provider != "typesafe" for m in models.get_all())
    info = model_info(models.get_model_of_type("classifier", "github-copilot", "microsoft-decision-1"))
    assert info["type"] == "classifier" and "headers" not in info


def test_they_are_available_with_the_providers_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry(tmp_path).get_available_of_type("classifier") == []
    monkeypatch.setenv("TYPESAFE_API_KEY", "ts-key")
    available = registry(tmp_path).get_available_of_type("classifier")
    assert [(m.provider, m.id) for m in available] == [("typesafe", "jev-latest")]


def test_models_json_moves_them(tmp_path: Path) -> None:
    models = registry(tmp_path, {"typesafe": {"baseUrl": "http://127.0.0.1:9/v1"}})
    found = models.get_model_of_type("classifier", "typesafe", "jev-latest")
    assert isinstance(found, ClassifierModel) and found.base_url == "http://127.0.0.1:9/v1"


QUESTIONS = {
    "urgent": {"type": "bool", "instructions": "Urgent?", "criteria": {"true": "now", "false": "later"}}
}


def test_classify_uses_the_providers_key_headers_and_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf-key")
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-7")
    with FakeLLMServer() as server:
        server.add(Turn(), Turn())
        models = registry(
            tmp_path,
            {
                "cloudflare-workers-ai": {
                    "baseUrl": server.url("/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai"),
                    "headers": {"X-Team": "triage"},
                }
            },
        )
        context = {"state": {"message": "fire"}, "questions": QUESTIONS}
        result = asyncio.run(
            models.classify({"provider": "cloudflare-workers-ai", "id": "typesafe/jev"}, context)
        )
        missing = asyncio.run(models.classify({"provider": "typesafe", "id": "jev-latest"}, context))
        unknown = asyncio.run(models.classify({"provider": "typesafe", "id": "nope"}, context))
        (request,) = server.requests
    assert result.stop_reason == "stop" and result.to_json()["answers"] == {
        "urgent": {"type": "bool", "probability": 0.75}
    }
    assert request.path == "/client/v4/accounts/acct-7/ai/run"
    assert request.headers["authorization"] == "Bearer cf-key"
    assert request.headers["x-team"] == "triage"
    assert missing.stop_reason == "error" and missing.error_message is not None
    assert missing.error_message.startswith('No API key for provider "typesafe"')
    assert unknown.error_message == "Model typesafe/nope is not a classifier model"
    with pytest.raises(ValueError, match=r"context\.state"):
        asyncio.run(models.classify({"provider": "typesafe", "id": "jev-latest"}, {"questions": QUESTIONS}))


def test_models_json_compat_tells_a_proxy_how_to_send_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "ts-key")
    image = {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}
    context = {"state": {"message": "fire"}, "questions": QUESTIONS, "images": [image]}
    with FakeLLMServer() as server:
        server.add(Turn(), Turn())
        proxied = registry(
            tmp_path,
            {
                "typesafe": {
                    "baseUrl": server.url("/proxy/v1"),
                    "compat": {"imageInput": "images", "sendImageOptInHeader": False},
                },
                # A models entry is a chat model, whatever its api: not a classifier.
                "my-proxy": {
                    "baseUrl": server.url("/proxy/v1"),
                    "apiKey": "k",
                    "models": [{"id": "jev", "api": "typesafe-system-one"}],
                },
            },
        )
        found = proxied.get_model_of_type("classifier", "typesafe", "jev-latest")
        result = asyncio.run(proxied.classify({"provider": "typesafe", "id": "jev-latest"}, context))
        custom = asyncio.run(proxied.classify({"provider": "my-proxy", "id": "jev"}, context))
        (request,) = server.requests
    assert isinstance(found, ClassifierModel)
    assert found.compat == {"imageInput": "images", "sendImageOptInHeader": False}
    assert result.stop_reason == "stop"
    assert request.path == "/proxy/v1/systemone"
    assert request.body["images"] == [f"data:image/png;base64,{PIXEL_PNG}"] and "assets" not in request.body
    assert "typesafe-danger-zone-images" not in request.headers
    moved = registry(tmp_path, {"typesafe": {"baseUrl": "http://127.0.0.1:9/v1"}})
    unchanged = moved.get_model_of_type("classifier", "typesafe", "jev-latest")
    assert isinstance(unchanged, ClassifierModel)
    assert unchanged.compat == {"imageInput": "assets", "sendImageOptInHeader": True}
    assert proxied.get_model_of_type("chat", "my-proxy", "jev") is not None
    assert proxied.get_model_of_type("classifier", "my-proxy", "jev") is None
    assert custom.error_message == "Model my-proxy/jev is not a classifier model"


def test_workers_ai_takes_the_account_of_the_stored_login_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-from-env")
    stored = {"type": "api_key", "key": "cf-stored", "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}
    context = {"state": {"message": "fire"}, "questions": QUESTIONS}
    model = {"provider": "cloudflare-workers-ai", "id": "typesafe/jev"}
    with FakeLLMServer() as server:
        server.add(Turn(), Turn())
        base = {"baseUrl": server.url("/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai")}
        (tmp_path / "auth.json").write_text(json.dumps({"cloudflare-workers-ai": stored}))
        from_login = asyncio.run(registry(tmp_path, {"cloudflare-workers-ai": base}).classify(model, context))
        (tmp_path / "auth.json").write_text(
            json.dumps({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-plain"}})
        )
        from_env = asyncio.run(registry(tmp_path, {"cloudflare-workers-ai": base}).classify(model, context))
        monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID")
        none = asyncio.run(registry(tmp_path, {"cloudflare-workers-ai": base}).classify(model, context))
        paths = [(r.path, r.headers["authorization"]) for r in server.requests]
    assert from_login.stop_reason == "stop" and from_env.stop_reason == "stop"
    assert paths == [
        ("/client/v4/accounts/acct-stored/ai/run", "Bearer cf-stored"),
        ("/client/v4/accounts/acct-from-env/ai/run", "Bearer cf-plain"),
    ]
    assert none.error_message == (
        'No Cloudflare account for provider "cloudflare-workers-ai": set CLOUDFLARE_ACCOUNT_ID, '
        "or store it with the key (/login cloudflare-workers-ai)"
    )


def test_images_for_a_text_only_classifier_are_refused_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}
    context = {"state": {"message": "fire"}, "questions": QUESTIONS, "images": [image]}
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "gh-token")
    with FakeLLMServer() as server:
        models = registry(
            tmp_path,
            {"opencode": {"baseUrl": server.url("/v1")}, "github-copilot": {"baseUrl": server.url("/v1")}},
        )
        # No key for opencode: the image check comes first, as in pi.
        opencode = asyncio.run(models.classify({"provider": "opencode", "id": "jev-1.13"}, context))
        copilot = asyncio.run(
            models.classify({"provider": "github-copilot", "id": "microsoft-decision-1"}, context)
        )
        sent = len(server.requests)
    assert opencode.error_message == "Model opencode/jev-1.13 does not accept image input"
    assert copilot.error_message == "Model github-copilot/microsoft-decision-1 does not accept image input"
    assert (opencode.stop_reason, opencode.answers, sent) == ("error", {}, 0)


def test_a_registered_provider_brings_its_classifier_models_in_place_of_the_catalogues(
    tmp_path: Path,
) -> None:
    models = registry(tmp_path)
    entry = {"type": "classifier", "id": "judge", "api": "typesafe-system-one", "input": ["text"]}
    chat = {"id": "talker", "api": "openai-completions"}
    models.register_provider(
        "typesafe", {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k", "models": [entry, chat]}
    )
    listed = models.get_models_of_type("classifier", "typesafe")
    assert [(m.id, m.provider, m.base_url) for m in listed] == [
        ("judge", "typesafe", "http://127.0.0.1:9/v1")
    ]
    assert models.get_model_of_type("classifier", "typesafe", "jev-latest") is None
    assert models.get_model_of_type("chat", "typesafe", "talker") is not None
    assert models.get_model_of_type("chat", "typesafe", "judge") is None
    assert ("typesafe", "judge") in [(m.provider, m.id) for m in models.get_models_of_type("classifier")]
    models.unregister_provider("typesafe")
    assert [m.id for m in models.get_models_of_type("classifier", "typesafe")] == ["jev-latest"]


def test_a_registered_providers_classifiers_speak_its_classifier_apis_as_pis_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau.ai.classify import BoolAnswer, ClassifierResult

    seen: list[tuple[str, str | None]] = []

    async def keyword(model: ClassifierModel, context: object, options: object) -> ClassifierResult:
        seen.append((model.base_url, getattr(options, "api_key", None)))
        answer = BoolAnswer(probability=0.25)
        return ClassifierResult(api=model.api, provider=model.provider, model=model.id, answers={"q": answer})

    def broken(model: ClassifierModel, context: object, options: object) -> ClassifierResult:
        raise RuntimeError("the index is gone")

    def sloppy(model: ClassifierModel, context: object, options: object) -> object:
        return {"answers": {}}

    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-3")
    entries = [
        {
            "type": "classifier",
            "id": api,
            "api": api,
            "input": ["text"],
            "baseUrl": "https://x.example/{CLOUDFLARE_ACCOUNT_ID}",
        }
        for api in ("kw", "broken", "sloppy", "nobody")
    ]
    models = registry(tmp_path)
    models.register_provider(
        "mine",
        {"apiKey": "mine-key", "models": entries},
        classifiers={"kw": keyword, "broken": broken, "sloppy": sloppy},
    )
    question = {"type": "bool", "instructions": "?", "criteria": {"true": "y", "false": "n"}}
    context = {"state": {}, "questions": {"q": question}}

    def run(model_id: str) -> ClassifierResult:
        return asyncio.run(models.classify({"provider": "mine", "id": model_id}, context))

    ok, failed, wrong, missing = run("kw"), run("broken"), run("sloppy"), run("nobody")
    assert (ok.stop_reason, ok.answers) == ("stop", {"q": BoolAnswer(probability=0.25)})
    # The model it gets has its account filled in, and the provider's key in the options.
    assert seen == [("https://x.example/acct-3", "mine-key")]
    assert (failed.stop_reason, failed.error_message) == ("error", "the index is gone")
    assert wrong.error_message == "The classifier for api 'sloppy' returned dict, not a ClassifierResult"
    assert missing.error_message == 'Provider mine has no classifier implementation for "nobody"'

    models.unregister_provider("mine")
    assert models.classifier_implementations("mine") == {}
    assert models.get_model_of_type("classifier", "mine", "kw") is None


def test_classifiers_for_a_catalogue_api_take_over_its_catalogue_models(tmp_path: Path) -> None:
    from tau.ai.classify import ChoiceAnswer, ClassifierResult

    def local_jev(model: ClassifierModel, context: object, options: object) -> ClassifierResult:
        answer = ChoiceAnswer(choice="a", probabilities={"a": 1.0}, confidence=1.0)
        return ClassifierResult(api=model.api, provider=model.provider, model=model.id, answers={"q": answer})

    models = registry(tmp_path)
    # No models: the catalogue's Jev stays, classified by the extension's function (no request).
    models.register_provider("typesafe", {"apiKey": "ts"}, classifiers={"typesafe-system-one": local_jev})
    question = {"type": "choice", "instructions": "?", "criteria": {"a": "A", "b": "B"}}
    result = asyncio.run(
        models.classify(
            {"provider": "typesafe", "id": "jev-latest"}, {"state": {}, "questions": {"q": question}}
        )
    )
    assert (result.stop_reason, result.answers["q"]) == (
        "stop",
        ChoiceAnswer(choice="a", probabilities={"a": 1.0}, confidence=1.0),
    )
