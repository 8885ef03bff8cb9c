"""``tau.exec``: run a program (no shell) and collect its output, with a timeout and an abort signal.

The program runs in a process group of its own (registered in ``tau._process_groups``): a timeout
or an abort kills the whole group, and what the program left running is ended when it is done."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from tau import _process_groups as process_groups
from tau.ai.abort import AbortSignal
from tau.extensions.types import ExecResult

__all__ = ["run_process"]


async def run_process(
    command: str,
    args: Sequence[str],
    *,
    cwd: str,
    timeout: float | None = None,
    signal: AbortSignal | None = None,
) -> ExecResult:
    """Run ``command`` with ``args`` in ``cwd``; killed (``code=None, killed=True``) on timeout or abort.

    A program that cannot be started gives ``code=127`` and the reason in ``stderr``.
    """
    try:
        with process_groups.spawning():
            process = await asyncio.create_subprocess_exec(
                command,
                *args,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            process_groups.started(process.pid)
    except OSError as exc:
        return ExecResult(stdout="", stderr=str(exc), code=127)
    try:
        return await _collect(process, timeout, signal)
    finally:
        if process.returncode is None:
            process_groups.kill(process.pid)
        else:
            await process_groups.close_async(process.pid)


async def _collect(
    process: asyncio.subprocess.Process, timeout: float | None, signal: AbortSignal | None
) -> ExecResult:
    communicate = asyncio.ensure_future(process.communicate())
    waiters: set[asyncio.Future[Any]] = {communicate}
    aborted: asyncio.Future[None] | None = None
    if signal is not None:
        aborted = asyncio.ensure_future(signal.wait())
        waiters.add(aborted)
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if aborted is not None:
            aborted.cancel()
    if communicate in done:
        stdout, stderr = communicate.result()
        return ExecResult(_text(stdout), _text(stderr), process.returncode)
    process_groups.kill(process.pid)  # the program and whatever it started
    stdout, stderr = await communicate
    return ExecResult(_text(stdout), _text(stderr), None, killed=True)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
