"""End-to-end figures of the `tau` command against a local fake server.

- `tau --version` wall time and peak RSS;
- `tau -p` with one text reply from a local server (openai-completions), wall time and peak RSS;
- harness time per extra tool turn (bash `echo`) in a `tau -p` run of 20 tool turns;
- resuming a ~1 MB, 914-message session with `-c` and sending one prompt;
- bytes of `--mode json` output for a 20 KB reply.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _common import Figure, median, time_command, user_env
from _local_tau import MODEL, TAU, local_tau, run_tau


def run(repeat: int) -> list[Figure]:
    env = user_env()
    figures: list[Figure] = []
    with local_tau(env) as work:
        root = work.parent
        version_s, version_rss = time_command([*TAU, "--version"], max(repeat, 5), env=env)
        figures.append(Figure("tau --version", version_s, "s", "<= 0.15 s (pi 0.93 s)"))
        figures.append(Figure("tau --version peak RSS", version_rss, "MiB", "<= 40 MiB (pi 136 MiB)"))

        launcher_env = dict(env)
        reply_s, reply_rss = time_command(TAU + MODEL + ["--no-session", "-p", "hi"], repeat, env=env)
        figures.append(
            Figure("tau -p, one text reply from a local server", reply_s, "s", "<= 0.40 s (pi 1.52 s)")
        )
        figures.append(Figure("tau -p peak RSS", reply_rss, "MiB", "<= 60 MiB (pi 172 MiB)"))

        one: list[float] = []
        twenty: list[float] = []
        for _ in range(repeat):
            one.append(run_tau([*MODEL, "--no-session", "-p", "hi"], launcher_env, work)[0])
            twenty.append(run_tau([*MODEL, "--no-session", "-p", "TOOLS please"], launcher_env, work)[0])
        per_turn = (median(twenty) - median(one)) / 20
        figures.append(
            Figure(
                "harness time per extra tool turn (bash echo)",
                per_turn * 1000,
                "ms",
                "<= 10 ms (pi 29-44 ms)",
            )
        )

        _, result = run_tau(
            [*MODEL, "--no-session", "--mode", "json", "-p", "BIG reply please"], launcher_env, work
        )
        figures.append(
            Figure(
                "--mode json output for a 20 KB reply",
                len(result.stdout) / 1024,
                "KB",
                "linear; pi 1.6's line per delta with usage (spec: <= 200 KB merged; pi 0.73 26 MB)",
            )
        )

        session_dir = root / "sessions"
        _make_large_session(session_dir, work)
        resume: list[float] = []
        for _ in range(repeat):
            resume.append(
                run_tau([*MODEL, "--session-dir", str(session_dir), "-c", "-p", "hi"], launcher_env, work)[0]
            )
            _truncate_to_original(session_dir)
        figures.append(
            Figure(
                "resume a 1 MB, 914-message session + one prompt",
                median(resume),
                "s",
                "<= 0.40 s (pi 1.47 s)",
            )
        )
    return figures


_ORIGINAL_SIZE: dict[Path, int] = {}


def _make_large_session(session_dir: Path, cwd: Path) -> None:
    """A version-3 session of 914 messages (~1 MB): user, assistant with a tool call, tool result."""
    session_dir.mkdir(parents=True, exist_ok=True)
    path = session_dir / "2026-01-01T00-00-00-000Z_0badc0de-0000-4000-8000-000000000000.jsonl"
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "0badc0de-0000-4000-8000-000000000000",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": str(cwd),
        }
    ]
    parent = None
    usage = {
        "input": 100,
        "output": 20,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 120,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    for i in range(913):
        kind = i % 3
        if kind == 0:
            message = {
                "role": "user",
                "content": [{"type": "text", "text": f"step {i}: " + "please continue " * 20}],
                "timestamp": 1767225600000 + i,
            }
        elif kind == 1:
            message = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking. " * 30},
                    {
                        "type": "toolCall",
                        "id": f"call_{i}",
                        "name": "bash",
                        "arguments": {"command": "ls -la"},
                    },
                ],
                "api": "openai-completions",
                "provider": "local",
                "model": "fake-model",
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": 1767225600000 + i,
            }
        else:
            message = {
                "role": "toolResult",
                "toolCallId": f"call_{i - 1}",
                "toolName": "bash",
                "content": [{"type": "text", "text": "file.txt\n" * 80}],
                "isError": False,
                "timestamp": 1767225600000 + i,
            }
        entry_id = f"{i:08x}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": message,
            }
        )
        parent = entry_id
    # End on an assistant reply so the next prompt is a plain continuation.
    final = {
        "role": "assistant",
        "content": [{"type": "text", "text": "All steps done."}],
        "api": "openai-completions",
        "provider": "local",
        "model": "fake-model",
        "usage": usage,
        "stopReason": "stop",
        "timestamp": 1767225700000,
    }
    lines.append(
        {
            "type": "message",
            "id": "ffffffff",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": final,
        }
    )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    _ORIGINAL_SIZE[path] = path.stat().st_size


def _truncate_to_original(session_dir: Path) -> None:
    for path, size in _ORIGINAL_SIZE.items():
        with open(path, "r+b") as handle:
            handle.truncate(size)
    for extra in session_dir.glob("*.jsonl"):
        if extra not in _ORIGINAL_SIZE:
            extra.unlink()


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
