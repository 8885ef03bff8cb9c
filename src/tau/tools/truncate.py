"""The output budget: cut tool output to at most 2000 lines and 50 KB, whichever comes first.

Lines are ``text.split("\\n")`` (a trailing newline makes a final empty line that counts); sizes are
UTF-8 bytes. Head truncation keeps the beginning (file reads, search results), tail truncation keeps
the end (command output, where the error usually is). Both keep whole lines; only the tail cut may
keep part of a line, when the last line alone is over the byte limit.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from msgspec import Struct

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500
LINE_TRUNCATED_MARKER = "... [truncated]"

TruncatedBy: TypeAlias = Literal["lines", "bytes"]


class TruncationResult(Struct, frozen=True):
    """What a cut kept, and the totals it was cut from."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        """pi's ``details.truncation`` shape, without ``content``.

        pi stores the kept text a second time inside ``details``; the result content already holds it,
        so tau leaves it out and a truncated result costs the session file half as much.
        """
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """Size of ``text`` in UTF-8 bytes (O(1) for ASCII text)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB``."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _untouched(
    text: str, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int
) -> TruncationResult:
    return TruncationResult(
        content=text,
        truncated=False,
        truncated_by=None,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=total_lines,
        output_bytes=total_bytes,
        last_line_partial=False,
        first_line_exceeds_limit=False,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def _counted_lines(text: str) -> list[str]:
    """The lines of ``text`` as pi 1.6 counts them: none for empty text, and a final newline ends
    the last line rather than starting an empty one."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first whole lines that fit both limits."""
    total_bytes = utf8_len(text)
    lines = _counted_lines(text)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)

    first_bytes = utf8_len(lines[0])
    if first_bytes > max_bytes:
        return TruncationResult(
            content="",
            truncated=True,
            truncated_by="bytes",
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=0,
            output_bytes=0,
            last_line_partial=False,
            first_line_exceeds_limit=True,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )

    kept = 0
    used = 0
    truncated_by: TruncatedBy = "lines"
    for line in lines:
        if kept >= max_lines:
            break
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        used += cost
        kept += 1
    return TruncationResult(
        content="\n".join(lines[:kept]),
        truncated=True,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=kept,
        output_bytes=used,
        last_line_partial=False,
        first_line_exceeds_limit=False,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def tail_of_utf8(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` within ``max_bytes`` UTF-8 bytes, cut at a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the last whole lines that fit both limits (or the end of an oversized last line)."""
    total_bytes = utf8_len(text)
    lines = _counted_lines(text)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)

    kept = 0
    used = 0
    truncated_by: TruncatedBy = "lines"
    for line in reversed(lines):
        if kept >= max_lines:
            break
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if kept == 0:
                partial = tail_of_utf8(line, max_bytes)
                return TruncationResult(
                    content=partial,
                    truncated=True,
                    truncated_by="bytes",
                    total_lines=total_lines,
                    total_bytes=total_bytes,
                    output_lines=1,
                    output_bytes=utf8_len(partial),
                    last_line_partial=True,
                    first_line_exceeds_limit=False,
                    max_lines=max_lines,
                    max_bytes=max_bytes,
                )
            break
        used += cost
        kept += 1
    return TruncationResult(
        content="\n".join(lines[total_lines - kept :]),
        truncated=True,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=kept,
        output_bytes=used,
        last_line_partial=False,
        first_line_exceeds_limit=False,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters plus a marker; the flag says whether it was cut."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + LINE_TRUNCATED_MARKER, True
