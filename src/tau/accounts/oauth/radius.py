"""Radius, pi's model gateway: a sign-in with the gateway's own OAuth (client ``pi-gateway``).

The built-in ``radius`` provider signs in to ``radius.pi.dev``; a models.json provider with
``"oauth": "radius"`` and a ``baseUrl`` is a gateway of its own (its origin, without ``/v1``), with
the same endpoints, its own login in auth.json and its own model list, as pi 1.6 reads it.

In the browser: the gateway names its authorisation page (``GET /v1/oauth``), the browser comes back
to ``http://127.0.0.1:1456/oauth/callback`` with a code, exchanged with PKCE at ``/v1/oauth/token``.
From another device: a device code (``/v1/oauth/device``), polled at the same token endpoint. The
access token is the API key of the ``pi-messages`` requests.

After signing in (and after each refresh) the gateway's ``/v1/config`` says which models the account
may use and where: that list goes to models-store.json and replaces the catalogue's (see
``tau.accounts.models_store``). A login whose list cannot be fetched keeps the catalogue's.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from tau._env_twins import env_twin
from tau.accounts.oauth._common import LoginError, expires_at_ms, get_json, post_form
from tau.accounts.oauth.callback import browser_sign_in
from tau.accounts.oauth.device_code import PollResult, poll_device_code, token_error_result
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction, SelectOption
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["GATEWAY", "RadiusFlow", "gateway_models", "gateway_origin"]

GATEWAY = (env_twin("RADIUS_GATEWAY") or "https://radius.pi.dev").rstrip("/")
"""The gateway's origin; ``TAU_RADIUS_GATEWAY`` (or pi's ``PI_RADIUS_GATEWAY``) points elsewhere."""
_CLIENT_ID = "pi-gateway"
_SCOPE = "gateway offline_access"
_PORT = 1456
_PATH = "/oauth/callback"
_DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
_EXPIRY_MARGIN_S = 60.0  # pi keeps Radius tokens one minute short of their lifetime
_MODEL_FIELDS = ("id", "name", "reasoning", "input", "cost", "contextWindow", "maxTokens")


class RadiusFlow(OAuthFlow):
    def __init__(self, provider_id: str = "radius", name: str = "Radius", gateway: str = GATEWAY) -> None:
        self.provider_id = provider_id
        self.name = name
        self.gateway = gateway_origin(gateway)

    def login(self, ui: LoginInteraction) -> JsonObject:
        method = ui.select(
            f"Sign in to {self.name}:",
            [
                SelectOption("browser", "Sign in with browser (recommended)"),
                SelectOption("device-code", "Sign in with device code (when signing in from another device)"),
            ],
        )
        credential = self._device_login(ui) if method == "device-code" else self._browser_login(ui)
        self._store_models(credential, ui)
        return credential

    def refresh(self, credential: JsonObject) -> JsonObject:
        fresh = self._token(
            {
                "grant_type": "refresh_token",
                "client_id": _CLIENT_ID,
                "refresh_token": str(credential.get("refresh")),
            },
            f"{self.name} token refresh",
        )
        self._store_models(fresh, None)
        return fresh

    def _browser_login(self, ui: LoginInteraction) -> JsonObject:
        what = f"{self.name} sign-in settings"
        discovery = get_json(f"{self.gateway}/v1/oauth", what=f"Loading the {what}")
        endpoint = require_string(discovery, "authorizationEndpoint", what)
        if not endpoint.startswith(("https://", "http://")):
            raise LoginError(f"The {what} name an invalid sign-in page: {endpoint[:100]}")
        pkce = PkceLogin.start(state=str(uuid.uuid4()))
        authorize_url = pkce.authorize_url(
            endpoint, {"response_type": "code", "client_id": _CLIENT_ID, "scope": _SCOPE, "handoff": "url"}
        )
        code, redirect_uri = browser_sign_in(
            ui,
            provider_name=self.name,
            port=_PORT,
            path=_PATH,
            state=pkce.state,
            build_url=authorize_url,
            redirect_host="127.0.0.1",
        )
        ui.progress("Exchanging the authorization code for tokens...")
        return self._token(
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "redirect_uri": redirect_uri,
                "code": code,
                "code_verifier": pkce.verifier,
            },
            f"{self.name} token exchange",
        )

    def _device_login(self, ui: LoginInteraction) -> JsonObject:
        what = f"{self.name} device authorization"
        device = post_form(
            f"{self.gateway}/v1/oauth/device", {"client_id": _CLIENT_ID, "scope": _SCOPE}, what=what
        )
        device_code = require_string(device, "device_code", what)
        page = require_string(device, "verification_uri", what)
        if not page.startswith(("https://", "http://")):
            raise LoginError(f"{what} names an invalid verification page")
        ui.show_device_code(page, require_string(device, "user_code", what))
        form = {"grant_type": _DEVICE_GRANT, "client_id": _CLIENT_ID, "device_code": device_code}

        def poll() -> PollResult:
            try:
                return "done", self._token(form, f"{self.name} device login")
            except LoginError as error:
                return token_error_result(error, name=self.name)

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

    def _store_models(self, credential: JsonObject, ui: LoginInteraction | None) -> None:
        from tau.accounts.models_store import store_models

        try:
            models = gateway_models(str(credential.get("access")), self.provider_id, self.gateway, self.name)
            store_models(self.provider_id, models)
        except (LoginError, OSError) as error:
            if ui is not None:
                ui.notice(
                    f"Signed in, but the list of {self.name} models could not be loaded ({error}); "
                    "it is loaded again on the next refresh"
                )

    def _token(self, form: dict[str, str], what: str) -> JsonObject:
        return _token(f"{self.gateway}/v1/oauth/token", form, what)


def gateway_origin(url: str) -> str:
    """The gateway a ``baseUrl`` names, as pi finds it: ``/v1`` dropped, ``https://`` when no scheme
    is given; only the origin is used (pi resolves ``/v1/...`` against it)."""
    url = url.strip().rstrip("/").removesuffix("/v1")
    if not url.lower().startswith(("https://", "http://")):
        url = f"https://{url}"
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc}"


def gateway_models(
    api_key: str, provider_id: str = "radius", gateway: str = GATEWAY, name: str = "Radius"
) -> list[JsonObject]:
    """The models the account (a login's token or an API key) may use, as pi stores them
    (``pi-messages`` at the base URL the gateway names)."""
    config = get_json(
        f"{gateway_origin(gateway)}/v1/config",
        what=f"Loading the {name} models",
        headers={"Authorization": f"Bearer {api_key}"} if api_key else None,
    )
    base_url = config.get("baseUrl") if isinstance(config, dict) else None
    listed = config.get("models") if isinstance(config, dict) else None
    if not isinstance(base_url, str) or not isinstance(listed, list):
        raise LoginError(f"Loading the {name} models failed: the answer has no baseUrl and models")
    return [
        {**item, "api": "pi-messages", "provider": provider_id, "baseUrl": base_url}
        for item in listed
        if isinstance(item, dict) and all(key in item for key in _MODEL_FIELDS)
    ]


def _token(url: str, form: dict[str, str], what: str) -> JsonObject:
    tokens = post_form(url, form, what=what)
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
