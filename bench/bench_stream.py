"""Streaming throughput: a 20 MB reply in 4 KB deltas from the fake server through `stream()`.

The fake server runs in its own process; the client runs in another so its peak memory is its own.
Reported per API: median MB/s over the runs (wall clock: on this fake the server process is often the
bottleneck), MB per CPU second of the client alone, and peak RSS growth while streaming against the
reply size. A last figure feeds 20 MB of tool-call arguments in 64-byte deltas straight to the stream
writer (no server): the partial-argument parsing must stay linear in the argument size.
The Responses protocol sends the whole text four more times in its closing events
(text done, part done, item done, response completed), so it moves five times the bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys

from _common import PYTHON, Figure, median, user_env

REPLY_BYTES = 20 * 1024 * 1024
DELTA_BYTES = 4096

SERVER = r"""
import sys
from tau.testing.fake_llm import FakeLLMServer, Turn
size, chunk = int(sys.argv[1]), int(sys.argv[2])
text = ("0123456789abcdef" * (size // 16 + 1))[:size]
server = FakeLLMServer(port=0)
server.add(*[Turn(text=text, chunk_size=chunk) for _ in range(64)])
server.start()
print(server.port, flush=True)
sys.stdin.read()
server.stop()
"""

CLIENT = r"""
import asyncio, json, resource, sys, time
from tau.ai import Context, Model, UserMessage, stream

port, api, repeat, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
base = {"openai-completions": "/v1", "openai-responses": "/v1", "anthropic-messages": "",
        "google-generative-ai": "/v1beta"}[api]
model = Model(id="bench", api=api, provider="bench", base_url=f"http://127.0.0.1:{port}{base}")

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

async def once():
    started = time.perf_counter()
    cpu_started = time.process_time()
    s = stream(model, Context(messages=[UserMessage("go")]), api_key="x")
    async for _ in s:
        pass
    message = await s.result()
    elapsed = time.perf_counter() - started
    cpu_times.append(time.process_time() - cpu_started)
    assert message.stop_reason == "stop", message.error_message
    assert len(message.text()) == size, len(message.text())
    return elapsed

cpu_times = []

async def main():
    await once()  # warm up: imports, connection pool
    base_rss = rss_mib()
    del cpu_times[:]
    times = [await once() for _ in range(repeat)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times": times, "cpu": cpu_times, "growth": peak - base_rss}))

asyncio.run(main())
"""

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")


def run(repeat: int) -> list[Figure]:
    env = user_env()
    server = subprocess.Popen(
        [PYTHON, "-c", SERVER, str(REPLY_BYTES), str(DELTA_BYTES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdout is not None
    port = server.stdout.readline().strip()
    figures: list[Figure] = []
    reply_mib = REPLY_BYTES / 1024 / 1024
    try:
        for api in APIS:
            # Each client uses (repeat + 1) turns of the server's script.
            out = subprocess.run(
                [PYTHON, "-c", CLIENT, port, api, str(min(repeat, 10)), str(REPLY_BYTES)],
                capture_output=True,
                text=True,
                env=env,
            )
            if out.returncode != 0:
                print(out.stderr[-2000:], file=sys.stderr)
                figures.append(Figure(f"{api}: FAILED", 0, ""))
                continue
            result = json.loads(out.stdout.strip().splitlines()[-1])
            seconds = median(result["times"])
            figures.append(Figure(f"{api}: throughput", reply_mib / seconds, "MB/s", ">= 50 MB/s"))
            cpu_seconds = median(result["cpu"])
            figures.append(Figure(f"{api}: reply MB per client CPU second", reply_mib / cpu_seconds, "MB/s"))
            figures.append(
                Figure(f"{api}: peak RSS growth / reply size", result["growth"] / reply_mib, "x", "< 3x")
            )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    figures.append(_tool_argument_figure(repeat))
    return figures


ARGUMENT_DELTA_BYTES = 64


def _tool_argument_figure(repeat: int) -> Figure:
    import asyncio
    import time

    from tau.ai import Model, StreamOptions
    from tau.ai.stream_writer import StreamWriter, run_stream

    content = ("0123456789abcde\n" * (REPLY_BYTES // 16 + 1))[:REPLY_BYTES]
    raw = json.dumps({"path": "big.txt", "content": content})
    model = Model(id="bench", api="bench", provider="bench", base_url="http://127.0.0.1:9")

    async def produce(writer: StreamWriter) -> None:
        index = writer.toolcall_start("call_1", "write")
        for start in range(0, len(raw), ARGUMENT_DELTA_BYTES):
            writer.toolcall_delta(index, raw[start : start + ARGUMENT_DELTA_BYTES])
        writer.toolcall_end(index)

    async def once() -> float:
        started = time.process_time()
        message = await run_stream(model, StreamOptions(), produce).result()
        assert message.tool_calls()[0].arguments["content"] == content
        return time.process_time() - started

    seconds = median([asyncio.run(once()) for _ in range(min(repeat, 3))])
    return Figure(
        f"tool arguments, {ARGUMENT_DELTA_BYTES} B deltas: MB per CPU second",
        REPLY_BYTES / 1024 / 1024 / seconds,
        "MB/s",
        ">= 20 MB/s",
    )
