"""Signing in to a remote MCP server (``tau mcp login``, ``/mcp login``), on the SDK's
``OAuthClientProvider``: discovery, the client (registered, configured, or pi's Client ID Metadata
Document under ``"clientRegistration": "cimd"``, see ``tau.mcp.oauth``), PKCE through the browser and
a loopback redirect on 127.0.0.1, then the tokens, the client and the discovered authorization server
stored in ``mcp-auth.json`` as pi stores them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from tau.config.mcp_servers import ServerConfig
from tau.mcp.oauth import OAuthError, client_document, configured_client, discover
from tau.mcp.oauth_store import FileTokenStorage, storage_for

__all__ = ["sign_in"]

_REGISTRATIONS = ("auto", "dcr", "cimd")


def _registration(config: ServerConfig) -> str:
    """``oauth.clientRegistration``, checked as pi checks it (one line when wrong)."""
    oauth = config.oauth
    mode = oauth.get("clientRegistration", "auto")
    if mode not in _REGISTRATIONS:
        raise ValueError(
            f'MCP server {config.name!r}: oauth.clientRegistration must be "auto", "dcr" or "cimd"'
        )
    if mode == "cimd" and (oauth.get("clientId") or oauth.get("clientName")):
        raise ValueError(
            f'MCP server {config.name!r}: oauth.clientRegistration "cimd" cannot be combined with '
            "oauth.clientId or oauth.clientName"
        )
    return str(mode)


def _provider(
    config: ServerConfig,
    storage: FileTokenStorage,
    *,
    redirect_uri: str,
    document: str | None,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[Any]],
) -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata

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

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            # Stored tokens come without the time they were issued, and the token endpoint is the
            # stored authorization server's: without these, an expired access token would be sent
            # (and refused), or refreshed at the MCP server's origin, instead of refreshed.
            self.context.token_expiry_time = storage.expires_at()
            discovery = storage.entry().get("discovery")
            if isinstance(discovery, dict) and isinstance(discovery.get("authorizationServerMetadata"), dict):
                with contextlib.suppress(ValueError):
                    self.context.oauth_metadata = OAuthMetadata.model_validate(
                        discovery["authorizationServerMetadata"]
                    )
                    self.context.auth_server_url = str(discovery.get("authorizationServerUrl") or "") or None

    return Provider(
        config.url,
        metadata,
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=document,
    )


async def sign_in(
    agent_dir: str,
    config: ServerConfig,
    *,
    open_url: Callable[[str], None] | None = None,
    timeout: float = 300.0,
) -> None:
    """Sign in to ``config`` through the browser: a loopback server on 127.0.0.1 receives the
    redirect, then the tokens are stored. ``open_url`` replaces opening a browser (tests)."""
    import webbrowser

    from tau.mcp.connection import import_sdk

    registration = _registration(config)
    await import_sdk()
    storage = storage_for(agent_dir, config)
    headers = {key: config.value(value) for key, value in config.headers.items()}
    received: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
    server = await _listen(received, _port(config, storage))
    port = server.sockets[0].getsockname()[1]

    async def redirect(url: str) -> None:
        # In a thread: a browser command may only return once the page is done, and the page's
        # redirect comes to the server of this very loop.
        asyncio.get_running_loop().run_in_executor(None, open_url or webbrowser.open, url)

    async def callback() -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        query = await received
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    try:
        async with server:
            async with asyncio.timeout(timeout):
                document, path = None, "/callback"
                if registration == "cimd":
                    document, path = await _document(config, headers)
                redirect_uri = f"http://127.0.0.1:{port}{path}"
                registered = storage.entry().get("clientInformation")
                uris = registered.get("redirect_uris") if isinstance(registered, dict) else None
                if registered is not None and (document or redirect_uri not in (uris or ())):
                    # A registered client cannot use another redirect URI, and the document replaces
                    # it; its tokens go with it (as in pi).
                    storage.update({"clientInformation": None, "tokens": None, "tokensExpireAt": None})
                storage.static_client = configured_client(config, redirect_uri)
                if document is not None:
                    storage.document_client = {
                        "client_id": document,
                        "redirect_uris": [redirect_uri],
                        "token_endpoint_auth_method": "none",
                    }
                auth = _provider(
                    config,
                    storage,
                    redirect_uri=redirect_uri,
                    document=document,
                    redirect_handler=redirect,
                    callback_handler=callback,
                )
                await _connect(config.url, headers, auth)
                _keep_discovery(storage, auth.context, config.url)
    finally:
        server.close()


def _port(config: ServerConfig, storage: FileTokenStorage) -> tuple[int, bool]:
    """The loopback port and whether it must be that one: ``oauth.callbackPort``, else the port of
    the stored client's redirect URI (so that client stays valid), else any free one."""
    configured = int(config.oauth.get("callbackPort") or 0)
    if configured:
        return configured, True
    from urllib.parse import urlsplit

    client = storage.entry().get("clientInformation")
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    if isinstance(uris, list) and uris:
        with contextlib.suppress(ValueError):
            return urlsplit(str(uris[0])).port or 0, False
    return 0, False


async def _listen(received: asyncio.Future[dict[str, str]], port: tuple[int, bool]) -> asyncio.Server:
    """The loopback server that takes the browser's redirect (any path: a server-specific document
    lists ``/callback/<id>``)."""
    from urllib.parse import parse_qs, urlparse

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            request = (await reader.readline()).decode("latin-1").split(" ")
            query = (
                {k: v[0] for k, v in parse_qs(urlparse(request[1]).query).items()} if len(request) > 1 else {}
            )
            body = b"Signed in; you can close this page."
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                % (len(body), body)
            )
            await writer.drain()
            if "code" in query and not received.done():
                received.set_result(query)
            elif "error" in query and not received.done():
                received.set_exception(RuntimeError(f"sign-in refused: {query['error']}"))
        writer.close()

    number, required = port
    try:
        return await asyncio.start_server(handle, "127.0.0.1", number)
    except OSError:
        if required or not number:
            raise
        return await asyncio.start_server(handle, "127.0.0.1", 0)  # the stored client's port is taken


async def _document(config: ServerConfig, headers: dict[str, str]) -> tuple[str, str]:
    """pi's document and redirect path for ``config`` (``"clientRegistration": "cimd"``)."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=headers) as http:
        discovery = await discover(http, config.url)
    found = client_document(config.url, discovery["authorizationServerMetadata"])
    if found is None:
        raise OAuthError(
            f"MCP server {config.name!r}: the authorization server does not support Client ID Metadata "
            'Documents for public clients; remove oauth.clientRegistration "cimd"'
        )
    return found


async def _connect(url: str, headers: dict[str, str], auth: Any) -> None:
    """Open a session with the server, which runs the sign-in when it answers 401."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers=headers, auth=auth)
    async with (
        client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()


def _keep_discovery(storage: FileTokenStorage, context: Any, server_url: str) -> None:
    """Store the authorization server the sign-in found, so a session refreshes at its token
    endpoint (pi's ``discovery``)."""
    if context.oauth_metadata is None or "tokens" not in storage.entry():
        return
    origin = "/".join(server_url.split("/", 3)[:3])
    resource = context.protected_resource_metadata
    storage.update(
        {
            "discovery": {
                "authorizationServerUrl": str(context.auth_server_url or origin),
                "authorizationServerMetadata": context.oauth_metadata.model_dump(
                    mode="json", exclude_none=True
                ),
                **(
                    {"resourceMetadata": resource.model_dump(mode="json", exclude_none=True)}
                    if resource is not None
                    else {}
                ),
            }
        }
    )
