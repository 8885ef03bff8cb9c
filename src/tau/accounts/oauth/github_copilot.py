"""GitHub Copilot: a device-code login to GitHub (or GitHub Enterprise), whose token is exchanged for
a short-lived Copilot token; "refreshing" repeats that exchange. The Copilot token names the API
host the account must use (``proxy-ep=``)."""

from __future__ import annotations

import base64
import re
from urllib.parse import urlsplit

from tau.accounts.oauth._common import LoginError, get_json, oauth_url, post_form, post_json
from tau.accounts.oauth.device_code import PollResult, poll_device_code
from tau.accounts.oauth.flow import OAuthFlow, require_string
from tau.accounts.oauth.interaction import LoginInteraction
from tau.ai.types import JsonObject

__all__ = ["GitHubCopilotFlow", "copilot_base_url"]

_CLIENT_ID = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
# The editor identity Copilot's token and models endpoints expect (the catalogue gives requests the same).
_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
_API_VERSION = "2026-06-01"
_INDIVIDUAL_API = "https://api.individual.githubcopilot.com"


class GitHubCopilotFlow(OAuthFlow):
    provider_id = "github-copilot"
    name = "GitHub Copilot"

    def login(self, ui: LoginInteraction) -> JsonObject:
        answer = ui.ask("GitHub Enterprise URL/domain (blank for github.com)", "company.ghe.com").strip()
        enterprise = _domain(answer) if answer else None
        if answer and enterprise is None:
            raise LoginError(f'"{answer}" is not a GitHub Enterprise URL or domain')
        domain = enterprise or "github.com"
        started = post_form(
            f"https://{domain}/login/device/code",
            {"client_id": _CLIENT_ID, "scope": "read:user"},
            what="GitHub device code request",
            headers={"User-Agent": _HEADERS["User-Agent"]},
        )
        device_code = require_string(started, "device_code", "GitHub device code request")
        user_code = require_string(started, "user_code", "GitHub device code request")
        page = require_string(started, "verification_uri", "GitHub device code request")
        if urlsplit(page).scheme not in ("http", "https"):
            raise LoginError("GitHub device code request: the verification page is not a web address")
        interval = started.get("interval")
        expires_in = started.get("expires_in")
        if not isinstance(expires_in, int | float):
            raise LoginError("GitHub device code request: the answer has no expires_in")
        ui.show_device_code(page, user_code)

        def poll() -> PollResult:
            answer = post_form(
                f"https://{domain}/login/oauth/access_token",
                {
                    "client_id": _CLIENT_ID,
                    "device_code": device_code,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                },
                what="GitHub device login",
                headers={"User-Agent": _HEADERS["User-Agent"]},
            )
            if isinstance(answer, dict) and isinstance(answer.get("access_token"), str):
                return "done", answer["access_token"]
            error = answer.get("error") if isinstance(answer, dict) else None
            if error == "authorization_pending":
                return "pending", None
            if error == "slow_down":
                return "slow_down", answer.get("interval")
            if isinstance(error, str):
                description = answer.get("error_description")
                return "failed", f"GitHub device login failed: {error}" + (
                    f": {description}" if description else ""
                )
            return "failed", "GitHub device login: the answer has no access_token"

        github_token = poll_device_code(
            ui,
            poll,
            interval_s=float(interval) if isinstance(interval, int | float) else None,
            expires_in_s=float(expires_in),
            wait_first=True,
        )
        credential = _copilot_token(str(github_token), enterprise)
        ui.progress("Checking which models the account may use...")
        available, to_enable = _models(credential, allow_fallback=True)
        if to_enable:
            ui.progress("Enabling models...")
            available = list(dict.fromkeys([*available, *_enable(credential, to_enable)]))
        credential["availableModelIds"] = available
        return credential

    def refresh(self, credential: JsonObject) -> JsonObject:
        enterprise = credential.get("enterpriseUrl")
        fresh = _copilot_token(
            str(credential.get("refresh")),
            _domain(enterprise) if isinstance(enterprise, str) and enterprise else None,
        )
        try:
            fresh["availableModelIds"], _ = _models(fresh, allow_fallback=True)
        except LoginError:
            # The list only narrows the model picker; a refresh must not fail for it.
            if "availableModelIds" in credential:
                fresh["availableModelIds"] = credential["availableModelIds"]
        return fresh

    def base_url(self, credential: JsonObject) -> str | None:
        enterprise = credential.get("enterpriseUrl")
        return copilot_base_url(
            str(credential.get("access") or ""), enterprise if isinstance(enterprise, str) else None
        )


