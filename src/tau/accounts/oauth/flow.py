"""The shape of one provider's OAuth login: sign in, refresh, and turn the credential into what its
requests carry."""

from __future__ import annotations

from tau.accounts.oauth.errors import LoginError
from tau.accounts.oauth.interaction import LoginInteraction
from tau.ai.types import JsonObject

__all__ = ["OAuthFlow"]


class OAuthFlow:
    """One provider's login. Credentials are pi's auth.json objects: ``{"type": "oauth", "refresh",
    "access", "expires" (epoch ms), ...provider fields}``."""

    provider_id: str = ""
    name: str = ""

    def login(self, ui: LoginInteraction) -> JsonObject:
        """Sign in; the new credential. Raises ``LoginError`` (one line) when it fails."""
        raise NotImplementedError

    def refresh(self, credential: JsonObject) -> JsonObject:
        """A fresh credential from ``credential``'s refresh token. Raises ``RefreshRejectedError``
        when the provider refuses it, ``LoginError`` for any other failure."""
        raise NotImplementedError

    def api_key(self, credential: JsonObject) -> str:
        """What the provider's requests take as their API key (the access token, as pi)."""
        return str(credential.get("access") or "")

    def base_url(self, credential: JsonObject) -> str | None:
        """The API base URL this credential must be used with, when it is not the catalogue's."""
        return None


def require_string(data: object, key: str, what: str) -> str:
    """``data[key]`` when it is a non-empty string; otherwise a ``LoginError`` naming ``what``."""
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value:
        raise LoginError(f"{what}: the answer has no {key}")
    return value
