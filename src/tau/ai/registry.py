"""The api → stream-function registry.

Built-in APIs are registered by module path and imported on first use, so ``import tau.ai`` loads no
provider (nor httpx). A module that fails to import turns into an ``error`` event, not an exception.
Extensions register their own APIs with a ``source_id`` and remove them all at once when unloaded.
A registration shadows the one it replaces rather than deleting it, so removing an extension's
override of a built-in api brings the built-in back.
"""

from __future__ import annotations

import importlib
from typing import Protocol

from msgspec import Struct

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions
from tau.ai.types import Context, Model
from tau.errors import TauError


class StreamFunction(Protocol):
    def __call__(
        self, model: Model, context: Context, options: StreamOptions
    ) -> AssistantMessageEventStream: ...


class SimpleStreamFunction(Protocol):
    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream: ...


class UnknownApiError(TauError, LookupError):
    """No provider is registered for a model's ``api``."""


class ApiProvider(Struct):
    """One wire protocol: its raw ``stream`` and the ``stream_simple`` that maps a reasoning level."""

    api: str
    stream: StreamFunction
    stream_simple: SimpleStreamFunction
    source_id: str | None = None


BUILTIN_APIS: dict[str, str] = {
    "anthropic-messages": "tau.ai.providers.anthropic",
    "openai-completions": "tau.ai.providers.openai_completions",
    "openai-responses": "tau.ai.providers.openai_responses",
    "google-generative-ai": "tau.ai.providers.google",
    "azure-openai-responses": "tau.ai.providers.azure_openai_responses",
    "openai-codex-responses": "tau.ai.providers.openai_codex_responses",
    "mistral-conversations": "tau.ai.providers.mistral_conversations",
    "bedrock-converse-stream": "tau.ai.providers.bedrock",
    "google-vertex": "tau.ai.providers.google_vertex",
    "google-gemini-cli": "tau.ai.providers.google_gemini_cli",
    "pi-messages": "tau.ai.providers.pi_messages",
}

# Per api, every live registration, newest last; the newest one serves.
_registry: dict[str, list[ApiProvider]] = {}


def _lazy_provider(api: str, module_path: str) -> ApiProvider:
    """A provider whose module is imported on the first call."""

    def load() -> ApiProvider | str:
        try:
            module = importlib.import_module(module_path)
        except ImportError as exc:
            return f"Could not load the provider for api {api!r}: {exc}"
        return ApiProvider(api=api, stream=module.stream, stream_simple=module.stream_simple)

    def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        loaded = load()
        if isinstance(loaded, str):
            from tau.ai.stream_writer import error_stream

            return error_stream(model, loaded)
        return loaded.stream(model, context, options)

    def stream_simple(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        loaded = load()
        if isinstance(loaded, str):
            from tau.ai.stream_writer import error_stream

            return error_stream(model, loaded)
        return loaded.stream_simple(model, context, options)

    return ApiProvider(api=api, stream=stream, stream_simple=stream_simple)


def _checked(provider: ApiProvider) -> ApiProvider:
    """Wrap the functions so a model of another api is refused."""

    def check(model: Model) -> None:
        if model.api != provider.api:
            raise ValueError(f"Mismatched api: {model.api} expected {provider.api}")

    def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        check(model)
        return provider.stream(model, context, options)

    def stream_simple(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        check(model)
        return provider.stream_simple(model, context, options)

    return ApiProvider(
        api=provider.api, stream=stream, stream_simple=stream_simple, source_id=provider.source_id
    )


def register_api_provider(provider: ApiProvider, source_id: str | None = None) -> None:
    """Register the provider for ``provider.api``, shadowing the current one.

    A registration with the same ``source_id`` (or, without one, the previous one without one)
    is replaced rather than shadowed.
    """
    if source_id is not None:
        provider = ApiProvider(provider.api, provider.stream, provider.stream_simple, source_id)
    stack = [p for p in _registry.get(provider.api, []) if p.source_id != provider.source_id]
    stack.append(_checked(provider))
    _registry[provider.api] = stack


def get_api_provider(api: str) -> ApiProvider | None:
    stack = _registry.get(api)
    return stack[-1] if stack else None


def get_api_providers() -> list[ApiProvider]:
    return [stack[-1] for stack in _registry.values() if stack]


def require_api_provider(api: str) -> ApiProvider:
    provider = get_api_provider(api)
    if provider is None:
        known = ", ".join(sorted(_registry)) or "none"
        raise UnknownApiError(f"No API provider registered for api: {api} (registered: {known})")
    return provider


def unregister_api_providers(source_id: str) -> None:
    """Remove every provider registered with ``source_id``; what each one shadowed serves again."""
    for api in list(_registry):
        stack = [p for p in _registry[api] if p.source_id != source_id]
        if stack:
            _registry[api] = stack
        else:
            del _registry[api]


def clear_api_providers() -> None:
    _registry.clear()


def reset_api_providers() -> None:
    """Forget every registration and register the built-ins again."""
    _registry.clear()
    for api, module_path in BUILTIN_APIS.items():
        register_api_provider(_lazy_provider(api, module_path))


reset_api_providers()
