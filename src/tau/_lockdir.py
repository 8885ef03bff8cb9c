"""The lock of a file shared with pi: pi's protocol (the npm package proper-lockfile), so a tau and a
pi process on one agent dir exclude each other and neither leaves anything behind.

The lock is a directory ``<file>.lock``. ``mkdir`` either makes it or fails, so one process holds it.
The holder touches the directory's mtime every few seconds; a lock whose mtime is older than the
file's stale time was left by a process that died, and the next process that wants it removes it.
Released, the lock is removed.

A process killed while holding a lock cannot remove it, and pi waits out the stale time. A tau holder
also keeps an ``flock`` on its directory, which the kernel drops when the process dies, and marks the
directory with the sticky bit once it holds it (pi's ``mkdir`` never sets that bit): another tau that
finds a marked directory nobody has ``flock``-ed takes it over at once.

Older tau versions locked ``<file>.lock`` as a regular file held with ``flock`` and left it in place;
pi cannot lock over it ("Lock file is already being held"), so one that no process holds is removed
when a lock is taken or the file is read (``remove_old_lock_file``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tau.errors import TauError

__all__ = [
    "DEFAULT_STALE_S",
    "STORE_STALE_S",
    "UPDATE_S",
    "DirLock",
    "LockTimeoutError",
    "forget_old_lock_file",
    "held",
    "lock_path_for",
    "remove_old_lock_file",
]

DEFAULT_STALE_S = 10.0
"""proper-lockfile's stale time, which pi's locks of settings.json and trust.json use."""
STORE_STALE_S = 30.0
"""pi's stale time for auth.json, models-store.json and mcp-auth.json while it refreshes a login or a
catalogue under their lock (it touches such a lock only every 15 s: a shorter judge would take a live
lock over)."""
UPDATE_S = 5.0
"""How often a holder touches its lock: half of the shortest stale time pi judges any lock by."""
_POLL_S = 0.02
_MARKED = stat.S_ISVTX


class LockTimeoutError(TauError, TimeoutError):
    """Another process held a file's lock for too long."""


def lock_path_for(path: Path, *, follow_links: bool) -> Path:
    """``<path>.lock``. pi locks auth.json and the files stored like it where a symlink points
    (``follow_links``) and settings.json and trust.json where the link is."""
    target = Path(os.path.realpath(path) if follow_links else os.path.abspath(path))
    return target.with_name(target.name + ".lock")


def forget_old_lock_file(path: Path) -> None:
    """Remove an older tau's lock file beside ``path`` if no process holds it. Called when a shared
    file is read, so pi can lock it again once this tau has run, without waiting for a write."""
    lock_path = lock_path_for(path, follow_links=True)  # where older versions put it
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(lock_path).st_mode):
            remove_old_lock_file(lock_path)


@contextlib.contextmanager
def held(lock_path: Path, *, stale_s: float, timeout_s: float) -> Iterator[None]:
    """Hold ``lock_path`` for the ``with`` block, waiting up to ``timeout_s`` for another holder.
    Raises ``LockTimeoutError`` after that, ``OSError`` when the lock cannot be made."""
    lock = DirLock(lock_path, stale_s=stale_s)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            raise LockTimeoutError(f"{lock_path}: still locked by another process after {timeout_s:g} s")
        time.sleep(_POLL_S)
    try:
        yield
    finally:
        lock.release()


