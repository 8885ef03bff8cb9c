"""The terminal's own progress indicator (OSC 9;4, the tab or title bar of terminals that show one)
while the agent runs or compacts, with ``terminal.showTerminalProgress`` on (off by default, as pi).

Busy is "indeterminate" progress (``ESC ] 9;4;3 BEL``), sent again every second as some terminals
drop an indicator that is not renewed; done clears it (``ESC ] 9;4;0 BEL``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["TerminalProgress"]

BUSY = "\x1b]9;4;3\x07"
CLEAR = "\x1b]9;4;0\x07"
_RENEW_SECONDS = 1.0


class TerminalProgress:
    def __init__(self, write: Callable[[str], None], enabled: Callable[[], bool]) -> None:
        self._write = write
        self._enabled = enabled
        self._renewal: asyncio.TimerHandle | None = None

    @property
    def shown(self) -> bool:
        return self._renewal is not None

    def busy(self) -> None:
        if not self._enabled():
            return
        self._write(BUSY)
        if self._renewal is None:
            self._schedule()

    def done(self) -> None:
        """Clear the indicator (also when the setting was switched off while it showed)."""
        if self._renewal is None and not self._enabled():
            return
        if self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None
        self._write(CLEAR)

    def _schedule(self) -> None:
        self._renewal = asyncio.get_running_loop().call_later(_RENEW_SECONDS, self._renew)

    def _renew(self) -> None:
        if not self._enabled():
            self.done()
            return
        self._write(BUSY)
        self._schedule()
