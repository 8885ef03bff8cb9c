"""The model registry: catalogue + models.json in pi's schema, validation errors, overrides, key resolution."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.accounts.auth_storage import AuthStorage, clear_config_value_cache
from tau.accounts.model_registry import ModelRegistry, missing_auth_message
from tau.accounts.models_config import merge_compat
from tau.ai.catalogue import find_model, get_models, get_providers
from tau.ai.env_keys import env_var_names
from tau.tools.images import ImageLimits


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No provider credentials from the machine running the tests; a fresh command cache."""
    for provider in get_providers():
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    clear_config_value_cache()
    yield
    clear_config_value_cache()


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    return path


def write_models(agent: Path, data: Any) -> Path:
    path = agent / "models.json"
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return path


def registry_for(agent: Path, auth: AuthStorage | None = None) -> ModelRegistry:
    return ModelRegistry(auth or AuthStorage(agent / "auth.json"), agent / "models.json")


OLLAMA: dict[str, Any] = {
    "baseUrl": "http://localhost:11434/v1",
    "api": "openai-completions",
    "apiKey": "ollama",
    "models": [{"id": "llama3.1:8b"}],
}


def builtin_count() -> int:
    return sum(len(get_models(provider)) for provider in get_providers())


def test_without_models_json_the_registry_holds_the_catalogue(agent: Path) -> None:
    registry = registry_for(agent)

    assert registry.get_error() is None
    assert len(registry.get_all()) == builtin_count()
    assert registry.find("anthropic", "claude-opus-4-6") == find_model("anthropic", "claude-opus-4-6")
    assert registry.find("anthropic", "no-such-model") is None


def test_custom_provider_models_get_pis_defaults(agent: Path) -> None:
    write_models(agent, {"providers": {"ollama": OLLAMA}})

    model = registry_for(agent).find("ollama", "llama3.1:8b")

    assert model is not None
    assert model.to_json() == {
        "id": "llama3.1:8b",
        "name": "llama3.1:8b",
        "api": "openai-completions",
        "provider": "ollama",
        "baseUrl": "http://localhost:11434/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }


@pytest.mark.parametrize("missing", ["baseUrl", "apiKey"])
def test_custom_provider_without_base_url_or_api_key_is_rejected_and_built_ins_remain(
    agent: Path, missing: str
) -> None:
    entry = {key: value for key, value in OLLAMA.items() if key != missing}
    path = write_models(agent, {"providers": {"ollama": entry}})

    registry = registry_for(agent)

    error = registry.get_error()
    assert error is not None
    assert str(error) == (
        f'{path}: provider "ollama": "{missing}" is required when defining models for a custom provider'
    )
    assert registry.find("ollama", "llama3.1:8b") is None
    assert len(registry.get_all()) == builtin_count()


def test_custom_model_without_any_api_is_rejected_naming_the_model(agent: Path) -> None:
    entry = {
        **OLLAMA,
        "api": None,
        "models": [{"id": "with-api", "api": "openai-completions"}, {"id": "bare"}],
    }
    del entry["api"]
    write_models(agent, {"providers": {"ollama": entry}})

    error = registry_for(agent).get_error()

    assert error is not None
    assert 'provider "ollama", model "bare": no "api" given' in str(error)


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ({"name": "no id"}, 'models[0]: "id" is required'),
        ({"id": "m", "contextWindow": 0}, 'model "m": "contextWindow" must be a positive number, found 0'),
        ({"id": "m", "maxTokens": "lots"}, '"maxTokens" must be a positive number'),
        (
            {"id": "m", "input": ["text", "video"]},
            '"input" may only contain "text" and "image", found \'video\'',
        ),
        ({"id": "m", "cost": {"input": 1}}, '"cost" needs all of input, output, cacheRead, cacheWrite'),
        ({"id": "m", "headers": {"x": 1}}, '"headers.x" must be a string, found number 1'),
        ({"id": "m", "reasoning": "yes"}, "\"reasoning\" must be true or false, found string 'yes'"),
        ({"id": "m", "thinkingLevelMap": {"ultra": "max"}}, "\"thinkingLevelMap\" has unknown level 'ultra'"),
    ],
)
def test_invalid_model_fields_are_rejected_with_the_place_and_problem(
    agent: Path, model: dict[str, Any], problem: str
) -> None:
    write_models(agent, {"providers": {"ollama": {**OLLAMA, "models": [model]}}})

    error = registry_for(agent).get_error()

    assert error is not None
    assert problem in str(error)
    assert "\n" not in str(error)


