"""tau killed at random moments: the session file stays whole line by line, ``tau -c`` continues it,
no entry written before the kill is lost, and no command tau started is left running."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import pytest
from fault_campaign import TALLY, Campaign, count_lost, kill_processes, processes_running, session_lines
from tau_command import MODEL

from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn

SEED = 21
KILLS = 20


class ToolLoop:
    """The fake model's side of an endless tool loop: each reply streams a little text (paced), then
    asks for a bash command that takes a while and names ``marker``; after ``finish()``, it answers."""

    def __init__(self, marker: str, seconds: float = 0.15) -> None:
        self.marker = marker
        self.seconds = seconds
        self.finished = False
        self.steps = 0

    def __call__(self, request: RecordedRequest) -> Turn:
        if self.finished:
            return Turn(text="all done")
        self.steps += 1
        command = f"sleep {self.seconds}; echo {self.marker} step {self.steps}"
        return Turn(
            text=f"step {self.steps}: looking further",
            chunk_size=4,
            frames_per_second=150,
            tool_calls=[ScriptedToolCall("bash", {"command": command})],
        )

    def finish(self) -> None:
        self.finished = True


def start(campaign: Campaign, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tau", *MODEL, *args],
        cwd=campaign.work,
        env=campaign.tau.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for(condition: Callable[[], object], process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 15
    while not condition():
        assert process is None or process.poll() is None, "tau ended early"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def session_bytes(campaign: Campaign) -> bytes:
    files = campaign.session_files()
    assert len(files) <= 1, files
    return files[0].read_bytes() if files else b""


def assert_no_leftovers(marker: str) -> None:
    """No process naming ``marker`` is alive a moment after tau ended (what tau started died with it)."""
    deadline = time.monotonic() + 1.0
    while (left := processes_running(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    kill_processes(left)
    assert not left, f"left running after tau ended: {left}"


def assert_whole(campaign: Campaign, before: bytes) -> bytes:
    """The session file parses line by line and still starts with ``before``."""
    after = session_bytes(campaign)
    if after:
        session_lines(campaign.session_files()[0])
    assert count_lost(before, after) == 0, "entries written before the kill are gone"
    return after


def continue_to_the_end(campaign: Campaign, loop: ToolLoop, before: bytes) -> None:
    loop.finish()
    outcome = campaign.process_check(*MODEL, "-c", "-p", "finish now", timeout=20)
    assert outcome.code == 0 and outcome.stdout == "all done\n", outcome
    after = assert_whole(campaign, before)
    entries = [json.loads(line) for line in after.splitlines()]
    users = [e for e in entries if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert len(users) >= 2
    sent = json.dumps(campaign.server.last_request.body["messages"])
    assert "finish now" in sent and "start the loop" in sent


def test_kill_9_at_twenty_random_moments_of_a_tool_loop(campaign: Campaign) -> None:
    marker = f"faults-{uuid.uuid4().hex[:12]}"
    loop = ToolLoop(marker)
    campaign.server.add(*[loop] * 1000)
    rng = random.Random(SEED)
    before = b""
    for number in range(KILLS):
        TALLY.bad_inputs += 1
        args = ["-p", "start the loop"] if not before else ["-c", "-p", f"go on ({number})"]
        requests = len(campaign.server.requests)
        process = start(campaign, *args)
        # A moment inside the loop, whatever the start-up takes on a busy machine: a random time
        # after the first request, while the reply streams, a command runs or entries are written.
        wait_for(lambda seen=requests: len(campaign.server.requests) > seen, process)
        time.sleep(rng.uniform(0.0, 0.6))
        process.kill()
        process.communicate(timeout=10)
        assert_no_leftovers(marker)
        before = assert_whole(campaign, before)
    assert loop.steps >= KILLS
    continue_to_the_end(campaign, loop, before)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_tool_runs(campaign: Campaign, signum: signal.Signals) -> None:
    marker = f"faults-{uuid.uuid4().hex[:12]}"
    loop = ToolLoop(marker, seconds=30)
    campaign.server.add(loop, *[loop] * 10)
    # A first finished run, so that there is a file whose lines must survive.
    loop.finished = True
    assert campaign.process(*MODEL, "-p", "start the loop").code == 0
    before = session_bytes(campaign)
    loop.finished = False
    process = start(campaign, "-c", "-p", "long tool")
    wait_for(lambda: processes_running(marker))
    time.sleep(0.2)  # the command is running, not just starting
    TALLY.bad_inputs += 1
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=10)
    assert b"Traceback" not in stderr
    expected = {signal.SIGKILL: -9, signal.SIGINT: 130, signal.SIGTERM: 143}[signum]
    assert process.returncode == expected, stderr
    assert_no_leftovers(marker)
    before = assert_whole(campaign, before)
    continue_to_the_end(campaign, loop, before)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_reply_streams(campaign: Campaign, signum: signal.Signals) -> None:
    loop = ToolLoop("unused")
    loop.finished = True
    campaign.server.add(loop)
    assert campaign.process(*MODEL, "-p", "start the loop").code == 0
    before = session_bytes(campaign)
    requests = len(campaign.server.requests)
    campaign.server.add(Turn(text="a slow reply " * 200, chunk_size=5, frames_per_second=100))
    process = start(campaign, "-c", "-p", "slow reply")
    wait_for(lambda: len(campaign.server.requests) > requests)
    time.sleep(0.3)
    TALLY.bad_inputs += 1
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=10)
    assert b"Traceback" not in stderr
    expected = {signal.SIGKILL: -9, signal.SIGINT: 130, signal.SIGTERM: 143}[signum]
    assert process.returncode == expected, stderr
    before = assert_whole(campaign, before)
    campaign.server.add(loop)
    continue_to_the_end(campaign, loop, before)


class BigResults(ToolLoop):
    """Each reply to a user message asks for a command printing 5 MB (one long session line)."""

    def __call__(self, request: RecordedRequest) -> Turn:
        if self.finished:
            return Turn(text="all done")
        if request.body["messages"][-1]["role"] == "tool":
            return Turn(text="ok")
        return Turn(
            tool_calls=[ScriptedToolCall("bash", {"command": "head -c 5000000 /dev/zero | tr '\\0' z"})]
        )


def test_a_kill_while_a_big_tool_result_is_written_leaves_no_partial_line(campaign: Campaign) -> None:
    rng = random.Random(SEED)
    loop = BigResults("unused")
    campaign.server.add(*[loop] * 100)
    before = b""
    for number in range(3):
        args = ["-p", "start the loop"] if not before else ["-c", "-p", f"again ({number})"]
        process = start(campaign, *args)
        time.sleep(rng.uniform(0.3, 1.2))
        TALLY.bad_inputs += 1
        process.kill()
        process.communicate(timeout=10)
        before = assert_whole(campaign, before)
    if not before:
        assert campaign.process(*MODEL, "-p", "start the loop", timeout=30).code == 0
        before = session_bytes(campaign)
    continue_to_the_end(campaign, loop, before)
