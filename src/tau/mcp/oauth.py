"""OAuth for remote MCP servers in a session: send the stored access token and refresh it, as pi's
connections do; never register a client nor open a browser (signing in is ``tau mcp login``, in
``tau.mcp.oauth_signin``).

An access token is refreshed when it expires (30 s early) or the server answers 401. The refresh
goes to the token endpoint of the authorization server the sign-in discovered (stored beside the
tokens), or discovers it first (RFC 9728 protected resource metadata, RFC 8414 server metadata).
Its client is the configured ``oauth.clientId``, the registered one stored with the tokens, or, for
tokens pi got with its Client ID Metadata Document under ``"clientRegistration": "cimd"``, that
document. When no refresh is possible, or the server refuses it, the server "needs sign-in". A
refresh the server answered is saved even when the call that wanted it is cancelled (the old
refresh token may be spent).

Client identity, as pi 1.6 behaves when built under another name than pi: ``auto`` and ``dcr``
register tau as a client (dynamic client registration); ``cimd`` uses pi's document on pi.dev (the
user asked for it; tau has none of its own).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import time
from collections.abc import Callable
from typing import Any

from tau.config.mcp_servers import ServerConfig
from tau.errors import TauError
from tau.mcp.oauth_store import FileTokenStorage, RefreshLockBusyError, normalized_url, storage_for

__all__ = [
    "PI_DOCUMENTS",
    "OAuthError",
    "SignInRequiredError",
    "client_document",
    "configured_client",
    "discover",
    "oauth_factory",
]

PI_DOCUMENTS = "https://pi.dev/oauth"
"""Where pi's Client ID Metadata Documents live: ``client.json`` and ``<callback id>/client.json``."""
_REFRESH_SKEW_S = 30.0
_REQUEST_TIMEOUT_S = 15.0
_NOT_ACCEPTED = "401 Unauthorized: the stored sign-in is no longer accepted"


class SignInRequiredError(TauError):
    """The server wants a new sign-in and a session cannot open one. The message starts with "401"
    (a connection that fails with it "needs sign-in")."""


class OAuthError(TauError):
    """Discovery or a token request failed (one line)."""


def client_document(server_url: str, metadata: dict[str, Any]) -> tuple[str, str] | None:
    """pi's Client ID Metadata Document for ``server_url`` and the path of the redirect URI it lists,
    or ``None`` when the authorization server does not take documents for public clients. Without
    RFC 9207's ``iss`` in authorization responses, the document and the path are the MCP server's
    own, so a response cannot pass for another server's."""
    methods = metadata.get("token_endpoint_auth_methods_supported")
    if metadata.get("client_id_metadata_document_supported") is not True or not (
        isinstance(methods, list) and "none" in methods
    ):
        return None
    if metadata.get("authorization_response_iss_parameter_supported") is True:
        return f"{PI_DOCUMENTS}/client.json", "/callback"
    href = normalized_url(server_url).split("#", 1)[0]
    callback_id = base64.urlsafe_b64encode(hashlib.sha256(href.encode()).digest()[:9]).decode()
    return f"{PI_DOCUMENTS}/{callback_id}/client.json", f"/callback/{callback_id}"


def configured_client(config: ServerConfig, redirect_uri: str | None = None) -> dict[str, Any] | None:
    """The client ``oauth.clientId`` names (its ``clientSecret`` may be ``${NAME}`` or ``!command``)."""
    oauth = config.oauth
    if not oauth.get("clientId"):
        return None
    from tau.config.mcp_servers import expand_value

    secret = expand_value(str(oauth["clientSecret"])) if oauth.get("clientSecret") else None
    return {
        "client_id": str(oauth["clientId"]),
        **({"redirect_uris": [redirect_uri]} if redirect_uri else {}),
        "token_endpoint_auth_method": "client_secret_post" if secret else "none",
        **({"client_secret": secret} if secret else {}),
    }


async def discover(http: Any, server_url: str, resource_metadata_url: str | None = None) -> dict[str, Any]:
    """The authorization server of ``server_url`` and its metadata, in the shape pi stores as
    ``discovery``: ``{authorizationServerUrl, authorizationServerMetadata, resourceMetadata?}``."""
    from mcp.client.auth.utils import (
        build_oauth_authorization_server_metadata_discovery_urls,
        build_protected_resource_metadata_discovery_urls,
    )

    resource: dict[str, Any] | None = None
    for url in build_protected_resource_metadata_discovery_urls(resource_metadata_url, server_url):
        document = await _get_json(http, url)
        servers = document.get("authorization_servers") if document else None
        if isinstance(servers, list) and servers and isinstance(servers[0], str):
            resource = document
            break
    server = str(resource["authorization_servers"][0]) if resource else None
    metadata: dict[str, Any] | None = None
    for url in build_oauth_authorization_server_metadata_discovery_urls(server, server_url):
        metadata = await _get_json(http, url)
        if metadata:
            break
    # Without resource metadata, the 2025-03-26 way: the MCP server's origin is the issuer.
    issuer_url = server or "/".join(normalized_url(server_url).split("/", 3)[:3])
    if not metadata:
        raise OAuthError(f"no OAuth authorization server metadata found for {issuer_url}")
    if str(metadata.get("issuer", "")).rstrip("/") != issuer_url.rstrip("/"):
        raise OAuthError(
            f"the authorization server metadata names issuer {metadata.get('issuer')!r}, not {issuer_url}"
        )
    return {
        "authorizationServerUrl": issuer_url,
        "authorizationServerMetadata": metadata,
        **({"resourceMetadata": resource} if resource else {}),
    }


