"""Writing into the terminal's scrollback above the running prompt_toolkit application.

Text is queued and written in one go at most every ``FLUSH_INTERVAL`` (the live area is hidden,
the text is written, the live area is drawn again below it: a full repaint, sent as one
synchronized frame by ``frames.print_above``), so a fast stream costs a few such repaints a second,
not one per block. Until it is written, queued text is
shown at the top of the live area (``waiting_text``). Before the application runs, text goes
straight out.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TextIO

__all__ = ["Scrollback"]

FLUSH_INTERVAL = 0.1
CLEAR_ALL = "\x1b[H\x1b[2J\x1b[3J"
"""Home, clear the screen and the scrollback (xterm's ED 3), as a full redraw needs."""


class Scrollback:
    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self._pending: list[str] = []
        self._running = False
        self._wrote_any = False
        self._flush_task: asyncio.Task[None] | None = None
        self._print_above: Callable[[str], None] = self._write_now

    def attach(self, print_above: Callable[[str], None]) -> None:
        """The application is running: queue from now on, and print with ``print_above``."""
        self._print_above = print_above
        self._running = True

    def detach(self) -> None:
        self._running = False
        self._write_now("".join(self._pending))
        self._pending.clear()

    def write(self, text: str, new_block: bool = True) -> None:
        piece = ("\n" if new_block and self._wrote_any else "") + text + "\n"
        self._wrote_any = True
        if not self._running:
            self._write_now(piece)
            return
        self._pending.append(piece)
        self._schedule()

    def waiting_text(self) -> str:
        """What is queued for the scrollback (``""`` while a full redraw is queued)."""
        if not self._pending or self._pending[0].startswith(CLEAR_ALL):
            return ""
        return "".join(self._pending).strip("\n")

    def redraw(self, blocks: list[str]) -> None:
        """Clear the terminal and its scrollback, then print ``blocks`` afresh."""
        self._pending = [CLEAR_ALL + "\n\n".join(blocks) + ("\n" if blocks else "")]
        self._wrote_any = bool(blocks)
        if not self._running:
            self._write_now(self._pending.pop())
            return
        self._schedule()

    def _schedule(self) -> None:
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.get_running_loop().create_task(self._flush_soon())

    async def _flush_soon(self) -> None:
        await asyncio.sleep(FLUSH_INTERVAL)
        self._print_pending()

    def _print_pending(self) -> None:
        if self._pending and self._running:
            data = "".join(self._pending)
            self._pending.clear()
            self._print_above(data)

    async def flush(self) -> None:
        """Write what is queued now (before the application exits)."""
        if self._flush_task is not None and not self._flush_task.done():
            self._flush_task.cancel()
        self._print_pending()

    def _write_now(self, data: str) -> None:
        if data:
            self._out.write(data)
            self._out.flush()
