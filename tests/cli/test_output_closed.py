"""When stdout goes away (`| head -c 20`, `> /dev/full`, `>&-`): a quiet exit, no traceback, the
session file whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn


def session_lines(tau: TauCommand) -> list[dict[str, Any]]:
    [session] = tau.session_files()
    return [json.loads(line) for line in session.read_text().splitlines()]


def run_to_full_disk(tau: TauCommand, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            cwd=tau.work,
            env=tau.env,
            input=stdin,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )


def run_with_stdout_closed(tau: TauCommand, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args],
        cwd=tau.work,
        env=tau.env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )


def test_a_reader_that_closes_the_pipe_stops_the_json_run_with_141_and_the_session_kept(
    tau: TauCommand,
) -> None:
    tau.server.add(Turn(text="word " * 400, chunk_size=5, frames_per_second=50))  # about 8 s
    process = subprocess.Popen(
        [sys.executable, "-m", "tau", *MODEL, "--mode", "json", "-p", "hi"],
        cwd=tau.work,
        env=tau.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(20) == b'{"type":"session","v'
    process.stdout.close()  # what `| head -c 20` does
    assert process.wait(timeout=30) == 141
    assert process.stderr.read() == b""
    lines = session_lines(tau)
    reply = lines[-1]["message"]
    assert reply["role"] == "assistant" and reply["stopReason"] == "aborted"


def test_a_full_disk_in_json_mode_is_one_line_before_anything_runs(tau: TauCommand) -> None:
    result = run_to_full_disk(tau, *MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == "tau: cannot write the output: No space left on device\n"
    assert tau.server.requests == []


def test_a_full_disk_in_print_mode_is_one_line_and_the_reply_stays_in_the_session(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The answer."))
    result = run_to_full_disk(tau, *MODEL, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == "tau: cannot write the output: No space left on device\n"
    assert session_lines(tau)[-1]["message"]["content"] == [{"type": "text", "text": "The answer."}]


def test_a_full_disk_in_rpc_mode_ends_without_a_traceback_and_the_session_kept(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The answer."))
    result = run_to_full_disk(tau, *MODEL, "--mode", "rpc", stdin='{"type": "prompt", "message": "hi"}\n')
    assert "Traceback" not in result.stderr and "Errno" not in result.stderr
    assert session_lines(tau)[-1]["message"]["content"] == [{"type": "text", "text": "The answer."}]


def test_a_full_disk_for_version_and_list_models_is_one_line(tau: TauCommand) -> None:
    for args in (["--version"], ["--list-models"]):
        result = run_to_full_disk(tau, *args)
        assert result.returncode == 1
        assert result.stderr == "tau: cannot write the output: No space left on device\n"


def test_a_closed_stdout_is_one_line_before_anything_runs(tau: TauCommand) -> None:
    for mode in (["-p"], ["--mode", "json", "-p"], ["--mode", "rpc"]):
        result = run_with_stdout_closed(tau, *MODEL, *mode, *(["hi"] if "-p" in mode else []))
        assert result.returncode == 1
        [line] = result.stderr.splitlines()
        assert line.startswith("tau: stdout is closed")
    assert tau.server.requests == []
    assert not Path(tau.agent_dir / "sessions").exists()


def test_a_closed_stdin_reads_as_empty_input(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The answer."))
    result = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "-p", "hi"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(0),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer.\n"


def test_a_closed_stderr_keeps_warnings_out_of_the_json_stream(tau: TauCommand) -> None:
    tau.server.add(Turn(text="The answer."))
    result = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "--tools", "nope", "--mode", "json", "-p", "hi"],
        cwd=tau.work,
        env=tau.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(2),
    )
    assert result.returncode == 0
    assert all(json.loads(line)["type"] for line in result.stdout.splitlines())
