"""Running a shell command locally: its own process group, merged output, tree kill on abort/timeout.

The command runs in a new session (``start_new_session``), so the shell and everything it starts
share one process group and one ``killpg`` ends them all. Output is read through an asyncio
subprocess protocol: each chunk goes straight to ``on_data`` with no stream-reader buffering.

A call owns its group for its whole length (registered in ``tau._process_groups``, which also ends
the groups still alive when tau ends, on every exit path): once the shell has exited (and the output
has gone quiet), whatever it left running in the background (``sleep 100 &``, ``nohup server &``) is
ended with it. pi leaves such children running; tau does not. Only a process that leaves the group
(``setsid``) escapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Mapping

from msgspec import Struct

from tau import _process_groups as process_groups
from tau._unicode import well_formed
from tau.ai.abort import AbortSignal
from tau.tools.operations import CommandAborted, CommandTimedOut
from tau.tools.sandbox import Sandbox, SandboxUnavailable
from tau.tools.sandbox_server import SandboxServer

# After the shell exits, the call ends once the output has been quiet this long (or its pipe closed):
# a background process that inherited the pipe (a daemon started with `&`) must not keep the call
# open. Output still arriving re-arms the wait (as pi does), up to EXIT_GRACE_LIMIT_SECONDS in all.
EXIT_GRACE_SECONDS = 0.1
EXIT_GRACE_LIMIT_SECONDS = 2.0
# The size asked for the output pipe (Linux's default ceiling for a user, /proc/sys/fs/pipe-max-size).
_PIPE_BYTES = 1 << 20


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` at once and forget it (an abort, a timeout)."""
    process_groups.kill(pid)


def find_shell(shell_path: str | None = None) -> str:
    """The shell to run commands with: the configured one, else bash, else sh.

    A configured path that does not exist is an error rather than a silent fallback.
    """
    if shell_path:
        if not os.path.isfile(shell_path):
            raise FileNotFoundError(2, f"ENOENT: shell not found: {shell_path}", shell_path)
        return shell_path
    if os.path.isfile("/bin/bash"):
        return "/bin/bash"
    import shutil  # bz2 and lzma come with it: not at start-up (/bin/bash is the usual answer)

    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


def _widen_pipe(transport: asyncio.SubprocessTransport) -> None:
    """Let the output pipe hold 1 MB (Linux; the 64 KB default elsewhere, or when refused): a
    command printing fast is then read in 256 KB pieces rather than 64 KB ones, a quarter of the
    event-loop turns (200 MB through the tool: 0.41 -> 0.27 s). What is shown as it streams is
    unchanged: a read takes what is there."""
    try:
        import fcntl
    except ImportError:  # not on this system
        return
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    pipe = transport.get_pipe_transport(1)
    if set_size is None or pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):  # over the user's pipe allowance: keep the default
        fcntl.fcntl(pipe.get_extra_info("pipe").fileno(), set_size, _PIPE_BYTES)


class _QuietWait:
    output_closed: asyncio.Future[None]
    last_data_at: float

    async def wait_for_quiet_output(self) -> None:
        """Return when the pipe closes or has been quiet for the grace period (bounded in all)."""
        give_up_at = time.monotonic() + EXIT_GRACE_LIMIT_SECONDS
        while not self.output_closed.done():
            now = time.monotonic()
            wait = min(self.last_data_at + EXIT_GRACE_SECONDS, give_up_at) - now
            if wait <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.output_closed), wait)


