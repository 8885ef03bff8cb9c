"""`tau -p` start-up with configured MCP servers whose tools the prompt does not use.

Start-up is the time from launching `tau -p hi` to the model request reaching the local fake server:
with no `mcp.json`, and with three stdio servers (the SDK's MCPServer, `deferred` exposure, so
nothing waits for them). Goal: within 50 ms of none. The whole run's wall time is shown too (it
includes stopping servers that are still starting), and the CPU time (user + system) of the run and
of any server it waited for, which the machine's load moves less than wall times; the load average
before and after is printed alongside.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from _common import PYTHON, Figure, median, user_env
from tau.testing.fake_llm import FakeLLMServer, Turn

MCP_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("unused")

    @server.tool()
    def echo(text: str) -> str:
        \"\"\"Echo the text.\"\"\"
        return text

    server.run()
    """
)


def _setup(root: Path, url: str) -> Path:
    agent = root / "agent"
    agent.mkdir()
    models = {
        "providers": {
            "local": {
                "baseUrl": url,
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 8192}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    return agent


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _first_request_s(
    env: dict[str, str], cwd: Path, server: FakeLLMServer, arrivals: list[float]
) -> tuple[float, float, float]:
    """Seconds from launch to the model request, to the process's end, and of CPU time."""
    arrivals.clear()
    cpu = _cpu_s()
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "-m", "tau", "--no-session", "--provider", "local", "--model", "fake-model", "-p", "hi"],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    ended = time.perf_counter()
    return arrivals[0] - started, ended - started, _cpu_s() - cpu


def run(repeat: int) -> list[Figure]:
    env = user_env()
    arrivals: list[float] = []

    def reply(request: object) -> Turn:
        arrivals.append(time.perf_counter())
        return Turn(text="hello")

    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        server.add(*[reply] * 1000)
        root = Path(tmp)
        agent = _setup(root, server.url("/v1"))
        env["TAU_AGENT_DIR"] = str(agent)
        script = root / "unused_server.py"
        script.write_text(MCP_SERVER)
        work = root / "work"
        work.mkdir()
        servers = {
            f"unused{n}": {"command": PYTHON, "args": [str(script)], "exposure": "deferred"} for n in range(3)
        }

        def once(with_servers: bool) -> tuple[float, float, float]:
            config = agent / "mcp.json"
            if with_servers:
                config.write_text(json.dumps({"mcpServers": servers}))
            else:
                config.unlink(missing_ok=True)
            return _first_request_s(env, work, server, arrivals)

        load_before = os.getloadavg()[0]
        once(True)  # warm the bytecode cache
        once(False)
        # Alternated, so that a change in the machine's load falls on both alike.
        pairs = [(once(False), once(True)) for _ in range(repeat)]
        load_after = os.getloadavg()[0]
        none_start, none_wall, none_cpu = (median([p[0][i] for p in pairs]) for i in range(3))
        three_start, three_wall, three_cpu = (median([p[1][i] for p in pairs]) for i in range(3))
    return [
        Figure("tau -p start-up (to the model request), no MCP", none_start * 1000, "ms"),
        Figure("tau -p start-up, 3 unused stdio MCP servers", three_start * 1000, "ms"),
        Figure("  difference", (three_start - none_start) * 1000, "ms", "<= 50 ms"),
        Figure("tau -p CPU time (user+sys), no MCP", none_cpu * 1000, "ms"),
        Figure("tau -p CPU time, 3 unused stdio MCP servers", three_cpu * 1000, "ms"),
        Figure("  difference", (three_cpu - none_cpu) * 1000, "ms"),
        Figure("tau -p wall time, no MCP", none_wall, "s"),
        Figure("tau -p wall time, 3 unused stdio MCP servers", three_wall, "s"),
        Figure(
            "load average (1 min) before / after",
            load_before,
            f"/ {load_after:.2f} on {os.cpu_count()} cores",
        ),
    ]
