"""The fake server's WebSocket side (RFC 6455), for the Codex backend's WebSocket transport.

Enough of the protocol for a real client: the handshake, masked client frames (text, ping, close,
fragments joined), unmasked server text frames. ``serve_codex`` answers each ``response.create``
frame with the next scripted turn, one Responses event per text frame, on the same socket until the
client closes it. A ``status`` fault becomes an ``error`` event (its body's ``error`` code and
message), a ``cut`` fault drops the TCP connection after ``after_events`` events.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from tau.testing.fake_llm.script import RecordedRequest, Turn

__all__ = ["handshake_ok", "serve_codex"]

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _CLOSE, _PING, _PONG = 0x1, 0x8, 0x9, 0xA


def handshake_ok(handler: Any) -> bool:
    """Answer the upgrade with 101 Switching Protocols; False (and 400) for a malformed one."""
    key = handler.headers.get("sec-websocket-key")
    if not key or handler.headers.get("sec-websocket-version") != "13":
        handler.send_response(400)
        handler.send_header("content-length", "0")
        handler.end_headers()
        return False
    accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
    handler.send_response(101, "Switching Protocols")
    handler.send_header("Upgrade", "websocket")
    handler.send_header("Connection", "Upgrade")
    handler.send_header("Sec-WebSocket-Accept", accept)
    handler.end_headers()
    handler.wfile.flush()
    return True


def serve_codex(
    handler: Any,
    base: RecordedRequest,
    next_turn: Callable[[RecordedRequest], Turn | None],
    render: Callable[[Turn, RecordedRequest], Iterator[bytes]],
) -> None:
    """Serve ``response.create`` frames until the client closes (``base`` holds the handshake)."""
    rfile, wfile = handler.rfile, handler.wfile
    while True:
        message = _read_message(rfile, wfile)
        if message is None:
            return
        data = json.loads(message)
        body = {k: v for k, v in data.items() if k != "type"} if isinstance(data, dict) else {}
        request = RecordedRequest(
            method="WEBSOCKET",
            path=base.path,
            query=base.query,
            headers=base.headers,
            body=body,
            api=base.api,
            client_port=base.client_port,
            raw_body=message.encode(),
        )
        if body.get("store") is not False:
            _send_event(
                wfile,
                {
                    "type": "error",
                    "error": {"code": "invalid_request", "message": "Store must be set to false"},
                },
            )
            continue
        turn = next_turn(request)
        if turn is None:
            _send_event(
                wfile,
                {
                    "type": "error",
                    "error": {"code": "server_error", "message": "fake server: no scripted turn left"},
                },
            )
            continue
        fault = turn.fault
        if fault is not None and fault.kind == "status":
            error = fault.body.get("error") if isinstance(fault.body, dict) else None
            _send_event(
                wfile,
                {
                    "type": "error",
                    "status": fault.status,
                    "error": error
                    or {"code": "server_error", "message": f"fake server error {fault.status}"},
                },
            )
            continue
        for index, frame in enumerate(render(turn, request)):
            if fault is not None and fault.kind == "cut" and index == fault.after_events:
                wfile.flush()
                handler.connection.shutdown(socket.SHUT_RDWR)
                return
            for line in frame.decode().splitlines():
                if line.startswith("data:"):
                    _write_frame(wfile, _TEXT, line[5:].strip().encode())
        wfile.flush()


def _send_event(wfile: BinaryIO, event: dict[str, Any]) -> None:
    _write_frame(wfile, _TEXT, json.dumps(event).encode())
    wfile.flush()


def _read_message(rfile: BinaryIO, wfile: BinaryIO) -> str | None:
    """The next text message (fragments joined); ``None`` once the client closes or hangs up."""
    parts: list[bytes] = []
    while True:
        head = rfile.read(2)
        if len(head) < 2:
            return None
        fin, opcode = head[0] & 0x80, head[0] & 0x0F
        length = head[1] & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", rfile.read(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", rfile.read(8))
        mask = rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(rfile.read(length)))
        if opcode == _CLOSE:
            _write_frame(wfile, _CLOSE, payload[:2])
            wfile.flush()
            return None
        if opcode == _PING:
            _write_frame(wfile, _PONG, payload)
            wfile.flush()
            continue
        if opcode == _PONG:
            continue
        parts.append(payload)
        if fin:
            return b"".join(parts).decode("utf-8")


def _write_frame(wfile: BinaryIO, opcode: int, payload: bytes) -> None:
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    wfile.write(head + payload)
