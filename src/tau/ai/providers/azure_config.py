"""Where an Azure OpenAI request goes and how it authenticates, resolved as pi does.

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

Both of Azure's APIs use it: ``azure-openai-responses``, and ``openai-completions`` for the
catalogue's Azure chat models.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from tau.ai.stream_writer import ProviderError
from tau.ai.transport.http import HttpStatusError, bearer
from tau.ai.types import JsonObject, Model

DEFAULT_API_VERSION = "v1"
_AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
_BARE_AZURE_PATHS = frozenset({"", "/openai", "/openai/v1/responses"})


def api_version(extra: JsonObject) -> str:
    """The ``api-version`` query value."""
    return _setting(extra, "azure_api_version", "AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION


def resolve_base_url(model: Model, extra: JsonObject) -> str:
    """The endpoint the API path (``/responses``, ``/chat/completions``) is appended to, without a trailing slash."""
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


def missing_deployment_error(
    exc: HttpStatusError, model: Model, deployment: str, base_url: str
) -> ProviderError | None:
    """Azure's 404 DeploymentNotFound said in one line naming the deployment and how to map it."""
    if exc.status != 404 or "deployment" not in str(exc).lower():
        return None
    return ProviderError(
        f"Azure OpenAI deployment {deployment!r} does not exist at {base_url}: create it, or map "
        f"the model to an existing deployment with AZURE_OPENAI_DEPLOYMENT_NAME_MAP={model.id}=<deployment>"
    )
