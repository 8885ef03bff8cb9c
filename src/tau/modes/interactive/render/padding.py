"""The ``outputPad`` setting (pi 1.6): how many blank cells (0 or 1) set the conversation's text off
from the terminal's edges. Boxed blocks take it as their side padding; plain lines (replies,
thinking, notices) are drawn that much narrower and shifted right by it."""

from __future__ import annotations

from typing import Any

__all__ = ["output_pad", "pad_lines"]


def output_pad(setting: Any) -> int:
    """The setting's value as pi reads it: 0 only when it is 0, else the default 1."""
    return 0 if setting == 0 and not isinstance(setting, bool) else 1


def pad_lines(text: str, pad: int) -> str:
    """``text`` with ``pad`` spaces before every line (none after: copied text keeps no trailing blanks)."""
    if not pad or not text:
        return text
    prefix = " " * pad
    return "\n".join(prefix + line for line in text.split("\n"))
