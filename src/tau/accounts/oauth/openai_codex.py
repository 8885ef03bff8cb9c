"""ChatGPT Plus/Pro (Codex): an authorization-code login with PKCE, the browser sent back to port
1455 (registered, shared with the Codex CLI), or a device code for headless machines."""

from __future__ import annotations

import base64
import json
import secrets

from tau.accounts.oauth._common import LoginError, expires_at_ms, oauth_url, post_form, post_json
from tau.accounts.oauth.callback import browser_sign_in
from tau.accounts.oauth.device_code import PollResult, poll_device_code
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction, SelectOption
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["OpenAICodexFlow", "account_id"]

_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
_AUTH = "https://auth.openai.com"
_AUTHORIZE_URL = f"{_AUTH}/oauth/authorize"
_TOKEN_URL = f"{_AUTH}/oauth/token"
_DEVICE_CODE_URL = f"{_AUTH}/api/accounts/deviceauth/usercode"
_DEVICE_TOKEN_URL = f"{_AUTH}/api/accounts/deviceauth/token"
_DEVICE_PAGE = f"{_AUTH}/codex/device"
_DEVICE_REDIRECT = f"{_AUTH}/deviceauth/callback"
_DEVICE_TIMEOUT_S = 15 * 60
_PORT = 1455
_PATH = "/auth/callback"
_SCOPE = "openid profile email offline_access"
_ACCOUNT_CLAIM = "https://api.openai.com/auth"


class OpenAICodexFlow(OAuthFlow):
    provider_id = "openai-codex"
    name = "OpenAI Codex"

    def login(self, ui: LoginInteraction) -> JsonObject:
        method = ui.select(
            "Select OpenAI Codex login method:",
            [
                SelectOption("browser", "Browser login (default)"),
                SelectOption("device_code", "Device code login (headless)"),
            ],
        )
        if method == "device_code":
            code, verifier, redirect_uri = _device_login(ui)
        else:
            pkce = PkceLogin.start(state=secrets.token_hex(16))
            params = {
                "response_type": "code",
                "client_id": _CLIENT_ID,
                "scope": _SCOPE,
                "id_token_add_organizations": "true",
                "codex_cli_simplified_flow": "true",
                "originator": "tau",
            }
            code, redirect_uri = browser_sign_in(
                ui,
                provider_name="OpenAI",
                port=_PORT,
                path=_PATH,
                state=pkce.state,
                build_url=pkce.authorize_url(_AUTHORIZE_URL, params),
            )
            verifier = pkce.verifier
        ui.progress("Exchanging the authorization code for tokens...")
        tokens = post_form(
            _TOKEN_URL,
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "code": code,
                "code_verifier": verifier,
                "redirect_uri": redirect_uri,
            },
            what="OpenAI Codex token exchange",
        )
        return _credential(tokens, "OpenAI Codex token exchange")

    def refresh(self, credential: JsonObject) -> JsonObject:
        tokens = post_form(
            _TOKEN_URL,
            {
                "grant_type": "refresh_token",
                "refresh_token": str(credential.get("refresh")),
                "client_id": _CLIENT_ID,
            },
            what="OpenAI Codex token refresh",
        )
        return _credential(tokens, "OpenAI Codex token refresh")


def _device_login(ui: LoginInteraction) -> tuple[str, str, str]:
    started = post_json(_DEVICE_CODE_URL, {"client_id": _CLIENT_ID}, what="OpenAI Codex device code request")
    device_id = require_string(started, "device_auth_id", "OpenAI Codex device code request")
    user_code = require_string(started, "user_code", "OpenAI Codex device code request")
    raw_interval = started.get("interval")
    try:
        interval = float(raw_interval) if raw_interval is not None else None
    except (TypeError, ValueError):
        interval = None
    ui.show_device_code(oauth_url(_DEVICE_PAGE), user_code)

    def poll() -> PollResult:
        try:
            answer = post_json(
                _DEVICE_TOKEN_URL,
                {"device_auth_id": device_id, "user_code": user_code},
                what="OpenAI Codex device login",
            )
        except LoginError as error:
            code = _error_code(error.body)
            # 403/404 (or this code) mean "not yet": the user has not entered the code.
            if error.status in (403, 404) or code == "deviceauth_authorization_pending":
                return "pending", None
            if code == "slow_down":
                return "slow_down", None
            return "failed", str(error)
        return "done", answer

    answer = poll_device_code(ui, poll, interval_s=interval, expires_in_s=_DEVICE_TIMEOUT_S, wait_first=False)
    code = require_string(answer, "authorization_code", "OpenAI Codex device login")
    verifier = require_string(answer, "code_verifier", "OpenAI Codex device login")
    return code, verifier, _DEVICE_REDIRECT


def _error_code(body: object) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else error
    return code if isinstance(code, str) else None


def account_id(access_token: str) -> str | None:
    """The ChatGPT account id inside an access token (a JWT), which Codex requests must name."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    claim = payload.get(_ACCOUNT_CLAIM) if isinstance(payload, dict) else None
    value = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return value if isinstance(value, str) and value else None


def _credential(tokens: object, what: str) -> JsonObject:
    access = require_string(tokens, "access_token", what)
    refresh = require_string(tokens, "refresh_token", what)
    expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
    if not isinstance(expires_in, int | float):
        raise LoginError(f"{what}: the answer has no expires_in")
    account = account_id(access)
    if account is None:
        raise LoginError(f"{what}: the access token names no ChatGPT account")
    # Codex tokens are stored to their real expiry (pi takes no margin off here).
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": expires_at_ms(expires_in, margin_s=0),
        "accountId": account,
    }
