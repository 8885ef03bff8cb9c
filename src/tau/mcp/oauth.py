"""OAuth for remote MCP servers, on the SDK's ``OAuthClientProvider`` (discovery, dynamic client
registration, PKCE, token refresh).

Credentials are kept in ``<agent dir>/mcp-auth.json`` (mode 0600) as pi keeps them, one entry per
server name and URL: ``{"mcp__<name>|<url>": {"tokens": {...}, "tokensExpireAt": <unix ms>,
"clientInformation": {...}}}``. ``tokensExpireAt`` lets a later process know an access token has
expired (the SDK only knows it for tokens it received itself), so a session refreshes it first. A running session only
uses stored tokens; signing in, which needs a browser, is ``tau mcp login``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tau.mcp.config import ServerConfig

__all__ = [
    "AUTH_FILE",
    "FileTokenStorage",
    "SignInRequiredError",
    "credentials_key",
    "oauth_factory",
    "sign_in",
]

AUTH_FILE = "mcp-auth.json"


class SignInRequiredError(Exception):
    """The server wants a sign-in and this process cannot open one."""


def credentials_key(config: ServerConfig) -> str:
    """pi's key of a server's entry: its namespace and its URL as a WHATWG URL parser writes it
    (a bare host gets its "/"), so one sign-in serves pi and tau."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(config.url)
    url = urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, parts.fragment)
    )
    return f"mcp__{config.name.replace('-', '_')}|{url}"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` over one entry of ``mcp-auth.json``."""

    def __init__(self, path: Path, key: str, *, static_client: dict[str, Any] | None = None) -> None:
        """``static_client``: a client registered by hand (``oauth.clientId``), used instead of
        registering one."""
        self.path = path
        self.key = key
        self.static_client = static_client

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def entry(self) -> dict[str, Any]:
        """The stored entry of this server (empty when there is none)."""
        return self._entry()

    def _entry(self) -> dict[str, Any]:
        entry = self._read().get(self.key)
        return entry if isinstance(entry, dict) else {}

    def _write(self, fields: dict[str, Any]) -> None:
        data = self._read()
        entry = data.setdefault(self.key, {})
        entry.update(fields)
        for key in [k for k, v in entry.items() if v is None]:
            del entry[key]  # an expiry the new tokens do not have
        self._save(data)

    def _save(self, data: dict[str, Any]) -> None:
        """Replace the file atomically, readable by its owner only (it holds tokens)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self._entry().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        expires_at = (
            int((time.time() + float(tokens.expires_in)) * 1000) if tokens.expires_in is not None else None
        )
        self._write(
            {"tokens": tokens.model_dump(mode="json", exclude_none=True), "tokensExpireAt": expires_at}
        )

    def expires_at(self) -> float | None:
        """When the stored access token expires (Unix seconds), if known."""
        value = self._entry().get("tokensExpireAt")
        return float(value) / 1000 if isinstance(value, (int, float)) else None

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        info = self.static_client or self._entry().get("clientInformation")
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def set_client_info(self, client_info: Any) -> None:
        self._write({"clientInformation": client_info.model_dump(mode="json", exclude_none=True)})

    def forget(self) -> bool:
        data = self._read()
        if data.pop(self.key, None) is None:
            return False
        self._save(data)
        return True


def _static_client(config: ServerConfig, redirect_uri: str) -> dict[str, Any] | None:
    """The configured ``clientId`` (and ``clientSecret``, which may be ``${NAME}`` or ``!command``)."""
    oauth = config.oauth
    if not oauth.get("clientId"):
        return None
    from tau.mcp.config import expand_value

    secret = expand_value(str(oauth["clientSecret"])) if oauth.get("clientSecret") else None
    return {
        "client_id": str(oauth["clientId"]),
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "client_secret_post" if secret else "none",
        **({"client_secret": secret} if secret else {}),
    }


def _provider(
    agent_dir: str,
    config: ServerConfig,
    *,
    redirect_uri: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[Any]],
) -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    oauth = config.oauth
    metadata = OAuthClientMetadata.model_validate(
        {
            "client_name": str(oauth.get("clientName") or "tau"),
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_post" if oauth.get("clientSecret") else "none",
            **({"scope": oauth["scope"]} if oauth.get("scope") else {}),
        }
    )
    storage = FileTokenStorage(
        Path(agent_dir) / AUTH_FILE,
        credentials_key(config),
        static_client=_static_client(config, redirect_uri),
    )

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            # Stored tokens come without the time they were issued; without this, an expired
            # access token would be sent (and refused) instead of refreshed.
            self.context.token_expiry_time = storage.expires_at()

    return Provider(
        config.url, metadata, storage, redirect_handler=redirect_handler, callback_handler=callback_handler
    )


def oauth_factory(
    agent_dir: str, provider_token: Callable[[str], str | None] | None = None
) -> Callable[[ServerConfig], Any]:
    """The auth of a session's HTTP servers: stored tokens (refreshed when they expire); a server
    that needs a new sign-in fails with a hint to run ``tau mcp login``. A server with
    ``auth.provider`` carries that provider's key from ``provider_token`` (its login, refreshed
    by the model registry) instead of a sign-in of its own."""

    def make(config: ServerConfig) -> Any:
        if config.auth_provider is not None:
            return _provider_auth(config.auth_provider, provider_token) if provider_token else None
        storage = FileTokenStorage(Path(agent_dir) / AUTH_FILE, credentials_key(config))
        if "tokens" not in storage.entry():
            return None  # not signed in: the server's 401 says "needs sign-in", and nothing is registered

        async def refuse(url: str) -> None:
            raise SignInRequiredError("401 Unauthorized: the stored sign-in is no longer accepted")

        async def never() -> Any:
            raise SignInRequiredError("401 Unauthorized: the stored sign-in is no longer accepted")

        port = int(config.oauth.get("callbackPort") or 0)
        return _provider(
            agent_dir,
            config,
            redirect_uri=f"http://127.0.0.1:{port or 1}/callback",
            redirect_handler=refuse,
            callback_handler=never,
        )

    return make


async def sign_in(
    agent_dir: str,
    config: ServerConfig,
    *,
    open_url: Callable[[str], None] | None = None,
    timeout: float = 300.0,
) -> None:
    """Sign in to ``config`` through the browser: a loopback server on 127.0.0.1 receives the
    redirect, then the tokens are stored. ``open_url`` replaces opening a browser (tests)."""
    if config.oauth.get("clientRegistration") == "cimd":
        # pi's document (https://pi.dev/oauth/client.json) names pi; tau does not pass itself off
        # as pi, and has no document of its own, so it always registers (``auto`` and ``dcr``).
        raise ValueError(
            f'MCP server {config.name!r}: oauth.clientRegistration "cimd" needs a Client ID Metadata '
            'Document, which tau does not have; use "auto" or "dcr" (tau registers a client)'
        )
    import webbrowser
    from urllib.parse import parse_qs, urlparse

    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    received: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            request = (await reader.readline()).decode("latin-1").split(" ")
            query = parse_qs(urlparse(request[1]).query) if len(request) > 1 else {}
            body = b"Signed in; you can close this page."
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body)
            )
            await writer.drain()
            if "code" in query and not received.done():
                received.set_result((query["code"][0], query.get("state", [None])[0]))
            elif "error" in query and not received.done():
                received.set_exception(RuntimeError(f"sign-in refused: {query['error'][0]}"))
        writer.close()

    port = int(config.oauth.get("callbackPort") or 0)
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    port = server.sockets[0].getsockname()[1]

    async def redirect(url: str) -> None:
        # In a thread: a browser command may only return once the page is done, and the page's
        # redirect comes to the server of this very loop.
        asyncio.get_running_loop().run_in_executor(None, open_url or webbrowser.open, url)

    async def callback() -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        code, state = await received
        return AuthorizationCodeResult(code=code, state=state)

    redirect_uri = f"http://127.0.0.1:{port}/callback"
    storage = FileTokenStorage(Path(agent_dir) / AUTH_FILE, credentials_key(config))
    registered = await storage.get_client_info()
    if registered is not None and redirect_uri not in [str(u) for u in registered.redirect_uris or ()]:
        storage.forget()  # registered for another redirect URI: register again
    auth = _provider(
        agent_dir, config, redirect_uri=redirect_uri, redirect_handler=redirect, callback_handler=callback
    )

    headers = {key: config.value(value) for key, value in config.headers.items()}
    try:
        async with server:
            async with asyncio.timeout(timeout):
                client = create_mcp_http_client(headers=headers, auth=auth)
                async with (
                    client,
                    streamable_http_client(config.url, http_client=client) as streams,
                    ClientSession(streams[0], streams[1]) as session,
                ):
                    await session.initialize()
    finally:
        server.close()


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
