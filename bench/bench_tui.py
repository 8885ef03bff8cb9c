"""Figures of the interactive TUI, driven in a real pseudo-terminal (100x40) against a local server.

- start to a ready prompt: from spawning `tau` until the footer (model name) is drawn;
- streaming a 50 KB markdown reply at 2 000 deltas/s (25-character deltas, paced by the server),
  and 20 KB in 4-character deltas (what models send) at the same rate: how late the last line
  shows after the server sent it, and the CPU tau used (user + system) per second of streaming;
- 10 KB of markdown in 4-character deltas at 1 ms (issue #18: at most 40 % of a core);
- a 2 MB reply that is one paragraph, in 64-character deltas as fast as the server sends them:
  the time until its last word shows (issue #18: at most 15 s; it was 90 s when the open
  paragraph was rendered whole on every frame);
- the last two again in the fullscreen TUI (``--tui-mode fullscreen``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pexpect

from _common import PYTHON, Figure, median, user_env

SERVER = r"""
import sys
from tau.testing.fake_llm import FakeLLMServer, Turn

PARAGRAPH = "Streaming **markdown** with `inline code`, a [link](https://example.com) and plain words. " * 3
CODE = "```python\n" + "".join(f"def handler_{i}(event):\n    return process(event, level={i})\n" for i in range(15)) + "```\n"
parts, size = [], 0
while size < 50_000:
    piece = f"## Section {len(parts)}\n\n{PARAGRAPH}\n\n- first point\n- second point\n\n{CODE}\n"
    parts.append(piece)
    size += len(piece)
TEXT = "".join(parts) + "THE-END\n"
SMALL = TEXT[: TEXT.index("## Section", 20_000)] + "THE-END\n"
TEN = TEXT[: TEXT.index("## Section", 10_000)] + "THE-END\n"
WORDS = ("streaming **bold** words and `code` in one very long paragraph of plain prose " * 30_000)
HUGE = WORDS[: 2_000_000] + " THE-END"

def reply(request):
    if "HUGEPARAGRAPH" in str(request.body):
        return Turn(text=HUGE, chunk_size=64)
    if "TENKB" in str(request.body):
        return Turn(text=TEN, chunk_size=4, frames_per_second=1000)
    if "SMALLDELTAS" in str(request.body):
        return Turn(text=SMALL, chunk_size=4, frames_per_second=2000)
    if "STREAM" in str(request.body):
        return Turn(text=TEXT, chunk_size=25, frames_per_second=2000)
    return Turn(text="ok")

