"""The session folder fills up or turns read-only in the middle of a run: one clear line, exit 1,
and no partial line left in the session file. The folder is a small tmpfs of its own (the tests
run as root, as CI does), filled or remounted read-only by the fake model between two replies."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fault_campaign import Campaign, session_lines
from tau_command import MODEL

from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> None:
    """Write a filler file until the disk says it is full."""
    with open(disk / "filler", "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 65536)
    # A second small write confirms it.
    try:
        (disk / "probe").write_bytes(b"x" * 8192)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    else:
        raise AssertionError("the disk is not full")


def read_only(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)


def loop_that_breaks_the_disk(
    break_it: Callable[[], None], *, at_request: int, output_bytes: int
) -> Callable[[RecordedRequest], Turn]:
    """Replies with tool calls printing ``output_bytes``; the disk breaks before request ``at_request``."""
    count = [0]

    def answer(request: RecordedRequest) -> Turn:
        count[0] += 1
        if count[0] == at_request:
            break_it()
        if count[0] > 6:
            return Turn(text="finished")
        command = f"head -c {output_bytes} /dev/zero | tr '\\0' o"
        return Turn(text=f"step {count[0]}", tool_calls=[ScriptedToolCall("bash", {"command": command})])

    return answer


def run_on(campaign: Campaign, disk: Path, answer: Callable[[RecordedRequest], Turn]) -> Path:
    campaign.server.add(*[answer] * 10)
    outcome = campaign.process_check(*MODEL, "--session-dir", str(disk / "sessions"), "-p", "go", timeout=20)
    assert outcome.code == 1, outcome
    errors = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, outcome.stderr
    assert "could not save the session" in errors[0]
    assert "No space left on device" in errors[0] or "Read-only file system" in errors[0]
    [session] = sorted((disk / "sessions").glob("*.jsonl"))
    entries = session_lines(session)
    assert entries[0]["type"] == "session"
    return session


@pytest.mark.parametrize("at_request", [2, 4])
@pytest.mark.parametrize("output_bytes", [1000, 300_000])
def test_a_disk_that_fills_up_mid_run(
    campaign: Campaign, small_disk: Path, at_request: int, output_bytes: int
) -> None:
    answer = loop_that_breaks_the_disk(
        lambda: fill(small_disk), at_request=at_request, output_bytes=output_bytes
    )
    run_on(campaign, small_disk, answer)


@pytest.mark.parametrize("at_request", [2, 4])
def test_a_session_folder_that_turns_read_only_mid_run(
    campaign: Campaign, small_disk: Path, at_request: int
) -> None:
    answer = loop_that_breaks_the_disk(
        lambda: read_only(small_disk), at_request=at_request, output_bytes=1000
    )
    run_on(campaign, small_disk, answer)


def test_a_full_disk_then_continuing_once_there_is_room(campaign: Campaign, small_disk: Path) -> None:
    answer = loop_that_breaks_the_disk(lambda: fill(small_disk), at_request=3, output_bytes=1000)
    session = run_on(campaign, small_disk, answer)
    before = session.read_bytes()
    os.unlink(small_disk / "filler")
    outcome = campaign.process_check(
        *MODEL, "--session-dir", str(small_disk / "sessions"), "-c", "-p", "again"
    )
    assert outcome.code == 0 and outcome.stdout == "finished\n", outcome
    assert session.read_bytes().startswith(before)
    session_lines(session)


@pytest.mark.parametrize("how", ["--session", "-c", "--session-dir"])
def test_a_session_that_cannot_be_written_is_refused_at_start(
    campaign: Campaign, small_disk: Path, how: str
) -> None:
    """A read-only session file or folder (root ignores file modes; a read-only mount it cannot)."""
    sessions = small_disk / "sessions"
    campaign.server.add(Turn(text="first"))
    assert campaign.process(*MODEL, "--session-dir", str(sessions), "-p", "hi").code == 0
    [session] = sorted(sessions.glob("*.jsonl"))
    before = session.read_bytes()
    read_only(small_disk)
    campaign.server.add(Turn(text="second"))
    target = {"--session": ["--session", str(session)], "-c": ["--session-dir", str(sessions), "-c"]}
    args = target.get(how, ["--session-dir", str(sessions)])
    outcome = campaign.process_check(*MODEL, *args, "-p", "again")
    assert outcome.code == 1
    assert session.read_bytes() == before
