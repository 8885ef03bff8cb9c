"""Google Cloud Code Assist logins: Gemini CLI and Antigravity. An authorization-code login with PKCE
(and the installed-app client secret Google issues to these clients), then the user's Cloud Code
Assist project is found, or provisioned by onboarding. Requests take ``{"token", "projectId"}`` as
JSON for their API key, as pi's.

pi 1.6 dropped both providers; their flow follows pi up to 0.7x.
"""

from __future__ import annotations

import base64
import json
import os

from tau.accounts.oauth._common import (
    LoginCancelledError,
    LoginError,
    RefreshRejectedError,
    expires_at_ms,
    get_json,
    post_form,
    post_json,
)
from tau.accounts.oauth.callback import browser_sign_in
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.accounts.oauth.pkce import PkceLogin
from tau.ai.types import JsonObject

__all__ = ["AntigravityFlow", "GeminiCliFlow"]

_AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth"
_TOKEN_URL = "https://oauth2.googleapis.com/token"
_USERINFO_URL = "https://www.googleapis.com/oauth2/v1/userinfo?alt=json"
_CODE_ASSIST = "https://cloudcode-pa.googleapis.com"
_CODE_ASSIST_SANDBOX = "https://daily-cloudcode-pa.sandbox.googleapis.com"
_BASE_SCOPES = (
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
    "https://www.googleapis.com/auth/userinfo.profile",
)
_METADATA = {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}
_FREE_TIER = "free-tier"
_LEGACY_TIER = "legacy-tier"
_STANDARD_TIER = "standard-tier"
_ONBOARD_POLL_S = 5.0
_NEEDS_PROJECT = (
    "This account needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT (or GOOGLE_CLOUD_PROJECT_ID) "
    "and log in again (see https://goo.gle/gemini-cli-auth-docs#workspace-gca)"
)


def _decoded(text: str) -> str:
    # Google's installed-app client ids and secrets are public; kept encoded so secret scanners pass.
    return base64.b64decode(text).decode()


class _GoogleFlow(OAuthFlow):
    client_id = ""
    client_secret = ""
    port = 0
    path = ""
    scopes: tuple[str, ...] = _BASE_SCOPES
    label = ""

    def login(self, ui: LoginInteraction) -> JsonObject:
        pkce = PkceLogin.start()
        params = {
            "client_id": self.client_id,
            "response_type": "code",
            "scope": " ".join(self.scopes),
            "access_type": "offline",
            "prompt": "consent",
        }
        code, redirect_uri = browser_sign_in(
            ui,
            provider_name=self.label,
            port=self.port,
            path=self.path,
            state=pkce.state,
            build_url=pkce.authorize_url(_AUTHORIZE_URL, params),
        )
        ui.progress("Exchanging the authorization code for tokens...")
        tokens = post_form(
            _TOKEN_URL,
            {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code_verifier": pkce.verifier,
            },
            what=f"{self.label} token exchange",
        )
        access = require_string(tokens, "access_token", f"{self.label} token exchange")
        if not isinstance(tokens.get("refresh_token"), str) or not tokens["refresh_token"]:
            raise LoginError(f"{self.label} gave no refresh token: log in again")
        expires_in = tokens.get("expires_in")
        if not isinstance(expires_in, int | float):
            raise LoginError(f"{self.label} token exchange: the answer has no expires_in")
        email = _email(access)
        ui.progress("Finding your Cloud Code Assist project...")
        project = self.discover_project(ui, access)
        credential: JsonObject = {
            "type": "oauth",
            "refresh": tokens["refresh_token"],
            "access": access,
            "expires": expires_at_ms(expires_in),
            "projectId": project,
        }
        if email:
            credential["email"] = email
        return credential

    def discover_project(self, ui: LoginInteraction, access: str) -> str:
        raise NotImplementedError

    def refresh(self, credential: JsonObject) -> JsonObject:
        project = credential.get("projectId")
        if not isinstance(project, str) or not project:
            raise RefreshRejectedError(f"The {self.label} login has no projectId")
        refresh_token = str(credential.get("refresh"))
        tokens = post_form(
            _TOKEN_URL,
            {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "refresh_token": refresh_token,
                "grant_type": "refresh_token",
            },
            what=f"{self.label} token refresh",
        )
        expires_in = tokens.get("expires_in") if isinstance(tokens, dict) else None
        if not isinstance(expires_in, int | float):
            raise LoginError(f"{self.label} token refresh: the answer has no expires_in")
        fresh = {**credential}
        fresh.update(
            refresh=tokens.get("refresh_token") or refresh_token,
            access=require_string(tokens, "access_token", f"{self.label} token refresh"),
            expires=expires_at_ms(expires_in),
        )
        return fresh

    def api_key(self, credential: JsonObject) -> str:
        return json.dumps(
            {"token": credential.get("access"), "projectId": credential.get("projectId")},
            separators=(",", ":"),
        )


