"""Writing to the process's stdout, which can fail: a reader that closed the pipe, a full disk.

Text that the output's encoding cannot hold (a lone surrogate, an emoji on a Latin-1 stdout) is no
failure: it is written escaped in JSON lines and replaced in plain text, never taken for a closed
stream."""

from __future__ import annotations

import errno
import os

from tau._unicode import ascii_json, escape_lone_surrogates, well_formed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["LineOutput"]


class LineOutput:
    """Standard output that may go away under us: a reader that closed the pipe (``| head``), a full
    disk (``> /dev/full``), a closed descriptor (``>&-``).

    ``json_lines``: what is written is JSON text (protocol lines), whose lone surrogates are written
    as ``\\uXXXX`` escapes (as ``JSON.stringify`` writes them) and, on an output that cannot encode
    the rest, every non-ASCII character too. Otherwise it is plain text: surrogate pairs joined, a
    lone one shown as U+FFFD, a character the output's encoding lacks as its replacement (``?``).

    The first failure is kept in ``failure`` and nothing more is written, so the caller can stop the
    run cleanly (the session file stays whole) and exit with ``exit_code``. The stream is then pointed
    at ``/dev/null``, so that Python's own flush at exit cannot fail a second time with a traceback.
    """

    def __init__(self, stream: TextIO | None, *, json_lines: bool = False) -> None:
        self._stream = stream
        self._json_lines = json_lines
        self.failure: OSError | None = None
        if stream is None:
            self.failure = OSError(errno.EBADF, "stdout is closed")

    def write(self, text: str) -> bool:
        """Write and flush ``text``; ``False`` once the output has failed."""
        if self.failure is not None or self._stream is None:
            return False
        stream = self._stream
        text = escape_lone_surrogates(text) if self._json_lines else well_formed(text)
        try:
            try:
                stream.write(text)
            except UnicodeEncodeError:  # nothing was written: the output's encoding is not UTF-8
                stream.write(self._encodable(text, stream.encoding or "utf-8"))
            stream.flush()
        except UnicodeError:
            raise  # a fault of the text, not of the stream: never reported as a closed output
        except (OSError, ValueError) as exc:  # ValueError: the file object itself was closed
            self.failure = exc if isinstance(exc, OSError) else OSError(errno.EBADF, "stdout is closed")
            _point_at_devnull(stream)
            return False
        return True

    def _encodable(self, text: str, encoding: str) -> str:
        if self._json_lines:
            return ascii_json(text)
        try:
            return text.encode(encoding, "replace").decode(encoding)
        except LookupError:
            return text.encode("ascii", "replace").decode("ascii")

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