class DirLock:
    """pi's lock directory ``path``, taken by ``try_acquire`` (one attempt) and given up by ``release``."""

    def __init__(self, path: Path, *, stale_s: float, update_s: float = UPDATE_S) -> None:
        self.path = path
        self.stale_s = stale_s
        self.update_s = update_s
        self._fd: int | None = None
        self._mtime_ns = 0
        self._guard = threading.Lock()
        self._stop = threading.Event()  # replaced on every hold
        self._toucher: threading.Thread | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free or abandoned; ``False`` while another process holds it.
        Raises ``OSError`` when it cannot be made, or an abandoned one cannot be removed."""
        for _ in range(3):  # again after removing an abandoned lock, as proper-lockfile does
            try:
                os.mkdir(self.path)
            except FileExistsError:
                if not self._remove_abandoned():
                    return False
                continue
            except PermissionError:
                if sys.platform == "win32":
                    return False  # a just-removed directory still pending deletion
                raise
            self._hold()
            return True
        return False

    def release(self) -> None:
        """Remove the lock, unless another process has taken it over meanwhile."""
        with self._guard:
            self._stop.set()
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_mtime_ns == self._mtime_ns:
                    os.rmdir(self.path)
            if self._fd is not None:
                os.close(self._fd)  # after the rmdir: a tau that finds the lock meanwhile sees it held
                self._fd = None
        if self._toucher is not None:
            self._toucher.join()

    def _hold(self) -> None:
        if sys.platform != "win32":
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
                # Blocks only while another tau looks at this new, unmarked directory.
                fcntl.flock(fd, fcntl.LOCK_EX)
                with contextlib.suppress(OSError):  # a filesystem without the bit: stale time only
                    os.fchmod(fd, stat.S_IMODE(os.fstat(fd).st_mode) | _MARKED)
            except OSError:
                with contextlib.suppress(OSError):
                    os.rmdir(self.path)
                raise
            self._fd = fd
        self._mtime_ns = os.stat(self.path).st_mtime_ns
        self._stop = threading.Event()
        self._toucher = threading.Thread(target=self._touch, name=f"lock {self.path.name}", daemon=True)
        self._toucher.start()

    def _touch(self) -> None:
        """Keep the lock's mtime fresh while it is held, as pi's holders do."""
        while not self._stop.wait(self.update_s):
            with self._guard:
                if self._stop.is_set():
                    return
                try:
                    if os.stat(self.path).st_mtime_ns != self._mtime_ns:
                        return  # taken over by another process: its lock now, leave it alone
                    os.utime(self.path)
                    self._mtime_ns = os.stat(self.path).st_mtime_ns
                except FileNotFoundError:
                    return
                except OSError:
                    continue  # a passing failure: try again at the next tick

    def _remove_abandoned(self) -> bool:
        """Remove the existing lock if its holder is gone; ``True`` when the path is free again."""
        try:
            status = os.lstat(self.path)
        except FileNotFoundError:
            return True
        if not stat.S_ISDIR(status.st_mode):
            return remove_old_lock_file(self.path)
        if sys.platform != "win32" and status.st_mode & _MARKED:
            return _remove_if_unflocked(self.path, status)
        if time.time() - status.st_mtime <= self.stale_s:
            return False
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(self.path)
        return True


if sys.platform == "win32":

    def remove_old_lock_file(lock_path: Path) -> bool:
        """Remove an older tau's lock file ``lock_path``; ``False`` while a process has it open."""
        try:
            os.unlink(lock_path)
        except FileNotFoundError:
            return True
        except PermissionError:
            return False
        return True

else:
    import fcntl

    def _remove_if_unflocked(path: Path, status: os.stat_result) -> bool:
        """A tau's marked lock directory: removed when no process holds its ``flock`` (its holder died)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            return True  # gone or replaced meanwhile: look again
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino) or not now.st_mode & _MARKED:
                return False  # a new lock that its maker has not marked yet: busy
            if now.st_nlink == 0:
                return True  # released meanwhile: the path may hold someone's new lock by now
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(path)
            return True
        finally:
            os.close(fd)

    def remove_old_lock_file(lock_path: Path) -> bool:
        """Remove an older tau's lock file ``lock_path`` (a regular file) unless a process holds it;
        ``False`` while one does."""
        try:
            fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return True
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False  # replaced by a lock directory meanwhile
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock_path)
            return True
        finally:
            os.close(fd)
