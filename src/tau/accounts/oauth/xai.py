"""xAI (SuperGrok or X Premium): a standard device-code login (RFC 8628); the access token is the key."""

from __future__ import annotations

from urllib.parse import urlsplit

from tau.accounts.oauth._common import expires_at_ms, post_form
from tau.accounts.oauth.device_code import PollResult, poll_device_code, token_error_result
from tau.accounts.oauth.errors import LoginError
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.ai.types import JsonObject

__all__ = ["XaiFlow"]

_CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"
_SCOPE = "openid profile email offline_access grok-cli:access api:access"
_DEVICE_CODE_URL = "https://auth.x.ai/oauth2/device/code"
_TOKEN_URL = "https://auth.x.ai/oauth2/token"
_DEFAULT_LIFETIME_S = 3600
_DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class XaiFlow(OAuthFlow):
    provider_id = "xai"
    name = "xAI"

    def login(self, ui: LoginInteraction) -> JsonObject:
        started = post_form(
            _DEVICE_CODE_URL,
            {"client_id": _CLIENT_ID, "scope": _SCOPE, "referrer": "tau"},
            what="xAI device authorization",
        )
        device_code = require_string(started, "device_code", "xAI device authorization")
        user_code = require_string(started, "user_code", "xAI device authorization")
        page = started.get("verification_uri_complete") or require_string(
            started, "verification_uri", "xAI device authorization"
        )
        if not isinstance(page, str) or urlsplit(page).scheme != "https":
            raise LoginError("xAI device authorization: the verification page is not an https address")
        expires_in = started.get("expires_in")
        if not isinstance(expires_in, int | float) or expires_in <= 0:
            raise LoginError("xAI device authorization: the answer has no expires_in")
        interval = started.get("interval")
        ui.show_device_code(page, user_code)

        def poll() -> PollResult:
            try:
                answer = post_form(
                    _TOKEN_URL,
                    {"grant_type": _DEVICE_GRANT, "client_id": _CLIENT_ID, "device_code": device_code},
                    what="xAI device token polling",
                )
            except LoginError as error:
                return token_error_result(error, name="xAI")
            return "done", answer

        tokens = poll_device_code(
            ui,
            poll,
            interval_s=float(interval) if isinstance(interval, int | float) and interval > 0 else None,
            expires_in_s=float(expires_in),
            wait_first=True,
        )
        return _credential(tokens, None)

    def refresh(self, credential: JsonObject) -> JsonObject:
        refresh_token = str(credential.get("refresh"))
        tokens = post_form(
            _TOKEN_URL,
            {"grant_type": "refresh_token", "client_id": _CLIENT_ID, "refresh_token": refresh_token},
            what="xAI token refresh",
        )
        return _credential(tokens, refresh_token)


def _credential(tokens: object, previous_refresh: str | None) -> JsonObject:
    access = require_string(tokens, "access_token", "xAI token")
    data = tokens if isinstance(tokens, dict) else {}
    refresh = (
        data.get("refresh_token") if "refresh_token" in data or not previous_refresh else previous_refresh
    )
    if not isinstance(refresh, str) or not refresh:
        raise LoginError("xAI token: the answer has no refresh_token")
    expires_in = data.get("expires_in", _DEFAULT_LIFETIME_S)
    if not isinstance(expires_in, int | float) or expires_in <= 0:
        raise LoginError("xAI token: the answer has no valid expires_in")
    return {"type": "oauth", "access": access, "refresh": refresh, "expires": expires_at_ms(expires_in)}