async def _get_json(http: Any, url: str) -> dict[str, Any] | None:
    import httpx2

    try:
        response = await http.get(url, headers={"Accept": "application/json"})
        value = response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _secure(url: Any) -> str:
    """An endpoint from metadata, which must be an http(s) URL (a server could name anything)."""
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise OAuthError(f"the authorization server names an endpoint that is not an HTTP URL: {url!r}")
    return url


class _SessionAuth:
    """The stored sign-in of one server, refreshed as needed (see the module docstring). Made by
    ``oauth_factory`` as an ``httpx2.Auth``."""

    def __init__(self, config: ServerConfig, storage: FileTokenStorage) -> None:
        self.config = config
        self.storage = storage
        self._refreshing: asyncio.Task[None] | None = None

    def access_token(self) -> str | None:
        tokens = self.storage.entry().get("tokens")
        token = tokens.get("access_token") if isinstance(tokens, dict) else None
        return token if isinstance(token, str) else None

    async def fresh_token(self) -> str | None:
        """The stored access token, refreshed first when it has expired (a failed refresh sends the
        old one: the server's answer decides)."""
        token = self.access_token()
        expires_at = self.storage.expires_at()
        if token and expires_at is not None and expires_at - _REFRESH_SKEW_S <= time.time():
            with contextlib.suppress(Exception):  # the request goes out with the old token; a 401 decides
                await self.refresh(token)
            return self.access_token()
        return token

    async def refresh(self, stale: str | None, resource_metadata_url: str | None = None) -> None:
        """Replace ``stale``, the access token that expired or was refused; raises
        ``SignInRequiredError`` when only a new sign-in helps."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._refresh(stale, resource_metadata_url))
        await asyncio.shield(self._refreshing)

    async def _refresh(self, stale: str | None, resource_metadata_url: str | None) -> None:
        try:
            async with self.storage.refresh_lock():
                entry = self.storage.entry()
                stored = entry.get("tokens")
                tokens: dict[str, Any] = stored if isinstance(stored, dict) else {}
                if tokens.get("access_token") != stale:
                    return  # refreshed meanwhile (another process, or a sign-in)
                if not tokens.get("refresh_token"):
                    raise SignInRequiredError(_NOT_ACCEPTED)
                await self._refresh_with(entry, tokens, resource_metadata_url)
        except RefreshLockBusyError:
            raise SignInRequiredError(_NOT_ACCEPTED) from None

    async def _refresh_with(
        self, entry: dict[str, Any], tokens: dict[str, Any], resource_metadata_url: str | None
    ) -> None:
        import httpx2

        async with httpx2.AsyncClient(timeout=_REQUEST_TIMEOUT_S) as http:
            discovery = entry.get("discovery")
            if not isinstance(discovery, dict) or not isinstance(
                discovery.get("authorizationServerMetadata"), dict
            ):
                discovery = await discover(http, self.config.url, resource_metadata_url)
                self.storage.update({"discovery": discovery})
            metadata: dict[str, Any] = discovery["authorizationServerMetadata"]
            client = self._client(entry, metadata)
            if client is None:
                raise SignInRequiredError(_NOT_ACCEPTED)
            server = str(discovery.get("authorizationServerUrl") or "").rstrip("/")
            endpoint = _secure(metadata.get("token_endpoint") or f"{server}/token")
            form = {"grant_type": "refresh_token", "refresh_token": str(tokens["refresh_token"])}
            resource = discovery.get("resourceMetadata", {}).get("resource")
            if resource:
                form["resource"] = str(resource)
            headers = {"Accept": "application/json"}
            _authenticate(client, metadata, form, headers)
            response = await http.post(endpoint, data=form, headers=headers)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        error = answer.get("error") if isinstance(answer, dict) else None
        if error in ("invalid_client", "unauthorized_client"):
            self.storage.update(
                {"clientInformation": None, "tokens": None, "tokensExpireAt": None, "discovery": None}
            )
            raise SignInRequiredError(_NOT_ACCEPTED)
        if error == "invalid_grant":
            self.storage.update({"tokens": None, "tokensExpireAt": None})
            raise SignInRequiredError(_NOT_ACCEPTED)
        if (
            error
            or response.status_code != 200
            or not isinstance(answer, dict)
            or "access_token" not in answer
        ):
            raise OAuthError(
                f"the token refresh failed (HTTP {response.status_code}{f': {error}' if error else ''})"
            )
        # A refresh may leave out the refresh token (not rotated) and the scope (unchanged).
        for kept in ("refresh_token", "scope"):
            if kept not in answer and kept in tokens:
                answer[kept] = tokens[kept]
        self.storage.save_tokens({key: value for key, value in answer.items() if value is not None})

    def _client(self, entry: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any] | None:
        """The client the tokens belong to (``None``: none tau may use)."""
        configured = configured_client(self.config)
        if configured is not None:
            return configured
        stored = entry.get("clientInformation")
        if isinstance(stored, dict) and stored.get("client_id"):
            return stored
        if self.config.oauth.get("clientRegistration") == "cimd":
            document = client_document(self.config.url, metadata)
            return {"client_id": document[0], "token_endpoint_auth_method": "none"} if document else None
        return None


def _authenticate(
    client: dict[str, Any], metadata: dict[str, Any], form: dict[str, str], headers: dict[str, str]
) -> None:
    """The client's authentication at the token endpoint: its stated method when the server takes
    it, else basic, then post, for a client with a secret (as pi chooses)."""
    supported = metadata.get("token_endpoint_auth_methods_supported") or []
    secret = client.get("client_secret")
    method = client.get("token_endpoint_auth_method")
    if method not in ("client_secret_basic", "client_secret_post", "none") or (
        supported and method not in supported
    ):
        if secret and (not supported or "client_secret_basic" in supported):
            method = "client_secret_basic"
        elif secret:
            method = "client_secret_post"
        else:
            method = "none"
    if method == "client_secret_basic" and secret:
        from urllib.parse import quote

        pair = f"{quote(str(client['client_id']), safe='')}:{quote(str(secret), safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        return
    form["client_id"] = str(client["client_id"])
    if method == "client_secret_post" and secret:
        form["client_secret"] = str(secret)


def oauth_factory(
    agent_dir: str, provider_token: Callable[[str], str | None] | None = None
) -> Callable[[ServerConfig], Any]:
    """The auth of a session's HTTP servers: the stored sign-in (see the module docstring), nothing
    when there is none (the server's 401 then says "needs sign-in"). A server with ``auth.provider``
    carries that provider's key from ``provider_token`` (its login, refreshed by the model registry)
    instead of a sign-in of its own."""

    def make(config: ServerConfig) -> Any:
        if config.auth_provider is not None:
            return _provider_auth(config.auth_provider, provider_token) if provider_token else None
        storage = storage_for(agent_dir, config)
        if "tokens" not in storage.entry():
            return None
        return _httpx_auth(_SessionAuth(config, storage))

    return make


def _httpx_auth(session: _SessionAuth) -> Any:
    import httpx2  # the MCP SDK's HTTP client
    from mcp.client.auth.utils import extract_field_from_www_auth, extract_resource_metadata_from_www_auth

    class StoredSignIn(httpx2.Auth):
        async def async_auth_flow(self, request: httpx2.Request) -> Any:
            token = await session.fresh_token()
            if token:
                request.headers["Authorization"] = f"Bearer {token}"
            response = yield request
            if (
                response.status_code == 403
                and extract_field_from_www_auth(response, "error") == "insufficient_scope"
            ):
                raise SignInRequiredError(
                    "401 Unauthorized: the server asks for more access than the sign-in granted"
                )
            if response.status_code != 401:
                return
            await session.refresh(token, extract_resource_metadata_from_www_auth(response))
            renewed = session.access_token()
            if not renewed or renewed == token:
                raise SignInRequiredError(_NOT_ACCEPTED)
            request.headers["Authorization"] = f"Bearer {renewed}"
            yield request

    return StoredSignIn()


def _provider_auth(provider: str, token: Callable[[str], str | None]) -> Any:
    """httpx auth sending ``provider``'s key as a bearer token, looked up per request (a login may
    have been refreshed meanwhile); the lookup may refresh it, so it runs in a worker thread."""
    import httpx2  # the MCP SDK's HTTP client

    class ProviderAuth(httpx2.Auth):
        async def async_auth_flow(self, request: httpx2.Request) -> Any:
            key = await asyncio.to_thread(token, provider)
            if key:
                request.headers["Authorization"] = f"Bearer {key}"
            yield request

    return ProviderAuth()