class _OutputProtocol(_QuietWait, asyncio.SubprocessProtocol):
    def __init__(self, on_data: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_data = on_data
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed = loop.create_future()
        self.last_data_at = time.monotonic()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.last_data_at = time.monotonic()
        self._on_data(bytes(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class LocalBashOperations(Struct, dict=True):
    """Runs commands with a local shell (``shell_path``, else bash, else sh), fenced by ``sandbox``
    when one is given (it may raise :class:`tau.tools.sandbox.SandboxUnavailable`)."""

    shell_path: str | None = None
    sandbox: Sandbox | None = None

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str],
    ) -> int | None:
        if signal is not None and signal.aborted:
            raise CommandAborted()
        command = well_formed(command)  # a lone surrogate as U+FFFD, as Node passes it: no encoding error
        argv = [find_shell(self.shell_path), "-c", command]
        if self.sandbox is not None:
            server = await self.sandbox.command_server()
            if server is not None:
                return await _exec_served(server, argv, cwd, on_data, signal, timeout, env)
            argv = self.sandbox.command(argv, cwd)
        loop = asyncio.get_running_loop()
        # stdin is a pipe already at end of file rather than /dev/null: a sandbox may replace
        # /dev/null with a regular file that other programs have written into.
        empty_stdin, stdin_writer = os.pipe()
        os.close(stdin_writer)
        with process_groups.spawning():
            try:
                transport, protocol = await loop.subprocess_exec(
                    lambda: _OutputProtocol(on_data, loop),
                    *argv,
                    stdin=empty_stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    env=dict(env),
                    start_new_session=True,
                )
            finally:
                os.close(empty_stdin)
            pid = transport.get_pid()
            process_groups.started(pid)
            _widen_pipe(transport)
        aborted = loop.create_future()

        def on_abort() -> None:
            loop.call_soon_threadsafe(_settle, aborted)

        remove_listener = signal.add_listener(on_abort) if signal else None
        try:
            done, _ = await asyncio.wait(
                {protocol.exited, aborted},
                timeout=timeout if timeout and timeout > 0 else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
            killed_by_us = protocol.exited not in done
            if killed_by_us:
                kill_process_group(pid)
                await protocol.exited
            # Let the rest of the output arrive, but not wait for processes that kept the pipe.
            await protocol.wait_for_quiet_output()
            if killed_by_us:
                if aborted in done:
                    raise CommandAborted()
                assert timeout is not None
                raise CommandTimedOut(timeout)
            code = transport.get_returncode()
            # A negative code means a signal from elsewhere killed the shell: pi reports no code.
            return code if code is not None and code >= 0 else None
        finally:
            if remove_listener is not None:
                remove_listener()
            if transport.get_returncode() is None:
                kill_process_group(pid)
            else:  # the shell is gone, but what it left in the background is still in its group
                try:
                    await process_groups.close_async(pid)
                except BaseException:  # cancelled while it winds down: no more grace
                    kill_process_group(pid)
                    raise
            transport.close()


class _PipeProtocol(_QuietWait, asyncio.Protocol):
    """The output pipe of a command run by the sandbox's server (read directly by tau)."""

    def __init__(self, on_data: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_data = on_data
        self.output_closed = loop.create_future()
        self.last_data_at = time.monotonic()

    def data_received(self, data: bytes) -> None:
        self.last_data_at = time.monotonic()
        self._on_data(bytes(data))

    def eof_received(self) -> bool | None:
        _settle(self.output_closed)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        _settle(self.output_closed)


async def _exec_served(
    server: SandboxServer,
    argv: list[str],
    cwd: str,
    on_data: Callable[[bytes], None],
    signal: AbortSignal | None,
    timeout: float | None,
    env: Mapping[str, str],
) -> int | None:
    """:meth:`LocalBashOperations.exec` through the session's sandbox server: the same waiting,
    killing and grace, the call ended (with all it started) before this returns."""
    loop = asyncio.get_running_loop()
    empty_stdin, stdin_writer = os.pipe2(os.O_CLOEXEC)
    os.close(stdin_writer)
    output_reader, output_writer = os.pipe2(os.O_CLOEXEC)
    with contextlib.suppress(OSError, ValueError, AttributeError, ImportError):
        import fcntl

        fcntl.fcntl(output_reader, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        call_id = server.run(argv, cwd, dict(env), empty_stdin, output_writer)
    finally:
        os.close(empty_stdin)
        os.close(output_writer)
    transport, protocol = await loop.connect_read_pipe(
        lambda: _PipeProtocol(on_data, loop), os.fdopen(output_reader, "rb", buffering=0)
    )
    aborted = loop.create_future()

    def on_abort() -> None:
        loop.call_soon_threadsafe(_settle, aborted)

    remove_listener = signal.add_listener(on_abort) if signal else None
    ended = False
    try:
        exited = asyncio.ensure_future(server.wait_exit(call_id))
        done, _ = await asyncio.wait(
            {exited, aborted},
            timeout=timeout if timeout and timeout > 0 else None,
            return_when=asyncio.FIRST_COMPLETED,
        )
        killed_by_us = exited not in done
        if killed_by_us:
            exited.cancel()
            await server.end(call_id, hard=True)
            ended = True
        await protocol.wait_for_quiet_output()
        if killed_by_us:
            if aborted in done:
                raise CommandAborted()
            assert timeout is not None
            raise CommandTimedOut(timeout)
        code = server.exit_code(call_id)
        if code is None and server.dead:
            raise SandboxUnavailable("its command server ended; the next command starts it again")
        return code if code is not None and code >= 0 else None
    finally:
        if remove_listener is not None:
            remove_listener()
        if not ended:
            try:
                await server.end(call_id, hard=not server.has_exited(call_id))
            except BaseException:
                await asyncio.shield(server.end(call_id, hard=True))
                raise
        transport.close()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
