"""OpenRouter: a PKCE sign-in whose code is exchanged for a permanent API key (stored as a login
that never expires, as pi); the browser comes back to a random path on any free local port."""

from __future__ import annotations

import uuid

from tau.accounts.oauth._common import post_json
from tau.accounts.oauth.callback import browser_sign_in, callback_host
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["OpenRouterFlow"]

_AUTHORIZE_URL = "https://openrouter.ai/auth"
_KEYS_URL = "https://openrouter.ai/api/v1/auth/keys"
_NEVER_MS = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER, pi's "never expires"


class OpenRouterFlow(OAuthFlow):
    provider_id = "openrouter"
    name = "OpenRouter"

    def login(self, ui: LoginInteraction) -> JsonObject:
        pkce = PkceLogin.start(state=None)  # OpenRouter sends no state back
        code, _ = browser_sign_in(
            ui,
            provider_name="OpenRouter",
            port=0,
            path=f"/oauth/callback/{uuid.uuid4()}",
            state=None,
            build_url=pkce.authorize_url(_AUTHORIZE_URL, {}, redirect_param="callback_url"),
            redirect_host=callback_host(),
        )
        ui.progress("Exchanging the authorization code for an API key...")
        answer = post_json(
            _KEYS_URL,
            {"code": code, "code_verifier": pkce.verifier, "code_challenge_method": "S256"},
            what="OpenRouter key exchange",
        )
        key = require_string(answer, "key", "OpenRouter key exchange")
        return {"type": "oauth", "access": key, "refresh": "", "expires": _NEVER_MS}

    def refresh(self, credential: JsonObject) -> JsonObject:
        return credential  # the key does not expire
