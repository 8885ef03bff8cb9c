"""What every login flow shares: its errors, PKCE, the HTTP calls, and the test-only endpoint overrides.

Test-only environment variables (never set them outside tests; they let the whole flow run against
``tau.testing.fake_oauth`` on 127.0.0.1):

- ``TAU_OAUTH_TEST_HOSTS``: a JSON object mapping a host (``"claude.ai"``) to the URL prefix that
  replaces ``https://<host>`` in every URL a flow builds (authorise, token, device code, Copilot
  token and API, Cloud Code Assist).
- ``TAU_OAUTH_TEST_CALLBACK_PORT``: the port the local callback server listens on instead of the
  provider's registered one.
- ``TAU_OAUTH_TEST_TIMEOUT_S``: how long a login waits for the browser (default 10 minutes).
- ``TAU_OAUTH_TEST_POLL_S``: the shortest wait between device-login polls (default 1 s, as pi).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from tau.accounts.oauth.errors import LoginCancelledError, LoginError, RefreshRejectedError
from tau.ai.types import JsonObject

__all__ = [
    "LoginCancelledError",
    "LoginError",
    "RefreshRejectedError",
    "callback_port",
    "expires_at_ms",
    "get_json",
    "login_timeout_s",
    "min_interval_s",
    "oauth_url",
    "pkce_pair",
    "post_form",
    "post_json",
]

_HTTP_TIMEOUT_S = 30.0
_DEFAULT_LOGIN_TIMEOUT_S = 600.0
_MIN_POLL_INTERVAL_S = 1.0


def oauth_url(url: str) -> str:
    """``url``, or its test replacement from ``TAU_OAUTH_TEST_HOSTS``."""
    raw = os.environ.get("TAU_OAUTH_TEST_HOSTS")
    if not raw:
        return url
    hosts = json.loads(raw)
    parts = urlsplit(url)
    prefix = hosts.get(parts.hostname or "")
    if not isinstance(prefix, str):
        return url
    rest = url[len(f"{parts.scheme}://{parts.netloc}") :]
    return prefix.rstrip("/") + rest


def callback_port(registered: int) -> int:
    override = os.environ.get("TAU_OAUTH_TEST_CALLBACK_PORT")
    return int(override) if override else registered


def login_timeout_s() -> float:
    override = os.environ.get("TAU_OAUTH_TEST_TIMEOUT_S")
    return float(override) if override else _DEFAULT_LOGIN_TIMEOUT_S


def min_interval_s() -> float:
    override = os.environ.get("TAU_OAUTH_TEST_POLL_S")
    return float(override) if override else _MIN_POLL_INTERVAL_S


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636), both base64url without padding."""
    verifier = _b64url(secrets.token_bytes(32))
    challenge = _b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return verifier, challenge


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def post_json(url: str, body: JsonObject, *, what: str, headers: dict[str, str] | None = None) -> Any:
    return _request(
        "POST", url, what=what, json=body, headers={"Accept": "application/json", **(headers or {})}
    )


def post_form(url: str, form: dict[str, str], *, what: str, headers: dict[str, str] | None = None) -> Any:
    return _request(
        "POST", url, what=what, data=form, headers={"Accept": "application/json", **(headers or {})}
    )


def get_json(url: str, *, what: str, headers: dict[str, str] | None = None) -> Any:
    return _request("GET", url, what=what, headers={"Accept": "application/json", **(headers or {})})


def _request(method: str, url: str, *, what: str, **kwargs: Any) -> Any:
    """The JSON answer of one call; a failure is a ``LoginError`` naming ``what`` was attempted.

    A 400/401/403 from a token endpoint is a ``RefreshRejectedError``: the caller decides whether
    that means "log in again"."""
    try:
        with httpx.Client(timeout=_HTTP_TIMEOUT_S, trust_env=True) as client:
            response = client.request(method, oauth_url(url), **kwargs)
    except httpx.HTTPError as error:
        raise LoginError(f"{what} failed: {error or type(error).__name__}") from error
    if response.status_code >= 400:
        body = _json_or_none(response)
        detail = _error_detail(body)
        kind = RefreshRejectedError if response.status_code in (400, 401, 403) else LoginError
        reason = f"HTTP {response.status_code}{': ' + detail if detail else ''}"
        raise kind(f"{what} failed ({reason})", status=response.status_code, body=body, reason=reason)
    try:
        return response.json()
    except ValueError as error:
        raise LoginError(f"{what} failed: the answer is not JSON") from error


def _json_or_none(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None


def _error_detail(data: object) -> str:
    """The short reason a token endpoint gives (``error`` / ``error_description``), never the body in full."""
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, dict):
        error = error.get("message") or error.get("code")
    description = data.get("error_description")
    text = " - ".join(str(part) for part in (error, description) if isinstance(part, str) and part)
    return " ".join(text.split())[:200]


def expires_at_ms(expires_in_s: float, *, margin_s: float = 300.0) -> int:
    """An ``expires`` in epoch milliseconds, ``margin_s`` early (pi stores tokens 5 minutes short)."""
    return int(time.time() * 1000 + expires_in_s * 1000 - margin_s * 1000)
