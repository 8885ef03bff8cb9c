"""ANSI text made fit for prompt_toolkit's ANSI reader, which knows colours (SGR) only: an OSC 8
link would show as text there, and an image sequence as its data."""

from __future__ import annotations

import re

__all__ = ["for_prompt_toolkit", "strip_images"]

_IMAGE = re.compile(r"\x1b_G[^\x1b]*\x1b\\|(?:\x1b\[\d+A)?\x1b\]1337;File=[^\x07]*\x07")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_images(text: str) -> str:
    """``text`` without its kitty and iTerm2 image sequences."""
    return _IMAGE.sub("", text)


def for_prompt_toolkit(text: str) -> str:
    """``text`` with image sequences left out (the rows kept for them stay) and OSC sequences (links)
    marked as zero-width escapes (``\\001 ... \\002``), which prompt_toolkit passes to the terminal."""
    if "\x1b_" in text or "1337;File=" in text:
        text = _IMAGE.sub("", text)
    if "\x1b]" in text:
        text = _OSC.sub(lambda match: f"\x01{match.group(0)}\x02", text)
    return text
