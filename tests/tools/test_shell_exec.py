"""Tests for tau.tools.shell_exec: the local process runner behind the bash tool."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tau.ai.abort import AbortController
from tau.tools.operations import CommandAborted, CommandTimedOut
from tau.tools.shell_exec import LocalBashOperations, find_shell


def test_the_default_shell_is_bash() -> None:
    assert os.path.basename(find_shell()) in ("bash", "sh")


def test_a_configured_shell_that_does_not_exist_is_enoent() -> None:
    with pytest.raises(FileNotFoundError, match="ENOENT"):
        find_shell("/no/such/shell")


async def test_output_chunks_arrive_and_the_exit_code_is_returned(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    code = await LocalBashOperations().exec(
        "echo hi; exit 3",
        str(tmp_path),
        on_data=chunks.append,
        signal=None,
        timeout=None,
        env=dict(os.environ),
    )
    assert code == 3 and b"".join(chunks) == b"hi\n"


async def test_stdin_is_empty(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    await LocalBashOperations().exec(
        "cat; echo end", str(tmp_path), on_data=chunks.append, signal=None, timeout=5, env=dict(os.environ)
    )
    assert b"".join(chunks) == b"end\n"


async def test_stdin_is_a_pipe_at_end_of_file_not_dev_null(tmp_path: Path) -> None:
    # Some sandboxes make /dev/null a regular file that others write into; an empty pipe is always empty.
    chunks: list[bytes] = []
    await LocalBashOperations().exec(
        "[ -p /dev/stdin ] && echo pipe; wc -c",
        str(tmp_path),
        on_data=chunks.append,
        signal=None,
        timeout=5,
        env=dict(os.environ),
    )
    assert b"".join(chunks).split() == [b"pipe", b"0"]


async def test_a_timeout_raises_with_the_seconds(tmp_path: Path) -> None:
    with pytest.raises(CommandTimedOut) as caught:
        await LocalBashOperations().exec(
            "sleep 5", str(tmp_path), on_data=lambda b: None, signal=None, timeout=0.2, env=dict(os.environ)
        )
    assert caught.value.seconds == 0.2 and str(caught.value) == "timeout:0.2"


async def test_an_abort_raises_command_aborted(tmp_path: Path) -> None:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.1, controller.abort)
    with pytest.raises(CommandAborted):
        await LocalBashOperations().exec(
            "sleep 5", str(tmp_path), on_data=lambda b: None, signal=controller.signal, timeout=None, env={}
        )


async def test_cancelling_the_call_kills_the_process(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    task = asyncio.create_task(
        LocalBashOperations().exec(
            f"sleep 0.3; touch {marker}",
            str(tmp_path),
            on_data=lambda b: None,
            signal=None,
            timeout=None,
            env={},
        )
    )
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.4)
    assert not marker.exists()


async def test_output_a_background_child_keeps_writing_after_the_shell_exits_is_collected(
    tmp_path: Path,
) -> None:
    chunks: list[bytes] = []
    command = "(for i in 1 2 3 4 5 6; do sleep 0.06; echo tick$i; done) & echo started"
    code = await LocalBashOperations().exec(
        command, str(tmp_path), on_data=chunks.append, signal=None, timeout=None, env=dict(os.environ)
    )
    assert code == 0
    assert b"".join(chunks) == b"started\n" + b"".join(b"tick%d\n" % i for i in range(1, 7))


async def test_a_background_child_that_never_goes_quiet_ends_the_call_within_the_limit(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "still-running"
    command = f"(while true; do echo busy; sleep 0.02; done; ) & (sleep 3; touch {marker}) & echo started"
    started = asyncio.get_running_loop().time()
    await LocalBashOperations().exec(
        command, str(tmp_path), on_data=lambda b: None, signal=None, timeout=None, env=dict(os.environ)
    )
    elapsed = asyncio.get_running_loop().time() - started
    assert elapsed < 2.8
    await asyncio.sleep(3.5 - elapsed)
    assert not marker.exists()  # the whole group went with the call


async def test_the_output_pipe_holds_a_megabyte_so_fast_output_is_read_in_large_pieces(
    tmp_path: Path,
) -> None:
    chunks: list[bytes] = []
    probe = "import fcntl; print(fcntl.fcntl(1, fcntl.F_GETPIPE_SZ))"  # Linux's name for the query
    await LocalBashOperations().exec(
        f"sleep 0.2; {sys.executable} -c '{probe}'",
        str(tmp_path),
        on_data=chunks.append,
        signal=None,
        timeout=10,
        env=dict(os.environ),
    )
    assert int(b"".join(chunks)) == 1 << 20
