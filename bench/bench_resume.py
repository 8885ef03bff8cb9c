"""Resuming a huge session: open and project a generated ~200 MB session file, in a fresh process.

Reported (median wall seconds):

- ``SessionManager.open`` of the file, then ``build_session_context``, in a new interpreter (so the
  garbage collector starts as it does for ``tau``);
- the whole resume: ``tau --session FILE -p hi`` against a local server sending a fixed short reply
  without parsing the request, up to the reply
  (wall, and tau's CPU time: on a busy machine the wall time is mostly waiting for a core).

The file is generated in a temporary folder (tool calls with ~2 KB results, as in a long coding
session); it is not part of the repository.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import PYTHON, Figure, median, user_env
from bench_deltas import FIXED_REPLY_SERVER

TARGET_BYTES = 200_000_000
_START_MS = 1_767_225_600_000

_OPEN = r"""
import sys, time
from tau.session import SessionManager
started = time.perf_counter()
context = SessionManager.open(sys.argv[1]).build_session_context()
elapsed = time.perf_counter() - started
assert len(context.messages) > 1000
print(elapsed)
"""


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def write_huge_session(path: Path, cwd: str, target_bytes: int = TARGET_BYTES) -> int:
    """A version-3 session of about ``target_bytes``: user prompts, tool calls, results, answers."""
    rng = random.Random(7)
    bodies = ["".join(rng.choice("abcdefghij klmnop\n") for _ in range(2000)) for _ in range(64)]
    usage = {"input": 1400, "output": 75, "cacheRead": 980, "cacheWrite": 0, "totalTokens": 2455,
             "cost": {"input": 0.0042, "output": 0.0011, "cacheRead": 0.0003, "cacheWrite": 0, "total": 0.0056}}  # fmt: skip
    header = {"type": "session", "version": 3, "id": "0badc0de-0000-4000-8000-00000000beef",
              "timestamp": _iso(_START_MS), "cwd": cwd}  # fmt: skip
    written = 0
    count = 0
    parent: str | None = None
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        turn = 0
        while written < target_bytes:
            ms = _START_MS + count * 1500
            messages: list[dict[str, Any]]
            if turn % 20 == 0:
                messages = [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": f"Step {turn}: go on."}],
                        "timestamp": ms,
                    }
                ]
            else:
                call_id = f"toolu_{turn:08d}"
                call = {
                    "type": "toolCall",
                    "id": call_id,
                    "name": "read",
                    "arguments": {"path": f"src/m{turn}.py"},
                }
                messages = [
                    {"role": "assistant", "content": [{"type": "text", "text": "Reading the next file."}, call],
                     "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                     "usage": usage, "stopReason": "toolUse", "timestamp": ms},
                    {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                     "content": [{"type": "text", "text": bodies[turn % 64]}], "isError": False, "timestamp": ms + 20},
                ]  # fmt: skip
            for message in messages:
                entry_id = f"{count:08x}"
                line = json.dumps(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": _iso(ms),
                        "message": message,
                    },
                    separators=(",", ":"),
                )
                out.write(line + "\n")
                written += len(line) + 1
                parent = entry_id
                count += 1
            turn += 1
        # End on an answer, so the resumed prompt follows a finished turn.
        answer = {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "api": "anthropic-messages",
                  "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "stop",
                  "timestamp": _START_MS + count * 1500}  # fmt: skip
        out.write(json.dumps({"type": "message", "id": f"{count:08x}", "parentId": parent,
                              "timestamp": _iso(_START_MS), "message": answer}, separators=(",", ":")) + "\n")  # fmt: skip
    return count + 1


def _agent_dir(root: Path, port: str) -> Path:
    agent_dir = root / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"local": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "local-key",
        "compat": {"supportsDeveloperRole": False, "supportsStore": False},
        "models": [{"id": "fake-model", "contextWindow": 100_000_000, "maxTokens": 8192}],
    }}}  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps(models))
    return agent_dir


def _open_seconds(session: Path, env: dict[str, str]) -> float:
    out = subprocess.run(
        [PYTHON, "-c", _OPEN, str(session)], env=env, check=True, capture_output=True, text=True
    )
    return float(out.stdout)


def run(repeat: int) -> list[Figure]:
    env = user_env()
    runs = max(1, min(repeat, 3))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        work = root / "work"
        work.mkdir()
        session = root / "huge.jsonl"
        count = write_huge_session(session, str(work))
        size_mb = session.stat().st_size / 1_000_000
        original = session.read_bytes()

        opens = [_open_seconds(session, env) for _ in range(runs)]

        # A server that answers with a fixed reply and does not parse the request: the fake server's
        # own parse and hash of a 200 MB body took ~6 s, which is not tau's time.
        server = subprocess.Popen(
            [PYTHON, "-c", FIXED_REPLY_SERVER, "8", "16"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert server.stdout is not None and server.stdin is not None
        try:
            port = server.stdout.readline().strip()
            env["TAU_AGENT_DIR"] = str(_agent_dir(root, port))
            resumes: list[float] = []
            cpus: list[float] = []
            for _ in range(runs):
                before = os.times()
                started = time.perf_counter()
                argv = [PYTHON, "-m", "tau", "--provider", "local", "--model", "fake-model",
                        "--session", str(session), "-p", "hi"]  # fmt: skip
                result = subprocess.run(argv, env=env, cwd=work, capture_output=True)
                resumes.append(time.perf_counter() - started)
                after = os.times()
                cpus.append(
                    after.children_user
                    + after.children_system
                    - before.children_user
                    - before.children_system
                )
                if result.returncode != 0:
                    raise RuntimeError(f"tau resume failed: {result.stderr.decode()[-2000:]}")
                session.write_bytes(original)
        finally:
            server.stdin.close()
            server.wait(timeout=60)
    label = f"{size_mb:.0f} MB, {count} messages"
    return [
        Figure(f"resume: open + context, {label}", median(opens), "s"),
        Figure(f"resume: tau --session -p hi, {label}", median(resumes), "s", "<= 6 s, linear"),
        Figure("  its CPU (user + system)", median(cpus), "s"),
    ]


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
        print(figure)
