"""The ``google-vertex`` API: Gemini on Vertex AI, ``streamGenerateContent`` over server-sent events.

The body and the stream are Gemini's (``google_convert``, ``google.read_gemini_stream``); what
differs is where the request goes and how it is authenticated. Two modes, as pi's:

- an API key (``GOOGLE_CLOUD_API_KEY`` or a stored key) is sent as ``x-goog-api-key`` to
  ``…/v1/publishers/google/models/{id}:streamGenerateContent`` (Vertex's express mode);
- otherwise Application Default Credentials (``google_credentials``) give a bearer token for
  ``https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/
  google/models/{id}:streamGenerateContent``, the project from ``GOOGLE_CLOUD_PROJECT`` (or
  ``GCLOUD_PROJECT``) and the location from ``GOOGLE_CLOUD_LOCATION`` (``extra`` keys ``project`` and
  ``location`` win, then the ``env`` map that pi's Vertex login stores with its credential). ``global`` and the multi-regions ``us``/``eu`` have their own hosts.

A model whose base URL has no ``{location}`` placeholder (a proxy, a test server) gets the request at
that URL, without the project and location in the path, and with ``/v1`` unless the URL already
names a version.
"""

from __future__ import annotations

import os
import re
from contextlib import aclosing
from typing import Final
from urllib.parse import urlsplit

from tau.ai.env_keys import AUTHENTICATED
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions, StreamOptions, stream_event_hook
from tau.ai.providers.google import read_gemini_stream, simple_stream_options
from tau.ai.providers.google_convert import build_request_body
from tau.ai.providers.google_errors import explain_http_error
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream
from tau.ai.transport import wire
from tau.ai.transport.http import (
    HttpStatusError,
    apply_payload_hook,
    iter_sse,
    merge_headers,
    open_stream,
    unresolved_host,
)
from tau.ai.types import Context, JsonObject, Model

API: Final = "google-vertex"
API_VERSION: Final = "v1"
EXPRESS_BASE_URL: Final = "https://aiplatform.googleapis.com"
# pi's stand-in for "use the ambient Google Cloud credentials", like tau's AUTHENTICATED.
_CREDENTIALS_MARKER: Final = "gcp-vertex-credentials"
_PLACEHOLDER_KEY = re.compile(r"^<[^>]+>$")
_VERSION_SEGMENT = re.compile(r"^v\d+(?:beta\d*)?$")
_MULTI_REGIONS: Final = frozenset({"us", "eu"})
# A region (us-central1, northamerica-northeast2), or global/us/eu: what can stand in a host name.
_LOCATION_SHAPE = re.compile(r"^[a-z]+(?:-[a-z]+[0-9]+)?$")


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Gemini response from Vertex AI (``extra``: ``tool_choice``, ``thinking``,
    ``project``, ``location``)."""

    async def produce(writer: StreamWriter) -> None:
        api_key = explicit_api_key(options.api_key)
        body = build_request_body(
            model, context, options.extra, temperature=options.temperature, max_tokens=options.max_tokens
        )
        body = await apply_payload_hook(body, model, options)
        if api_key is not None:
            url = express_url(model)
            response = await _open(model, url, {"x-goog-api-key": api_key}, body, options, api_key)
        else:
            project = resolve_project(options)
            location = resolve_location(options)
            url = regional_url(model, project, location)
            try:
                try:
                    response = await _open(model, url, await _bearer(options), body, options, None)
                except _Unauthorized:
                    # The token was revoked or expired early (clock skew): one fresh token, one more try.
                    response = await _open(
                        model, url, await _bearer(options, refresh=True), body, options, None
                    )
            except ProviderError as exc:
                if _collection_base(model) is None and unresolved_host(exc):
                    # Google names a regional host only for locations that exist: say which was tried.
                    raise ProviderError(
                        f"{exc} (no Vertex AI endpoint found for location {location!r}: "
                        "check GOOGLE_CLOUD_LOCATION, or the network)",
                        retryable=True,
                    ) from exc
                raise
        writer.start()
        async with aclosing(iter_sse(response, options)) as events:
            await read_gemini_stream(writer, events, on_event=stream_event_hook(options), model=model)

    return run_stream(model, options, produce)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Stream with a reasoning level, mapped as for the Gemini API."""
    return stream(model, context, simple_stream_options(model, options))


