"""The process groups tau starts, and their end: one register for all of them.

Everything tau runs as a child (the bash tool and ``!`` commands, MCP servers, package installs,
batch workers, commands that print a key) starts in a new session, so the child and whatever it
starts share one process group, led by the child. The starter registers the group here
(``started``) and closes it when it is done with it (``close``, ``close_async`` or ``kill``): the
group is signalled even when its leader has already exited cleanly, because a helper the leader
started may still be running in it. ``close`` sends SIGTERM, waits a short grace for the group to
empty, then sends SIGKILL.

Groups still registered when tau ends are closed too: at interpreter exit (a normal end, an error
exit, Ctrl+C unwinding through the calls, a mode's own SIGTERM handling), and on any signal that
would end tau without running Python's exit code (SIGTERM, SIGHUP, SIGQUIT... where no mode handles
it), after which the signal goes on to end tau as before. A SIGKILL of tau runs none of that: for
it, a small watcher shell in its own session is told each group as it starts and ends, and kills
the ones still listed when its stdin closes, that is when tau is gone. Only a process that leaves
the group (``setsid``) escapes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal as signals
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = [
    "CLOSE_GRACE_SECONDS",
    "close",
    "close_all",
    "close_async",
    "forget",
    "kill",
    "run",
    "spawning",
    "started",
]

# How long a group has between SIGTERM and SIGKILL when its owner closes it, and at tau's exit.
CLOSE_GRACE_SECONDS = 1.0
EXIT_GRACE_SECONDS = 0.5
_POLL_SECONDS = 0.02

_live_groups: set[int] = set()
_lock = threading.Lock()


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (a zombie waiting to be reaped does not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        names = os.listdir("/proc")
    except OSError:
        return True  # no /proc to tell a zombie from a live process
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after it.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pgid, signum)


def started(pgid: int) -> None:
    """Register the group ``pgid`` (just started with ``start_new_session``) as tau's."""
    _guard_ending_signals()
    _reaper.start()
    with _lock:
        _live_groups.add(pgid)
    _reaper.tell("+", pgid)


def forget(pgid: int) -> None:
    """Drop ``pgid`` from the register without signalling it (its owner knows it is empty)."""
    with _lock:
        _live_groups.discard(pgid)
    _reaper.tell("-", pgid)


def kill(pgid: int) -> None:
    """SIGKILL the group at once (an abort, a timeout) and forget it."""
    _signal_group(pgid, signals.SIGKILL)
    forget(pgid)


def close(pgid: int, grace: float = CLOSE_GRACE_SECONDS) -> None:
    """End what is left of the group: SIGTERM, up to ``grace`` seconds to empty, then SIGKILL."""
    if _group_alive(pgid):
        _signal_group(pgid, signals.SIGTERM)
        give_up_at = time.monotonic() + grace
        while _group_alive(pgid) and time.monotonic() < give_up_at:
            time.sleep(_POLL_SECONDS)
        if _group_alive(pgid):
            _signal_group(pgid, signals.SIGKILL)
    forget(pgid)


async def close_async(pgid: int, grace: float = CLOSE_GRACE_SECONDS) -> None:
    """``close`` without blocking the event loop while the group winds down."""
    import asyncio

    if _group_alive(pgid):
        _signal_group(pgid, signals.SIGTERM)
        give_up_at = time.monotonic() + grace
        while _group_alive(pgid) and time.monotonic() < give_up_at:
            await asyncio.sleep(_POLL_SECONDS)
        if _group_alive(pgid):
            _signal_group(pgid, signals.SIGKILL)
    forget(pgid)


def close_all(grace: float = EXIT_GRACE_SECONDS) -> None:
    """Close every registered group at once (tau is ending): SIGTERM to all, one shared grace,
    SIGKILL to the survivors."""
    with _lock:
        groups = list(_live_groups)
    if not groups:
        return
    for pgid in groups:
        _signal_group(pgid, signals.SIGTERM)
    give_up_at = time.monotonic() + grace
    alive = [pgid for pgid in groups if _group_alive(pgid)]
    while alive and time.monotonic() < give_up_at:
        time.sleep(_POLL_SECONDS)
        alive = [pgid for pgid in alive if _group_alive(pgid)]
    for pgid in alive:
        _signal_group(pgid, signals.SIGKILL)
    with _lock:
        _live_groups.difference_update(groups)


atexit.register(close_all)


# -- starting a group ------------------------------------------------------------------------

# A signal that comes while a child is being started (it may already run, its group not yet known)
# waits until the group is registered, so that group is closed too.
_spawning = 0
_deferred_signal: int | None = None


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """Around the start of a child and its ``started``: an ending signal waits until both are done."""
    global _spawning
    _guard_ending_signals()
    _spawning += 1
    try:
        yield
    finally:
        _spawning -= 1
    if not _spawning and _deferred_signal is not None:
        _close_all_then_die(_deferred_signal, None)


def run(
    args: str | Sequence[str],
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    **options: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` (without ``check``) in a process group of its own, registered while it
    runs and closed afterwards: what the command left running goes with it. On a timeout the whole
    group is killed and ``TimeoutExpired`` raised with the output so far; a Ctrl+C (or any error)
    unwinding through here kills the group too."""
    if capture_output:
        options["stdout"] = options["stderr"] = subprocess.PIPE
    if input is not None:
        options["stdin"] = subprocess.PIPE
    with spawning():
        process = subprocess.Popen(args, start_new_session=True, **options)
        started(process.pid)
    try:
        try:
            output, errors = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            kill(process.pid)
            exc.stdout, exc.stderr = process.communicate()
            raise
        except BaseException:
            kill(process.pid)
            process.wait()
            raise
    finally:
        close(process.pid)
    return subprocess.CompletedProcess(process.args, process.returncode, output, errors)


# -- when tau ends without its exit handlers ------------------------------------------------------

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
    """The watcher shell that outlives a killed tau; started with the first group."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the watcher if it is not running (before the first child, so none goes unwatched)."""
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
        with contextlib.suppress(OSError, ValueError):  # the watcher was killed: the exit handlers remain
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


def _close_all_then_die(signum: int, frame: object) -> None:
    global _deferred_signal
    if _spawning:
        _deferred_signal = signum
        return
    close_all()
    signals.signal(signum, signals.SIG_DFL)
    os.kill(os.getpid(), signum)


def _guard_ending_signals() -> None:
    """Close the live groups before a default-action signal ends tau (where nothing else handles it).

    Checked at every start: a mode that handled a signal may have put back the default since.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _ENDING_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            if signals.getsignal(signum) == signals.SIG_DFL:
                signals.signal(signum, _close_all_then_die)
