"""``<agent dir>/mcp-auth.json``: the OAuth state of remote MCP servers, kept as pi keeps it, so one
sign-in serves pi and tau.

One entry per server name and URL, ``{"mcp__<name>|<url>": {...}}``, holding ``serverUrl`` (pi
ignores an entry without its own URL there), ``tokens``, ``tokensExpireAt`` (Unix ms: a later
process knows the access token has expired), ``clientInformation`` (a registered client; tokens
without one belong to pi's Client ID Metadata Document) and ``discovery`` (the authorization server
and its metadata, so a refresh knows the token endpoint). Fields tau does not use (pi's pending
``codeVerifier``, ``oauthState``) are kept. The file is changed under pi's lock of it (so a pi and a
tau process never lose each other's entries) and replaced atomically, readable by its owner only.

A refresh holds pi's refresh lock, a directory ``mcp-auth-refresh-<hash>.lock`` beside the file, so a
pi and a tau process never both spend a rotating refresh token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from tau._lockdir import STORE_STALE_S, DirLock
from tau._shared_file import update_json_file
from tau.config.mcp_servers import ServerConfig
from tau.errors import TauError

__all__ = [
    "AUTH_FILE",
    "FileTokenStorage",
    "RefreshLockBusyError",
    "credentials_key",
    "normalized_url",
    "storage_for",
]

AUTH_FILE = "mcp-auth.json"
_R = TypeVar("_R")
_LOCK_STALE_S = 20.0
"""pi takes over a refresh lock its holder stopped renewing after this."""
_LOCK_WAIT_S = 25.0
_LOCK_POLL_S = 0.1
_FILE_LOCK_WAIT_S = 5.0


class RefreshLockBusyError(TauError):
    """Another process held the server's refresh lock for the whole wait."""


def normalized_url(url: str) -> str:
    """``url`` as a WHATWG URL parser writes it (what pi stores): lower-case scheme and host, and
    "/" for an empty path."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, parts.fragment)
    )


def credentials_key(config: ServerConfig) -> str:
    """pi's key of a server's entry: its namespace and its URL."""
    return f"mcp__{config.name.replace('-', '_')}|{normalized_url(config.url)}"


def storage_for(agent_dir: str, config: ServerConfig, **options: Any) -> FileTokenStorage:
    """The storage of ``config``'s entry in ``<agent_dir>/mcp-auth.json``."""
    return FileTokenStorage(
        Path(agent_dir) / AUTH_FILE, credentials_key(config), normalized_url(config.url), **options
    )


class FileTokenStorage:
    """One entry of ``mcp-auth.json``; also the SDK's ``TokenStorage`` for a sign-in."""

    def __init__(
        self,
        path: Path,
        key: str,
        server_url: str,
        *,
        static_client: dict[str, Any] | None = None,
        document_client: dict[str, Any] | None = None,
    ) -> None:
        """``static_client``: a client registered by hand (``oauth.clientId``), used instead of
        registering one. ``document_client``: the client of a Client ID Metadata Document, used when
        no client is stored and never stored itself (pi keeps the document's tokens without one)."""
        self.path = path
        self.key = key
        self.server_url = server_url
        self.static_client = static_client
        self.document_client = document_client

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def entry(self) -> dict[str, Any]:
        """The stored entry of this server (empty when there is none, or it belongs to another URL)."""
        entry = self._read().get(self.key)
        if not isinstance(entry, dict) or entry.get("serverUrl", self.server_url) != self.server_url:
            return {}
        return entry

    def update(self, fields: dict[str, Any]) -> None:
        """Set ``fields`` of the entry (a ``None`` value removes that field). Raises ``OSError``."""

        def apply(data: dict[str, Any]) -> None:
            entry = data.get(self.key)
            if not isinstance(entry, dict) or entry.get("serverUrl", self.server_url) != self.server_url:
                entry = {}
            entry.update(fields, serverUrl=self.server_url)
            data[self.key] = {key: value for key, value in entry.items() if value is not None}

        self._change(apply)

    def forget(self) -> bool:
        """Delete the entry (signing out); ``False`` when there was none."""
        return self._change(lambda data: data.pop(self.key, None) is not None)

    def _change(self, change: Callable[[dict[str, Any]], _R]) -> _R:
        """Apply ``change`` to the file as it is now, under pi's lock of mcp-auth.json (where a symlink
        points, as pi locks it), and replace it, readable by its owner only."""
        return update_json_file(
            self.path,
            change,
            read=lambda _: self._read(),
            follow_links=True,
            stale_s=STORE_STALE_S,
            timeout_s=_FILE_LOCK_WAIT_S,
            mode=0o600,
        )

    def save_tokens(self, tokens: dict[str, Any]) -> None:
        expires_in = tokens.get("expires_in")
        expires_at = (
            int((time.time() + float(expires_in)) * 1000) if isinstance(expires_in, (int, float)) else None
        )
        self.update({"tokens": tokens, "tokensExpireAt": expires_at})

    def expires_at(self) -> float | None:
        """When the stored access token expires (Unix seconds), if known."""
        value = self.entry().get("tokensExpireAt")
        return float(value) / 1000 if isinstance(value, (int, float)) else None

    # -- the SDK's TokenStorage (a sign-in) ---------------------------------------------------

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self.entry().get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens: Any) -> None:
        self.save_tokens(tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        info = self.static_client or self.entry().get("clientInformation") or self.document_client
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def set_client_info(self, client_info: Any) -> None:
        document = self.document_client or {}
        if self.static_client is not None or client_info.client_id == document.get("client_id"):
            return
        self.update({"clientInformation": client_info.model_dump(mode="json", exclude_none=True)})

    # -- pi's refresh lock ----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def refresh_lock(self) -> AsyncIterator[None]:
        """Hold pi's refresh lock of this server (see ``tau._lockdir``), waiting for another holder."""
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:16]
        lock = DirLock(self.path.parent / f"mcp-auth-refresh-{digest}.lock", stale_s=_LOCK_STALE_S)
        lock.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + _LOCK_WAIT_S
        while not lock.try_acquire():
            if time.monotonic() > deadline:
                raise RefreshLockBusyError(f"another process is refreshing the sign-in ({lock.path})")
            await asyncio.sleep(_LOCK_POLL_S)
        try:
            yield
        finally:
            lock.release()
