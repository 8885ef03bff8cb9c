"""The public entry points: ``stream``, ``complete``, ``stream_simple``, ``complete_simple``."""

from __future__ import annotations

from typing import Any

from tau.ai.base_url_env import fill_base_url, missing_variable_message, unfilled_variable
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, build_options
from tau.ai.output_budget import clamp_max_tokens_to_context
from tau.ai.redaction import register_secret
from tau.ai.registry import BUILTIN_APIS, require_api_provider
from tau.ai.types import AssistantMessage, Context, Model
from tau.errors import TauError


class MissingApiKeyError(TauError, LookupError):
    """No API key was given and none is set in the provider's environment variables."""


def stream(
    model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
) -> AssistantMessageEventStream:
    """Stream one response with the API's raw options. Must be called from async code.

    Keyword arguments override fields of ``options``; unknown ones are per-API options. The base
    URL's ``{VARIABLE}`` placeholders are filled from the ``env`` option, else the environment
    (``tau.ai.base_url_env``). Raises only for an unknown api; every other failure arrives as an
    ``error`` event.
    """
    provider = require_api_provider(model.api)
    resolved = build_options(options, overrides, simple=False)
    register_secret(resolved.api_key)
    model = fill_base_url(model, resolved.extra.get("env"))
    unfilled = unfilled_variable(model)
    if unfilled is not None:
        return _unfilled_stream(model, unfilled)
    return provider.stream(model, _for_model(model, context), resolved)


async def complete(
    model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
) -> AssistantMessage:
    """The final message of ``stream(...)``."""
    return await stream(model, context, options, **overrides).result()


# APIs whose backend picks the output budget when the caller gives none (pi 1.6's pi-messages).
_BACKEND_BUDGETED_APIS = frozenset({"pi-messages"})


def stream_simple(
    model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
) -> AssistantMessageEventStream:
    """Stream one response given a reasoning level (``reasoning=``; absent = off).

    Resolves the API key (option, else environment) and fits ``max_tokens`` (default: the model's
    ``max_tokens``) into the context window beside the input, as pi 1.6 does
    (``tau.ai.output_budget``); pi-messages, as in pi 1.6, sends only the caller's own (its backend
    fits the budget to the model it routes to). Raises for an unknown api, or a missing API key for
    a built-in API.
    """
    provider = require_api_provider(model.api)
    resolved = build_options(options, overrides, simple=True)
    if not resolved.api_key:
        resolved.api_key = resolve_api_key(model, required=model.api in BUILTIN_APIS)
    register_secret(resolved.api_key)
    model = fill_base_url(model, resolved.extra.get("env"))
    unfilled = unfilled_variable(model)
    if unfilled is not None:
        return _unfilled_stream(model, unfilled)
    context = _for_model(model, context)
    budgeted_here = model.api not in _BACKEND_BUDGETED_APIS
    if budgeted_here and (resolved.max_tokens is not None or model.max_tokens > 0):
        wanted = resolved.max_tokens if resolved.max_tokens is not None else model.max_tokens
        resolved.max_tokens = clamp_max_tokens_to_context(model.context_window, context, wanted)
    return provider.stream_simple(model, context, resolved)


def _unfilled_stream(model: Model, variable: str) -> AssistantMessageEventStream:
    """The request's end, before anything is sent, when its base URL names a variable without a value."""
    from tau.ai.stream_writer import error_stream

    return error_stream(model, missing_variable_message(model.provider, variable))


def _for_model(model: Model, context: Context) -> Context:
    """The context's prompt changes in the form ``model`` takes them (``tau.ai.prompt_updates``)."""
    if context.anchor is None:
        return context
    from tau.ai.prompt_updates import for_model  # only a context with recorded changes needs it

    return for_model(model, context)


async def complete_simple(
    model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
) -> AssistantMessage:
    """The final message of ``stream_simple(...)``."""
    return await stream_simple(model, context, options, **overrides).result()


def resolve_api_key(model: Model, *, required: bool = True) -> str | None:
    """The provider's key from the environment, or ``MissingApiKeyError`` naming what to set.

    APIs registered by extensions and tests decide themselves whether they need a key
    (``required=False``): for them a missing key is ``None``.
    """
    from tau.ai.env_keys import env_var_names, get_env_api_key

    key = get_env_api_key(model.provider)
    if key or not required:
        return key
    names = env_var_names(model.provider)
    hint = f"set {' or '.join(names)}" if names else "pass api_key"
    raise MissingApiKeyError(f"No API key for provider: {model.provider} ({hint})")


__all__ = [
    "MissingApiKeyError",
    "SimpleStreamOptions",
    "complete",
    "complete_simple",
    "stream",
    "stream_simple",
]
