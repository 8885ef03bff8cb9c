"""Azure OpenAI's Responses API: ``POST {endpoint}/responses?api-version=…`` with a deployment name.

The request and the stream are OpenAI's Responses ones (``openai_responses``); what differs is
where the request goes and how it authenticates, resolved as pi does:

- endpoint: ``options.extra["azure_base_url"]``, ``$AZURE_OPENAI_BASE_URL``, then
  ``https://<resource>.openai.azure.com/openai/v1`` from ``extra["azure_resource_name"]`` or
  ``$AZURE_OPENAI_RESOURCE_NAME``, then ``model.base_url``. An Azure host given without a path
  gets ``/openai/v1``.
- API version: ``extra["azure_api_version"]``, ``$AZURE_OPENAI_API_VERSION``, else ``v1``.
- deployment (sent as the body's ``model``): ``extra["azure_deployment_name"]``, the model's entry
  in ``$AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,model2=deployment2``), else the
  model id.
- credential: a key goes in the ``api-key`` header; a Microsoft Entra ID access token (a JWT,
  e.g. from ``az account get-access-token``) goes as ``Authorization: Bearer``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from urllib.parse import quote, urlsplit, urlunsplit

from tau.ai.env_keys import get_env_api_key
from tau.ai.events import AssistantMessageEventStream
from tau.ai.http import HttpStatusError, apply_payload_hook, bearer, merge_headers, open_stream
from tau.ai.options import SimpleStreamOptions, StreamOptions
from tau.ai.providers.openai_responses import (
    ResponsesEventReader,
    build_request_body,
    read_responses_stream,
    simple_reasoning_extra,
)
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transform import AZURE_TOOL_CALL_PROVIDERS
from tau.ai.types import Context, JsonObject, Model

DEFAULT_API_VERSION = "v1"
# The Responses API rejects a smaller ``max_output_tokens``.
MIN_OUTPUT_TOKENS = 16
_AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
_BARE_AZURE_PATHS = frozenset({"", "/openai", "/openai/v1/responses"})


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Azure Responses call with raw per-API options (those of ``openai_responses``)."""

    async def produce(writer: StreamWriter) -> None:
        api_key = options.api_key or get_env_api_key(model.provider)
        if not api_key:
            raise ProviderError(
                f"No API key for provider: {model.provider} (set AZURE_OPENAI_API_KEY, or an Entra ID token)"
            )
        base_url = resolve_base_url(model, options.extra)
        api_version = (
            _setting(options.extra, "azure_api_version", "AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION
        )
        deployment = resolve_deployment_name(model, options.extra)
        if options.max_tokens:
            options_for_body = dataclasses.replace(
                options, max_tokens=max(options.max_tokens, MIN_OUTPUT_TOKENS)
            )
        else:
            options_for_body = options
        body = build_request_body(model, context, options_for_body, AZURE_TOOL_CALL_PROVIDERS)
        body["model"] = deployment
        body = await apply_payload_hook(body, model, options)
        url = f"{base_url}/responses?api-version={quote(api_version, safe='')}"
        headers = merge_headers(auth_headers(api_key), model.headers, options.headers)
        try:
            response = await open_stream(
                model, url, headers=headers, body=body, options=options, client_key=base_url
            )
        except HttpStatusError as exc:
            if not _is_missing_deployment(exc):
                raise
            raise ProviderError(
                f"Azure OpenAI deployment {deployment!r} does not exist at {base_url}: create it, or map "
                f"the model to an existing deployment with AZURE_OPENAI_DEPLOYMENT_NAME_MAP={model.id}=<deployment>"
            ) from exc
        writer.start()
        reader = ResponsesEventReader(writer, requested_service_tier=options.extra.get("service_tier"))
        await read_responses_stream(reader, response, options)

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level, mapped as for OpenAI's Responses API."""
    return stream(model, context, dataclasses.replace(options, extra=simple_reasoning_extra(model, options)))


# --- where and as whom --------------------------------------------------------------------------


def resolve_base_url(model: Model, extra: JsonObject) -> str:
    """The endpoint the ``/responses`` path is appended to (no trailing slash)."""
    base_url = _setting(extra, "azure_base_url", "AZURE_OPENAI_BASE_URL")
    if not base_url:
        resource = _setting(extra, "azure_resource_name", "AZURE_OPENAI_RESOURCE_NAME")
        base_url = f"https://{resource}.openai.azure.com/openai/v1" if resource else model.base_url.strip()
    if not base_url:
        raise ProviderError(
            "Azure OpenAI needs an endpoint: set AZURE_OPENAI_RESOURCE_NAME to your resource name "
            "(or AZURE_OPENAI_BASE_URL to its full URL)"
        )
    return _normalize_base_url(base_url)


def _normalize_base_url(base_url: str) -> str:
    parts = urlsplit(base_url.strip().rstrip("/"))
    if not parts.scheme or not parts.netloc:
        raise ProviderError(
            f"Invalid Azure OpenAI base URL: {base_url!r} (expected https://<resource>.openai.azure.com)"
        )
    host = parts.hostname or ""
    path = parts.path.rstrip("/")
    if host.endswith(_AZURE_HOST_SUFFIXES) and path in _BARE_AZURE_PATHS:
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def resolve_deployment_name(model: Model, extra: JsonObject) -> str:
    """The deployment that serves ``model``: an explicit one, the env map's entry, else the model id."""
    explicit = extra.get("azure_deployment_name")
    if isinstance(explicit, str) and explicit.strip():
        return explicit.strip()
    mapping = parse_deployment_map(os.environ.get("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", ""))
    return mapping.get(model.id, model.id)


def parse_deployment_map(text: str) -> dict[str, str]:
    """``"gpt-5=prod-gpt5, gpt-4.1=chat"`` → ``{"gpt-5": "prod-gpt5", "gpt-4.1": "chat"}``; bad entries are skipped."""
    mapping: dict[str, str] = {}
    for entry in text.split(","):
        model_id, _, deployment = entry.partition("=")
        if model_id.strip() and deployment.strip():
            mapping[model_id.strip()] = deployment.strip()
    return mapping


def auth_headers(credential: str) -> dict[str, str]:
    """``api-key`` for a resource key; ``Authorization: Bearer`` for an Entra ID token (a JWT)."""
    if is_jwt(credential):
        return bearer(credential)
    return {"api-key": credential}


def is_jwt(credential: str) -> bool:
    # Entra ID access tokens are JWTs ("eyJ..." header, three dot-separated parts); resource keys
    # are plain alphanumeric strings and never contain a dot.
    return credential.startswith("eyJ") and credential.count(".") == 2


def _setting(extra: Mapping[str, object], option: str, variable: str) -> str | None:
    value = extra.get(option)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return (os.environ.get(variable) or "").strip() or None


def _is_missing_deployment(exc: HttpStatusError) -> bool:
    # Azure answers 404 DeploymentNotFound ("The API deployment for this resource does not exist").
    return exc.status == 404 and "deployment" in str(exc).lower()
