"""How far one mouse-wheel event scrolls the fullscreen transcript (``fullscreenWheelScrollLines``).

A number is that many lines an event. ``"auto"`` (pi 1.6's default) follows how fast the wheel
turns where the terminal sends one event a notch: a lone notch moves one line, notches arriving
quicker move more (100 ms apart one line, 50 ms two, 20 ms five), at most six. Events a few
milliseconds apart are one notch split up (or a high-resolution wheel) and move a line each. Local
macOS terminals already speed the wheel up and send an event a line, so there ``auto`` is one line.
"""

from __future__ import annotations

import os
import sys
from typing import Literal, TypeAlias

__all__ = ["WheelLines", "WheelSpeed", "terminal_speeds_up_wheel"]

WheelLines: TypeAlias = int | Literal["auto"]

_SAME_NOTCH_MS = 5.0
"""Events closer than this are pieces of one notch."""
_NEW_GESTURE_MS = 200.0
"""A pause longer than this (or a turn the other way) starts over at one line."""
_ONE_LINE_GAP_MS = 100.0
"""Notches this far apart move one line each; closer ones move proportionally more."""
_MOST_LINES = 6


def terminal_speeds_up_wheel() -> bool:
    """A local macOS terminal: the system has already sped the wheel up (over SSH it is unknown)."""
    remote = any(name in os.environ for name in ("SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"))
    return sys.platform == "darwin" and not remote


class WheelSpeed:
    """Lines for each wheel event, from the setting and the events' timing."""

    def __init__(self, setting: WheelLines, *, accelerate: bool | None = None) -> None:
        self.setting = setting
        self._accelerate = not terminal_speeds_up_wheel() if accelerate is None else accelerate
        self._last_at = float("-inf")
        self._last_direction = 0
        self._gap: float | None = None
        self._fraction = 0.0

    def lines(self, direction: int, now_ms: float) -> int:
        """How many lines an event turning ``direction`` (-1 up, 1 down) at ``now_ms`` scrolls."""
        if self.setting != "auto":
            return self.setting
        if not self._accelerate:
            return 1
        gap = now_ms - self._last_at
        continues = direction == self._last_direction and gap <= _NEW_GESTURE_MS
        self._last_at, self._last_direction = now_ms, direction
        if not continues:
            self._gap, self._fraction = None, 0.0
            return 1
        if gap < _SAME_NOTCH_MS:
            return 1
        self._gap = gap if self._gap is None else (self._gap + gap) / 2
        exact = min(_MOST_LINES, max(1.0, _ONE_LINE_GAP_MS / self._gap)) + self._fraction
        whole = int(exact)
        self._fraction = exact - whole
        return whole