def test_file_without_providers_object_is_rejected(agent: Path) -> None:
    write_models(agent, {"provider": {}})

    error = registry_for(agent).get_error()

    assert error is not None
    assert '"providers" missing' in str(error)


def test_provider_entry_that_changes_nothing_is_rejected(agent: Path) -> None:
    write_models(agent, {"providers": {"anthropic": {"api": "anthropic-messages"}}})

    error = registry_for(agent).get_error()

    assert error is not None
    assert 'provider "anthropic": sets nothing to use' in str(error)


def test_invalid_json_is_reported_with_line_and_column(agent: Path) -> None:
    path = write_models(agent, '{\n  "providers": {\n    "x": {,\n  }\n}')

    error = registry_for(agent).get_error()

    assert error is not None
    assert str(error).startswith(f"{path}:3:11: invalid JSON")


def test_comments_and_trailing_commas_are_accepted(agent: Path) -> None:
    write_models(
        agent,
        """{
  // my local server
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1", /* no key needed */
      "api": "openai-completions",
      "apiKey": "ollama",
      "models": [{"id": "llama3.1:8b"},],
    },
  },
}""",
    )

    registry = registry_for(agent)

    assert registry.get_error() is None
    assert registry.find("ollama", "llama3.1:8b") is not None


def test_custom_model_with_a_built_in_id_replaces_it_with_defaults_applied(agent: Path) -> None:
    builtin = find_model("anthropic", "claude-opus-4-6")
    assert builtin is not None
    write_models(
        agent,
        {
            "providers": {
                "anthropic": {
                    "baseUrl": "https://proxy.example/anthropic",
                    "apiKey": "PROXY_KEY",
                    "api": "anthropic-messages",
                    "models": [{"id": "claude-opus-4-6", "name": "Opus via proxy"}],
                }
            }
        },
    )

    registry = registry_for(agent)
    model = registry.find("anthropic", "claude-opus-4-6")

    assert registry.get_error() is None
    assert model is not None
    assert model.name == "Opus via proxy"
    assert (model.context_window, model.max_tokens) == (128000, 16384)
    assert model.base_url == "https://proxy.example/anthropic"
    assert [m for m in registry.get_all() if m.id == "claude-opus-4-6" and m.provider == "anthropic"] == [
        model
    ]
    assert len(registry.get_all()) == builtin_count()


def test_custom_models_of_a_built_in_provider_inherit_its_api_and_endpoint(agent: Path) -> None:
    write_models(agent, {"providers": {"anthropic": {"models": [{"id": "claude-next", "reasoning": True}]}}})

    registry = registry_for(agent)
    model = registry.find("anthropic", "claude-next")

    assert registry.get_error() is None
    assert model is not None
    assert (model.api, model.base_url) == ("anthropic-messages", "https://api.anthropic.com")
    assert model.reasoning is True


def test_provider_base_url_and_compat_re_route_built_in_models(agent: Path) -> None:
    write_models(
        agent,
        {
            "providers": {
                "openai": {"baseUrl": "https://gateway.example/v1", "compat": {"supportsStore": False}}
            }
        },
    )

    registry = registry_for(agent)

    models = [m for m in registry.get_all() if m.provider == "openai"]
    assert models and all(m.base_url == "https://gateway.example/v1" for m in models)
    assert all((m.compat or {}).get("supportsStore") is False for m in models)
    assert registry.find("anthropic", "claude-opus-4-6") == find_model("anthropic", "claude-opus-4-6")


def test_model_overrides_deep_merge_into_a_built_in_model(agent: Path) -> None:
    model_id = "anthropic/claude-opus-4.6"
    builtin = find_model("openrouter", model_id)
    assert builtin is not None
    write_models(
        agent,
        {
            "providers": {
                "openrouter": {
                    "compat": {"openRouterRouting": {"order": ["anthropic"]}},
                    "modelOverrides": {
                        model_id: {
                            "name": "Opus (Bedrock route)",
                            "cost": {"input": 1.5},
                            "maxTokens": 1000,
                            "compat": {"openRouterRouting": {"only": ["amazon-bedrock"]}},
                            "thinkingLevelMap": {"xhigh": None},
                        },
                        "no/such-model": {"name": "ignored"},
                    },
                }
            }
        },
    )

    registry = registry_for(agent)
    model = registry.find("openrouter", model_id)

    assert registry.get_error() is None
    assert model is not None
    assert model.name == "Opus (Bedrock route)"
    assert model.cost.input == 1.5
    assert model.cost.output == builtin.cost.output
    assert model.max_tokens == 1000
    assert model.context_window == builtin.context_window
    assert model.compat is not None
    assert model.compat["openRouterRouting"] == {"order": ["anthropic"], "only": ["amazon-bedrock"]}
    assert {k: v for k, v in model.compat.items() if k != "openRouterRouting"} == {
        k: v for k, v in (builtin.compat or {}).items() if k != "openRouterRouting"
    }
    assert model.thinking_level_map is not None
    assert model.thinking_level_map["xhigh"] is None
    assert registry.find("openrouter", "no/such-model") is None


