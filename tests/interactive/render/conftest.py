"""Helpers for the rendering tests: what a terminal would show for some ANSI text."""

from __future__ import annotations

import re
from collections.abc import Callable

import pyte
import pytest

_SGR = re.compile(r"\x1b\[[0-9;]*m")


def visible(ansi: str) -> str:
    """``ansi`` without its colour codes."""
    return _SGR.sub("", ansi)


@pytest.fixture
def plain() -> Callable[[str], str]:
    """``plain(ansi)``: the text without colour codes."""
    return visible


@pytest.fixture
def terminal() -> Callable[[str, int], pyte.Screen]:
    """``terminal(ansi, width)``: a terminal emulator screen after printing ``ansi`` on it."""

    def show(ansi: str, width: int) -> pyte.Screen:
        screen = pyte.Screen(width, 200)
        screen.title = "untouched"
        pyte.Stream(screen).feed(ansi.replace("\n", "\r\n"))
        return screen

    return show
