"""Select a window of lines from text that arrives in chunks, in memory bounded by the output budget.

The read tool shows at most 2000 lines / 50 KB of a file, yet names the file's line count and the
window's size. :class:`LineWindow` keeps only the lines :func:`truncate_head` can show (and two past
its caps, so it decides the cut as it would on the whole window); the rest is counted, not stored.
A file of any size is then read once with constant memory.

Lines and sizes mean what they mean for the whole text: ``text.split("\\n")`` and UTF-8 bytes of the
window's lines joined by ``"\\n"``.
"""

from __future__ import annotations

import codecs

import msgspec
from msgspec import Struct

from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_head, utf8_len


class SelectedLines(Struct, frozen=True):
    """What the window holds: ``cut`` is the head truncation of the window (its totals counted)."""

    total_lines: int
    cut: TruncationResult
    first_line_bytes: int


class LineWindow:
    """Feed bytes in order, then ``finish()``: lines ``start`` (0-based) up to ``end`` (excluded; ``None``
    for the end of the text)."""

    def __init__(self, start: int, end: int | None) -> None:
        self._start = start
        self._end = end
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._line = 0  # the line the text is in
        self._storing = True
        self._stored: list[str] = []
        self._stored_bytes = 0
        self._pieces: list[str] = []
        self._line_bytes = 0
        self._window_bytes = 0
        self._first_line_bytes = 0
        self._last_line_has_text = False  # whether the text after the last newline so far is not empty

    def feed(self, data: bytes) -> None:
        self._feed_text(self._decoder.decode(data))

    def finish(self) -> SelectedLines:
        self._feed_text(self._decoder.decode(b"", final=True))
        total = self._line + 1
        if self._storing and self._in_window():
            self._finish_line()
        end = total if self._end is None else min(self._end, total)
        cut = truncate_head("\n".join(self._stored))
        cut = msgspec.structs.replace(
            cut,
            total_lines=self._counted_lines(end - self._start, end == total),
            total_bytes=self._window_bytes,
        )
        return SelectedLines(total, cut, self._first_line_bytes)

    def _counted_lines(self, selected: int, to_the_end: bool) -> int:
        """The window's lines as pi 1.6 counts the joined text: none when it is empty, and a last
        line that is empty (the file's final newline) not counted."""
        if self._window_bytes == 0:
            return 0
        if len(self._stored) == selected:
            last_empty = self._stored[-1] == ""
        else:  # not all stored: known for the file's last line, else taken as not empty
            last_empty = to_the_end and not self._last_line_has_text
        return selected - (1 if last_empty else 0)

    def _in_window(self) -> bool:
        return self._start <= self._line and (self._end is None or self._line < self._end)

    def _feed_text(self, text: str) -> None:
        if text:
            newline = text.rfind("\n")
            self._last_line_has_text = newline < len(text) - 1 if newline >= 0 else True
        position = 0
        length = len(text)
        while position < length:
            if self._line < self._start:
                position = self._skip_lines(text, position, self._start - self._line, count_bytes=False)
            elif not self._in_window():
                self._line += text.count("\n", position)
                return
            elif self._storing:
                position = self._store_line_piece(text, position)
            elif self._end is None:
                self._window_bytes += utf8_len(text[position:])
                self._line += text.count("\n", position)
                return
            else:
                position = self._skip_lines(text, position, self._end - self._line, count_bytes=True)

    def _skip_lines(self, text: str, position: int, lines: int, *, count_bytes: bool) -> int:
        """Pass over up to ``lines`` newlines; returns where the text goes on (``len(text)`` if all used)."""
        if text.count("\n", position) < lines:
            if count_bytes:
                self._window_bytes += utf8_len(text[position:])
            self._line += text.count("\n", position)
            return len(text)
        newline = position - 1
        for _ in range(lines):
            newline = text.index("\n", newline + 1)
        if count_bytes:
            # The newline that ends the window's last line is not part of the window.
            self._window_bytes += utf8_len(text[position:newline])
        self._line += lines
        return newline + 1

    def _store_line_piece(self, text: str, position: int) -> int:
        newline = text.find("\n", position)
        stop = len(text) if newline == -1 else newline
        piece = text[position:stop]
        piece_bytes = utf8_len(piece)
        # A line over the byte cap is never shown whole: store enough of it to know that, not all of it.
        if self._line_bytes <= DEFAULT_MAX_BYTES:
            self._pieces.append(piece)
        self._line_bytes += piece_bytes
        self._window_bytes += piece_bytes
        if newline == -1:
            return len(text)
        self._finish_line()
        self._line += 1
        if self._in_window():
            self._window_bytes += 1  # the separator before the next window line
        return newline + 1

    def _finish_line(self) -> None:
        if not self._stored and self._line == self._start:
            self._first_line_bytes = self._line_bytes
        line = "".join(self._pieces)
        # Stored until one line past the first line past either cap: truncate_head does not count
        # a last empty line, so it needs the line after that one to cut as it would the whole window.
        past_caps = len(self._stored) > DEFAULT_MAX_LINES or self._stored_bytes > DEFAULT_MAX_BYTES
        self._stored_bytes += utf8_len(line) + (1 if self._stored else 0)
        self._stored.append(line)
        self._pieces = []
        self._line_bytes = 0
        if past_caps:
            self._storing = False
