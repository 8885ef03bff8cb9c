"""OAuth access tokens from Google's Application Default Credentials, through ``google-auth``.

``google-auth`` finds the credentials (``GOOGLE_APPLICATION_CREDENTIALS``, then gcloud's
``application_default_credentials.json``, then the metadata server on Google Cloud) and does the
token exchange, e.g. signing a JWT with a service account's key. It is an optional dependency (the
``vertex`` extra), imported on the first request that needs it. Its HTTP goes through httpx, so
``requests`` is not needed; refreshes are blocking calls and run in a worker thread. Credentials are
kept per credentials file for the life of the process and refreshed only when their token is (about
to be) expired.
"""

from __future__ import annotations

import asyncio
import os
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from msgspec import Struct

from tau.ai.stream_writer import ProviderError

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
MISSING_EXTRA = (
    "Google Vertex AI with Google Cloud credentials needs the google-auth package: "
    "install tau's vertex extra (pip install 'tau-agent[vertex]')"
)
LOGIN_HINT = (
    "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
    "service-account key file"
)
_TOKEN_TIMEOUT_S = 60.0

_lock = threading.Lock()
_credentials: dict[tuple[str, str], Any] = {}


class AccessToken(Struct, frozen=True):
    token: str
    # The project billed for the request when the credentials name one (``x-goog-user-project``).
    quota_project: str | None


async def access_token(credentials_file: str | None = None, *, force_refresh: bool = False) -> AccessToken:
    """A valid access token for ``credentials_file`` (default: the ambient credentials), refreshing
    them if needed (or asked)."""
    return await asyncio.to_thread(_access_token, credentials_file, force_refresh)


def forget_credentials() -> None:
    """Drop the cached credentials (a new credentials file, tests)."""
    with _lock:
        _credentials.clear()


def _access_token(credentials_file: str | None, force_refresh: bool) -> AccessToken:
    google_auth = _import_google_auth()
    with _lock:
        credentials = _load(google_auth, credentials_file)
        if force_refresh or not credentials.valid:
            _refresh(google_auth, credentials)
        token = credentials.token
        if not isinstance(token, str) or not token:
            raise ProviderError(f"Google Cloud credentials gave no access token; {LOGIN_HINT}")
        quota = getattr(credentials, "quota_project_id", None)
        return AccessToken(token, quota if isinstance(quota, str) and quota else None)


def _import_google_auth() -> Any:
    try:
        import google.auth
        import google.auth.exceptions
        import google.auth.transport
    except ImportError as exc:
        raise ProviderError(MISSING_EXTRA) from exc
    return google.auth


def _load(google_auth: Any, credentials_file: str | None) -> Any:
    explicit = (credentials_file or os.environ.get("GOOGLE_APPLICATION_CREDENTIALS", "")).strip()
    key = (explicit, str(_gcloud_adc_path()))
    cached = _credentials.get(key)
    if cached is not None:
        return cached
    path = explicit or str(_gcloud_adc_path())
    quota = os.environ.get("GOOGLE_CLOUD_QUOTA_PROJECT", "").strip() or None
    try:
        # google-auth warns on stderr about gcloud user credentials without a quota project, and
        # about loading a credentials file at all; neither is news to a user who set one up.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if explicit or os.path.exists(path):
                # A known file is read directly: ``default()`` would also run gcloud to find a project.
                credentials, _project = google_auth.load_credentials_from_file(
                    path, scopes=SCOPES, quota_project_id=quota
                )
            else:  # the metadata server, on Google Cloud
                credentials, _project = google_auth.default(scopes=SCOPES, quota_project_id=quota)
    except google_auth.exceptions.DefaultCredentialsError as exc:
        if explicit:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ProviderError(
                f"Cannot use the Google Cloud credentials in GOOGLE_APPLICATION_CREDENTIALS ({explicit}): "
                f"{detail}"
            ) from exc
        raise ProviderError(f"No Google Cloud credentials found: {LOGIN_HINT}") from exc
    _credentials[key] = credentials
    return credentials


def _gcloud_adc_path() -> Path:
    """Where ``gcloud auth application-default login`` writes its credentials."""
    config = os.environ.get("CLOUDSDK_CONFIG", "").strip()
    if config:
        return Path(config) / "application_default_credentials.json"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA", "")) / "gcloud" / "application_default_credentials.json"
    return Path.home() / ".config" / "gcloud" / "application_default_credentials.json"


def _refresh(google_auth: Any, credentials: Any) -> None:
    exceptions = google_auth.exceptions
    try:
        credentials.refresh(_transport_class(google_auth)())
    except exceptions.RefreshError as exc:
        raise ProviderError(
            f"Google Cloud credentials could not be refreshed ({_reason(exc)}); {LOGIN_HINT}"
        ) from exc
    except exceptions.TransportError as exc:
        raise ProviderError(
            f"Could not reach Google's token endpoint to refresh the credentials: {exc}", retryable=True
        ) from exc


def _reason(exc: Exception) -> str:
    """The first line of a refresh failure (google-auth appends the whole response body)."""
    text = str(exc.args[0]) if exc.args else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


_transport: type | None = None


def _transport_class(google_auth: Any) -> type:
    """google-auth's ``Request`` interface over httpx (built once google-auth is imported)."""
    global _transport
    if _transport is not None:
        return _transport
    base_response: Any = google_auth.transport.Response
    base_request: Any = google_auth.transport.Request
    exceptions = google_auth.exceptions

    class Response(base_response):  # type: ignore[misc]
        def __init__(self, response: httpx.Response) -> None:
            self._response = response

        @property
        def status(self) -> int:
            return self._response.status_code

        @property
        def headers(self) -> Mapping[str, str]:
            return self._response.headers

        @property
        def data(self) -> bytes:
            return self._response.content

    class Request(base_request):  # type: ignore[misc]
        def __call__(
            self,
            url: str,
            method: str = "GET",
            body: bytes | None = None,
            headers: Mapping[str, str] | None = None,
            timeout: float | None = None,
            **kwargs: Any,
        ) -> Response:
            try:
                response = httpx.request(
                    method, url, content=body, headers=headers, timeout=timeout or _TOKEN_TIMEOUT_S
                )
            except httpx.HTTPError as exc:
                raise exceptions.TransportError(f"{url}: {exc or type(exc).__name__}") from exc
            return Response(response)

    _transport = Request
    return Request
