"""ACP mode's harness overhead: a prompt that runs 20 tool turns (bash `echo`) and replies, sent by
the ACP SDK's client to `tau --mode acp` and, for comparison, with `tau -p`. Each run is a fresh
process against a local fake server (start-up, initialize and session/new included).

Figures: wall time of the whole ACP run relative to the print-mode run (goal: within 10 %), and
of the tool loop alone: the ``session/prompt`` round trip in a running server (after a plain
reply) against the print run of 20 tool turns minus a print run of one plain reply (start-up and exit are paid once per
editor session, the loop on every prompt).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import ToolCallProgress

from _common import PYTHON, Figure, median, user_env
from bench_cli import SERVER, _agent_dir, _run_tau

MODEL = ["--provider", "local", "--model", "fake-model"]


class _CountingClient:
    def __init__(self) -> None:
        self.finished_calls = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, ToolCallProgress) and update.status == "completed":
            self.finished_calls += 1


async def _acp_run(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    started = time.perf_counter()
    client = _CountingClient()
    command = [PYTHON, "-m", "tau", "--mode", "acp", *MODEL]
    async with spawn_agent_process(client, *command, env=env, cwd=str(cwd)) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        # A plain reply first, as the print-mode figure subtracts one: the first request's lazy
        # imports and connection belong to neither loop.
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        prompted = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[text_block("TOOLS please")])
        loop = time.perf_counter() - prompted
    if client.finished_calls != 20:
        raise RuntimeError(f"the ACP run made {client.finished_calls} tool calls, not 20")
    if process.returncode != 0:
        raise RuntimeError(f"the ACP run exited with {process.returncode}")
    return time.perf_counter() - started, loop


def run(repeat: int) -> list[Figure]:
    env = user_env()
    server = subprocess.Popen(
        [PYTHON, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert server.stdout is not None and server.stdin is not None
    port = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            work = root / "work"
            work.mkdir()
            env["TAU_AGENT_DIR"] = str(_agent_dir(root, port))
            _run_tau([*MODEL, "--no-session", "-p", "TOOLS please"], env, work)  # warm the bytecode cache
            asyncio.run(_acp_run(env, work))
            printed: list[float] = []
            plain: list[float] = []
            acp: list[float] = []
            acp_loop: list[float] = []
            for _ in range(repeat):
                printed.append(_run_tau([*MODEL, "--no-session", "-p", "TOOLS please"], env, work)[0])
                plain.append(_run_tau([*MODEL, "--no-session", "-p", "hello"], env, work)[0])
                whole, loop = asyncio.run(_acp_run(env, work))
                acp.append(whole)
                acp_loop.append(loop)
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    overhead = (median(acp) / median(printed) - 1) * 100
    print_loop = median(printed) - median(plain)
    return [
        Figure("20 tool turns over ACP (process start to exit)", median(acp), "s"),
        Figure("20 tool turns with tau -p", median(printed), "s"),
        Figure("ACP overhead relative to print mode", overhead, "%", "<= 10 %"),
        Figure("the 20-turn session/prompt in a running server", median(acp_loop), "s"),
        Figure("the 20-turn loop in print mode (minus a plain reply)", print_loop, "s"),
        Figure(
            "ACP loop overhead relative to print mode",
            (median(acp_loop) / print_loop - 1) * 100,
            "%",
            "<= 10 %",
        ),
    ]


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
