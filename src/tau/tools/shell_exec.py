"""Running a shell command locally: its own process group, merged output, tree kill on abort/timeout.

The command runs in a new session (``start_new_session``), so the shell and everything it starts
share one process group and one ``killpg`` ends them all. Output is read through an asyncio
subprocess protocol: each chunk goes straight to ``on_data`` with no stream-reader buffering.

A call owns its group for its whole length: once the shell has exited (and the output has gone
quiet), whatever it left running in the background (``sleep 100 &``, ``nohup server &``) is killed
with it. Groups still alive when tau ends are killed too: at interpreter exit, and on any signal
that would end tau without running Python's exit code (SIGQUIT, SIGUSR1, SIGTERM where no mode
handles it...), after which the signal goes on to end tau as before. A SIGKILL of tau runs none of
that: for it, a small watcher shell in its own session is told each group as it starts and ends,
and kills the ones still listed when its stdin closes, that is when tau is gone. Only a process
that leaves the group (``setsid``) escapes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal as signals
import subprocess
import threading
import time
from collections.abc import Callable, Mapping

from tau._dataclass import dataclass
from tau._unicode import well_formed
from tau.ai.abort import AbortSignal
from tau.tools.operations import CommandAborted, CommandTimedOut

# After the shell exits, the call ends once the output has been quiet this long (or its pipe closed):
# a background process that inherited the pipe (a daemon started with `&`) must not keep the call
# open. Output still arriving re-arms the wait (as pi does), up to EXIT_GRACE_LIMIT_SECONDS in all.
EXIT_GRACE_SECONDS = 0.1
EXIT_GRACE_LIMIT_SECONDS = 2.0
# The size asked for the output pipe (Linux's default ceiling for a user, /proc/sys/fs/pipe-max-size).
_PIPE_BYTES = 1 << 20

_live_groups: set[int] = set()


def _kill_live_groups() -> None:
    for pgid in list(_live_groups):
        kill_process_group(pgid)


atexit.register(_kill_live_groups)

# Reads "+ <pgid>" / "- <pgid>" lines; at end of input, SIGKILLs the groups still listed.
_REAPER_SCRIPT = """
groups=' '
while read -r op pgid; do
  case $groups in
    *" $pgid "*) [ "$op" = - ] && groups="${groups%% $pgid *} ${groups#* $pgid }" ;;
    *) [ "$op" = + ] && groups="$groups$pgid " ;;
  esac
done
for pgid in $groups; do kill -KILL "-$pgid" 2>/dev/null; done
"""


class _GroupReaper:
    """The watcher shell that outlives a killed tau; started at the first command."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the watcher if it is not running (before the first shell, so none goes unwatched)."""
        if self._process is None:
            with contextlib.suppress(OSError):  # no /bin/sh: the exit handlers still cover the rest
                self._process = subprocess.Popen(
                    ["/bin/sh", "-c", _REAPER_SCRIPT],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # out of reach of a Ctrl+C meant for tau
                )

    def tell(self, op: str, pgid: int) -> None:
        if self._process is None or self._process.stdin is None:
            return
        with contextlib.suppress(OSError):  # the watcher was killed: the exit handlers still cover the rest
            self._process.stdin.write(f"{op} {pgid}\n".encode())
            self._process.stdin.flush()


_reaper = _GroupReaper()

# Signals whose default action ends the process without Python's exit handlers. SIGINT is left out
# (Python turns it into KeyboardInterrupt, which unwinds through the calls), SIGPIPE too (ignored).
_ENDING_SIGNALS = tuple(
    getattr(signals, name)
    for name in (
        "SIGHUP",
        "SIGQUIT",
        "SIGTERM",
        "SIGUSR1",
        "SIGUSR2",
        "SIGALRM",
        "SIGVTALRM",
        "SIGPROF",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGPWR",
    )
    if hasattr(signals, name)
)


# A signal that comes while a shell is being started (it may already run, its group not yet known)
# waits until the group is registered, so that group is killed too.
_spawning = 0
_deferred_signal: int | None = None


def _kill_groups_then_die(signum: int, frame: object) -> None:
    global _deferred_signal
    if _spawning:
        _deferred_signal = signum
        return
    _kill_live_groups()
    signals.signal(signum, signals.SIG_DFL)
    os.kill(os.getpid(), signum)


def _guard_ending_signals() -> None:
    """Kill the live groups before a default-action signal ends tau (where nothing else handles it).

    Checked on every call: a mode that handled a signal may have put back the default since.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _ENDING_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            if signals.getsignal(signum) == signals.SIG_DFL:
                signals.signal(signum, _kill_groups_then_die)


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; fall back to the process alone."""
    try:
        os.killpg(pid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)


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


class _OutputProtocol(asyncio.SubprocessProtocol):
    def __init__(self, on_data: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_data = on_data
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()
        self.last_data_at = time.monotonic()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.last_data_at = time.monotonic()
        self._on_data(bytes(data))

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

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


@dataclass
class LocalBashOperations:
    """Runs commands with a local shell (``shell_path``, else bash, else sh)."""

    shell_path: str | None = None

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
        shell = find_shell(self.shell_path)
        _guard_ending_signals()
        _reaper.start()
        loop = asyncio.get_running_loop()
        global _spawning
        _spawning += 1
        # stdin is a pipe already at end of file rather than /dev/null: a sandbox may replace
        # /dev/null with a regular file that other programs have written into.
        empty_stdin, stdin_writer = os.pipe()
        os.close(stdin_writer)
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _OutputProtocol(on_data, loop),
                shell,
                "-c",
                command,
                stdin=empty_stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
            pid = transport.get_pid()
            _widen_pipe(transport)
            _live_groups.add(pid)
            _reaper.tell("+", pid)
        finally:
            os.close(empty_stdin)
            _spawning -= 1
        if not _spawning and _deferred_signal is not None:
            _kill_groups_then_die(_deferred_signal, None)
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
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signals.SIGKILL)
            _live_groups.discard(pid)
            _reaper.tell("-", pid)
            transport.close()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