def copilot_base_url(token: str, enterprise: str | None) -> str:
    """The API base a Copilot token must be sent to: its ``proxy-ep`` host with ``proxy.`` → ``api.``."""
    match = re.search(r"proxy-ep=([^;]+)", token)
    if match:
        host = re.sub(r"^proxy\.", "api.", match.group(1).strip())
        return oauth_url(f"https://{host}")
    if enterprise:
        return oauth_url(f"https://copilot-api.{enterprise}")
    return oauth_url(_INDIVIDUAL_API)


def _domain(text: str) -> str | None:
    value = text.strip()
    if not value:
        return None
    host = urlsplit(value if "://" in value else f"https://{value}").hostname
    return host or None


def _copilot_token(github_token: str, enterprise: str | None) -> JsonObject:
    domain = enterprise or "github.com"
    answer = get_json(
        f"https://api.{domain}/copilot_internal/v2/token",
        what="Copilot token exchange",
        headers={"Authorization": f"Bearer {github_token}", **_HEADERS},
    )
    token = require_string(answer, "token", "Copilot token exchange")
    expires_at = answer.get("expires_at")
    if not isinstance(expires_at, int | float):
        raise LoginError("Copilot token exchange: the answer has no expires_at")
    credential: JsonObject = {
        "type": "oauth",
        "refresh": github_token,
        "access": token,
        "expires": int(expires_at * 1000 - 5 * 60 * 1000),
    }
    if enterprise:
        credential["enterpriseUrl"] = enterprise
    return credential


def _models(credential: JsonObject, *, allow_fallback: bool) -> tuple[list[str], list[str]]:
    """The model ids the account may pick, and those whose policy is unset (to enable at login)."""
    base = copilot_base_url(str(credential["access"]), _enterprise(credential))
    answer = get_json(
        f"{base}/models",
        what="Copilot model list",
        headers={
            "Authorization": f"Bearer {credential['access']}",
            **_HEADERS,
            "X-GitHub-Api-Version": _API_VERSION,
        },
    )
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise LoginError("Copilot model list: the answer has no data")
    models = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        supports = (item.get("capabilities") or {}).get("supports") or {}
        if isinstance(supports, dict) and supports.get("tool_calls") is False:
            continue
        policy = item.get("policy")
        state = policy.get("state") if isinstance(policy, dict) else None
        models.append((item["id"], item.get("model_picker_enabled") is True, state))
    picker = [mid for mid, enabled, state in models if enabled and state != "disabled"]
    # Some individual accounts report every picker flag false while their policies are enabled.
    fallback = allow_fallback and not picker and base == oauth_url(_INDIVIDUAL_API)
    available = picker if picker or not fallback else [mid for mid, _, state in models if state == "enabled"]
    from tau.ai.catalogue import get_models

    known = {model.id for model in get_models("github-copilot")}
    unset = [
        mid
        for mid, enabled, state in models
        if state == "unconfigured" and mid in known and (enabled or fallback)
    ]
    return available, unset


def _enable(credential: JsonObject, model_ids: list[str]) -> list[str]:
    """Turn on the policy of each model (Claude, Grok… need it once); best effort, the ids that worked."""
    base = copilot_base_url(str(credential["access"]), _enterprise(credential))
    enabled = []
    for model_id in model_ids:
        try:
            post_json(
                f"{base}/models/{model_id}/policy",
                {"state": "enabled"},
                what=f"Enabling Copilot model {model_id}",
                headers={
                    "Authorization": f"Bearer {credential['access']}",
                    **_HEADERS,
                    "openai-intent": "chat-policy",
                    "x-interaction-type": "chat-policy",
                },
            )
        except LoginError:
            continue
        enabled.append(model_id)
    return enabled


def _enterprise(credential: JsonObject) -> str | None:
    value = credential.get("enterpriseUrl")
    return value if isinstance(value, str) and value else None
