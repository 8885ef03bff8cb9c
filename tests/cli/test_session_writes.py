"""When the session file cannot be written: a full disk, a read-only file or folder, at start-up or
mid-run. The real `tau` process against the fake LLM server; tests run as root, so "read-only" is
made with ``chattr +i`` or a read-only bind mount, and a full disk with a file-size limit (EFBIG)."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn
from tau.testing.fake_llm.script import RecordedRequest

BIG_OUTPUT = "head -c 1000 /dev/zero | tr '\\0' x"


def run_with_file_size_limit(tau: TauCommand, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    """``tau`` with RLIMIT_FSIZE: a write past ``limit`` bytes fails with EFBIG, as on a full disk."""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "tau", *args],
        cwd=tau.work,
        env=tau.env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_file_size,
    )


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    """Not even root can write ``path`` while this lasts."""
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def tool_turns_until(done: Callable[[], bool]) -> Callable[[RecordedRequest], Turn]:
    def turn(request: RecordedRequest) -> Turn:
        if done():
            return Turn(text="continued")
        return Turn(tool_calls=[ScriptedToolCall("bash", {"command": BIG_OUTPUT})])

    return turn


def assert_whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), data[-80:]
    return [json.loads(line) for line in data.splitlines()]


def save_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "could not save the session" in line]


def test_session_files_are_readable_by_their_owner_only(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    [session] = tau.session_files()
    assert session.stat().st_mode & 0o777 == 0o600


def test_a_full_disk_mid_run_stops_the_run_and_leaves_whole_lines(tau: TauCommand) -> None:
    disk_full = {"over": False}
    tau.server.add(*[tool_turns_until(lambda: disk_full["over"])] * 32)

    result = run_with_file_size_limit(tau, 15_000, *MODEL, "-p", "fill it")

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    [session] = tau.session_files()
    [error] = save_errors(result.stderr)
    assert str(session) in error and "the run was stopped" in error
    lines = assert_whole_lines(session)
    saved_replies = sum(
        1 for line in lines if line.get("type") == "message" and line["message"]["role"] == "assistant"
    )  # type: ignore[index]
    assert 3 < saved_replies < 15
    # No request once a write has failed (the one in flight as it failed may still go out).
    assert len(tau.server.requests) <= saved_replies + 2

    disk_full["over"] = True
    again = tau.run(*MODEL, "-c", "-p", "go on")
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""
    assert again.stdout == "continued\n"
    assert len(assert_whole_lines(session)) > len(lines)


def test_a_reply_that_cannot_be_saved_is_printed_and_the_exit_code_is_1(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The paid-for answer."))

    result = run_with_file_size_limit(tau, 100, *MODEL, "-p", "hi")

    assert result.returncode == 1
    assert result.stdout == "The paid-for answer.\n"
    [error] = save_errors(result.stderr)
    assert "File too large" in error
    assert "Traceback" not in result.stderr
    assert tau.session_files() == []  # the file the failed write created is removed, not left half-written


def test_json_mode_ends_with_exit_1_and_one_line_when_the_session_cannot_be_saved(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The paid-for answer."))

    result = run_with_file_size_limit(tau, 100, *MODEL, "--mode", "json", "hi")

    assert result.returncode == 1
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e["type"] == "message_end" and e["message"]["role"] == "assistant" for e in events)
    [error] = save_errors(result.stderr)
    assert result.stderr == error + "\n"


def test_a_session_file_made_read_only_mid_run_keeps_whole_lines(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first"))
    assert tau.run(*MODEL, "-p", "start").returncode == 0
    [session] = tau.session_files()
    before = session.read_bytes()
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"chattr +i {session}"})]), Turn(text="late")
    )
    try:
        result = tau.run(*MODEL, "--session", str(session), "-p", "lock it")
    finally:
        subprocess.run(["chattr", "-i", str(session)], check=True)

    assert result.returncode == 1
    [error] = save_errors(result.stderr)
    assert str(session) in error and "Operation not permitted" in error
    assert "Traceback" not in result.stderr
    assert session.read_bytes().startswith(before)
    assert_whole_lines(session)


def test_a_session_folder_made_read_only_mid_run_is_one_line_and_whole_lines(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first"))
    assert tau.run(*MODEL, "-p", "start").returncode == 0
    [session] = tau.session_files()
    folder = session.parent
    read_only = f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder}"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": read_only})]), Turn(text="late"))
    try:
        result = tau.run(*MODEL, "-c", "-p", "lock the folder")
    finally:
        subprocess.run(["umount", str(folder)], check=True)

    assert result.returncode == 1
    [error] = save_errors(result.stderr)
    assert str(session) in error and "Read-only file system" in error
    assert "Traceback" not in result.stderr
    assert_whole_lines(session)


def test_an_unwritable_session_file_is_refused_before_any_request(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first"))
    assert tau.run(*MODEL, "-p", "start").returncode == 0
    [session] = tau.session_files()
    requests = len(tau.server.requests)
    with immutable(session):
        result = tau.run(*MODEL, "--session", str(session), "-p", "more")

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"tau: could not save the session to {session}: Operation not permitted")
    assert len(tau.server.requests) == requests


def test_an_unwritable_session_folder_is_refused_before_any_request(tau: TauCommand) -> None:
    folder = tau.work / "sessions"
    folder.mkdir()
    with immutable(folder):
        result = tau.run(*MODEL, "--session-dir", str(folder), "-p", "hi")

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert f"the folder {folder} is not writable" in result.stderr
    assert tau.server.requests == []


def test_a_session_dir_that_is_a_file_is_one_line(tau: TauCommand) -> None:
    (tau.work / "notes").write_text("")
    result = tau.run(*MODEL, "--session-dir", "notes", "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("tau: the session folder notes is a file, not a folder;")


def test_a_session_dir_that_cannot_be_created_is_one_line(tau: TauCommand) -> None:
    (tau.work / "notes").write_text("")
    result = tau.run(*MODEL, "--session-dir", "notes/sessions", "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "tau: could not create the session folder notes/sessions: part of the path is a file, not a folder;"
    )


def test_a_session_dir_in_a_read_only_folder_is_one_line(tau: TauCommand) -> None:
    locked = tau.work / "locked"
    locked.mkdir()
    with immutable(locked):
        result = tau.run(*MODEL, "--session-dir", str(locked / "sessions"), "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        f"tau: could not create the session folder {locked / 'sessions'}: Operation not permitted;"
    )
