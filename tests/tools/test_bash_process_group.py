"""What a bash call starts in the background does not outlive the call, nor tau (the real process)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import ScriptedToolCall, Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that never reaps it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone_soon(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _wait_for_pids(path: Path, count: int, seconds: float = 20.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(p) for p in path.read_text().split()]
            if len(pids) >= count:
                return pids
        time.sleep(0.05)
    raise AssertionError(f"{path} never had {count} pids")


def test_background_children_are_killed_when_the_call_ends_and_it_returns_at_once(tau: TauCommand) -> None:
    command = "sleep 100 & echo $! > pids; nohup sleep 100 > /dev/null 2>&1 & echo $! >> pids; echo started"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": command})]), Turn(text="done"))
    process = tau.popen(*MODEL, "-p", "start them")
    try:
        pids = _wait_for_pids(tau.work / "pids", 2)
        # `sleep 100 &` holds the output pipe open; the call must still end, and take them with it.
        assert all(_gone_soon(pid) for pid in pids)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
        for pid in _wait_for_pids(tau.work / "pids", 2):
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
    assert process.returncode == 0, stderr
    assert "started" in str(tau.server.requests[1].body["messages"])


@pytest.mark.parametrize("signum", [signal.SIGQUIT, signal.SIGUSR1, signal.SIGTERM])
def test_a_signal_that_ends_tau_kills_the_running_call_and_its_children(
    tau: TauCommand, signum: signal.Signals
) -> None:
    command = "sleep 100 & echo $! > pids; echo $$ >> pids; sleep 100"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": command})]), Turn(text="done"))
    process = tau.popen(*MODEL, "-p", "start them")
    try:
        pids = _wait_for_pids(tau.work / "pids", 2)
        process.send_signal(signum)
        process.communicate(timeout=20)
        assert all(_gone_soon(pid) for pid in pids), [p for p in pids if _alive(p)]
    finally:
        process.kill()
        for pid in _wait_for_pids(tau.work / "pids", 2):
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
