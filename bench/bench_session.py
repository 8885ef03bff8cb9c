"""Session store: open a 1 MB, 914-message session and project its context; list 200 session files.

Reported: median wall milliseconds of ``SessionManager.open`` + ``build_session_context`` on a
generated pi-format file, and of ``list_sessions`` over a folder of 200 generated sessions.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import Figure, median
from tau.session import SessionManager, list_sessions

MESSAGES = 914
LISTED_FILES = 200
LISTED_MESSAGES = 40
_START_MS = 1_767_225_600_000


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _usage() -> dict[str, Any]:
    cost = {"input": 0.0042, "output": 0.0011, "cacheRead": 0.0003, "cacheWrite": 0, "total": 0.0056}
    return {"input": 1400, "output": 75, "cacheRead": 980, "cacheWrite": 0, "totalTokens": 2455, "cost": cost}


def _messages(count: int, rng: random.Random, output_chars: int) -> list[dict[str, Any]]:
    """A coding conversation: a user prompt every few turns, tool calls with their results, answers."""
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        ms = _START_MS + len(out) * 1500
        if turn % 6 == 0:
            out.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": f"Step {turn}: fix the failing test in module {turn % 17}."}
                    ],
                    "timestamp": ms,
                }
            )
        elif turn % 6 == 5:
            out.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Done. " + "The change is in place. " * 8}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": _usage(),
                    "stopReason": "stop",
                    "timestamp": ms,
                }
            )
        else:
            call_id = f"toolu_{turn:06d}"
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": call_id,
                            "name": "read",
                            "arguments": {"path": f"src/mod_{turn % 17}.py"},
                        }
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": _usage(),
                    "stopReason": "toolUse",
                    "timestamp": ms,
                }
            )
            body = "".join(rng.choice("abcdefghij klmnop\n") for _ in range(output_chars))
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "content": [{"type": "text", "text": body}],
                    "isError": False,
                    "timestamp": ms + 20,
                }
            )
        turn += 1
    return out[:count]


def write_session(path: Path, count: int, output_chars: int, seed: int) -> None:
    rng = random.Random(seed)
    header = {
        "type": "session",
        "version": 3,
        "id": f"bench-{seed:08d}",
        "timestamp": _iso(_START_MS),
        "cwd": "/bench/project",
    }
    lines = [json.dumps(header, separators=(",", ":"))]
    parent = None
    for n, message in enumerate(_messages(count, rng, output_chars)):
        entry_id = f"{seed % 0xFFFF:04x}{n:04x}"
        entry = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": _iso(message["timestamp"]),
            "message": message,
        }
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        parent = entry_id
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _time_ms(action: Any, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return median(samples)


def run(repeat: int) -> list[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "big.jsonl"
        write_session(big, MESSAGES, output_chars=1650, seed=1)
        size_mb = big.stat().st_size / 1_000_000

        def open_and_project() -> None:
            context = SessionManager.open(str(big)).build_session_context()
            assert len(context.messages) == MESSAGES

        open_and_project()  # warm up
        open_ms = _time_ms(open_and_project, max(repeat, 10))

        listed = Path(folder) / "listed"
        listed.mkdir()
        for n in range(LISTED_FILES):
            write_session(listed / f"s{n:03d}.jsonl", LISTED_MESSAGES, output_chars=1200, seed=100 + n)
        listed_mb = sum(p.stat().st_size for p in listed.iterdir()) / 1_000_000

        def list_all() -> None:
            assert len(list_sessions(str(listed))) == LISTED_FILES

        list_all()
        list_ms = _time_ms(list_all, max(repeat, 5))
    return [
        Figure(
            f"session: open + context, {MESSAGES} messages, {size_mb:.1f} MB",
            open_ms,
            "ms",
            "well under 100 ms",
        ),
        Figure(f"session: list {LISTED_FILES} files ({listed_mb:.1f} MB)", list_ms, "ms"),
    ]
