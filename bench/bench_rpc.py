"""RPC mode's harness overhead: a prompt that runs 20 tool turns (bash `echo`) and replies, sent over
RPC and, for comparison, with `tau -p`. Each run is a fresh process against a local fake server.

Figure: wall time of the RPC run relative to the print-mode run (goal: within 10 %).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from _common import PYTHON, Figure, median, user_env
from _local_tau import MODEL, local_tau, run_tau
from tau.modes.rpc_client import RpcClient

RPC_COMMAND = [PYTHON, "-m", "tau", "--mode", "rpc", "--no-session", *MODEL]


async def _rpc_run(env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    async with RpcClient(RPC_COMMAND, cwd=str(cwd), env=env) as client:
        events = await client.prompt("TOOLS please", timeout=120)
        if sum(1 for e in events if e["type"] == "tool_execution_end") != 20:
            raise RuntimeError("the RPC run did not make 20 tool calls")
        code = await client.close()
    if code != 0:
        raise RuntimeError(f"the RPC run exited with {code}")
    return time.perf_counter() - started


def run(repeat: int) -> list[Figure]:
    env = user_env()
    with local_tau(env) as work:
        run_tau([*MODEL, "--no-session", "-p", "TOOLS please"], env, work)  # warm the bytecode cache
        asyncio.run(_rpc_run(env, work))
        printed: list[float] = []
        rpc: list[float] = []
        for _ in range(repeat):
            printed.append(run_tau([*MODEL, "--no-session", "-p", "TOOLS please"], env, work)[0])
            rpc.append(asyncio.run(_rpc_run(env, work)))
    overhead = (median(rpc) / median(printed) - 1) * 100
    return [
        Figure("20 tool turns over RPC", median(rpc), "s"),
        Figure("20 tool turns with tau -p", median(printed), "s"),
        Figure("RPC overhead relative to print mode", overhead, "%", "<= 10 %"),
    ]


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
