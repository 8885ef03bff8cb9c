"""Where full tool output goes when only a preview fits the context: one temp folder per tool set.

pi writes each spilled output to its own file in the system temp dir and never deletes it. tau keeps
every spill file of a tool set (a session, typically) in one folder, created on first use and
removed by :meth:`SpillDirectory.close` (or at interpreter exit for the module-level default).
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import BinaryIO

# Small writes gathered to 64 KB (a read from the output pipe is up to 256 KB, written as it is):
# bigger writes are slower, not faster (200 MB spilled in 1 MB writes took 0.3-0.5 s here, in
# 64 KB writes 0.07 s: each copy then stays in the processor's cache).
_WRITE_BUFFER = 64 * 1024


class SpillDirectory:
    """A lazily created temp folder holding spill files; ``close()`` deletes it and everything in it.

    After ``close()`` the object can be used again: the next spill creates a fresh folder.
    """

    def __init__(self, parent: str | None = None, prefix: str = "tau-spill-") -> None:
        self._parent = parent
        self._prefix = prefix
        self._path: str | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> str | None:
        """The folder, or ``None`` while nothing has been spilled."""
        return self._path

    def _ensure(self) -> str:
        with self._lock:
            if self._path is None or not os.path.isdir(self._path):
                import tempfile  # imported when the first output is spilled, not at start-up

                self._path = tempfile.mkdtemp(prefix=self._prefix, dir=self._parent)
            return self._path

    def open_file(self, stem: str, suffix: str = ".log") -> tuple[str, BinaryIO]:
        """Create a new uniquely named file; returns its path and a buffered binary writer."""
        folder = self._ensure()
        while True:
            import secrets

            path = os.path.join(folder, f"{stem}-{secrets.token_hex(8)}{suffix}")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            return path, os.fdopen(fd, "wb", buffering=_WRITE_BUFFER)

    def close(self) -> None:
        """Delete the folder and its files."""
        with self._lock:
            path, self._path = self._path, None
        if path is not None:
            import shutil  # with tempfile, ~4 ms of imports a run without spilled output never needs

            shutil.rmtree(path, ignore_errors=True)

    def __enter__(self) -> SpillDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_default: SpillDirectory | None = None
_default_lock = threading.Lock()


def default_spill_directory() -> SpillDirectory:
    """The process-wide spill folder for tools created without one; removed at interpreter exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SpillDirectory()
            atexit.register(_default.close)
        return _default
