"""One ``tau batch`` per ``--out`` folder at a time.

A run holds ``DIR/.tau-batch.lock`` for its whole length: an ``flock`` (on Windows a byte-range lock)
on that file, which the kernel drops when the process ends in any way, ``kill -9`` included, so a
killed run never blocks the next one. The file holds the holder's process id, for the message a
second run gets. It is removed when the run ends normally; one left behind by a killed run is
simply taken over.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from tau.errors import TauError

__all__ = ["LOCK_FILE", "FolderInUseError", "holding_out_folder"]

LOCK_FILE = ".tau-batch.lock"


class FolderInUseError(TauError):
    """Another process holds the folder's run lock."""

    def __init__(self, folder: Path, holder: str | None) -> None:
        self.folder = folder
        self.holder = holder
        who = f"another tau batch (pid {holder})" if holder else "another tau batch"
        super().__init__(f"{folder} is in use by {who}: wait for it to end, or give this run another --out")


@contextlib.contextmanager
def holding_out_folder(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s run lock for the ``with`` block; ``FolderInUseError`` when another run has it."""
    path = folder / LOCK_FILE
    fd = _acquire(path)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            if _same_file(fd, path):
                os.unlink(path)  # still under the lock: the next run makes a fresh file
        os.close(fd)


def _acquire(path: Path) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the workers
        try:
            if not _try_lock(fd):
                raise FolderInUseError(path.parent, _holder(fd))
            if _same_file(fd, path):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed the file as we opened it: lock the new one


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _holder(fd: int) -> str | None:
    with contextlib.suppress(OSError):
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip() if hasattr(os, "pread") else ""
        return text if text.isdigit() else None
    return None


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
