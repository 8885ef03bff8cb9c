"""What the sandbox costs (issue #34): bubblewrap around each bash call.

- the added wall time of one `bash` tool call (`true`) under `workspace-write` over the same call
  unfenced, in process, the two alternating (median of each; goal <= 10 ms);
- a `tau -p` run of 20 bash tool turns in `workspace-write` over the same run with `--sandbox off`
  (median of each; goal <= 1.2x).

Needs Linux with bubblewrap (`bwrap`) and unprivileged user namespaces.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from _common import Figure, median, user_env
from _local_tau import MODEL, local_tau, run_tau

CALLS = 60


async def _call_times(cwd: str, calls: int) -> tuple[list[float], list[float]]:
    from tau.config.sandbox_config import build_sandbox
    from tau.tools import SpillDirectory, create_bash_tool

    sandbox = build_sandbox("workspace-write", cwd, str(Path(cwd) / "agent"))
    if sandbox.problem is not None:
        raise SystemExit(f"bench_sandbox: {sandbox.problem}")
    with SpillDirectory() as spill:
        plain = create_bash_tool(cwd, spill=spill)
        fenced = create_bash_tool(cwd, spill=spill, sandbox=sandbox)
        for tool in (plain, fenced):  # warm both (the private temporary folder, imports)
            await tool.execute("warm", {"command": "true"}, None, None)
        unfenced_s: list[float] = []
        fenced_s: list[float] = []
        for _ in range(calls):
            for tool, times in ((plain, unfenced_s), (fenced, fenced_s)):
                started = time.perf_counter()
                await tool.execute("call", {"command": "true"}, None, None)
                times.append(time.perf_counter() - started)
    sandbox.close()
    return unfenced_s, fenced_s


def run(repeat: int) -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        unfenced_s, fenced_s = asyncio.run(_call_times(tmp, max(CALLS, repeat)))
    added = (median(fenced_s) - median(unfenced_s)) * 1000
    figures.append(Figure("bash call, unfenced", median(unfenced_s) * 1000, "ms"))
    figures.append(Figure("bash call, workspace-write", median(fenced_s) * 1000, "ms"))
    figures.append(Figure("added cost of the sandbox per bash call", added, "ms", "<= 10 ms"))

    env = user_env()
    with local_tau(env) as work:
        off: list[float] = []
        fenced: list[float] = []
        for _ in range(repeat):
            argv = [*MODEL, "--no-session", "-p", "TOOLS please"]
            off.append(run_tau([*argv, "--sandbox", "off"], env, work)[0])
            fenced.append(run_tau([*argv, "--sandbox", "workspace-write"], env, work)[0])
    figures.append(Figure("tau -p, 20 bash turns, --sandbox off", median(off), "s"))
    figures.append(Figure("tau -p, 20 bash turns, workspace-write", median(fenced), "s"))
    figures.append(
        Figure("workspace-write over off, 20 bash turns", median(fenced) / median(off), "x", "<= 1.2x")
    )
    return figures
