"""httpx for the requests ``tau.ai.transport.wire`` leaves to it: through a SOCKS or ``https://`` proxy, and
https requests answered with a redirect (sent again here, so that httpx follows it).

Imported only when such a request is made; its replies and errors look like ``tau.ai.transport.wire``'s.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import httpx

from tau.ai.transport import wire


def make_client(
    proxy: str | None,
    *,
    verify: bool,
    follow_redirects: bool,
    connect_timeout_s: float,
    write_timeout_s: float,
) -> httpx.AsyncClient:
    # Read timeouts are handled by the idle watchdog at the event level, not per socket read.
    timeout = httpx.Timeout(connect=connect_timeout_s, read=None, write=write_timeout_s, pool=60.0)
    # TCP_NODELAY: a request's headers and body go out as separate writes; with Nagle's algorithm
    # the second waits for the server's delayed ACK (40 ms) on every reused connection.
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    transport = httpx.AsyncHTTPTransport(verify=verify, socket_options=nodelay, proxy=proxy)
    return httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=follow_redirects)


async def post(client: httpx.AsyncClient, url: str, headers: dict[str, str], content: bytes) -> wire.Response:
    try:
        request = client.build_request("POST", url, headers=headers, content=content)
        return _Response(await client.send(request, stream=True))
    except httpx.TimeoutException as exc:
        raise wire.ConnectTimeout(str(exc)) from exc
    except httpx.UnsupportedProtocol as exc:
        raise wire.UnsupportedProtocol(str(exc)) from exc
    except httpx.InvalidURL as exc:
        raise wire.InvalidURL(str(exc)) from exc
    except httpx.LocalProtocolError as exc:
        # h11's text quotes the offending header value, which is usually a key: keep it out.
        raise wire.InvalidHeader("a header is not valid HTTP") from exc
    except httpx.TransportError as exc:
        raise wire.TransportError(str(exc) or type(exc).__name__) from exc


class _Response(wire.Response):
    """An httpx reply behind ``tau.ai.transport.wire.Response``'s interface."""

    def __init__(self, response: httpx.Response) -> None:  # no connection of wire's own: no super().__init__
        self._response = response
        self.status_code = response.status_code
        self.reason_phrase = response.reason_phrase
        self.headers = wire.Headers(response.headers.multi_items())
        self.is_closed = False

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.TransportError as exc:
            raise wire.TransportError(str(exc) or type(exc).__name__) from exc

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.TransportError as exc:
            raise wire.TransportError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        self.is_closed = True
        await self._response.aclose()
