"""No process tau starts outlives it: the process table (/proc) is read before and after a real
``tau``, whose MCP server starts a helper and exits cleanly when its stdin closes, and whose bash
tool leaves a command running in the background. Every exit path is tried: a normal end, an error
exit, SIGINT and SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable

import pytest
from fault_campaign import Campaign, kill_processes, processes_running
from tau_command import MODEL

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn

# Plain JSON-RPC on stdio, started as ``server.py <marker>``: it starts a helper (a long sleep whose
# command line carries the marker) in its own process group, and exits cleanly at the end of stdin,
# leaving the helper behind as many real servers do.
HELPER_SERVER = textwrap.dedent(
    """
    import json, subprocess, sys
    marker = sys.argv[1]
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    tool = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object"}}
    results = {
        "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "helper", "version": "1"}},
        "tools/list": {"tools": [tool]},
        "tools/call": {"content": [{"type": "text", "text": "pong"}]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") in results and "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}
            print(json.dumps(answer), flush=True)
    """
)


def configure_helper_server(campaign: Campaign, marker: str) -> None:
    script = campaign.tau.work.parent / "helper_server.py"
    script.write_text(HELPER_SERVER, encoding="utf-8")
    entry = {"command": sys.executable, "args": [str(script), marker], "exposure": "direct"}
    (campaign.tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"helper": entry}}))


def wait_for(condition: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def left_running(marker: str) -> list[int]:
    """The processes with ``marker`` that are still there a moment after tau ended (a process
    SIGTERMed just before tau's end may take a few milliseconds to go)."""
    deadline = time.monotonic() + 2
    while (found := processes_running(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    kill_processes(found)
    return found


def start(campaign: Campaign, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tau", *MODEL, *args],
        cwd=campaign.tau.work,
        env=campaign.tau.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_an_mcp_servers_helper_is_gone_after_a_normal_end(campaign: Campaign) -> None:
    marker = f"tau-helper-{uuid.uuid4().hex}"
    configure_helper_server(campaign, marker)
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__helper__ping", {})]),
        Turn(text="Pinged."),
    )
    assert processes_running(marker) == []

    done = campaign.tau.run("-p", *MODEL, "ping")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Pinged."
    assert left_running(marker) == []


def test_an_mcp_servers_helper_is_gone_after_an_error_exit(campaign: Campaign) -> None:
    marker = f"tau-helper-{uuid.uuid4().hex}"
    configure_helper_server(campaign, marker)
    campaign.tau.server.add(
        Turn(fault=Fault("status", status=400, body={"error": {"message": "bad request"}}))
    )

    done = campaign.tau.run("-p", *MODEL, "ping")

    assert done.returncode == 1
    assert "bad request" in done.stderr
    assert left_running(marker) == []


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_mcp_servers_helper_is_gone_after_a_signal(campaign: Campaign, signum: int, code: int) -> None:
    marker = f"tau-helper-{uuid.uuid4().hex}"
    configure_helper_server(campaign, marker)
    campaign.tau.server.add(Turn(text="never finished", fault=Fault("stall", after_events=1, seconds=60)))
    process = start(campaign, "-p", "ping")
    try:
        wait_for(lambda: bool(processes_running(marker)) and bool(campaign.tau.server.requests))
        process.send_signal(signum)
        process.communicate(timeout=30)
    finally:
        process.kill()

    assert process.returncode == code
    assert left_running(marker) == []


def test_a_bash_background_child_is_gone_when_the_call_ends_and_the_call_does_not_wait_for_it(
    campaign: Campaign,
) -> None:
    seconds = f"3{uuid.uuid4().int % 10**6:06d}"  # a sleep with a command line no other test uses
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"sleep {seconds} & echo started"})]),
        Turn(text="Started it."),
    )

    began = time.monotonic()
    done = campaign.tau.run("-p", *MODEL, "start a sleep")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Started it."
    assert time.monotonic() - began < 20
    assert left_running(f"sleep {seconds}") == []


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_running_bash_command_and_its_children_are_gone_after_a_signal(
    campaign: Campaign, signum: int, code: int
) -> None:
    seconds = f"3{uuid.uuid4().int % 10**6:06d}"
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"sleep {seconds} & sleep {seconds}"})]),
        Turn(text="Done."),
    )
    process = start(campaign, "-p", "sleep")
    try:
        wait_for(lambda: len(processes_running(f"sleep {seconds}")) == 3)  # the shell, two sleeps
        process.send_signal(signum)
        process.communicate(timeout=30)
    finally:
        process.kill()

    assert process.returncode == code
    assert left_running(f"sleep {seconds}") == []


def test_what_a_key_command_leaves_running_is_gone_when_it_has_printed_the_key(campaign: Campaign) -> None:
    seconds = f"3{uuid.uuid4().int % 10**6:06d}"
    models_file = campaign.tau.agent_dir / "models.json"
    models = json.loads(models_file.read_text())
    models["providers"]["local"]["apiKey"] = f"!sleep {seconds} >/dev/null 2>&1 & echo local-key"
    models_file.write_text(json.dumps(models))
    campaign.tau.server.add(Turn(text="Keyed."))

    done = campaign.tau.run("-p", *MODEL, "hi")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Keyed."
    headers = {name.lower(): value for name, value in campaign.tau.server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer local-key"
    assert left_running(f"sleep {seconds}") == []
