"""The HTTP(S) proxy through which fenced commands reach the hosts ``sandbox.network`` lists.

A fenced command has a network namespace of its own (nothing but loopback). tau runs this proxy
outside the fence, listening on a unix socket; inside, a small forwarder (``sandbox_inner``) listens
on ``127.0.0.1`` and passes each connection to that socket, and the command finds it through
``HTTP_PROXY``/``HTTPS_PROXY``. The proxy understands the two forms HTTP clients use with a proxy:
``CONNECT host:port`` (a tunnel, for https) and a request with an absolute URI
(``GET http://host/path``, for plain http). A host the list allows is connected to; any other is
answered ``403 Forbidden`` with a one-line reason naming the setting, which curl and other clients
show.

The list holds host names or addresses, ``*.example.com`` for a domain's sub-domains (not the domain
itself), and ``host:port`` to allow one port only. Names are matched as written in the request: a
list naming ``localhost`` does not allow ``127.0.0.1``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Sequence
from typing import Final

__all__ = ["HostList", "SandboxProxy"]

_HEAD_LIMIT: Final = 64 * 1024
_CONNECT_TIMEOUT: Final = 10.0


class HostList:
    """Which ``host:port`` a fenced command may reach (see the module docstring for the forms)."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.entries = tuple(entries)
        self._rules: list[tuple[str, int | None]] = []
        for entry in entries:
            host, port = _split_host_port(entry.strip().lower().rstrip("."))
            if host and host != "*.":  # an empty entry allows nothing (the setting refuses it)
                self._rules.append((host, port))

    def allows(self, host: str, port: int) -> bool:
        host = host.lower().rstrip(".")
        if not host:
            return False
        for pattern, allowed_port in self._rules:
            if allowed_port is not None and allowed_port != port:
                continue
            if pattern.startswith("*."):
                if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                    return True
            elif host == pattern:
                return True
        return False


def _split_host_port(text: str) -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]``, ``[v6]:port`` -> (host, port or None)."""
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[1:end], text[end + 1 :]
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isascii() and rest[
            1:
        ].isdecimal() else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        if port.isascii() and port.isdecimal():
            return host, int(port)
    return text, None


class _Refused(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class SandboxProxy:
    """The proxy, serving on the unix socket ``path`` from :meth:`start` to :meth:`close`."""

    def __init__(self, hosts: HostList, folder: str) -> None:
        self.hosts = hosts
        self.path = os.path.join(folder, "proxy.sock")
        self._listener: socket.socket | None = None
        self._closed = False

    def start(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept_loop, name="tau-sandbox-proxy", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def _accept_loop(self) -> None:
        listener = self._listener
        while listener is not None and not self._closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            try:
                head, rest = _read_head(client)
                upstream, first = self._open(head)
            except _Refused as refused:
                body = f"tau sandbox: {refused}\n".encode()
                with contextlib.suppress(OSError):
                    client.sendall(
                        f"HTTP/1.1 {refused.status}\r\nContent-Type: text/plain\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                        + body
                    )
                return
            except OSError:
                return
            with upstream:
                try:
                    if first is None:  # a tunnel: the client speaks once we say it is open
                        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    else:
                        upstream.sendall(first)
                    if rest:
                        upstream.sendall(rest)
                except OSError:
                    return
                _splice(client, upstream)

    def _open(self, head: bytes) -> tuple[socket.socket, bytes | None]:
        """The upstream connection for the request ``head``, and what to send it first (``None``
        for a tunnel)."""
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            raise _Refused("400 Bad Request", "not an HTTP proxy request")
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = _split_host_port(target)
            port = port or 443
            first: bytes | None = None
        else:
            from urllib.parse import urlsplit

            url = urlsplit(target)
            if url.scheme.lower() != "http" or not url.hostname:
                raise _Refused(
                    "400 Bad Request",
                    f"the proxy takes http://host/... or CONNECT host:port, not {target[:80]}",
                )
            host, port = url.hostname, url.port or 80
            path = url.path or "/"
            if url.query:
                path += "?" + url.query
            kept = [
                line
                for line in lines[1:]
                if line and not line.lower().startswith(("proxy-connection:", "proxy-authorization:"))
            ]
            first = "\r\n".join([f"{method} {path} {version}", *kept, "", ""]).encode("latin-1")
        if not self.hosts.allows(host, port):
            allowed = ", ".join(self.hosts.entries) or "none"
            raise _Refused(
                "403 Forbidden",
                f"{host}:{port} is not in sandbox.network (allowed: {allowed}); "
                "add it to the setting or ask for network access",
            )
        try:
            upstream = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT)
        except OSError as error:
            raise _Refused("502 Bad Gateway", f"cannot connect to {host}:{port}: {error}") from None
        upstream.settimeout(None)
        return upstream, first


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request head (up to the blank line) and whatever followed it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(8192)
        if not chunk:
            raise _Refused("400 Bad Request", "the request ended before its headers did")
        data += chunk
        if len(data) > _HEAD_LIMIT:
            raise _Refused("431 Request Header Fields Too Large", "the request head is too long")
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until each side has finished sending."""

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join()
