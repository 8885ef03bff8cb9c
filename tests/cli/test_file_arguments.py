"""`@file` arguments that cannot go into a prompt are refused at once, with one line, before any request."""

from __future__ import annotations

import os
import time

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn


def _refused(tau: TauCommand, *args: str) -> str:
    started = time.monotonic()
    result = tau.run(*MODEL, "-p", *args, timeout=20)
    assert time.monotonic() - started < 10
    assert result.returncode != 0
    assert tau.server.requests == []
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_text_file_over_the_limit_is_refused_at_once(tau: TauCommand) -> None:
    with open(tau.work / "big.txt", "wb") as file:
        file.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, nothing on disk
    line = _refused(tau, "@big.txt", "summarise")
    assert "big.txt is 100.0MB" in line and "4.0MB" in line


def test_a_fifo_with_no_writer_is_refused_instead_of_waited_on(tau: TauCommand) -> None:
    os.mkfifo(tau.work / "pipe")
    line = _refused(tau, "@pipe", "read this")
    assert "named pipe (FIFO)" in line and "regular files" in line


def test_a_character_device_is_refused(tau: TauCommand) -> None:
    line = _refused(tau, "@/dev/zero", "read this")
    assert "/dev/zero" in line and "character device" in line


def test_a_text_file_under_the_limit_still_goes_into_the_prompt(tau: TauCommand) -> None:
    (tau.work / "notes.txt").write_text("x" * (1024 * 1024))
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "@notes.txt", "summarise")
    assert result.returncode == 0, result.stderr
    assert "x" * (1024 * 1024) in tau.server.last_request.body["messages"][-1]["content"][0]["text"]
