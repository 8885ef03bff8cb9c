"""HTTP/1.1 over asyncio streams, for the providers' POSTs: TLS, an HTTP proxy, kept-alive connections.

Measured reason to keep it beside httpx: importing httpx takes ~85 ms of CPU, this module ~5 ms (Dec 2026).
``tests/ai/test_wire_vs_httpx.py`` holds it to httpx's requests and replies.

httpx with httpcore and anyio costs about a quarter of a ``tau -p`` start in imports alone,
before its first request; a provider call needs one POST whose reply is read as it streams in.
This client does that, and nothing else: no HTTP/2, no cookies. What it does not cover (a SOCKS or
``https://`` proxy, a redirect) goes to httpx (``tau.ai.transport.http`` decides), imported only then. The
reply is parsed by httptools (llhttp, Node's HTTP parser, in C: status, headers, chunked framing,
keep-alive), which loads in a fifth of h11's time and parses each piece of a streamed body without
Python-level work per byte; the request head is a few lines this module writes.

- TLS verifies against certifi's store, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (as httpx).
- An ``http://`` proxy gets plain requests in absolute form and ``CONNECT`` for https targets;
  credentials in the proxy URL go as ``Proxy-Authorization``.
- A connection whose reply was read to its end goes back to the client's pool, unless the server
  said ``Connection: close``; one that went stale while idle is replaced once, before any reply.
- Replies may be chunked, sized or end with the connection; gzip and deflate are decoded. A reply
  that breaks HTTP/1.1 (a bad chunk size, an oversized head) or ends early is a ``TransportError``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import urllib.parse
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

import httptools

from tau import __version__
from tau.errors import TauError

if TYPE_CHECKING:
    import ssl

_MAX_HEAD = 256 * 1024
_READ_SIZE = 64 * 1024
_WRITE_PIECE = 1024 * 1024
_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = f"tau/{__version__}"


class TransportError(TauError):
    """Connecting, sending or reading failed."""


class ConnectTimeout(TransportError):
    """No connection within the connect timeout."""


class InvalidURL(TauError, ValueError):
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


class _Reply:
    """What the parser has read of the current reply (httptools calls these methods as it parses).
    1xx replies are read and dropped: ``head`` is the final reply's status line and headers."""

    __slots__ = (
        "body",
        "complete",
        "error",
        "fields",
        "framed",
        "head",
        "keep_alive",
        "parser",
        "reason",
        "seen",
        "status",
    )

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.head = self.complete = False
        self.error: _BadReply | None = None
        self.on_message_begin()

    def on_message_begin(self) -> None:
        if self.head and self.complete:
            raise _Trailing  # bytes after the end of the reply: the connection is not reused
        self.status, self.reason = 0, b""
        self.fields: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.complete = self.keep_alive = self.framed = False
        self.seen = 0  # bytes fed before the head was complete

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length" or (lowered == b"transfer-encoding" and b"chunked" in value.lower()):
            self.framed = True  # else the body ends with the connection

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.head = self.status >= 200 or self.status == 101

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.status >= 200:
            self.complete = True
            self.keep_alive = self.parser.should_keep_alive()

    def feed(self, data: bytes) -> None:
        """Parse ``data``. A reply that is not HTTP/1.1 (or whose head passes 256 KB) is a
        ``_BadReply``: raised at once in the head, kept for after the body read before it."""
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if isinstance(exc.__context__, _Trailing):
                self.keep_alive = False
                return
            self._fail(_BadReply(str(exc) or type(exc).__name__))
        except httptools.HttpParserUpgrade:
            self._fail(_BadReply("the server switched protocols"))
        if not self.head:
            self.seen += len(data)
            if self.seen > _MAX_HEAD:
                raise _BadReply(f"the reply's head is over {_MAX_HEAD // 1024} KB")

    def _fail(self, error: _BadReply) -> None:
        if not self.head:
            raise error
        self.error = error

    def take_body(self) -> bytes:
        parts, self.body = self.body, []
        return parts[0] if len(parts) == 1 else b"".join(parts)


class _BadReply(TauError):
    """A reply that breaks HTTP/1.1."""


class _Trailing(TauError):
    """The server sent more after its reply's end."""


