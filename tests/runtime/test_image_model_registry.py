"""The model registry's image models (issue #32): listed by type, never among the chat models,
available with the provider's credentials, moved by models.json, and run by ``generate_images``
with the provider's key and configured headers against the fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.accounts.auth_storage import AuthStorage, clear_config_value_cache
from tau.accounts.model_registry import ModelRegistry
from tau.ai.catalogue import get_providers
from tau.ai.env_keys import env_var_names
from tau.ai.image_models import ImageModel
from tau.ai.images import ImagesContext, ImagesResult
from tau.ai.types import TextContent
from tau.testing.fake_llm import PIXEL_PNG, FakeLLMServer, ScriptedImage, Turn

PAINTER = "google/gemini-2.5-flash-image"


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for provider in get_providers():
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    clear_config_value_cache()
    yield
    clear_config_value_cache()


def registry(tmp_path: Path, models: dict[str, object] | None = None) -> ModelRegistry:
    (tmp_path / "models.json").write_text(json.dumps({"providers": models or {}}))
    return ModelRegistry(AuthStorage(tmp_path / "auth.json"), tmp_path / "models.json")


def test_image_models_are_a_type_of_their_own(tmp_path: Path) -> None:
    models = registry(tmp_path)
    images = models.get_models_of_type("image")
    assert len(images) == 74 and all(isinstance(m, ImageModel) for m in images)
    assert models.get_models_of_type("image", "openrouter") == images
    assert models.get_models_of_type("image", "anthropic") == []
    assert all(m.provider != "openrouter" or m.id != PAINTER for m in models.get_models_of_type("classifier"))
    assert all(m.id != PAINTER for m in models.get_all())
    assert models.get_model_of_type("chat", "openrouter", PAINTER) is None
    found = models.get_model_of_type("image", "openrouter", PAINTER)
    assert isinstance(found, ImageModel) and found.output == ["image", "text"]
    chat = models.get_model_of_type("chat", "openrouter", "openai/gpt-4o")
    assert chat is not None and chat.id == "openai/gpt-4o"


def test_they_are_available_with_the_providers_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry(tmp_path).get_available_of_type("image") == []
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    available = registry(tmp_path).get_available_of_type("image")
    assert len(available) == 74
    assert {m.provider for m in registry(tmp_path).get_available_of_type("chat")} == {"openrouter"}


def test_models_json_moves_them_and_its_headers_and_key_go_with_each_request(tmp_path: Path) -> None:
    async def main(models: ModelRegistry) -> ImagesResult:
        return await models.generate_images(
            {"provider": "openrouter", "id": PAINTER}, ImagesContext([TextContent("a fox")])
        )

    with FakeLLMServer() as server:
        server.add(Turn(text="A fox.", images=[ScriptedImage(PIXEL_PNG)]))
        models = registry(
            tmp_path,
            {
                "openrouter": {
                    "baseUrl": server.url("/proxy/v1"),
                    "apiKey": "!printf or-from-command",
                    "headers": {"X-Team": "painters"},
                }
            },
        )
        model = models.get_model_of_type("image", "openrouter", PAINTER)
        assert model is not None and model.base_url == server.url("/proxy/v1")
        result = asyncio.run(main(models))

    assert (result.stop_reason, result.error_message) == ("stop", None)
    assert [block.to_json()["type"] for block in result.output] == ["text", "image"]
    request = server.last_request
    assert request.path == "/proxy/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer or-from-command"
    assert request.headers["x-team"] == "painters"


def test_a_dict_context_works_and_an_unknown_model_or_missing_key_is_an_error_result(tmp_path: Path) -> None:
    models = registry(tmp_path)
    unknown = asyncio.run(
        models.generate_images(
            {"provider": "openrouter", "id": "openai/gpt-4o"}, {"input": [{"type": "text", "text": "x"}]}
        )
    )
    assert (unknown.stop_reason, unknown.error_message) == (
        "error",
        "Model openrouter/openai/gpt-4o is not an image model",
    )
    no_key = asyncio.run(models.generate_images({"provider": "openrouter", "id": PAINTER}, {"input": []}))
    assert no_key.stop_reason == "error" and no_key.error_message is not None
    assert no_key.error_message.startswith('No API key for provider "openrouter": set OPENROUTER_API_KEY')
    with pytest.raises(ValueError, match=r"context.input\[0\] must be a text or image block"):
        asyncio.run(
            models.generate_images({"provider": "openrouter", "id": PAINTER}, {"input": [{"prompt": "x"}]})
        )
