"""Radius, pi's model gateway: a sign-in with the gateway's own OAuth (client ``pi-gateway``).

In the browser: the gateway names its authorisation page (``GET /v1/oauth``), the browser comes back
to ``http://127.0.0.1:1456/oauth/callback`` with a code, exchanged with PKCE at ``/v1/oauth/token``.
From another device: a device code (``/v1/oauth/device``), polled at the same token endpoint. The
access token is the API key of the ``pi-messages`` requests.

After signing in (and after each refresh) the gateway's ``/v1/config`` says which models the account
may use and where: that list goes to models-store.json and replaces the catalogue's (see
``tau.runtime.models_store``). A login whose list cannot be fetched keeps the catalogue's.
"""

from __future__ import annotations

import uuid

from tau.ai.types import JsonObject
from tau.runtime.oauth._common import LoginError, expires_at_ms, get_json, post_form
from tau.runtime.oauth.callback import browser_sign_in
from tau.runtime.oauth.device_code import PollResult, poll_device_code, token_error_result
from tau.runtime.oauth.flow import OAuthFlow, require_string
from tau.runtime.oauth.interaction import LoginInteraction, SelectOption
from tau.runtime.oauth.pkce import PkceLogin

__all__ = ["GATEWAY", "RadiusFlow", "gateway_models"]

GATEWAY = "https://radius.pi.dev"
_CLIENT_ID = "pi-gateway"
_SCOPE = "gateway offline_access"
_PORT = 1456
_PATH = "/oauth/callback"
_DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
_EXPIRY_MARGIN_S = 60.0  # pi keeps Radius tokens one minute short of their lifetime
_MODEL_FIELDS = ("id", "name", "reasoning", "input", "cost", "contextWindow", "maxTokens")


class RadiusFlow(OAuthFlow):
    provider_id = "radius"
    name = "Radius"

    def login(self, ui: LoginInteraction) -> JsonObject:
        method = ui.select(
            "Sign in to Radius:",
            [
                SelectOption("browser", "Sign in with browser (recommended)"),
                SelectOption("device-code", "Sign in with device code (when signing in from another device)"),
            ],
        )
        credential = self._device_login(ui) if method == "device-code" else self._browser_login(ui)
        self._store_models(credential, ui)
        return credential

    def refresh(self, credential: JsonObject) -> JsonObject:
        fresh = _token(
            {
                "grant_type": "refresh_token",
                "client_id": _CLIENT_ID,
                "refresh_token": str(credential.get("refresh")),
            },
            "Radius token refresh",
        )
        self._store_models(fresh, None)
        return fresh

    def _browser_login(self, ui: LoginInteraction) -> JsonObject:
        discovery = get_json(f"{GATEWAY}/v1/oauth", what="Loading the Radius sign-in settings")
        endpoint = require_string(discovery, "authorizationEndpoint", "Radius sign-in settings")
        if not endpoint.startswith(("https://", "http://")):
            raise LoginError(f"Radius sign-in settings name an invalid sign-in page: {endpoint[:100]}")
        pkce = PkceLogin.start(state=str(uuid.uuid4()))
        authorize_url = pkce.authorize_url(
            endpoint, {"response_type": "code", "client_id": _CLIENT_ID, "scope": _SCOPE, "handoff": "url"}
        )
        code, redirect_uri = browser_sign_in(
            ui,
            provider_name="Radius",
            port=_PORT,
            path=_PATH,
            state=pkce.state,
            build_url=authorize_url,
            redirect_host="127.0.0.1",
        )
        ui.progress("Exchanging the authorization code for tokens...")
        return _token(
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "redirect_uri": redirect_uri,
                "code": code,
                "code_verifier": pkce.verifier,
            },
            "Radius token exchange",
        )

    def _device_login(self, ui: LoginInteraction) -> JsonObject:
        device = post_form(
            f"{GATEWAY}/v1/oauth/device",
            {"client_id": _CLIENT_ID, "scope": _SCOPE},
            what="Radius device authorization",
        )
        device_code = require_string(device, "device_code", "Radius device authorization")
        page = require_string(device, "verification_uri", "Radius device authorization")
        if not page.startswith(("https://", "http://")):
            raise LoginError("Radius device authorization names an invalid verification page")
        ui.show_device_code(page, require_string(device, "user_code", "Radius device authorization"))
        form = {"grant_type": _DEVICE_GRANT, "client_id": _CLIENT_ID, "device_code": device_code}

        def poll() -> PollResult:
            try:
                return "done", _token(form, "Radius device login")
            except LoginError as error:
                return token_error_result(error, name="Radius")

        interval = device.get("interval")
        expires_in = device.get("expires_in")
        credential = poll_device_code(
            ui,
            poll,
            interval_s=float(interval) if isinstance(interval, int | float) else None,
            expires_in_s=float(expires_in) if isinstance(expires_in, int | float) else 900.0,
            wait_first=False,
        )
        assert isinstance(credential, dict)
        return credential

    @staticmethod
    def _store_models(credential: JsonObject, ui: LoginInteraction | None) -> None:
        from tau.runtime.models_store import store_models

        try:
            store_models("radius", gateway_models(str(credential.get("access"))))
        except (LoginError, OSError) as error:
            if ui is not None:
                ui.notice(
                    f"Signed in, but the list of Radius models could not be loaded ({error}); using the built-in list"
                )


def gateway_models(access_token: str) -> list[JsonObject]:
    """The models the account may use, as pi stores them (``pi-messages`` at the gateway's base URL)."""
    config = get_json(
        f"{GATEWAY}/v1/config",
        what="Loading the Radius models",
        headers={"Authorization": f"Bearer {access_token}"},
    )
    base_url = config.get("baseUrl") if isinstance(config, dict) else None
    listed = config.get("models") if isinstance(config, dict) else None
    if not isinstance(base_url, str) or not isinstance(listed, list):
        raise LoginError("Loading the Radius models failed: the answer has no baseUrl and models")
    return [
        {**item, "api": "pi-messages", "provider": "radius", "baseUrl": base_url}
        for item in listed
        if isinstance(item, dict) and all(key in item for key in _MODEL_FIELDS)
    ]


def _token(form: dict[str, str], what: str) -> JsonObject:
    tokens = post_form(f"{GATEWAY}/v1/oauth/token", form, what=what)
    expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
    if not isinstance(expires_in, int | float):
        raise LoginError(f"{what}: the answer has no expires_in")
    credential: JsonObject = {
        "type": "oauth",
        "refresh": require_string(tokens, "refresh_token", what),
        "access": require_string(tokens, "access_token", what),
        "expires": expires_at_ms(expires_in, margin_s=_EXPIRY_MARGIN_S),
    }
    if isinstance(tokens.get("scope"), str):
        credential["scope"] = tokens["scope"]
    return credential
