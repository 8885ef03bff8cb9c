"""asyncio streams over the process's stdin and the real stdout (the descriptor
``tau.modes.stdout_guard.StdoutGuard`` kept for the protocol before anything loaded, so
that nothing but the protocol reaches the editor)."""

from __future__ import annotations

import asyncio
import os
import threading

from tau.modes.acp.jsonrpc import Writer

__all__ = ["stdio_streams"]

_LIMIT = 50 * 1024 * 1024  # a prompt may embed large files or images on one line


class _WriteProtocol(asyncio.BaseProtocol):
    """Flow control for a pipe writer (what ``StreamWriter.drain`` waits on)."""

    def __init__(self) -> None:
        self._paused = False
        self._resumed: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.resume_writing()

    async def _drain_helper(self) -> None:
        if self._paused:
            self._resumed = asyncio.get_running_loop().create_future()
            await self._resumed


class _FileWriter:
    """Output to a regular file (``tau --mode acp > log``), which has no pipe transport: plain
    blocking writes, a broken one ends the output."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view and not self._closed:
                view = view[os.write(self._fd, view) :]
        except OSError:
            self._closed = True

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True


async def stdio_streams(out_fd: int) -> tuple[asyncio.StreamReader, Writer]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LIMIT)
    stdin = os.fdopen(0, "rb", buffering=0, closefd=False)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):  # a regular file or a terminal: read it in a thread

        def pump() -> None:
            while chunk := os.read(0, 1 << 16):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=pump, name="tau-acp-stdin", daemon=True).start()
    stdout = os.fdopen(out_fd, "wb", buffering=0, closefd=False)
    protocol = _WriteProtocol()
    try:
        transport, _ = await loop.connect_write_pipe(lambda: protocol, stdout)
    except (ValueError, OSError):  # a regular file
        return reader, _FileWriter(out_fd)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
