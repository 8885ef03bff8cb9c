"""Small text helpers for the page: numbers, times and one-line previews of untrusted values.

Session files are read leniently, so a field may hold any JSON value; these helpers never raise.
"""

from __future__ import annotations

import json
from typing import Any

from tau.session.ids import iso_from_ms, ms_from_iso

PREVIEW_CHARS = 120


def as_text(value: Any) -> str:
    """A string field as a string; other JSON values as their JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def as_number(value: Any) -> float:
    """A numeric field as a number; anything else counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return value


def tokens(count: Any) -> str:
    """``999``, ``1.5k``, ``42k``, ``1.2M``: the footer's style."""
    n = as_number(count)
    if n < 1000:
        return f"{n:.0f}"
    if n < 10_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n / 1000:.0f}k"
    if n < 10_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1_000_000:.0f}M"


def cost(dollars: Any) -> str:
    value = as_number(dollars)
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def clock_time(iso: str) -> str:
    """``HH:MM:SS`` (UTC) of an entry timestamp, or the raw text if it is not one."""
    ms = ms_from_iso(iso)
    return iso_from_ms(ms)[11:19] if ms is not None else iso


def date_time(iso: str) -> str:
    """``2025-12-09 00:53 UTC`` of a header timestamp, or the raw text if it is not one."""
    ms = ms_from_iso(iso)
    if ms is None:
        return iso
    text = iso_from_ms(ms)
    return f"{text[:10]} {text[11:16]} UTC"


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of ``text`` on one line, whitespace collapsed."""
    # Only the head is looked at: the text may be megabytes long.
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
