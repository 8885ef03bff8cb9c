"""``DIR/results.jsonl`` (one line per finished task, flushed), the session copies, the summary."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tau._contained import contained_path

__all__ = ["ResultLog", "read_results", "summarize"]

STATUSES = ("passed", "failed", "error", "timeout", "budget")


def read_results(out: Path) -> Iterator[dict[str, Any]]:
    """The result lines of ``out``; a line cut off by a killed run is skipped (its task runs again)."""
    path = out / "results.jsonl"
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as lines:
        for text in lines:
            try:
                item = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                yield item


class ResultLog:
    """Appends result lines to ``DIR/results.jsonl`` and session files to ``DIR/sessions/``."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.sessions = out / "sessions"
        self.sessions.mkdir(parents=True, exist_ok=True)
        path = out / "results.jsonl"
        self._file: IO[str] = path.open("a", encoding="utf-8", errors="backslashreplace")  # \udXXX: JSON
        if path.stat().st_size and not _ends_with_newline(path):
            self._file.write("\n")  # the cut-off line of a killed run stays alone on its line

    def write(self, result: dict[str, Any]) -> dict[str, Any]:
        """Store one finished task (the session first, so a result line always has its file)."""
        session = result.pop("session", None)
        if isinstance(session, str):
            target = Path(contained_path(self.sessions, f"{result['id']}.jsonl"))
            partial = target.with_suffix(".jsonl.part")
            partial.write_text(session, encoding="utf-8")
            os.replace(partial, target)
            result["sessionFile"] = f"sessions/{target.name}"
        else:
            result["sessionFile"] = None
        self._file.write(json.dumps(result, ensure_ascii=False) + "\n")
        self._file.flush()
        return result

    def close(self) -> None:
        self._file.close()


def summarize(results: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """Totals, pass rate, cost, tokens and wall-time percentiles of the result lines."""
    counts = dict.fromkeys(STATUSES, 0)
    walls: list[float] = []
    cost = 0.0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    turns = 0
    at_limit = 0
    for result in results:
        status = result.get("status")
        if status in counts:
            counts[status] += 1
        at_limit += bool(result.get("outputLimitReached"))
        walls.append(float(result.get("wallSeconds") or 0.0))
        cost += float(result.get("cost") or 0.0)
        turns += int(result.get("turns") or 0)
        for key in tokens:
            tokens[key] += int((result.get("tokens") or {}).get(key) or 0)
    total = sum(counts.values())
    walls.sort()
    return {
        "tasks": total,
        **counts,
        "passRate": round(counts["passed"] / total, 4) if total else 0.0,
        "outputLimitReached": at_limit,
        "cost": round(cost, 6),
        "turns": turns,
        "tokens": tokens,
        "wallSeconds": {
            "p50": _percentile(walls, 0.5),
            "p95": _percentile(walls, 0.95),
            "total": round(sum(walls), 3),
        },
    }


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    return round(values[min(len(values) - 1, max(0, math.ceil(fraction * len(values)) - 1))], 3)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"
