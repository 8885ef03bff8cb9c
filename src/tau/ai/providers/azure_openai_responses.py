"""Azure OpenAI's Responses API: ``POST {endpoint}/responses?api-version=…`` with a deployment name.

The request and the stream are OpenAI's Responses ones (``openai_responses``); where the request
goes and how it authenticates (endpoint, API version, deployment, key or Entra ID token) is
resolved by ``azure_config``, as pi does.
"""

from __future__ import annotations

from urllib.parse import quote

import msgspec

from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions
from tau.ai.providers.azure_config import (
    api_version,
    auth_headers,
    missing_deployment_error,
    resolve_base_url,
    resolve_deployment_name,
)
from tau.ai.providers.openai_responses import (
    ResponsesEventReader,
    build_request_body,
    read_responses_stream,
    responses_grammar_inputs,
    simple_reasoning_extra,
)
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transform import AZURE_TOOL_CALL_PROVIDERS
from tau.ai.transport.http import HttpStatusError, apply_payload_hook, merge_headers, open_stream
from tau.ai.types import Context, JsonObject, Model

# The Responses API rejects a smaller ``max_output_tokens``.
MIN_OUTPUT_TOKENS = 16


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Azure Responses call with raw per-API options (those of ``openai_responses``)."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        if not api_key:
            raise ProviderError(
                f"No API key for provider: {model.provider} (set AZURE_OPENAI_API_KEY, or an Entra ID token)"
            )
        base_url = resolve_base_url(model, options.extra)
        deployment = resolve_deployment_name(model, options.extra)
        if options.max_tokens:
            options_for_body = msgspec.structs.replace(
                options, max_tokens=max(options.max_tokens, MIN_OUTPUT_TOKENS)
            )
        else:
            options_for_body = options
        grammar_inputs = responses_grammar_inputs(model, context)
        body = azure_body(
            build_request_body(
                model, context, options_for_body, AZURE_TOOL_CALL_PROVIDERS, grammar_inputs=grammar_inputs
            ),
            model,
            options_for_body,
            deployment,
        )
        body = await apply_payload_hook(body, model, options)
        url = f"{base_url}/responses?api-version={quote(api_version(options.extra), safe='')}"
        headers = merge_headers(auth_headers(api_key), model.headers, options.headers)
        try:
            response = await open_stream(
                model, url, headers=headers, body=body, options=options, client_key=base_url
            )
        except HttpStatusError as exc:
            explained = missing_deployment_error(exc, model, deployment, base_url)
            if explained is None:
                raise
            raise explained from exc
        writer.start()
        reader = ResponsesEventReader(
            writer, requested_service_tier=options.extra.get("service_tier"), grammar_inputs=grammar_inputs
        )
        await read_responses_stream(reader, response, options, model)

    return run_stream(model, options, produce)


def azure_body(body: JsonObject, model: Model, options: StreamOptions, deployment: str) -> JsonObject:
    """OpenAI's Responses body as pi 1.6's Azure provider sends it: the deployment for the model;
    no cache retention fields (``prompt_cache_retention``, ``prompt_cache_options``), which Azure
    does not offer; ``prompt_cache_key`` whenever there is a session (unless the compat's
    ``promptCacheKeyMode`` is ``"disabled"``), whatever the retention; ``max_output_tokens``
    whenever a limit is given (``supportsMaxOutputTokens`` is OpenAI's and Codex's key)."""
    body["model"] = deployment
    body.pop("prompt_cache_retention", None)
    body.pop("prompt_cache_options", None)
    if options.session_id and (model.compat or {}).get("promptCacheKeyMode") != "disabled":
        body["prompt_cache_key"] = options.session_id
    if options.max_tokens:
        body["max_output_tokens"] = options.max_tokens
    return body


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level, mapped as for OpenAI's Responses API."""
    return stream(
        model, context, msgspec.structs.replace(options, extra=simple_reasoning_extra(model, options))
    )