class _Connection:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, origin: tuple[str, str, int]
    ):
        self.reader = reader
        self.writer = writer
        self.origin = origin
        self.reply = _Reply()

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()

    def recycle(self) -> bool:
        """Ready the connection for another request: the reply was read to its end, neither side
        said ``Connection: close`` and the body did not end with the connection."""
        reply = self.reply
        if not (reply.complete and reply.keep_alive) or reply.body or reply.error is not None:
            return False
        reply.head = False
        return self.usable()

    async def read_head(self) -> _Reply:
        """Read until the final reply's status line and headers are in."""
        reply = self.reply
        while not reply.head:
            data = await self.reader.read(_READ_SIZE)
            if not data:
                raise TransportError("Server disconnected without sending a complete response head.")
            reply.feed(data)
        return reply

    async def read_body(self) -> bytes | None:
        """The next piece of the body (``b""`` when a piece held only framing), ``None`` at its end."""
        reply = self.reply
        if not reply.body:
            if reply.error is not None:
                raise reply.error
            if reply.complete:
                return None
            data = await self.reader.read(_READ_SIZE)
            if not data:
                if reply.framed:
                    raise TransportError("peer closed connection without sending complete message body")
                reply.complete = True  # a body that ends with the connection
                return None
            reply.feed(data)
            if not reply.body:
                return b""
        return reply.take_body()

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
    ) -> None:
        self.status_code = status_code
        self.reason_phrase = reason
        self.headers = headers
        self._connection: _Connection | None = connection
        self._client = client
        self.is_closed = False

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (chunked framing removed, content coding kept)."""
        connection = self._connection
        if connection is None:
            return
        try:
            while (piece := await connection.read_body()) is not None:
                if piece:
                    yield piece
        except _BadReply as exc:
            self._discard()
            raise TransportError(f"the server's reply is not valid HTTP/1.1: {exc}") from exc
        except TransportError:
            self._discard()
            raise
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
            if connection.recycle():
                self._client.put_back(connection)
            else:
                connection.close()

    def _discard(self) -> None:
        connection, self._connection = self._connection, None
        self.is_closed = True
        if connection is not None:
            connection.close()


class _Decompressor(Protocol):
    """What ``zlib.decompressobj()`` returns (its class has no public name)."""

    def decompress(self, data: bytes, /) -> bytes: ...

    def flush(self) -> bytes: ...


def _decoder(coding: str) -> _Decompressor | None:
    coding = coding.strip().lower()
    if coding not in ("gzip", "x-gzip", "deflate"):
        return None
    import zlib  # for a compressed reply only (model APIs stream theirs uncompressed)

    if coding != "deflate":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    return zlib.decompressobj()


def _decode(decoder: _Decompressor, chunk: bytes) -> bytes:
    import zlib

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
        request = self._request(parts, origin, headers, len(content))
        while True:
            connection, reused = self._take(origin), True
            if connection is None:
                connection, reused = await self._connect(origin), False
            try:
                return await self._exchange(connection, request, content)
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

    def _request(
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
            fields[name.lower()] = (name, value)
        fields["content-length"] = ("Content-Length", str(size))
        return _request("POST", target, list(fields.values()))

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
        fields = [("Host", authority)]
        if (credentials := _proxy_credentials(proxy)) is not None:
            fields.append(("Proxy-Authorization", credentials))
        connection.writer.write(_request("CONNECT", authority, fields))
        await connection.writer.drain()
        try:
            reply = await connection.read_head()
        except _BadReply as exc:
            connection.close()
            raise TransportError(f"the proxy did not open a tunnel: {exc}") from exc
        except TransportError:
            connection.close()
            raise
        if not 200 <= reply.status < 300:
            connection.close()
            raise TransportError(
                f"the proxy refused the tunnel: {reply.status} {reply.reason.decode('latin-1')}".rstrip()
            )
        if reply.body:
            connection.close()  # the origin's TLS cannot have spoken before the client's hello
            raise TransportError("the proxy sent data before the tunnel's TLS handshake")
        connection.reply = _Reply()  # the origin's replies come next

    async def _exchange(self, connection: _Connection, request: bytes, content: bytes) -> Response:
        writer = connection.writer
        try:
            async with asyncio.timeout(self._write_timeout_s):
                await _write_request(writer, request, content)
        except TimeoutError:
            connection.close()
            raise TransportError(
                f"the request could not be sent within {self._write_timeout_s:g} s"
            ) from None
        except OSError as exc:
            connection.close()
            raise _StaleConnection from exc
        try:
            first = await connection.reader.read(_READ_SIZE)
            if not first:
                connection.close()
                raise _StaleConnection
            connection.reply.feed(first)
            reply = await connection.read_head()
        except ConnectionResetError as exc:
            connection.close()
            raise _StaleConnection from exc
        except _BadReply as exc:
            connection.close()
            raise TransportError(f"the server's reply is not valid HTTP/1.1: {exc}") from exc
        except TransportError:
            connection.close()
            raise
        except OSError as exc:
            connection.close()
            raise TransportError(str(exc) or type(exc).__name__) from exc
        headers = Headers([(name.decode("latin-1"), value.decode("latin-1")) for name, value in reply.fields])
        return Response(reply.status, reply.reason.decode("latin-1"), headers, connection, self)


class _StaleConnection(TauError):
    """The connection was closed before a byte of the reply came."""


def is_redirect(response: Response) -> bool:
    return response.status_code in _REDIRECTS and "location" in response.headers


def _request(method: str, target: str, fields: list[tuple[str, str]]) -> bytes:
    """The request's head: its line and header fields, refused (without quoting a value, which is
    usually a key) when a name is no HTTP token or a value holds a line break or control byte."""
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in fields:
        value = value.strip(" \t")
        if not name or name.strip(_TOKEN) or value.strip(_VALUE):
            raise InvalidHeader("a header is not valid HTTP")
        lines.append(f"{name}: {value}")
    try:
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError:
        raise InvalidHeader("a header is not valid HTTP") from None


# The characters of a header name (RFC 9110's token) and of a value (visible, space, tab, obs-text).
_TOKEN = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_VALUE = "".join(map(chr, [9, *range(32, 127), *range(128, 256)]))


async def _write_request(writer: asyncio.StreamWriter, head: bytes, content: bytes) -> None:
    """Send the head, then the body a piece at a time: each piece goes to the socket as it is (a
    view, not a copy), and only what the socket does not take at once is copied into the
    transport's buffer, which is left to empty before the next piece (a 200 MB body was copied four
    times as one joined write)."""
    writer.write(head)
    view = memoryview(content)
    for start in range(0, len(view), _WRITE_PIECE):
        writer.write(view[start : start + _WRITE_PIECE])
        await writer.drain()
    await writer.drain()


class InvalidHeader(TauError, ValueError):
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
