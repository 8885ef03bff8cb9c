"""What the benchmarks that run the real tau against a local fake server share: the server (a
subprocess answering "TOOLS" with 20 bash turns, "BIGBASH" with one bash call printing 200 MB,
"BIG" with a 20 KB reply, anything else with a line), an agent dir whose models.json points at it, a scratch work folder, one timed tau run."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _common import PYTHON

SERVER = r"""
import json, sys
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn

def reply(request):
    # Keep no request: a run of many 1 MB requests otherwise slows the server down (its memory and
    # garbage collection grow with each one), which would count as the harness's time.
    server.requests.clear()
    body = request.body or {}
    messages = body.get("messages", [])
    # The last user message says what to do (not a dump of the whole history: 8 ms of server time
    # per request for a 1 MB history, which both harnesses would wait for).
    prompts = [m.get("content") for m in messages if m.get("role") == "user"]
    prompt = json.dumps(prompts[-1] if prompts else "")
    if "BIGBASH" in prompt:  # one bash call printing 200 MB, then a line
        if any(m.get("role") == "tool" for m in messages):
            return Turn(text="done")
        return Turn(tool_calls=[ScriptedToolCall("bash", {"command": "yes | head -c 200000000"})])
    if "TOOLS" in prompt:
        calls = sum(1 for m in messages if m.get("role") == "tool")
        if calls < 20:
            return Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo turn"})])
        return Turn(text="done")
    if "BIG" in prompt:
        return Turn(text="word " * 4096, chunk_size=8)
    return Turn(text="Hello from the fake server.")

server = FakeLLMServer(port=0)
server.add(*[reply] * 100000)
server.start()
print(server.port, flush=True)
sys.stdin.read()
server.stop()
"""

TAU = [PYTHON, "-m", "tau"]
MODEL = ["--provider", "local", "--model", "fake-model"]


@contextmanager
def fake_server(env: dict[str, str]) -> Iterator[str]:
    """The fake server running for the length of the block; its port."""
    server = subprocess.Popen(
        [PYTHON, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert server.stdout is not None and server.stdin is not None
    port = server.stdout.readline().strip()
    try:
        yield port
    finally:
        server.stdin.close()
        server.wait(timeout=10)


@contextmanager
def local_tau(env: dict[str, str]) -> Iterator[Path]:
    """The fake server and a scratch folder: ``env`` names an agent dir pointing at the server, and
    the block gets the work folder (its parent is the scratch root, removed afterwards)."""
    with fake_server(env) as port, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        env["TAU_AGENT_DIR"] = str(agent_dir(root, port))
        yield work


def agent_dir(root: Path, port: str) -> Path:
    folder = root / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "local": {
                "baseUrl": f"http://127.0.0.1:{port}/v1",
                "api": "openai-completions",
                "apiKey": "local-key",
                "compat": {"supportsDeveloperRole": False, "supportsStore": False},
                "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 8192}],
            }
        }
    }
    (folder / "models.json").write_text(json.dumps(models))
    return folder


def run_tau(
    argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    result = subprocess.run(TAU + argv, env=env, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"tau {' '.join(argv)} failed: {result.stderr.decode()[-2000:]}")
    return elapsed, result
