"""Small stream deltas (issue #17): a 10 MB reply in 16-character deltas, tau beside pi 1.6.0.

The reply is rendered once, as the fake server's openai-completions protocol writes it (~650k SSE
events, ~120 MB of stream), and a small server sends those same bytes to every request, so neither
harness waits on the server. Measured, each in a fresh process (alternating, median of the runs):

- ``tau -p`` and pi 1.6.0's ``-p`` (when installed, see ``bench/bench_pi.py``): wall seconds and
  CPU seconds (user + system) of the whole run, from start to the printed reply;
- ``stream()`` alone in tau (no session, no agent): client CPU seconds per API, for the same reply
  rendered in each of the four SSE protocols.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import PYTHON, Figure, median, user_env
from bench_pi import PI_PACKAGE, _node, pi_dir

REPLY_CHARS = 10 * 1024 * 1024
DELTA_CHARS = 16

# Renders a reply of argv[1] characters in argv[2]-character deltas once per protocol (as the fake
# server writes it), then answers every POST with the same bytes (chunked, 64 KB writes), reading
# the request without parsing it. The path picks the protocol, as the fake server's routes do.
FIXED_REPLY_SERVER = r"""
import os, socket, sys, threading
from tau.testing.fake_llm import Turn
from tau.testing.fake_llm import anthropic, google, openai_completions, openai_responses
from tau.testing.fake_llm.script import RecordedRequest
size, chunk = int(sys.argv[1]), int(sys.argv[2])
text = ("0123456789abcdef" * (size // 16 + 1))[:size]
body = {"model": "fake-model", "stream_options": {"include_usage": True}}
request = RecordedRequest(method="POST", path="", query="", headers={}, body=body, api="")
renders = {}
def rendered(path):
    for key, module in (("/chat/completions", openai_completions), ("/responses", openai_responses),
                        ("/messages", anthropic), (":streamGenerateContent", google)):
        if key in path:
            if key not in renders:
                renders[key] = b"".join(module.render(Turn(text=text, chunk_size=chunk), request))
            return renders[key]
    raise SystemExit(f"no protocol for {path}")
rendered("/chat/completions")
def serve(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = conn.makefile("rb")
    try:
        while True:
            line = reader.readline()
            if not line:
                return
            path = line.split()[1].decode()
            length = 0
            while (header := reader.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            reader.read(length)
            payload = rendered(path)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            view = memoryview(payload)
            for start in range(0, len(payload), 65536):
                piece = view[start:start + 65536]
                conn.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            conn.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        conn.close()
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
threading.Thread(target=lambda: sys.stdin.read() or os._exit(0), daemon=True).start()
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""

# Runs each command in turn, ``rounds`` times, and reports (wall, cpu) per run: a small process of
# its own, so the children's resource use is theirs alone.
_LAUNCHER = r"""
import json, os, subprocess, sys, time
jobs, rounds = json.loads(sys.argv[1]), int(sys.argv[2])
def run(job):
    started = time.perf_counter()
    proc = subprocess.Popen(job["argv"], cwd=job["cwd"], env=job["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0 or len(out) < job["expect"]:
        raise SystemExit(f"{job['argv'][:3]} failed ({proc.returncode}, {len(out)} bytes): {err.decode()[-1500:]}")
    return wall
results = [[] for _ in jobs]
for _ in range(rounds):
    for i, job in enumerate(jobs):
        before = os.times()
        wall = run(job)
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        results[i].append((wall, cpu))
print(json.dumps(results))
"""

_STREAM_CLIENT = r"""
import asyncio, json, sys, time
from tau.ai import Context, Model, UserMessage, stream
port, api, size, repeat = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
base = {"openai-completions": "/v1", "openai-responses": "/v1", "anthropic-messages": "",
        "google-generative-ai": "/v1beta"}[api]
model = Model(id="fake-model", api=api, provider="bench", base_url=f"http://127.0.0.1:{port}{base}")
async def once():
    started = time.process_time()
    s = stream(model, Context(messages=[UserMessage("go")]), api_key="x")
    async for _ in s:
        pass
    message = await s.result()
    assert len(message.text()) == size, (message.error_message, len(message.text()))
    return time.process_time() - started
async def main():
    print(json.dumps([await once() for _ in range(repeat)]))
asyncio.run(main())
"""

_MODELS = {
    "providers": {
        "local": {
            "baseUrl": "",
            "api": "openai-completions",
            "apiKey": "local-key",
            "compat": {"supportsDeveloperRole": False, "supportsStore": False},
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 8192}],
        }
    }
}

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")


def _jobs(root: Path, port: str) -> tuple[list[str], list[dict[str, Any]]]:
    models = json.loads(json.dumps(_MODELS))
    models["providers"]["local"]["baseUrl"] = f"http://127.0.0.1:{port}/v1"
    env = user_env()
    env.update(HOME=str(root / "home"), PI_OFFLINE="1", TAU_OFFLINE="1")
    (root / "home").mkdir()
    work = root / "work"
    work.mkdir()
    harnesses: list[tuple[str, str, list[str]]] = [("tau", "TAU_AGENT_DIR", [PYTHON, "-m", "tau"])]
    folder = pi_dir()
    if folder is not None:
        harnesses.insert(0, ("pi", "PI_CODING_AGENT_DIR", [_node(folder), str(folder / PI_PACKAGE)]))
    names: list[str] = []
    jobs: list[dict[str, Any]] = []
    for name, variable, command in harnesses:
        agent = root / f"{name}-agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps(models))
        argv = [
            *command,
            "--provider",
            "local",
            "--model",
            "fake-model",
            "--no-session",
            "--no-tools",
            "-p",
            "hi",
        ]
        names.append(name)
        jobs.append(
            {"argv": argv, "cwd": str(work), "env": {**env, variable: str(agent)}, "expect": REPLY_CHARS}
        )
    return names, jobs


def run(repeat: int) -> list[Figure]:
    env = user_env()
    server = subprocess.Popen(
        [PYTHON, "-c", FIXED_REPLY_SERVER, str(REPLY_CHARS), str(DELTA_CHARS)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert server.stdout is not None and server.stdin is not None
    port = server.stdout.readline().strip()
    figures: list[Figure] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            names, jobs = _jobs(Path(tmp), port)
            rounds = max(1, min(repeat, 5))
            out = subprocess.run(
                [PYTHON, "-c", _LAUNCHER, json.dumps(jobs), str(rounds)],
                env=env, check=True, capture_output=True, text=True,
            )  # fmt: skip
            results: list[list[tuple[float, float]]] = json.loads(out.stdout)
            walls = {name: median([w for w, _ in r]) for name, r in zip(names, results, strict=True)}
            cpus = {name: median([c for _, c in r]) for name, r in zip(names, results, strict=True)}
            for name in names:
                figures.append(
                    Figure(f"-p, 10 MB in {DELTA_CHARS}-char deltas: {name} wall", walls[name], "s")
                )
                figures.append(Figure(f"  {name} CPU (user + system)", cpus[name], "s"))
            if "pi" in walls:
                figures.append(Figure("  pi/tau wall", walls["pi"] / walls["tau"], "x", ">= x2"))
                figures.append(Figure("  pi/tau CPU", cpus["pi"] / cpus["tau"], "x"))
        for api in APIS:
            out = subprocess.run(
                [PYTHON, "-c", _STREAM_CLIENT, port, api, str(REPLY_CHARS), str(max(1, min(repeat, 3)))],
                env=env, capture_output=True, text=True,
            )  # fmt: skip
            if out.returncode != 0:
                print(out.stderr[-2000:], file=sys.stderr)
                figures.append(Figure(f"stream() {api}: FAILED", 0, ""))
                continue
            seconds = median(json.loads(out.stdout))
            figures.append(Figure(f"stream() {api}: client CPU", seconds, "s"))
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    return figures


if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent)
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