def test_model_compat_merges_over_provider_compat_key_by_key() -> None:
    merged = merge_compat(
        {"supportsStore": False, "openRouterRouting": {"order": ["a"]}},
        {"supportsStore": True, "maxTokensField": "max_tokens", "openRouterRouting": {"only": ["b"]}},
    )

    assert merged == {
        "supportsStore": True,
        "maxTokensField": "max_tokens",
        "openRouterRouting": {"order": ["a"], "only": ["b"]},
    }


def test_custom_model_compat_merges_provider_and_model_compat(agent: Path) -> None:
    write_models(
        agent,
        {
            "providers": {
                "local": {
                    **OLLAMA,
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [{"id": "m", "compat": {"supportsReasoningEffort": True}}],
                }
            }
        },
    )

    model = registry_for(agent).find("local", "m")

    assert model is not None
    assert model.compat == {"supportsDeveloperRole": False, "supportsReasoningEffort": True}


def test_available_models_are_those_whose_provider_has_auth(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_models(agent, {"providers": {"ollama": OLLAMA}})
    auth = AuthStorage(agent / "auth.json")
    registry = registry_for(agent, auth)
    assert {m.provider for m in registry.get_available()} == {"ollama"}

    monkeypatch.setenv("GROQ_API_KEY", "gsk")
    auth.set_api_key("mistral", "k")

    assert {m.provider for m in registry.get_available()} == {"ollama", "groq", "mistral"}


def test_models_json_api_key_resolves_commands_and_variable_names(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_KEY", "from-variable")
    write_models(
        agent,
        {
            "providers": {
                "by-command": {**OLLAMA, "apiKey": "!echo from-command"},
                "by-variable": {**OLLAMA, "apiKey": "$LOCAL_KEY"},
                "bare-name": {**OLLAMA, "apiKey": "LOCAL_KEY"},  # literal, as pi 1.6
                "literal": {**OLLAMA, "apiKey": "sk-literal"},
            }
        },
    )
    registry = registry_for(agent)

    assert registry.get_api_key_for_provider("by-command") == "from-command"
    assert registry.get_api_key_for_provider("by-variable") == "from-variable"
    assert registry.get_api_key_for_provider("bare-name") == "LOCAL_KEY"
    assert registry.get_api_key_for_provider("literal") == "sk-literal"


def test_key_priority_runtime_then_auth_json_then_env_then_models_json(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_models(agent, {"providers": {"openai": {**OLLAMA, "apiKey": "from-models-json"}}})
    auth = AuthStorage(agent / "auth.json")
    registry = registry_for(agent, auth)
    model = registry.find("openai", "llama3.1:8b")
    assert model is not None

    assert registry.get_api_key(model) == "from-models-json"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert registry.get_api_key(model) == "from-env"
    auth.set_api_key("openai", "from-auth-json")
    assert registry.get_api_key(model) == "from-auth-json"
    auth.set_runtime_api_key("openai", "from-cli")
    assert registry.get_api_key(model) == "from-cli"


def test_request_auth_resolves_headers_and_adds_bearer_when_asked(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTKEY_KEY", "pk-123")
    write_models(
        agent,
        {
            "providers": {
                "proxy": {
                    **OLLAMA,
                    "apiKey": "!echo sk-proxy",
                    "authHeader": True,
                    "headers": {"x-portkey-api-key": "${PORTKEY_KEY}", "x-static": "plain"},
                    "models": [
                        {"id": "m", "headers": {"x-secret": "!echo s3cret", "x-static": "model-level"}}
                    ],
                }
            }
        },
    )
    registry = registry_for(agent)
    model = registry.find("proxy", "m")
    assert model is not None

    auth = registry.get_api_key_and_headers(model)

    assert auth.ok
    assert auth.api_key == "sk-proxy"
    assert auth.headers == {
        "x-portkey-api-key": "pk-123",
        "x-static": "model-level",
        "x-secret": "s3cret",
        "Authorization": "Bearer sk-proxy",
    }
    assert model.headers is None


def test_a_failing_header_or_key_command_is_an_error_for_that_request(agent: Path) -> None:
    write_models(
        agent,
        {
            "providers": {
                "bad-header": {**OLLAMA, "headers": {"x-token": "!exit 1"}},
                "bad-key": {**OLLAMA, "apiKey": "!exit 1"},
            }
        },
    )
    registry = registry_for(agent)
    bad_header = registry.find("bad-header", "llama3.1:8b")
    bad_key = registry.find("bad-key", "llama3.1:8b")
    assert bad_header is not None and bad_key is not None

    header_auth = registry.get_api_key_and_headers(bad_header)
    key_auth = registry.get_api_key_and_headers(bad_key)

    assert header_auth.error == (
        'header "x-token" of model bad-header/llama3.1:8b resolved to nothing: the command `exit 1` failed or printed nothing'
    )
    assert key_auth.error == (
        'models.json "apiKey" of provider "bad-key" resolved to nothing: the command `exit 1` failed or printed nothing'
    )
    assert registry.has_configured_auth("bad-key")


def test_built_in_provider_headers_override_is_resolved_per_request(agent: Path) -> None:
    write_models(agent, {"providers": {"anthropic": {"headers": {"x-team": "!echo platform"}}}})
    registry = registry_for(agent)
    model = registry.find("anthropic", "claude-opus-4-6")
    assert model is not None

    assert registry.get_api_key_and_headers(model).headers == {"x-team": "platform"}


def test_provider_without_any_auth_gets_no_key_and_no_error(agent: Path) -> None:
    registry = registry_for(agent)
    model = registry.find("anthropic", "claude-opus-4-6")
    assert model is not None

    auth = registry.get_api_key_and_headers(model)

    assert (auth.ok, auth.api_key) == (True, None)
    assert "ANTHROPIC_API_KEY" in missing_auth_message("anthropic")


def test_refresh_rereads_models_json(agent: Path) -> None:
    registry = registry_for(agent)
    write_models(agent, {"providers": {"ollama": OLLAMA}})
    assert registry.find("ollama", "llama3.1:8b") is None

    registry.refresh()

    assert registry.find("ollama", "llama3.1:8b") is not None


def test_registered_provider_replaces_models_until_unregistered(agent: Path) -> None:
    write_models(agent, {"providers": {"ollama": OLLAMA}})
    registry = registry_for(agent)

    registry.register_provider(
        "ollama",
        {
            "baseUrl": "http://other:1/v1",
            "api": "openai-completions",
            "apiKey": "x",
            "models": [{"id": "new"}],
        },
    )
    assert [m.id for m in registry.get_all() if m.provider == "ollama"] == ["new"]

    registry.unregister_provider("ollama")
    assert [m.id for m in registry.get_all() if m.provider == "ollama"] == ["llama3.1:8b"]


def test_create_reads_models_json_and_auth_json_from_the_agent_dir(agent: Path) -> None:
    write_models(agent, {"providers": {"ollama": OLLAMA}})
    (agent / "auth.json").write_text(json.dumps({"groq": {"type": "api_key", "key": "gsk"}}))

    registry = ModelRegistry.create(agent)

    assert registry.find("ollama", "llama3.1:8b") is not None
    assert registry.get_api_key_for_provider("groq") == "gsk"
    assert registry.get_providers()[-1] == "ollama"


def _configured_registry(agent: Path) -> ModelRegistry:
    write_models(
        agent,
        {
            "providers": {
                "anthropic": {
                    "baseUrl": "https://proxy.example/anthropic",
                    "headers": {"x-team": "tau"},
                    "modelOverrides": {"claude-sonnet-4-5": {"name": "Sonnet (proxy)"}},
                    "models": [{"id": "my-claude", "api": "anthropic-messages"}],
                },
                "ollama": OLLAMA,
            }
        },
    )
    registry = registry_for(agent)
    registry.register_provider("openai", {"baseUrl": "https://proxy.example/openai", "headers": {"x-o": "1"}})
    return registry


def test_a_lookup_builds_only_the_models_of_its_provider(agent: Path) -> None:
    registry = _configured_registry(agent)
    assert registry.find("anthropic", "my-claude") is not None
    assert registry._table is None
    assert list(registry._partial) == ["anthropic"]


def test_lookups_give_the_models_and_headers_of_the_whole_list(agent: Path) -> None:
    lazy, whole = _configured_registry(agent), _configured_registry(agent)
    everything = whole.get_all()
    assert len(everything) == builtin_count() + 2
    for model in everything:
        found = lazy.find(model.provider, model.id)
        assert found == model
        assert lazy.get_api_key_and_headers(found).headers == whole.get_api_key_and_headers(model).headers
    assert lazy.get_all() == everything


def test_the_whole_list_keeps_the_objects_lookups_returned(agent: Path) -> None:
    registry = _configured_registry(agent)
    sonnet = registry.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.name == "Sonnet (proxy)"
    assert any(model is sonnet for model in registry.get_all())
    assert registry.find("anthropic", "claude-sonnet-4-5") is sonnet


def test_the_available_models_build_only_the_providers_with_credentials(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk")
    lazy, whole = _configured_registry(agent), _configured_registry(agent)
    expected = [m for m in whole.get_all() if whole.has_configured_auth(m.provider)]
    assert expected and lazy.get_available() == expected  # the whole list's order
    assert lazy._table is None and set(lazy._partial) == {m.provider for m in expected}


def test_the_available_models_keep_the_objects_lookups_returned(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk")
    registry = _configured_registry(agent)
    ollama = registry.find("ollama", "llama3.1:8b")
    available = registry.get_available()
    assert any(model is ollama for model in available)
    assert registry.find("ollama", "llama3.1:8b") is ollama
    assert registry.get_available() == available


def test_get_provider_and_its_auth_without_a_model(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTKEY_KEY", "pk-123")
    write_models(
        agent,
        {
            "providers": {
                "proxy": {
                    **OLLAMA,
                    "apiKey": "!echo sk-proxy",
                    "authHeader": True,
                    "headers": {"x-portkey-api-key": "${PORTKEY_KEY}"},
                    "models": [{"id": "m", "headers": {"x-model": "only-for-m"}}, {"id": "n"}],
                },
                "broken": {**OLLAMA, "apiKey": "!exit 1"},
            }
        },
    )
    registry = registry_for(agent)

    provider = registry.get_provider("proxy")
    assert provider is not None
    assert (provider.id, provider.api, provider.base_url) == (
        "proxy",
        "openai-completions",
        "http://localhost:11434/v1",
    )
    assert [model.id for model in provider.models] == ["m", "n"]
    assert registry.get_provider("nobody") is None

    auth = registry.get_provider_auth("proxy")
    assert auth is not None and auth.ok
    assert auth.api_key == "sk-proxy"
    # the provider's headers, not a model's own
    assert auth.headers == {"x-portkey-api-key": "pk-123", "Authorization": "Bearer sk-proxy"}
    assert auth.base_url == "http://localhost:11434/v1"
    assert registry.get_provider_auth("nobody") is None
    broken = registry.get_provider_auth("broken")
    assert broken is not None and broken.error.startswith(
        'models.json "apiKey" of provider "broken" resolved to nothing: '
    )


def test_input_limits_from_models_json_and_overrides_merge_as_pi_16(agent: Path) -> None:
    builtin = find_model("amazon-bedrock", "amazon.nova-pro-v1:0")
    assert builtin is not None and builtin.input_limits is not None
    write_models(
        agent,
        {
            "providers": {
                "amazon-bedrock": {
                    "modelOverrides": {
                        "amazon.nova-pro-v1:0": {"inputLimits": {"images": {"resize": {"maxWidth": 512}}}}
                    }
                },
                "local": {
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "api": "openai-completions",
                    "apiKey": "x",
                    "models": [{"id": "small", "inputLimits": {"images": {"resize": {"maxHeight": 64}}}}],
                },
            }
        },
    )
    registry = registry_for(agent)
    assert registry.get_error() is None
    overridden = registry.find("amazon-bedrock", "amazon.nova-pro-v1:0")
    assert overridden is not None and overridden.input_limits == {
        "images": {
            "maxPerMessage": 20,
            "resize": {"maxWidth": 512, "maxHeight": 2000, "maxBytes": 4718592, "jpegQuality": 80},
        }
    }
    assert ImageLimits.of_model(overridden) == ImageLimits(512, 2000, 4718592, 80)
    custom = registry.find("local", "small")
    assert custom is not None and ImageLimits.of_model(custom) == ImageLimits(max_height=64)
    assert builtin.input_limits["images"]["resize"]["maxWidth"] == 2000  # the catalogue is left alone


def test_a_bad_resize_limit_in_models_json_is_reported(agent: Path) -> None:
    write_models(
        agent,
        {
            "providers": {
                "local": {
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "api": "openai-completions",
                    "apiKey": "x",
                    "models": [{"id": "small", "inputLimits": {"images": {"resize": {"maxWidth": 0}}}}],
                }
            }
        },
    )
    error = registry_for(agent).get_error()
    assert error is not None and "inputLimits.images.resize.maxWidth" in str(error)
