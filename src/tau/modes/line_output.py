"""Writing to the process's stdout, which can fail: a reader that closed the pipe, a full disk."""

from __future__ import annotations

import errno
import os
from typing import TextIO

__all__ = ["LineOutput"]


class LineOutput:
    """Standard output that may go away under us: a reader that closed the pipe (``| head``), a full
    disk (``> /dev/full``), a closed descriptor (``>&-``).

    The first failure is kept in ``failure`` and nothing more is written, so the caller can stop the
    run cleanly (the session file stays whole) and exit with ``exit_code``. The stream is then pointed
    at ``/dev/null``, so that Python's own flush at exit cannot fail a second time with a traceback.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.failure: OSError | None = None
        if stream is None:
            self.failure = OSError(errno.EBADF, "stdout is closed")

    def write(self, text: str) -> bool:
        """Write and flush ``text``; ``False`` once the output has failed."""
        if self.failure is not None or self._stream is None:
            return False
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError) as exc:  # ValueError: the file object itself was closed
            self.failure = exc if isinstance(exc, OSError) else OSError(errno.EBADF, "stdout is closed")
            _point_at_devnull(self._stream)
            return False
        return True

    @property
    def exit_code(self) -> int:
        """141 for a closed pipe (what a shell shows for a program ended by SIGPIPE), else 1."""
        return 141 if isinstance(self.failure, BrokenPipeError) else 1

    @property
    def message(self) -> str | None:
        """The one line to show on stderr; none for a closed pipe, which is the reader's choice."""
        if self.failure is None or isinstance(self.failure, BrokenPipeError):
            return None
        return f"cannot write the output: {self.failure.strerror or self.failure}"


def _point_at_devnull(stream: TextIO) -> None:
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):  # no descriptor behind it (a StringIO), or it is closed
        return
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)
