"""The api registry and the public entry points (spec 10 §9, tests 16, 60-62)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tau.ai import (
    ApiProvider,
    Context,
    MissingApiKeyError,
    Model,
    UnknownApiError,
    UserMessage,
    complete,
    get_api_provider,
    register_api_provider,
    reset_api_providers,
    stream,
    stream_simple,
    unregister_api_providers,
)
from tau.ai.registry import BUILTIN_APIS
from tau.ai.stream_writer import error_stream

CONTEXT = Context(messages=[UserMessage("hi")])


@pytest.fixture(autouse=True)
def _restore_registry() -> Iterator[None]:
    yield
    reset_api_providers()


def _provider(api: str, text: str) -> ApiProvider:
    def fn(model, context, options):  # type: ignore[no-untyped-def]
        return error_stream(model, text)

    return ApiProvider(api=api, stream=fn, stream_simple=fn)


def _model(api: str, provider: str = "p") -> Model:
    return Model(id="m", api=api, provider=provider, base_url="http://127.0.0.1:9")


async def test_registering_an_api_replaces_the_existing_entry() -> None:
    register_api_provider(_provider("x-api", "first"))
    register_api_provider(_provider("x-api", "second"))
    assert (await complete(_model("x-api"), CONTEXT)).error_message == "second"


def test_unregister_by_source_removes_only_that_sources_entries() -> None:
    register_api_provider(_provider("ext-a", "a"), source_id="ext")
    register_api_provider(_provider("ext-b", "b"), source_id="other")
    unregister_api_providers("ext")
    assert get_api_provider("ext-a") is None
    assert get_api_provider("ext-b") is not None


async def test_unregistering_an_override_brings_back_the_provider_it_shadowed() -> None:
    register_api_provider(_provider("x-api", "base"))
    register_api_provider(_provider("x-api", "first override"), source_id="ext-1")
    register_api_provider(_provider("x-api", "second override"), source_id="ext-2")
    unregister_api_providers("ext-2")
    assert (await complete(_model("x-api"), CONTEXT)).error_message == "first override"
    unregister_api_providers("ext-1")
    assert (await complete(_model("x-api"), CONTEXT)).error_message == "base"


async def test_reset_restores_the_builtins() -> None:
    register_api_provider(_provider("anthropic-messages", "override"))
    reset_api_providers()
    assert all(get_api_provider(api) is not None for api in BUILTIN_APIS)
    # Port 9 (discard) refuses connections: the real provider reports that, not the override.
    reply = await complete(_model("anthropic-messages"), CONTEXT, api_key="k")
    assert reply.stop_reason == "error"
    assert reply.error_message != "override"


def test_a_model_of_another_api_is_refused() -> None:
    register_api_provider(_provider("x-api", "x"))
    provider = get_api_provider("x-api")
    assert provider is not None
    with pytest.raises(ValueError, match="Mismatched api"):
        provider.stream(_model("y-api"), CONTEXT, None)  # type: ignore[arg-type]


def test_an_unknown_api_raises_at_once_naming_it() -> None:
    with pytest.raises(UnknownApiError, match="No API provider registered for api: nope"):
        stream(_model("nope"), CONTEXT)


def test_a_missing_api_key_in_the_simple_path_names_the_provider_and_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match=r"groq.*GROQ_API_KEY"):
        stream_simple(_model("openai-completions", provider="groq"), CONTEXT)


async def test_a_provider_module_that_fails_to_import_becomes_an_error_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tau.ai import registry

    monkeypatch.setitem(registry.BUILTIN_APIS, "broken-api", "tau.ai.providers.does_not_exist")
    reset_api_providers()
    reply = await complete(_model("broken-api"), CONTEXT)
    assert reply.stop_reason == "error"
    assert "does_not_exist" in (reply.error_message or "")


def test_importing_tau_ai_loads_no_provider_and_no_http_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tau.ai; "
        "bad = [m for m, module in sys.modules.items() if module is not None and "
        "m.startswith(('httpx', 'tau.ai.providers.', 'jsonschema', 'asyncio'))]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_an_api_registered_from_outside_needs_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from tau.ai import complete_simple

    register_api_provider(_provider("ext-api", "reached the provider"))
    reply = await complete_simple(_model("ext-api", provider="nokey"), CONTEXT)
    assert reply.error_message == "reached the provider"
