"""ACP mode's harness overhead: a prompt that runs 20 tool turns (bash `echo`) and replies, sent by
the ACP SDK's client to `tau --mode acp` and, for comparison, with `tau -p`. Each run is a fresh
process against a local fake server (start-up, initialize and session/new included), and each
keeps its session file.

Figures, each as wall time and as the tau process's CPU time (its own and its children's, the
`echo`s; steadier than wall time on a busy machine):
- the whole run (start, initialize, session/new, the prompt, exit) against the print-mode run
  (goal: within 10 %);
- start-up: process start to the first plain reply answered, against `tau -p hello`;
- one tool turn: the 20-turn ``session/prompt`` in a running server (after a plain reply) against
  the print run of 20 tool turns minus a print run of one plain reply, over 20 (start-up is paid
  once per editor session, the loop on every prompt).
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import ToolCallProgress

from _common import PYTHON, Figure, median, user_env
from _local_tau import MODEL, local_tau, run_tau


class _CountingClient:
    def __init__(self) -> None:
        self.finished_calls = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, ToolCallProgress) and update.status == "completed":
            self.finished_calls += 1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu(pid: int) -> float:
    """CPU seconds of a running process and of its children that ended (``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class _Run:
    """Wall and CPU seconds of one measured span."""

    def __init__(self, wall: float, cpu: float) -> None:
        self.wall, self.cpu = wall, cpu


async def _acp_run(env: dict[str, str], cwd: Path, *, warm: bool) -> tuple[_Run, _Run, _Run]:
    """The whole run, its start-up (to the first reply) and the 20-turn prompt. ``warm``: a plain
    reply first (for the start-up and loop figures; the whole run, as ``tau -p``, has none)."""
    started, cpu_before = time.perf_counter(), _children_cpu()
    client = _CountingClient()
    command = [PYTHON, "-m", "tau", "--mode", "acp", *MODEL]
    async with spawn_agent_process(client, *command, env=env, cwd=str(cwd)) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        # A plain reply first, as the print-mode figure subtracts one: the first request's lazy
        # imports and connection belong to neither loop.
        if warm:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        prompted, cpu_prompted = time.perf_counter(), _process_cpu(process.pid)
        start_up = _Run(prompted - started, cpu_prompted)
        await conn.prompt(session_id=session.session_id, prompt=[text_block("TOOLS please")])
        loop = _Run(time.perf_counter() - prompted, _process_cpu(process.pid) - cpu_prompted)
    if client.finished_calls != 20:
        raise RuntimeError(f"the ACP run made {client.finished_calls} tool calls, not 20")
    if process.returncode != 0:
        raise RuntimeError(f"the ACP run exited with {process.returncode}")
    return _Run(time.perf_counter() - started, _children_cpu() - cpu_before), start_up, loop


def _print_run(argv: list[str], env: dict[str, str], cwd: Path) -> _Run:
    # With its session file, as `tau -p` keeps one by default and an ACP session always does.
    cpu_before = _children_cpu()
    wall = run_tau([*MODEL, *argv], env, cwd)[0]
    return _Run(wall, _children_cpu() - cpu_before)


def _pct(value: float, base: float) -> float:
    return (value / base - 1) * 100


def run(repeat: int) -> list[Figure]:
    env = user_env()
    runs: dict[str, list[_Run]] = {"print": [], "plain": [], "acp": [], "acp start": [], "acp loop": []}
    with local_tau(env) as work:
        _print_run(["-p", "TOOLS please"], env, work)  # warm the bytecode cache
        asyncio.run(_acp_run(env, work, warm=True))
        for _ in range(repeat):
            runs["print"].append(_print_run(["-p", "TOOLS please"], env, work))
            runs["plain"].append(_print_run(["-p", "hello"], env, work))
            _, start_up, loop = asyncio.run(_acp_run(env, work, warm=True))
            runs["acp"].append(asyncio.run(_acp_run(env, work, warm=False))[0])
            runs["acp start"].append(start_up)
            runs["acp loop"].append(loop)

    figures: list[Figure] = []
    for measure, unit in (("wall", "s"), ("cpu", "s CPU")):

        def m(name: str, measure: str = measure) -> float:
            return median([getattr(r, measure) for r in runs[name]])

        print_turn = (m("print") - m("plain")) / 20 * 1000
        acp_turn = m("acp loop") / 20 * 1000
        figures += [
            Figure(f"[{measure}] 20 tool turns over ACP (start to exit)", m("acp"), unit),
            Figure(f"[{measure}] 20 tool turns with tau -p", m("print"), unit),
            Figure(f"[{measure}] ACP overhead, whole run", _pct(m("acp"), m("print")), "%", "<= 10 %"),
            Figure(f"[{measure}] start-up: ACP to the first reply", m("acp start"), unit),
            Figure(f"[{measure}] start-up: tau -p hello", m("plain"), unit),
            Figure(f"[{measure}] ACP start-up overhead", _pct(m("acp start"), m("plain")), "%"),
            Figure(f"[{measure}] one tool turn over ACP", acp_turn, "ms"),
            Figure(f"[{measure}] one tool turn in print mode", print_turn, "ms"),
            Figure(f"[{measure}] ACP per-turn overhead", _pct(acp_turn, print_turn), "%", "<= 10 %"),
        ]
    return figures


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
