"""Model calls through the model registry (pi 1.6's ``modelRegistry.streamSimple`` / ``complete``).

``registry_stream`` is ``tau.ai``'s ``stream`` / ``stream_simple`` with what the registry knows:
the provider's key, configured headers, a login's own base URL and settings, resolved for each
request (a due OAuth refresh off the event loop), for built-in, models.json and extension
providers alike. The caller's own ``api_key``, ``headers`` and ``env`` win over the resolved ones.
A virtual model is routed first with reason ``direct`` (no router state; what the router returns
as state is dropped); the output budget is capped to the routed model, and credentials given for
the virtual model's provider are not sent to another one.

Nothing here raises for a setup failure (no credentials, an unknown api, a failed route): the
stream ends with an ``error`` event and ``result()`` is the error message.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from tau.accounts.auth_hints import missing_auth_message
from tau.accounts.virtual_routes import is_virtual_model
from tau.ai.deferred_stream import deferred_stream
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, build_options
from tau.ai.registry import BUILTIN_APIS
from tau.ai.stream_writer import error_stream
from tau.ai.types import Context, Model

if TYPE_CHECKING:
    from tau.accounts.model_registry import ModelRegistry, RequestAuth

__all__ = ["registry_stream", "send_with_auth"]


def registry_stream(
    registry: ModelRegistry,
    model: Model,
    context: Context,
    options: StreamOptions | None,
    overrides: Mapping[str, Any],
    *,
    simple: bool,
) -> AssistantMessageEventStream:
    """One response from ``model`` (see the module docstring). ``simple``: ``stream_simple``'s
    options (``reasoning``), else the API's raw ones. Must be called from async code."""
    resolved = build_options(options, dict(overrides), simple=simple)
    if is_virtual_model(model):
        return deferred_stream(
            model, resolved.signal, lambda: _routed(registry, model, context, resolved, simple=simple)
        )
    if registry.auth_storage.oauth_refresh_due(model.provider):

        async def refreshed() -> AssistantMessageEventStream:
            # The refresh is an HTTP round trip (and may wait for another tau's): off the event loop.
            auth = await asyncio.to_thread(registry.get_api_key_and_headers, model)
            return send_with_auth(model, context, resolved, auth, simple=simple, caller_first=True)

        return deferred_stream(model, resolved.signal, refreshed)
    auth = registry.get_api_key_and_headers(model)
    return send_with_auth(model, context, resolved, auth, simple=simple, caller_first=True)


def send_with_auth(
    model: Model,
    context: Context,
    options: SimpleStreamOptions,
    auth: RequestAuth,
    *,
    simple: bool = True,
    caller_first: bool = False,
) -> AssistantMessageEventStream:
    """Send one request to the physical ``model`` with ``auth`` (mutates ``options``). A credential
    that resolved to nothing, a missing key for a built-in api or an unknown api ends the stream
    with an error. ``caller_first``: the key and headers in ``options`` win over ``auth``'s."""
    from tau.ai.streaming import stream, stream_simple

    problem = auth.error
    api_key = (options.api_key or auth.api_key) if caller_first else (auth.api_key or options.api_key)
    if problem is None and not api_key and model.api in BUILTIN_APIS:
        problem = missing_auth_message(model.provider)
    if problem is not None:
        return error_stream(model, problem)
    options.api_key = api_key
    if auth.base_url:
        model = replace(model, base_url=auth.base_url)
    if auth.headers:
        own = options.headers or {}
        options.headers = {**auth.headers, **own} if caller_first else {**own, **auth.headers}
    if auth.env:
        own_env = options.extra.get("env")
        env = {**auth.env, **own_env} if caller_first and isinstance(own_env, dict) else dict(auth.env)
        options.extra = {**options.extra, "env": env}
    try:
        return (stream_simple if simple else stream)(model, context, options)
    except Exception as error:  # an api no provider serves
        return error_stream(model, str(error) or type(error).__name__)


async def _routed(
    registry: ModelRegistry, model: Model, context: Context, options: SimpleStreamOptions, *, simple: bool
) -> AssistantMessageEventStream:
    route = await registry.resolve_virtual_model(
        model,
        context.messages,
        reason="direct",
        thinking_level=(options.reasoning or "off") if simple else "off",
        signal=options.signal,
    )
    target = route.model
    routed = copy.copy(options)
    routed.extra = dict(options.extra)
    if simple:
        routed.reasoning = None if route.thinking_level == "off" else route.thinking_level
    if options.max_tokens and target.max_tokens > 0:
        routed.max_tokens = min(options.max_tokens, target.max_tokens)
    if target.provider != model.provider:
        # Given for the virtual model's provider: another provider resolves its own.
        routed.api_key = None
        routed.headers = None
        routed.extra.pop("env", None)
    return registry_stream(registry, target, context, routed, {}, simple=simple)
