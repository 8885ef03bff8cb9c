"""HTTP/1.1 over asyncio streams, for the providers' POSTs: TLS, an HTTP proxy, kept-alive connections.

httpx with httpcore, anyio and h11 costs about a quarter of a ``tau -p`` start in imports alone,
before its first request; a provider call needs one POST whose reply is read as it streams in.
This client does that, and nothing else: no HTTP/2, no cookies. What it does not cover (a SOCKS or
``https://`` proxy, a redirect) goes to httpx (``tau.ai.http`` decides), imported only then.

- TLS verifies against certifi's store, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (as httpx).
- An ``http://`` proxy gets plain requests in absolute form and ``CONNECT`` for https targets;
  credentials in the proxy URL go as ``Proxy-Authorization``.
- A connection whose reply was read to its end goes back to the client's pool, unless the server
  said ``Connection: close``; one that went stale while idle is replaced once, before any reply.
- Replies may be chunked, sized or end with the connection; gzip and deflate are decoded.
"""

from __future__ import annotations

import asyncio
import base64
import os
import urllib.parse
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING

from tau import __version__

if TYPE_CHECKING:
    import ssl

_MAX_HEAD = 256 * 1024
_READ_SIZE = 64 * 1024
_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = f"tau/{__version__}"


class TransportError(Exception):
    """Connecting, sending or reading failed."""


class ConnectTimeout(TransportError):
    """No connection within the connect timeout."""


class InvalidURL(ValueError):
    """A URL that no request can be sent to (no host, a bad port)."""


class UnsupportedProtocol(InvalidURL):
    """A URL that is neither ``http://`` nor ``https://``."""


