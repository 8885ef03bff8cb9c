"""OpenAI (ChatGPT subscription) for the ``openai`` provider: "Sign in with ChatGPT", an
authorization-code login with PKCE where each login registers its own client (OpenAI names the
issued client id in the callback) and the token is sent straight to api.openai.com (as pi 1.6).

The installation is named by a device id (``deviceId`` in the global settings.json, as pi's)."""

from __future__ import annotations

import secrets
import uuid
from pathlib import Path

from tau.accounts.oauth._common import expires_at_ms, post_form
from tau.accounts.oauth.callback import browser_sign_in
from tau.accounts.oauth.errors import LoginError
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["OpenAIChatGPTFlow"]

_DYNAMIC_CLIENT_ID = "dynamic_agent_client"  # every login registers a new client under this id
_AUTHORIZE_URL = "https://auth.openai.com/api/accounts/authorize"
_TOKEN_URL = "https://auth.openai.com/api/accounts/oauth/token"
_RESOURCE = "https://api.openai.com/v1"
_PORT = 1455
_PATH = "/auth/callback"
_DIRECT_SCOPE = "chatgpt.tokens.use.direct"
_SCOPE = f"openid profile email offline_access resource.invoke {_DIRECT_SCOPE}"
_MARGIN_S = 3 * 60


class OpenAIChatGPTFlow(OAuthFlow):
    provider_id = "openai"
    name = "OpenAI"

    def login(self, ui: LoginInteraction) -> JsonObject:
        host_id = f"urn:uuid:{_device_id()}"
        pkce = PkceLogin.start(state=secrets.token_urlsafe(32))
        params = {
            "client_id": _DYNAMIC_CLIENT_ID,
            "agent_name_hint": "tau",
            "ext_agent_host_id": host_id,
            "response_type": "code",
            "resource": _RESOURCE,
            "scope": _SCOPE,
            "nonce": secrets.token_urlsafe(32),
        }
        answer: dict[str, str] = {}
        code, redirect_uri = browser_sign_in(
            ui,
            provider_name="ChatGPT",
            port=_PORT,
            path=_PATH,
            state=pkce.state,
            build_url=pkce.authorize_url(_AUTHORIZE_URL, params),
            redirect_host="127.0.0.1",
            paste_if_port_taken=False,
            on_answer=answer.update,
        )
        if answer.get("state") != pkce.state:
            raise LoginError("The sign-in answer carries no matching state: paste the full redirect URL")
        client_id = (answer.get("client_id") or "").strip()
        if not client_id:
            raise LoginError(
                "The ChatGPT sign-in answer names no issued client id: paste the full redirect URL"
            )
        ui.progress("Exchanging the authorization code for tokens...")
        tokens = post_form(
            _TOKEN_URL,
            {
                "grant_type": "authorization_code",
                "client_id": client_id,
                "code": code,
                "code_verifier": pkce.verifier,
                "redirect_uri": redirect_uri,
                "resource": _RESOURCE,
            },
            what="OpenAI token exchange",
        )
        require_string(tokens, "id_token", "OpenAI token exchange")  # part of the answer's contract
        return _credential(tokens, client_id)

    def refresh(self, credential: JsonObject) -> JsonObject:
        client_id = credential.get("clientId")
        if not isinstance(client_id, str) or not client_id.strip():
            raise LoginError("The ChatGPT login names no issued client id: log in again")
        tokens = post_form(
            _TOKEN_URL,
            {
                "grant_type": "refresh_token",
                "client_id": client_id,
                "refresh_token": str(credential.get("refresh")),
                "resource": _RESOURCE,
            },
            what="OpenAI token refresh",
        )
        return _credential(tokens, client_id)


def _credential(tokens: object, client_id: str) -> JsonObject:
    access = require_string(tokens, "access_token", "OpenAI token")
    refresh = require_string(tokens, "refresh_token", "OpenAI token")
    scopes = require_string(tokens, "scope", "OpenAI token").split()
    expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
    if not isinstance(expires_in, int | float) or expires_in <= 0:
        raise LoginError("OpenAI token: the answer has no valid expires_in")
    if _DIRECT_SCOPE not in scopes:
        raise LoginError(f"The OpenAI grant does not include {_DIRECT_SCOPE}")
    return {
        "type": "oauth",
        "access": access,
        "refresh": refresh,
        "expires": expires_at_ms(expires_in, margin_s=_MARGIN_S),
        "clientId": client_id,
        "scopes": scopes,
    }


def _device_id() -> str:
    """This installation's id (a UUID), created in the global settings.json on first use."""
    from tau.config.paths import agent_dir
    from tau.config.settings import SettingsManager

    settings = SettingsManager.create(Path.cwd(), agent_dir(), project=False)
    current = settings.get_scope("global").get("deviceId")
    try:
        return str(uuid.UUID(str(current)))
    except ValueError:
        pass

    def create(current: JsonObject) -> str:
        # Decided under the file's lock: two first logins at once end up with one id.
        try:
            return str(uuid.UUID(str(current.get("deviceId"))))
        except ValueError:
            current["deviceId"] = str(uuid.uuid4())
            return str(current["deviceId"])

    chosen = settings.update(create)
    return chosen if chosen is not None else str(settings.get_scope("global").get("deviceId"))