class _Unauthorized(ProviderError):
    """A 401 for a bearer token (retried once with a refreshed token)."""


async def _bearer(options: StreamOptions, *, refresh: bool = False) -> dict[str, str]:
    # Imported here: google-auth is only needed (and installed) for this mode.
    from tau.ai.providers.google_credentials import access_token

    credentials_file = _env(options, "GOOGLE_APPLICATION_CREDENTIALS")
    token = await access_token(credentials_file, force_refresh=refresh)
    headers = {"authorization": f"Bearer {token.token}"}
    if token.quota_project:
        headers["x-goog-user-project"] = token.quota_project
    return headers


async def _open(
    model: Model,
    url: str,
    auth: dict[str, str],
    body: JsonObject,
    options: StreamOptions,
    api_key: str | None,
) -> wire.Response:
    headers = merge_headers(auth, model.headers, options.headers)
    try:
        return await open_stream(
            model, url, headers=headers, body=body, options=options, client_key=_origin(url)
        )
    except HttpStatusError as exc:
        explained = explain_http_error(exc, product="Vertex AI", relogin=_relogin(api_key))
        if exc.status == 401 and api_key is None:
            raise _Unauthorized(str(explained)) from exc
        raise explained from exc


def explicit_api_key(api_key: str | None) -> str | None:
    """The API key to send, or ``None`` when the key only says "use Google Cloud credentials"."""
    key = (api_key or "").strip()
    if not key or key in (AUTHENTICATED, _CREDENTIALS_MARKER) or _PLACEHOLDER_KEY.match(key):
        return None
    return key


def resolve_project(options: StreamOptions) -> str:
    project = (
        _option(options, "project")
        or _env(options, "GOOGLE_CLOUD_PROJECT")
        or _env(options, "GCLOUD_PROJECT")
    )
    if not project:
        raise ProviderError(
            "Vertex AI needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), "
            "or GOOGLE_CLOUD_API_KEY to use an API key instead"
        )
    return project


def resolve_location(options: StreamOptions) -> str:
    location = _option(options, "location") or _env(options, "GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ProviderError(
            "Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (e.g. us-central1, or global)"
        )
    if not _LOCATION_SHAPE.match(location):
        raise ProviderError(
            f"Invalid Google Cloud location {location!r} for Vertex AI: set GOOGLE_CLOUD_LOCATION "
            "to e.g. us-central1 (or global)"
        )
    return location


def express_url(model: Model) -> str:
    """The API-key endpoint: no project or location in the path."""
    return f"{_collection_base(model) or EXPRESS_BASE_URL + '/' + API_VERSION}/{_model_path(model)}"


def regional_url(model: Model, project: str, location: str) -> str:
    custom = _collection_base(model)
    if custom is not None:
        return f"{custom}/{_model_path(model)}"
    if location == "global":
        host = "aiplatform.googleapis.com"
    elif location in _MULTI_REGIONS:
        host = f"aiplatform.{location}.rep.googleapis.com"
    else:
        host = f"{location}-aiplatform.googleapis.com"
    return f"https://{host}/{API_VERSION}/projects/{project}/locations/{location}/{_model_path(model)}"


def _collection_base(model: Model) -> str | None:
    """A custom base URL with the API version appended, or ``None`` for Google's own hosts."""
    base = model.base_url.strip().rstrip("/")
    if not base or "{location}" in base:
        return None
    path = base.split("://", 1)[-1].partition("/")[2]
    if any(_VERSION_SEGMENT.match(part) for part in path.split("/")):
        return base
    return f"{base}/{API_VERSION}"


def _model_path(model: Model) -> str:
    return f"publishers/google/models/{model.id}:streamGenerateContent?alt=sse"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _relogin(api_key: str | None) -> str:
    if api_key is not None:
        return "check GOOGLE_CLOUD_API_KEY or the key stored for google-vertex"
    from tau.ai.providers.google_credentials import LOGIN_HINT

    return LOGIN_HINT


def _option(options: StreamOptions, name: str) -> str | None:
    value = options.extra.get(name)
    return value.strip() or None if isinstance(value, str) else None


def _env(options: StreamOptions, name: str) -> str | None:
    """``name`` from the ``env`` option (settings stored with a pi login), else the environment."""
    stored = options.extra.get("env")
    value = stored.get(name) if isinstance(stored, dict) else None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return os.environ.get(name, "").strip() or None
