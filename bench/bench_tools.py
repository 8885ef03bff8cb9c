"""Built-in tools: the bash tool swallowing 200 MB of output, and grep over 10 000 files vs plain rg.

bash: each run is a fresh child process (so its peak RSS is its own) that runs
``yes | head -c 200000000`` through the bash tool and reports the seconds inside the tool, the peak
RSS growth over the process's resident size before the call, and whether the tail shown to the model
and the spill file are right.

grep: a generated tree of 10 000 small files (100 folders × 100), a pattern found in 50 of them; the
grep tool (in-process, including JSON parsing and formatting) against running ``rg`` directly.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import PYTHON, Figure, median, user_env

BASH_BYTES = 200_000_000

BASH_CHILD = r"""
import asyncio, json, os, resource, sys, time
from tau.tools import SpillDirectory, create_bash_tool

def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0

async def main():
    size = int(sys.argv[1])
    with SpillDirectory() as spill:
        tool = create_bash_tool(os.getcwd(), spill=spill)
        await tool.execute("warm", {"command": "echo warm"}, None, lambda u: None)
        base = rss_mib()
        started = time.perf_counter()
        result = await tool.execute("big", {"command": f"yes | head -c {size}"}, None, lambda u: None)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        text = result.content[0].text
        body, note = text.rsplit("\n\n", 1)
        lines = size // 2 + 1
        tail_ok = (
            body == "y\n" * 1999
            and f"{lines - 1999}-{lines} of {lines}" in note
            and result.details["truncation"]["totalBytes"] == size
        )
        spilled = os.path.getsize(result.details["fullOutputPath"])
    print(json.dumps({"seconds": seconds, "growth": peak - base, "tail_ok": tail_ok, "spilled": spilled}))

asyncio.run(main())
"""


def bash_figures(repeat: int) -> list[Figure]:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [PYTHON, "-c", BASH_CHILD, str(BASH_BYTES)],
            capture_output=True,
            text=True,
            env=user_env(),
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return [
        Figure(
            "bash: yes | head -c 200MB, seconds in tool",
            median([r["seconds"] for r in runs]),
            "s",
            "<= 1.0 s",
        ),
        Figure("bash: peak RSS growth", median([r["growth"] for r in runs]), "MiB", "<= 30 MiB"),
        Figure("bash: tail shown to the model correct (1 = yes)", float(all(r["tail_ok"] for r in runs)), ""),
        Figure(
            "bash: spill file bytes (all runs complete = 200000000)",
            float(min(r["spilled"] for r in runs)),
            "B",
            "= 200000000",
        ),
    ]


def make_tree(root: Path) -> None:
    filler = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(40))
    for d in range(100):
        folder = root / f"pkg{d:03d}"
        folder.mkdir()
        for f in range(100):
            text = filler
            if (d * 100 + f) % 200 == 0:
                text += "needle_token found here\n"
            (folder / f"mod{f:03d}.py").write_text(text)


def grep_figures(repeat: int) -> list[Figure]:
    from tau.tools import create_grep_tool, find_rg

    rg = find_rg()
    assert rg is not None
    with tempfile.TemporaryDirectory(prefix="tau-bench-grep-") as folder:
        root = Path(folder)
        make_tree(root)
        tool = create_grep_tool(folder)
        direct_argv = [rg, "--line-number", "--hidden", "needle_token", folder]

        def direct() -> float:
            started = time.perf_counter()
            out = subprocess.run(direct_argv, capture_output=True, check=True)
            elapsed = time.perf_counter() - started
            assert out.stdout.count(b"\n") == 50
            return elapsed

        async def through_tool() -> float:
            started = time.perf_counter()
            result = await tool.execute("g", {"pattern": "needle_token"}, None, None)
            elapsed = time.perf_counter() - started
            assert result.content[0].text.count("\n") == 49, result.content[0].text[:200]  # type: ignore[union-attr]
            return elapsed

        async def compare(n: int) -> tuple[list[float], list[float]]:
            # One event loop for all calls, as in a session; direct and tool runs alternate so that
            # drift in the machine's load hits both alike.
            direct()  # warm the page cache
            await through_tool()
            pairs = [(direct(), await through_tool()) for _ in range(n)]
            return [p[0] for p in pairs], [p[1] for p in pairs]

        direct_times, tool_times = asyncio.run(compare(max(repeat, 9)))
    d, t = median(direct_times), median(tool_times)
    return [
        Figure("grep: rg directly, 10 000 files", d * 1000, "ms"),
        Figure("grep: grep tool, same search", t * 1000, "ms"),
        Figure("grep: tool / rg", t / d, "x", "<= 1.5x"),
    ]


def run(repeat: int) -> list[Figure]:
    if sys.platform != "linux":
        return [Figure("tools bench needs Linux (/proc)", 0, "")]
    return [*bash_figures(repeat), *grep_figures(repeat)]


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    for figure in run(3):
        print(figure)
