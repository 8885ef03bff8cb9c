"""Command output as it streams in: exact counters, a bounded tail in memory, the rest on disk.

Memory stays bounded however much a command prints: only the last ``4 × max_bytes`` characters of
decoded text are kept (a deque of chunks, so appending costs the chunk, not the tail). Once the
output outgrows the budget, every raw byte also goes to a spill file, written in large blocks.
Snapshots (what the model sees) are the tail, sanitised for the terminal and tail-truncated, with
line and byte totals from the counters rather than from the tail.

Unlike pi, which passes terminal escape codes to the model, the snapshot is cleaned of ANSI codes,
control characters and carriage-return redraws (as seed article §4.2 describes); the spill file
keeps the raw bytes.
"""

from __future__ import annotations

import codecs
import os
from collections import deque
from typing import BinaryIO

import msgspec
from msgspec import Struct

from tau.tools.output_spill import SpillDirectory
from tau.tools.terminal_text import sanitize_terminal_output
from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    truncate_tail,
    utf8_len,
)

# Headroom over the byte budget: a character is at least one byte, and escape codes removed by the
# sanitiser may make up part of the kept text.
_TAIL_FACTOR = 4


class OutputSnapshot(Struct, frozen=True):
    """The model's view of the output so far."""

    text: str
    truncation: TruncationResult
    full_output_path: str | None
    """The spill file, set only when the text is cut and the whole output is on disk."""


class OutputAccumulator:
    """Feed raw chunks with :meth:`feed`; call :meth:`finish` once; read :meth:`snapshot` any time."""

    def __init__(
        self,
        spill: SpillDirectory,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        sanitize: bool = True,
        spill_stem: str = "bash",
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._sanitize = sanitize
        self._spill = spill
        self._spill_stem = spill_stem
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.raw_bytes = 0
        self.text_bytes = 0
        self.lines = 1
        self.last_line_bytes = 0
        self._tail: deque[str] = deque()
        self._tail_chars = 0
        self._tail_cap = _TAIL_FACTOR * max_bytes
        self._tail_dropped = False
        self._unspilled: list[bytes] | None = []
        self._spill_file: BinaryIO | None = None
        self.spill_path: str | None = None
        self._kept = b""

    def feed(self, data: bytes) -> None:
        """Count, keep the tail of, and (once over budget) spill one raw chunk."""
        if not data:
            return
        self.raw_bytes += len(data)
        if self._spill_file is not None:
            self._spill_file.write(data)
        else:
            assert self._unspilled is not None
            self._unspilled.append(data)
        self._add_text(self._decoder.decode(data))
        if self._spill_file is None and self._over_budget():
            self._start_spill()

    def finish(self) -> None:
        """Flush the decoder and the spill file; further ``feed`` calls are a mistake."""
        self._add_text(self._decoder.decode(b"", final=True))
        if self._spill_file is None and self._over_budget():
            self._start_spill()
        self.close()

    def close(self) -> None:
        """Close the spill file (kept on disk until its folder is closed)."""
        if self._spill_file is not None:
            self._spill_file.close()
            self._spill_file = None
        if self._unspilled is not None:
            self._kept = b"".join(self._unspilled)  # within the budget: small
        self._unspilled = None

    def full_output(self, max_bytes: int) -> tuple[str, bool]:
        """The whole output as it came (not cleaned of escape codes), after ``finish``: ``(text,
        False)``, or, past ``max_bytes``, its first and last halves around a note of what was left
        out and ``True``."""
        if self.spill_path is None:
            return self._kept.decode("utf-8", "replace"), False
        with open(self.spill_path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size <= max_bytes:
                return file.read().decode("utf-8", "replace"), False
            head_bytes = max_bytes // 2
            tail_bytes = max_bytes - head_bytes
            head = file.read(head_bytes)
            file.seek(size - tail_bytes)
            tail = file.read(tail_bytes)
        # Whole characters only: an incomplete sequence ends the head, continuation bytes start the tail.
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(head)
        start = 0
        while start < len(tail) and tail[start] & 0xC0 == 0x80:
            start += 1
        omitted = size - head_bytes - tail_bytes
        return (
            f"{head_text}\n\n[... {omitted} bytes omitted ...]\n\n{tail[start:].decode('utf-8', 'replace')}",
            True,
        )

    def _over_budget(self) -> bool:
        budget = self.max_bytes
        return self.raw_bytes > budget or self.text_bytes > budget or self.counted_lines > self.max_lines

    @property
    def counted_lines(self) -> int:
        """The lines so far as pi 1.6 counts them: a final newline ends a line, it starts none."""
        return self.lines - 1 + (1 if self.last_line_bytes else 0)

    def _start_spill(self) -> None:
        self.spill_path, self._spill_file = self._spill.open_file(self._spill_stem)
        for chunk in self._unspilled or ():
            self._spill_file.write(chunk)
        self._unspilled = None

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self.text_bytes += size
        newlines = text.count("\n")
        if newlines:
            self.lines += newlines
            self.last_line_bytes = utf8_len(text[text.rindex("\n") + 1 :])
        else:
            self.last_line_bytes += size
        self._tail.append(text)
        self._tail_chars += len(text)
        cap = self._tail_cap
        while self._tail_chars - len(self._tail[0]) >= cap:
            self._tail_chars -= len(self._tail.popleft())
            self._tail_dropped = True
        if self._tail_chars > 2 * cap:
            first = self._tail[0]
            cut = self._tail_chars - cap
            self._tail[0] = first[cut:]
            self._tail_chars -= cut
            self._tail_dropped = True

    def snapshot(self) -> OutputSnapshot:
        """The tail-truncated view of everything fed so far."""
        tail = "".join(self._tail)
        if len(self._tail) > 1:
            self._tail.clear()
            self._tail.append(tail)
        if self._tail_dropped:
            # The tail starts somewhere inside a line: show whole lines only, unless there is just one.
            newline = tail.find("\n")
            if newline >= 0:
                tail = tail[newline + 1 :]
        if self._sanitize:
            tail = sanitize_terminal_output(tail)
        cut = truncate_tail(tail, self.max_lines, self.max_bytes)
        truncated = cut.truncated or self._tail_dropped
        truncated_by = cut.truncated_by or ("bytes" if truncated else None)
        truncation = msgspec.structs.replace(
            cut,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.counted_lines,
            total_bytes=self.text_bytes,
        )
        return OutputSnapshot(
            text=cut.content,
            truncation=truncation,
            full_output_path=self.spill_path if truncated else None,
        )