class Headers(Mapping[str, str]):
    """Response headers: names in lower case, repeated fields joined with ``", "``."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        joined: dict[str, str] = {}
        for name, value in fields:
            key = name.lower()
            joined[key] = f"{joined[key]}, {value}" if key in joined else value
        self._fields = joined

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


class _Connection:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, origin: tuple[str, str, int]
    ):
        self.reader = reader
        self.writer = writer
        self.origin = origin

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class Response:
    """A reply whose body is read as it arrives (``aiter_bytes``); ``aclose`` releases the connection."""

    def __init__(
        self,
        status_code: int,
        reason: str,
        headers: Headers,
        connection: _Connection,
        client: Client,
        *,
        body: bool,
    ) -> None:
        self.status_code = status_code
        self.reason_phrase = reason
        self.headers = headers
        self._connection: _Connection | None = connection
        self._client = client
        self._body = body
        self._keep = headers.get("connection", "").lower() != "close"
        self.is_closed = False

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (chunked framing removed, content coding kept)."""
        connection = self._connection
        if connection is None:
            return
        reader = connection.reader
        try:
            if not self._body:
                pass
            elif "chunked" in self.headers.get("transfer-encoding", "").lower():
                while True:
                    size_line = await reader.readuntil(b"\n")
                    size = int(size_line.split(b";", 1)[0].strip() or b"x", 16)
                    if size == 0:
                        while (await reader.readuntil(b"\n")).strip():
                            pass  # trailers
                        break
                    while size > 0:
                        chunk = await reader.read(min(size, _READ_SIZE))
                        if not chunk:
                            raise asyncio.IncompleteReadError(b"", size)
                        size -= len(chunk)
                        yield chunk
                    await reader.readexactly(2)
            elif (length := self.headers.get("content-length")) is not None:
                remaining = int(length)
                while remaining > 0:
                    chunk = await reader.read(min(remaining, _READ_SIZE))
                    if not chunk:
                        raise asyncio.IncompleteReadError(b"", remaining)
                    remaining -= len(chunk)
                    yield chunk
            else:
                self._keep = False  # the body ends with the connection
                while chunk := await reader.read(_READ_SIZE):
                    yield chunk
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            self._discard()
            raise TransportError("peer closed connection without sending complete message body") from exc
        except OSError as exc:
            self._discard()
            raise TransportError(str(exc) or type(exc).__name__) from exc
        self._release()

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, with gzip or deflate content coding undone."""
        decoder = _decoder(self.headers.get("content-encoding", ""))
        async for chunk in self.aiter_raw():
            if decoder is None:
                yield chunk
            elif data := _decode(decoder, chunk):
                yield data
        if decoder is not None and (rest := decoder.flush()):
            yield rest

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    async def aclose(self) -> None:
        """Done with the reply: an unread body costs the connection."""
        self._discard()

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        self.is_closed = True
        if connection is not None:
            if self._keep and connection.usable():
                self._client.put_back(connection)
            else:
                connection.close()

    def _discard(self) -> None:
        connection, self._connection = self._connection, None
        self.is_closed = True
        if connection is not None:
            connection.close()


def _decoder(coding: str) -> zlib._Decompress | None:
    coding = coding.strip().lower()
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj()
    return None


def _decode(decoder: zlib._Decompress, chunk: bytes) -> bytes:
    try:
        return decoder.decompress(chunk)
    except zlib.error as exc:
        raise TransportError(f"the body's content coding could not be decoded: {exc}") from exc


class Client:
    """Connections to the origins of one base URL, kept alive between requests."""

    def __init__(
        self,
        *,
        proxy: str | None = None,
        verify: bool = True,
        connect_timeout_s: float = 30.0,
        write_timeout_s: float = 60.0,
    ) -> None:
        self._proxy = urllib.parse.urlsplit(proxy) if proxy else None
        self._verify = verify
        self._connect_timeout_s = connect_timeout_s
        self._write_timeout_s = write_timeout_s
        self._idle: list[_Connection] = []
        self.is_closed = False

    async def post(self, url: str, headers: Mapping[str, str], content: bytes) -> Response:
        """Send a POST and return once the status and headers of the reply have arrived."""
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _PORTS:
            raise UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.")
        host = parts.hostname
        if not host:
            raise InvalidURL("No host in the URL.")
        try:
            port = parts.port or _PORTS[scheme]
        except ValueError:
            raise InvalidURL(f"Invalid port: {parts.netloc.rpartition(':')[2]!r}") from None
        origin = (scheme, host, port)
        head = self._request_head(parts, origin, headers, len(content))
        while True:
            connection, reused = self._take(origin), True
            if connection is None:
                connection, reused = await self._connect(origin), False
            try:
                return await self._exchange(connection, head + content)
            except _StaleConnection:
                if not reused:
                    raise TransportError("Server disconnected without sending a response.") from None
            # A kept-alive connection the server had closed meanwhile: once more on a new one.

    def put_back(self, connection: _Connection) -> None:
        if self.is_closed:
            connection.close()
        else:
            self._idle.append(connection)

    async def aclose(self) -> None:
        self.is_closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        while self._idle:
            connection = self._idle.pop()
            if connection.origin == origin and connection.usable():
                return connection
            connection.close()
        return None

    def _request_head(
        self,
        parts: urllib.parse.SplitResult,
        origin: tuple[str, str, int],
        headers: Mapping[str, str],
        size: int,
    ) -> bytes:
        scheme, host, port = origin
        authority = f"[{host}]" if ":" in host else host
        if port != _PORTS[scheme]:
            authority = f"{authority}:{port}"
        target = urllib.parse.quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
        if parts.query:
            target = f"{target}?{urllib.parse.quote(parts.query, safe='/%:@!$&()*+,;=?-._~')}"
        fields: dict[str, tuple[str, str]] = {
            "host": ("Host", authority),
            "accept": ("Accept", "*/*"),
            "accept-encoding": ("Accept-Encoding", "gzip, deflate"),
            "connection": ("Connection", "keep-alive"),
            "user-agent": ("User-Agent", USER_AGENT),
        }
        if parts.username is not None:
            fields["authorization"] = ("Authorization", _basic(parts.username, parts.password))
        if self._proxy is not None and scheme == "http":
            target = f"http://{authority}{target}"  # a proxy forwards requests in absolute form
            if (credentials := _proxy_credentials(self._proxy)) is not None:
                fields["proxy-authorization"] = ("Proxy-Authorization", credentials)
        for name, value in headers.items():
            _check_field_name(name)
            fields[name.lower()] = (name, value)
        fields["content-length"] = ("Content-Length", str(size))
        lines = [f"POST {target} HTTP/1.1"]
        lines.extend(f"{name}: {value}" for name, value in fields.values())
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _connect(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        proxy = self._proxy
        address = (proxy.hostname or "", proxy.port or 80) if proxy is not None else (host, port)
        tls = _tls_context(self._verify) if scheme == "https" else None
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    *address,
                    ssl=tls if proxy is None else None,
                    server_hostname=host if tls is not None and proxy is None else None,
                    limit=_MAX_HEAD,
                )
                connection = _Connection(reader, writer, origin)
                if proxy is not None and tls is not None:
                    await self._tunnel(connection, proxy, host, port)
                    await writer.start_tls(tls, server_hostname=host)
        except TimeoutError:
            raise ConnectTimeout(f"no connection within {self._connect_timeout_s:g} s") from None
        except (OSError, EOFError) as exc:  # ssl.SSLError is an OSError
            raise TransportError(str(exc) or type(exc).__name__) from exc
        return connection

    async def _tunnel(
        self, connection: _Connection, proxy: urllib.parse.SplitResult, host: str, port: int
    ) -> None:
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
        if (credentials := _proxy_credentials(proxy)) is not None:
            lines.append(f"Proxy-Authorization: {credentials}")
        connection.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await connection.writer.drain()
        try:
            status, reason, _ = _parse_head(await connection.reader.readuntil(b"\r\n\r\n"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            connection.close()
            raise TransportError("the proxy closed the connection instead of opening a tunnel") from exc
        if not 200 <= status < 300:
            connection.close()
            raise TransportError(f"the proxy refused the tunnel: {status} {reason}".rstrip())

    async def _exchange(self, connection: _Connection, request: bytes) -> Response:
        reader, writer = connection.reader, connection.writer
        try:
            writer.write(request)
            async with asyncio.timeout(self._write_timeout_s):
                await writer.drain()
        except TimeoutError:
            connection.close()
            raise TransportError(
                f"the request could not be sent within {self._write_timeout_s:g} s"
            ) from None
        except OSError as exc:
            connection.close()
            raise _StaleConnection from exc
        try:
            while True:
                status, reason, fields = _parse_head(await reader.readuntil(b"\r\n\r\n"))
                if status >= 200 or status == 101:
                    break  # 1xx replies come before the real one
        except asyncio.IncompleteReadError as exc:
            connection.close()
            if not exc.partial:
                raise _StaleConnection from exc
            raise TransportError("Server disconnected without sending a complete response head.") from exc
        except (asyncio.LimitOverrunError, ValueError) as exc:
            connection.close()
            raise TransportError(f"the server's reply is not HTTP/1.1: {exc}") from exc
        except ConnectionResetError as exc:
            connection.close()
            raise _StaleConnection from exc
        except OSError as exc:
            connection.close()
            raise TransportError(str(exc) or type(exc).__name__) from exc
        body = status not in (204, 304)
        return Response(status, reason, Headers(fields), connection, self, body=body)


class _StaleConnection(Exception):
    """The connection was closed before a byte of the reply came."""


def is_redirect(response: Response) -> bool:
    return response.status_code in _REDIRECTS and "location" in response.headers


def _parse_head(head: bytes) -> tuple[int, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ValueError(f"bad status line {lines[0][:80]!r}")
    fields = []
    for line in lines[1:]:
        if line:
            name, colon, value = line.partition(":")
            if not colon:
                raise ValueError(f"bad header line {line[:80]!r}")
            fields.append((name.strip(), value.strip()))
    return int(code), reason, fields


_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _check_field_name(name: str) -> None:
    if not name or not _TOKEN.issuperset(name):
        raise InvalidHeader("a header name is not a valid HTTP token")


class InvalidHeader(ValueError):
    """A request header HTTP cannot carry."""


def _basic(user: str, password: str | None) -> str:
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password or '')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _proxy_credentials(proxy: urllib.parse.SplitResult) -> str | None:
    return _basic(proxy.username, proxy.password) if proxy.username is not None else None


_contexts: dict[tuple[bool, str, str], ssl.SSLContext] = {}


def _tls_context(verify: bool) -> ssl.SSLContext:
    """One context per process and store (building the certificate store takes tens of milliseconds)."""
    key = (verify, os.environ.get("SSL_CERT_FILE", ""), os.environ.get("SSL_CERT_DIR", ""))
    context = _contexts.get(key)
    if context is None:
        import ssl

        if not verify:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif os.environ.get("SSL_CERT_FILE"):
            context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
        elif os.environ.get("SSL_CERT_DIR"):
            context = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
        else:
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
        context.set_alpn_protocols(["http/1.1"])
        _contexts[key] = context
    return context
