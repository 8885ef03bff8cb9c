"""Kimi Code (subscription): a device-code login (RFC 8628) at auth.kimi.com (or
``KIMI_CODE_OAUTH_HOST`` / ``KIMI_OAUTH_HOST``, as pi); requests carry the access token as a bearer."""

from __future__ import annotations

import os
import time
from urllib.parse import urlsplit

from tau.accounts.oauth._common import expires_at_ms, post_form
from tau.accounts.oauth.device_code import PollResult, poll_device_code, token_error_result
from tau.accounts.oauth.errors import LoginError, RefreshRejectedError
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.ai.types import JsonObject

__all__ = ["KimiCodingFlow"]

_CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098"
_DEFAULT_HOST = "https://auth.kimi.com"
_DEVICE_TIMEOUT_S = 15 * 60
_DEFAULT_INTERVAL_S = 5.0
_REFRESH_RETRIES = 3  # after a 429 or 5xx, waiting 1, 2, 4 s


def _host() -> str:
    return (
        os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST") or _DEFAULT_HOST
    ).rstrip("/")


class KimiCodingFlow(OAuthFlow):
    provider_id = "kimi-coding"
    name = "Kimi For Coding"

    def login(self, ui: LoginInteraction) -> JsonObject:
        host = _host()
        started = post_form(
            f"{host}/api/oauth/device_authorization",
            {"client_id": _CLIENT_ID},
            what="Kimi Code device authorization",
        )
        device_code = require_string(started, "device_code", "Kimi Code device authorization")
        user_code = require_string(started, "user_code", "Kimi Code device authorization")
        page = require_string(started, "verification_uri_complete", "Kimi Code device authorization")
        if urlsplit(page).scheme not in ("http", "https"):
            raise LoginError("Kimi Code device authorization: the verification page is not a web address")
        interval, expires_in = started.get("interval"), started.get("expires_in")
        ui.show_device_code(page, user_code)

        def poll() -> PollResult:
            try:
                answer = post_form(
                    f"{host}/api/oauth/token",
                    {
                        "client_id": _CLIENT_ID,
                        "device_code": device_code,
                        "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                    },
                    what="Kimi Code device token request",
                )
            except LoginError as error:
                return token_error_result(error, name="Kimi Code")
            return "done", answer

        tokens = poll_device_code(
            ui,
            poll,
            interval_s=float(interval)
            if isinstance(interval, int | float) and interval > 0
            else _DEFAULT_INTERVAL_S,
            expires_in_s=float(expires_in)
            if isinstance(expires_in, int | float) and expires_in > 0
            else _DEVICE_TIMEOUT_S,
            wait_first=True,
        )
        return _credential(tokens, "Kimi Code device token request")

    def refresh(self, credential: JsonObject) -> JsonObject:
        form = {
            "client_id": _CLIENT_ID,
            "grant_type": "refresh_token",
            "refresh_token": str(credential.get("refresh")),
        }
        for attempt in range(_REFRESH_RETRIES + 1):
            try:
                return _credential(
                    post_form(f"{_host()}/api/oauth/token", form, what="Kimi Code token refresh"), "refresh"
                )
            except RefreshRejectedError:
                raise
            except LoginError as error:
                retryable = error.status is None or error.status == 429 or error.status >= 500
                if not retryable or attempt == _REFRESH_RETRIES:
                    raise
                time.sleep(2**attempt)
        raise LoginError("Kimi Code token refresh failed")  # not reached: the loop returns or raises


def _credential(tokens: object, what: str) -> JsonObject:
    expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
    if not isinstance(expires_in, int | float) or expires_in <= 0:
        raise LoginError(f"{what}: the answer has no expires_in")
    return {
        "type": "oauth",
        "access": require_string(tokens, "access_token", what),
        "refresh": require_string(tokens, "refresh_token", what),
        # Kimi tokens are stored to their real expiry (as pi).
        "expires": expires_at_ms(expires_in, margin_s=0),
    }