class GeminiCliFlow(_GoogleFlow):
    provider_id = "google-gemini-cli"
    name = "Google Cloud Code Assist (Gemini CLI)"
    label = "Gemini CLI"
    client_id = _decoded(
        "NjgxMjU1ODA5Mzk1LW9vOGZ0Mm9wcmRybnA5ZTNhcWY2YXYzaG1kaWIxMzVqLmFwcHMuZ29vZ2xldXNlcmNvbnRlbnQuY29t"
    )
    client_secret = _decoded("R09DU1BYLTR1SGdNUG0tMW83U2stZ2VWNkN1NWNsWEZzeGw=")
    port = 8085
    path = "/oauth2callback"

    def discover_project(self, ui: LoginInteraction, access: str) -> str:
        env_project = os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("GOOGLE_CLOUD_PROJECT_ID")
        headers = {
            "Authorization": f"Bearer {access}",
            "User-Agent": "google-api-nodejs-client/9.15.1",
            "X-Goog-Api-Client": "gl-node/22.17.0",
        }
        metadata: JsonObject = {**_METADATA}
        if env_project:
            metadata["duetProject"] = env_project
        body: JsonObject = {"metadata": metadata}
        if env_project:
            body["cloudaicompanionProject"] = env_project
        try:
            loaded = post_json(
                f"{_CODE_ASSIST}/v1internal:loadCodeAssist", body, what="loadCodeAssist", headers=headers
            )
        except LoginError as error:
            # VPC Service Controls block loadCodeAssist for some accounts, which are then standard tier.
            if not _security_policy_violated(error.body):
                raise
            loaded = {"currentTier": {"id": _STANDARD_TIER}}
        if not isinstance(loaded, dict):
            raise LoginError("loadCodeAssist: the answer is not an object")
        if loaded.get("currentTier"):
            project = _project_id(loaded.get("cloudaicompanionProject")) or env_project
            if project:
                return project
            raise LoginError(_NEEDS_PROJECT)
        tiers = loaded.get("allowedTiers")
        default = (
            next((t for t in tiers if isinstance(t, dict) and t.get("isDefault")), None)
            if isinstance(tiers, list)
            else None
        )
        tier = str(default.get("id")) if default and default.get("id") else _LEGACY_TIER
        if tier != _FREE_TIER and not env_project:
            raise LoginError(_NEEDS_PROJECT)
        ui.progress("Provisioning a Cloud Code Assist project (this may take a moment)...")
        onboard: JsonObject = {"tierId": tier, "metadata": {**_METADATA}}
        if tier != _FREE_TIER and env_project:
            onboard["cloudaicompanionProject"] = env_project
            onboard["metadata"] = {**_METADATA, "duetProject": env_project}
        operation = post_json(
            f"{_CODE_ASSIST}/v1internal:onboardUser", onboard, what="onboardUser", headers=headers
        )
        while isinstance(operation, dict) and not operation.get("done") and operation.get("name"):
            ui.progress("Waiting for the project to be provisioned...")
            if ui.cancelled.wait(_ONBOARD_POLL_S):
                raise LoginCancelledError("Login cancelled.")
            operation = get_json(
                f"{_CODE_ASSIST}/v1internal/{operation['name']}", what="onboardUser", headers=headers
            )
        response = operation.get("response") if isinstance(operation, dict) else None
        project = _project_id(response.get("cloudaicompanionProject") if isinstance(response, dict) else None)
        if project or env_project:
            return str(project or env_project)
        raise LoginError(
            "No Cloud Code Assist project could be found or provisioned: set GOOGLE_CLOUD_PROJECT and log in again"
        )


class AntigravityFlow(_GoogleFlow):
    provider_id = "google-antigravity"
    name = "Antigravity (Gemini 3, Claude, GPT-OSS)"
    label = "Antigravity"
    client_id = _decoded(
        "MTA3MTAwNjA2MDU5MS10bWhzc2luMmgyMWxjcmUyMzV2dG9sb2poNGc0MDNlcC5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbQ=="
    )
    client_secret = _decoded("R09DU1BYLUs1OEZXUjQ4NkxkTEoxbUxCOHNYQzR6NnFEQWY=")
    port = 51121
    path = "/oauth-callback"
    scopes = (
        *_BASE_SCOPES,
        "https://www.googleapis.com/auth/cclog",
        "https://www.googleapis.com/auth/experimentsandconfigs",
    )
    # The project Antigravity falls back to when none is found (as pi).
    default_project = "rising-fact-p41fc"

    def discover_project(self, ui: LoginInteraction, access: str) -> str:
        headers = {
            "Authorization": f"Bearer {access}",
            "User-Agent": "google-api-nodejs-client/9.15.1",
            "X-Goog-Api-Client": "google-cloud-sdk vscode_cloudshelleditor/0.1",
            "Client-Metadata": json.dumps(_METADATA, separators=(",", ":")),
        }
        for endpoint in (_CODE_ASSIST, _CODE_ASSIST_SANDBOX):
            try:
                loaded = post_json(
                    f"{endpoint}/v1internal:loadCodeAssist",
                    {"metadata": _METADATA},
                    what="loadCodeAssist",
                    headers=headers,
                )
            except LoginError:
                continue
            project = _project_id(loaded.get("cloudaicompanionProject") if isinstance(loaded, dict) else None)
            if project:
                return project
        ui.progress("Using the default project...")
        return self.default_project


def _security_policy_violated(body: object) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return isinstance(details, list) and any(
        isinstance(detail, dict) and detail.get("reason") == "SECURITY_POLICY_VIOLATED" for detail in details
    )


def _project_id(value: object) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        return str(value["id"])
    return None


def _email(access: str) -> str | None:
    try:
        info = get_json(_USERINFO_URL, what="userinfo", headers={"Authorization": f"Bearer {access}"})
    except LoginError:
        return None  # the address only labels the login
    email = info.get("email") if isinstance(info, dict) else None
    return email if isinstance(email, str) else None
