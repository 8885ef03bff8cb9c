"""Meta (Muse subscription): a device-code login whose identity token mints a Model API key valid
for about a day; "refreshing" mints a new key with the same identity token (as pi)."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from tau.accounts.oauth._common import post_form, post_json
from tau.accounts.oauth.device_code import PollResult, poll_device_code, token_error_result
from tau.accounts.oauth.errors import LoginError, RefreshRejectedError
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.ai.types import JsonObject

__all__ = ["MetaFlow"]

_CLIENT_ID = "1031625952748946"
_DEVICE_URL = "https://auth.meta.com/oidc/device/authorization/"
_TOKEN_URL = "https://auth.meta.com/oidc/device/token/"
_MINT_URL = "https://api.meta.ai/muse-code/key"
_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000
_DEVICE_TIMEOUT_S = 15 * 60


class MetaFlow(OAuthFlow):
    provider_id = "meta"
    name = "Meta"

    def login(self, ui: LoginInteraction) -> JsonObject:
        started = post_form(_DEVICE_URL, {"client_id": _CLIENT_ID}, what="Meta device authorization")
        device_code = require_string(started, "device_code", "Meta device authorization")
        user_code = require_string(started, "user_code", "Meta device authorization")
        page = started.get("verification_uri_complete") or started.get("verification_uri")
        if not isinstance(page, str) or urlsplit(page).scheme not in ("http", "https"):
            raise LoginError("Meta device authorization: the answer has no verification page")
        interval, expires_in = started.get("interval"), started.get("expires_in")
        ui.show_device_code(page, user_code)

        def poll() -> PollResult:
            try:
                answer = post_form(
                    _TOKEN_URL,
                    {
                        "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                        "device_code": device_code,
                        "client_id": _CLIENT_ID,
                    },
                    what="Meta device token request",
                )
            except LoginError as error:
                return token_error_result(error, name="Meta")
            return "done", require_string(answer, "access_token", "Meta device token request")

        identity = poll_device_code(
            ui,
            poll,
            interval_s=float(interval) if isinstance(interval, int | float) and interval > 0 else None,
            expires_in_s=float(expires_in)
            if isinstance(expires_in, int | float) and expires_in > 0
            else _DEVICE_TIMEOUT_S,
            wait_first=True,
        )
        ui.progress("Enabling Meta Model API access...")
        return _mint(str(identity))

    def refresh(self, credential: JsonObject) -> JsonObject:
        return _mint(str(credential.get("refresh")))


def _mint(identity_token: str) -> JsonObject:
    """A Model API key for ``identity_token``; a refused token means the Meta session is over."""
    try:
        answer = post_json(
            _MINT_URL,
            {},
            what="Meta API key mint",
            headers={"Authorization": f"Bearer {identity_token}", "x-api-version": "1.0.0"},
        )
    except RefreshRejectedError as error:
        if error.status in (401, 403):
            raise RefreshRejectedError(
                f"the Meta session expired ({error.reason})", status=error.status
            ) from error
        raise
    key = answer.get("api_key") if isinstance(answer, dict) else None
    if not isinstance(key, str) or not key:
        action = answer.get("action_url") if isinstance(answer, dict) else None
        where = (
            f": complete the setup at {action}"
            if isinstance(action, str) and action.startswith("https://")
            else ""
        )
        raise LoginError(f"Meta did not issue an API key{where}")
    return {
        "type": "oauth",
        "refresh": identity_token,
        "access": key,
        "expires": int(time.time() * 1000) + _KEY_LIFETIME_MS,
    }
