"""Stray output in fullscreen mode: what an extension or a library prints while the application
owns the alternate screen goes into the transcript, as lines of its own.

Printing above the application (what the inline mode does) would leave the alternate screen for
the main one and back, a flash and lost text. So, while the application runs, ``sys.stdout`` is
replaced by a stream into the transcript, and file descriptor 2 by a pipe read on the event loop:
``sys.stderr``, ``warnings`` and a child process that inherited tau's stderr land there too. On the
way out fd 2 is the terminal again before anything can fail, and what was still in the pipe is
kept (it is part of the transcript the exit output prints).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import io
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.modes.interactive.fullscreen import Transcript

__all__ = ["capture_stray_output", "terminal_owned"]

_READ_SIZE = 65536


class _Lines:
    """Text arriving in pieces, from any thread, written to the transcript a whole line at a time
    on the event loop; a stray print's lines make one block until something else is written."""

    def __init__(
        self, transcript: Transcript, changed: Callable[[], None], loop: asyncio.AbstractEventLoop
    ) -> None:
        self._transcript = transcript
        self._changed = changed
        self._loop = loop
        self._lock = threading.Lock()
        self._pending = ""
        self._scheduled = False
        self._written_version = -1
        """The transcript's version right after our last write: still equal, our block goes on."""

    def feed(self, text: str) -> None:
        with self._lock:
            self._pending += text
            if self._scheduled or "\n" not in text:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # the loop is closing: ``finish`` takes the rest
            self._loop.call_soon_threadsafe(self.drain)

    def drain(self, everything: bool = False) -> None:
        with self._lock:
            self._scheduled = False
            cut = len(self._pending) if everything else self._pending.rfind("\n") + 1
            text, self._pending = self._pending[:cut], self._pending[cut:]
        text = text.removesuffix("\n")
        if not text:
            return
        from tau.modes.interactive.render.format import terminal_safe

        text = terminal_safe(text.replace("\r\n", "\n")).expandtabs()
        new_block = self._transcript.version != self._written_version
        self._transcript.write(text, new_block)
        self._written_version = self._transcript.version
        self._changed()


class _Stream(io.TextIOBase):
    """``sys.stdout`` while the application runs."""

    def __init__(self, lines: _Lines, original: object) -> None:
        self._lines = lines
        self._original = original

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only in io's C base, as here
        return "utf-8"

    def write(self, text: str) -> int:
        self._lines.feed(text)
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        fileno = getattr(self._original, "fileno", None)
        if fileno is None:
            raise io.UnsupportedOperation("fileno")
        result: int = fileno()
        return result


_active: list[tuple[Callable[[], None], Callable[[], None]]] = []
"""The running capture's (give back, take again): a program that owns the terminal meanwhile."""


@contextlib.contextmanager
def capture_stray_output(transcript: Transcript, changed: Callable[[], None]) -> Iterator[None]:
    loop = asyncio.get_running_loop()
    lines = _Lines(transcript, changed, loop)
    original_stdout = sys.stdout
    stream = _Stream(lines, original_stdout)
    stderr = _StderrPipe.open(lines, loop)

    def give_back() -> None:
        sys.stdout = original_stdout
        if stderr is not None:
            stderr.give_back()

    def take() -> None:
        sys.stdout = stream
        if stderr is not None:
            stderr.take()

    take()
    _active.append((give_back, take))
    try:
        yield
    finally:
        _active.pop()
        give_back()
        if stderr is not None:
            stderr.close()
        lines.drain(everything=True)


@contextlib.contextmanager
def terminal_owned() -> Iterator[None]:
    """The real stdout and fd 2 for the block (an external editor draws on them), then captured again."""
    if not _active:
        yield
        return
    give_back, take = _active[-1]
    give_back()
    try:
        yield
    finally:
        take()


class _StderrPipe:
    """fd 2 pointed at a pipe read on the event loop (only while it is a terminal: elsewhere what
    it gets cannot disturb the screen, and it stays as it is)."""

    def __init__(self, lines: _Lines, loop: asyncio.AbstractEventLoop, saved: int) -> None:
        self._lines = lines
        self._loop = loop
        self._saved = saved
        self._read_end, self._write_end = os.pipe()
        os.set_blocking(self._read_end, False)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        loop.add_reader(self._read_end, self._read)

    @classmethod
    def open(cls, lines: _Lines, loop: asyncio.AbstractEventLoop) -> _StderrPipe | None:
        try:
            if not os.isatty(2):
                return None
            return cls(lines, loop, os.dup(2))
        except OSError:
            return None

    def take(self) -> None:
        _flush_stderr()
        os.dup2(self._write_end, 2)

    def give_back(self) -> None:
        _flush_stderr()  # a partial line still in Python's buffer goes into the pipe first
        os.dup2(self._saved, 2)

    def close(self) -> None:
        os.close(self._saved)
        os.close(self._write_end)
        self._loop.remove_reader(self._read_end)
        self._read()
        self._lines.feed(self._decoder.decode(b"", final=True))
        os.close(self._read_end)

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._read_end, _READ_SIZE)
            except (BlockingIOError, InterruptedError):
                return
            if not data:
                return
            self._lines.feed(self._decoder.decode(data))


def _flush_stderr() -> None:
    with contextlib.suppress(Exception):
        sys.stderr.flush()