server = FakeLLMServer(port=0)
server.add(*[reply] * 1000)
server.start()
print(server.port, len(TEXT), len(SMALL), len(TEN), flush=True)
sys.stdin.read()
server.stop()
"""

_CPR = re.compile(rb"\x1b\[6n")
_DA = re.compile(rb"\x1b\[c")


class _Pty:
    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=str(cwd), dimensions=(40, 100))
        self.output = bytearray()

    def read_until(self, marker: bytes, timeout: float = 60.0) -> float:
        """Read (answering cursor position and device attribute requests) until ``marker`` appears;
        returns the time."""
        deadline = time.monotonic() + timeout
        start = max(0, len(self.output) - len(marker))
        while self.output.find(marker, start) < 0:
            start = max(start, len(self.output) - len(marker))  # search only what is new
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {marker!r} after {timeout}s: {bytes(self.output[-500:])!r}")
            try:
                data = self.child.read_nonblocking(65536, timeout=0.01)
            except pexpect.TIMEOUT:
                continue
            if _CPR.search(data):
                self.child.send(b"\x1b[1;1R")
            if _DA.search(data):
                self.child.send(b"\x1b[?62c")
            self.output.extend(data)
        return time.monotonic()

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def close(self) -> None:
        self.child.sendcontrol("d")
        try:
            self.child.expect(pexpect.EOF, timeout=10)
        except pexpect.ExceptionPexpect:
            self.child.kill(9)
        self.child.close(force=True)


def _stream(
    argv: list[str], env: dict[str, str], work: Path, prompt: bytes, frames: float, repeat: int
) -> tuple[float, float]:
    """Median (lateness of the last line, CPU share) over ``repeat`` runs of one streamed reply."""
    lags: list[float] = []
    loads: list[float] = []
    for _ in range(repeat):
        pty = _Pty(argv, env, work)
        pty.read_until(b"(auto)")
        time.sleep(0.3)  # let the start-up work (renderer warm-up) finish
        before = pty.cpu_seconds()
        pty.child.send(prompt)
        sent = time.monotonic()
        done = pty.read_until(b"THE-END")
        cpu = pty.cpu_seconds() - before
        wall = done - sent
        lags.append(wall - frames / 2000)
        loads.append(cpu / wall)
        pty.close()
    return median(lags), median(loads)


def run(repeat: int) -> list[Figure]:
    env = user_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["TERM"] = "xterm-256color"
    server = subprocess.Popen(
        [PYTHON, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert server.stdout is not None and server.stdin is not None
    port, size, small, ten = server.stdout.readline().split()
    figures: list[Figure] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            work = root / "work"
            work.mkdir()
            agent_dir = root / "agent"
            agent_dir.mkdir()
            models = {
                "providers": {
                    "local": {
                        "baseUrl": f"http://127.0.0.1:{port}/v1",
                        "api": "openai-completions",
                        "apiKey": "local-key",
                        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 8192}],
                    }
                }
            }
            (agent_dir / "models.json").write_text(json.dumps(models))
            env["TAU_AGENT_DIR"] = str(agent_dir)
            argv = [PYTHON, "-m", "tau", "--provider", "local", "--model", "fake-model", "--no-session"]

            ready: list[float] = []
            for _ in range(max(repeat, 5)):
                started = time.monotonic()
                pty = _Pty(argv, env, work)
                ready.append(pty.read_until(b"(auto)") - started)
                pty.close()
            figures.append(Figure("TUI: start to a ready prompt", median(ready), "s", "<= 0.5 s"))

            lag, load = _stream(argv, env, work, b"STREAM please\r", int(size) / 25, repeat)
            figures.append(
                Figure(
                    "TUI: 50 KB in 25-char deltas at 2000/s, last line late by",
                    lag,
                    "s",
                    "keeps up (< 0.5 s)",
                )
            )
            figures.append(
                Figure("TUI: CPU while streaming it", load * 100, "% of one core", "not pegged (< 100 %)")
            )
            lag, load = _stream(argv, env, work, b"SMALLDELTAS please\r", int(small) / 4, max(1, repeat // 2))
            figures.append(
                Figure(
                    "TUI: 20 KB in 4-char deltas at 2000/s, last line late by", lag, "s", "keeps up (< 0.5 s)"
                )
            )
            figures.append(
                Figure("TUI: CPU while streaming it", load * 100, "% of one core", "not pegged (< 100 %)")
            )
            lag, load = _stream(argv, env, work, b"TENKB please\r", int(ten) / 4 * 2, max(1, repeat // 2))
            figures.append(
                Figure(
                    "TUI: CPU, 10 KB markdown in 4-char deltas at 1 ms",
                    load * 100,
                    "% of one core",
                    "<= 40 %",
                )
            )
            took, _load = _stream(argv, env, work, b"HUGEPARAGRAPH please\r", 0, 1)
            figures.append(Figure("TUI: a 2 MB one-paragraph reply in 64-char deltas", took, "s", "<= 15 s"))

            fullscreen = [*argv, "--tui-mode", "fullscreen"]
            _lag, load = _stream(
                fullscreen, env, work, b"TENKB please\r", int(ten) / 4 * 2, max(1, repeat // 2)
            )
            figures.append(
                Figure(
                    "TUI fullscreen: CPU, 10 KB markdown in 4-char deltas at 1 ms",
                    load * 100,
                    "% of one core",
                    "<= 40 %",
                )
            )
            took, _load = _stream(fullscreen, env, work, b"HUGEPARAGRAPH please\r", 0, 1)
            figures.append(
                Figure("TUI fullscreen: a 2 MB one-paragraph reply in 64-char deltas", took, "s", "<= 15 s")
            )
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    return figures
