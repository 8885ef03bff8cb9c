"""HTTP/1.1 over asyncio streams, for the providers' POSTs: TLS, an HTTP proxy, kept-alive connections.

httpx with httpcore and anyio costs about a quarter of a ``tau -p`` start in imports alone,
before its first request; a provider call needs one POST whose reply is read as it streams in.
This client does that, and nothing else: no HTTP/2, no cookies. What it does not cover (a SOCKS or
``https://`` proxy, a redirect) goes to httpx (``tau.ai.http`` decides), imported only then. The
HTTP/1.1 protocol itself (writing the request; the status, headers and body framing of the reply;
keep-alive) is h11's, the sans-IO implementation httpx uses; this module moves its bytes over
asyncio streams.

- TLS verifies against certifi's store, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (as httpx).
- An ``http://`` proxy gets plain requests in absolute form and ``CONNECT`` for https targets;
  credentials in the proxy URL go as ``Proxy-Authorization``.
- A connection whose reply was read to its end goes back to the client's pool, unless the server
  said ``Connection: close``; one that went stale while idle is replaced once, before any reply.
- Replies may be chunked, sized or end with the connection; gzip and deflate are decoded. A reply
  that breaks HTTP/1.1 (a bad chunk size, an oversized head) is a ``TransportError``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import urllib.parse
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING

import h11

from tau import __version__

if TYPE_CHECKING:
    import ssl

_MAX_HEAD = 256 * 1024
_READ_SIZE = 64 * 1024
_WRITE_PIECE = 1024 * 1024
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
        self.protocol = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()

    def recycle(self) -> bool:
        """Ready the connection for another request: both sides finished their message, neither
        said ``Connection: close`` and the body did not end with the connection."""
        protocol = self.protocol
        if protocol.our_state is not h11.DONE or protocol.their_state is not h11.DONE:
            return False
        protocol.start_next_cycle()
        return self.usable()

    async def next_event(self) -> object:
        return await _next_event(self.reader, self.protocol)

    def close(self) -> None:
        self.writer.close()


async def _next_event(reader: asyncio.StreamReader, protocol: h11.Connection) -> object:
    """The next event of the reply, reading from the socket while h11 needs more."""
    while (event := protocol.next_event()) is h11.NEED_DATA:
        protocol.receive_data(await reader.read(_READ_SIZE))  # b"" tells h11 the peer closed
    return event


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
            while not isinstance(event := await connection.next_event(), h11.EndOfMessage):
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
        except h11.RemoteProtocolError as exc:
            self._discard()
            if connection.reader.at_eof():  # h11 says the body was cut short
                raise TransportError(str(exc)) from exc
            raise TransportError(f"the server's reply is not valid HTTP/1.1: {exc}") from exc
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
    ) -> h11.Request:
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
        protocol = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        connection.writer.write(_serialise(protocol, _request("CONNECT", authority, fields)))
        await connection.writer.drain()
        try:
            while not isinstance(reply := await _next_event(connection.reader, protocol), h11.Response):
                pass  # 1xx replies come before the real one
        except h11.RemoteProtocolError as exc:
            connection.close()
            raise TransportError(f"the proxy did not open a tunnel: {exc}") from exc
        if not 200 <= reply.status_code < 300:
            connection.close()
            raise TransportError(
                f"the proxy refused the tunnel: {reply.status_code} {reply.reason.decode('latin-1')}".rstrip()
            )
        if protocol.trailing_data[0]:
            connection.close()  # the origin's TLS cannot have spoken before the client's hello
            raise TransportError("the proxy sent data before the tunnel's TLS handshake")

    async def _exchange(self, connection: _Connection, request: h11.Request, content: bytes) -> Response:
        writer = connection.writer
        try:
            async with asyncio.timeout(self._write_timeout_s):
                await _write_request(writer, connection.protocol, request, content)
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
            connection.protocol.receive_data(first)
            while not isinstance(reply := await connection.next_event(), h11.Response):
                pass  # 1xx replies come before the real one
        except ConnectionResetError as exc:
            connection.close()
            raise _StaleConnection from exc
        except h11.RemoteProtocolError as exc:
            connection.close()
            if connection.reader.at_eof():
                raise TransportError("Server disconnected without sending a complete response head.") from exc
            raise TransportError(f"the server's reply is not valid HTTP/1.1: {exc}") from exc
        except OSError as exc:
            connection.close()
            raise TransportError(str(exc) or type(exc).__name__) from exc
        fields = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in reply.headers]
        headers = Headers(fields)
        return Response(reply.status_code, reply.reason.decode("latin-1"), headers, connection, self)


class _StaleConnection(Exception):
    """The connection was closed before a byte of the reply came."""


def is_redirect(response: Response) -> bool:
    return response.status_code in _REDIRECTS and "location" in response.headers


def _request(method: str, target: str, fields: list[tuple[str, str]]) -> h11.Request:
    try:
        encoded = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in fields]
        return h11.Request(method=method, target=target.encode("ascii"), headers=encoded)
    except (h11.LocalProtocolError, UnicodeEncodeError):
        # h11's text quotes the offending value, which is usually a key: keep it out.
        raise InvalidHeader("a header is not valid HTTP") from None


async def _write_request(
    writer: asyncio.StreamWriter, protocol: h11.Connection, request: h11.Request, content: bytes
) -> None:
    """Send the head, then the body a piece at a time: each piece goes to the socket as it is (a
    view, not a copy), and only what the socket does not take at once is copied into the
    transport's buffer, which is left to empty before the next piece (a 200 MB body was copied four
    times as one joined write)."""
    writer.write(protocol.send(request) or b"")
    parts = protocol.send_with_data_passthrough(h11.Data(data=content)) if content else None
    for part in parts or ():
        view = memoryview(part)
        for start in range(0, len(view), _WRITE_PIECE):
            writer.write(view[start : start + _WRITE_PIECE])
            await writer.drain()
    writer.write(protocol.send(h11.EndOfMessage()) or b"")
    await writer.drain()


def _serialise(protocol: h11.Connection, request: h11.Request) -> bytes:
    """A request without a body (the proxy's CONNECT)."""
    return (protocol.send(request) or b"") + (protocol.send(h11.EndOfMessage()) or b"")


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
