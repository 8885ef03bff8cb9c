"""What a run shows while it goes: one live line on a terminal, one plain line per task otherwise."""

from __future__ import annotations

import time
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    def __init__(self, stream: TextIO, total: int) -> None:
        self._stream = stream
        self._live = stream.isatty()
        self._total = total
        self._done = 0
        self._counts: dict[str, int] = {}
        self._cost = 0.0
        self._started = time.monotonic()

    def add(self, result: dict[str, Any]) -> None:
        self._done += 1
        status = str(result.get("status"))
        self._counts[status] = self._counts.get(status, 0) + 1
        self._cost += float(result.get("cost") or 0.0)
        if self._live:
            self._stream.write("\r\x1b[2K" + self._line())
        else:
            extra = f" ({result['error']})" if result.get("error") else ""
            if result.get("outputLimitReached") and not result.get("error"):
                extra = " (the last reply stopped at the output-token limit)"
            self._stream.write(
                f"[{self._done}/{self._total}] {result['id']}: {status} in {float(result.get('wallSeconds') or 0):.1f} s{extra}\n"
            )
        self._stream.flush()

    def finish(self) -> None:
        if self._live and self._done:
            self._stream.write("\n")
            self._stream.flush()

    def _line(self) -> str:
        elapsed = time.monotonic() - self._started
        left = self._total - self._done
        eta = elapsed / self._done * left if self._done else 0.0
        minutes, seconds = divmod(int(eta), 60)
        return (
            f"{self._done}/{self._total} done · {self._counts.get('passed', 0)} passed · "
            f"{self._counts.get('failed', 0)} failed · {sum(self._counts.values()) - self._counts.get('passed', 0) - self._counts.get('failed', 0)} other · "
            f"${self._cost:.4f} · ETA {minutes}:{seconds:02d}"
        )
