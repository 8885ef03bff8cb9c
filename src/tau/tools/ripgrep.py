"""Finding the ``rg`` binary and running it with its output read line by line.

tau depends on the ``ripgrep`` wheel, which installs ``rg`` next to the interpreter; a system ``rg``
on PATH is the fallback. Lookup order: an explicit bin directory (the agent's, where a user may drop
binaries), the interpreter's scripts directory, then PATH.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import sys
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct

from tau.ai.abort import AbortSignal
from tau.tools.errors import ToolAborted, ToolError

_READ_CHUNK = 64 * 1024
_STDERR_CAP = 16 * 1024


def find_rg(bin_dir: str | None = None) -> str | None:
    """Path of an ``rg`` binary, or ``None`` when there is none."""
    name = "rg.exe" if os.name == "nt" else "rg"
    candidates: list[Path] = []
    if bin_dir:
        candidates.append(Path(bin_dir) / name)
    import sysconfig  # imported when rg is looked for, not at start-up

    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / name)
    candidates.append(Path(sys.executable).parent / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    import shutil  # bz2 and lzma come with it: not at start-up

    return shutil.which("rg")


def require_rg(bin_dir: str | None = None) -> str:
    """Like :func:`find_rg`, raising a tool error when ripgrep is not available."""
    rg = find_rg(bin_dir)
    if rg is None:
        raise ToolError("ripgrep (rg) is not available; install the 'ripgrep' package or put rg on PATH")
    return rg


class RgOutcome(Struct, frozen=True):
    exit_code: int | None
    stderr: str
    stopped: bool
    """True when ``on_line`` asked to stop and rg was killed."""


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signals.SIGKILL)


async def run_rg(
    argv: list[str],
    cwd: str,
    on_line: Callable[[bytes], bool],
    signal: AbortSignal | None,
) -> RgOutcome:
    """Run ``argv`` and hand each stdout line (without ``\\n``) to ``on_line`` until it returns False.

    Lines of any length are fine (no stream-reader line limit). On abort, rg is killed and
    :class:`ToolAborted` raised.
    """
    from tau import _process_groups as process_groups  # with the first search, not at start-up

    with process_groups.spawning():
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        process_groups.started(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr_stream = proc.stdout, proc.stderr
    remove_listener = signal.add_listener(lambda: _kill_group(proc.pid)) if signal else None

    async def collect_stderr() -> bytes:
        kept = bytearray()
        while chunk := await stderr_stream.read(_READ_CHUNK):
            if len(kept) < _STDERR_CAP:
                kept += chunk[: _STDERR_CAP - len(kept)]
        return bytes(kept)

    stderr_task = asyncio.create_task(collect_stderr())
    stopped = False
    try:
        pending = bytearray()
        while not stopped:
            chunk = await stdout.read(_READ_CHUNK)
            if not chunk:
                if pending:
                    on_line(bytes(pending))
                break
            pending += chunk
            start = 0
            while (end := pending.find(b"\n", start)) >= 0:
                line = bytes(pending[start:end])
                start = end + 1
                if not on_line(line):
                    stopped = True
                    _kill_group(proc.pid)
                    break
            del pending[:start]
        if stopped:
            # What rg wrote before it was killed is read and dropped: a pipe whose reading was
            # paused (over 128 KB unread) never reports its end, and wait() waits for that end too.
            while await stdout.read(_READ_CHUNK):
                pass
        exit_code = await proc.wait()
        stderr = await stderr_task
    finally:
        if remove_listener is not None:
            remove_listener()
        if proc.returncode is None:
            _kill_group(proc.pid)
            await proc.wait()
        process_groups.forget(proc.pid)  # rg starts nothing of its own
        if not stderr_task.done():
            stderr_task.cancel()
    if signal is not None and signal.aborted:
        raise ToolAborted()
    return RgOutcome(exit_code=exit_code, stderr=stderr.decode("utf-8", "replace").strip(), stopped=stopped)
